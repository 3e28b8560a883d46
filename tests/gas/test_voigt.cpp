// Voigt profile accuracy against a high-accuracy reference.
//
// Reference for K(x, y) = Re w(x + iy):
//   * |z| >= 6: Laplace continued fraction w(z) = (i/sqrt(pi)) / (z - (1/2)/(z - 1/(z - (3/2)/(z - ...)))),
//     evaluated backwards with 400 levels (converges to ~1e-15 there);
//   * otherwise the Fourier integral K = (1/sqrt(pi)) int_0^inf exp(-y t - t^2/4) cos(x t) dt with
//     composite 10-point Gauss-Legendre on panels of width min(0.05, 0.2/x) up to t = 14 (the
//     integrand is below 1e-21 there); long-double accumulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <vector>

#include "gas/voigt.hpp"

namespace {

long double ref_k_integral(long double x, long double y) {
  // 10-point Gauss-Legendre nodes/weights on [-1, 1]
  static const long double gx[5] = {0.1488743389816312108848260L, 0.4333953941292471907992659L,
                                    0.6794095682990244062343274L, 0.8650633666889845107320967L,
                                    0.9739065285171717200779640L};
  static const long double gw[5] = {0.2955242247147528701738930L, 0.2692667193099963550912269L,
                                    0.2190863625159820439955349L, 0.1494513491505805931457763L,
                                    0.0666713443086881375935688L};
  const long double tmax = 14.0L;
  long double h = 0.05L;
  if (x > 4.0L) h = std::min(h, 0.2L / x);
  const long n = static_cast<long>(std::ceil(tmax / h));
  h = tmax / n;
  long double sum = 0;
  for (long p = 0; p < n; ++p) {
    const long double c = (p + 0.5L) * h, r = 0.5L * h;
    for (int q = 0; q < 5; ++q) {
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        const long double t = c + sgn * r * gx[q];
        sum += gw[q] * r * std::exp(-y * t - t * t / 4.0L) * std::cos(x * t);
      }
    }
  }
  return sum / std::sqrt(std::numbers::pi_v<long double>);
}

long double ref_k_cf(long double x, long double y) {
  const std::complex<long double> z(x, y);
  std::complex<long double> f = z;
  for (int k = 400; k >= 1; --k) f = z - (static_cast<long double>(k) / 2.0L) / f;
  const std::complex<long double> w = std::complex<long double>(0, 1) / (std::sqrt(std::numbers::pi_v<long double>) * f);
  return w.real();
}

long double ref_k(double x, double y) {
  if (std::hypot(x, y) >= 6.0) return ref_k_cf(x, y);
  return ref_k_integral(x, y);
}

}  // namespace

TEST(Voigt, ReferenceSelfConsistency) {
  // Both reference methods agree where both converge (|z| ~ 6..8).
  for (double x : {5.0, 6.0, 7.0}) {
    for (double y : {1.0, 3.0, 6.0}) {
      const long double a = ref_k_integral(x, y), b = ref_k_cf(x, y);
      EXPECT_NEAR(static_cast<double>(a / b), 1.0, 1e-11) << x << " " << y;
    }
  }
}

TEST(Voigt, AccuracyAgainstReference) {
  std::vector<double> xs, ys;
  for (int i = 0; i <= 200; ++i) xs.push_back(i * 0.1);                       // 0..20
  for (double v = 20; v <= 1e4; v *= 1.15) xs.push_back(v);                    // far wings
  for (double e = -6; e <= 3.0001; e += 0.25) ys.push_back(std::pow(10.0, e)); // 1e-6..1e3
  double max_rel = 0, max_rel_x = 0, max_rel_y = 0;
  double sum_rel = 0;
  long count = 0;
  for (double y : ys) {
    for (double x : xs) {
      const long double r = ref_k(x, y);
      const double k = dgrte::gas::voigt_k(x, y);
      const double rel = static_cast<double>(std::abs((k - r) / r));
      sum_rel += rel;
      ++count;
      if (rel > max_rel) {
        max_rel = rel;
        max_rel_x = x;
        max_rel_y = y;
      }
      // symmetry in x
      ASSERT_EQ(dgrte::gas::voigt_k(-x, y), k);
    }
  }
  std::printf("[voigt] %ld points, max relative error %.3e at x=%.4g y=%.4g, mean %.3e\n", count, max_rel, max_rel_x,
              max_rel_y, sum_rel / count);
  EXPECT_LT(max_rel, 5e-6);
}

TEST(Voigt, ProfileLimitsAndNormalisation) {
  using dgrte::gas::voigt_profile;
  // Pure Doppler limit: Gaussian with HWHM gd.
  const double gd = 0.005, ln2 = std::log(2.0);
  const double g0 = std::sqrt(ln2 / std::numbers::pi) / gd;
  EXPECT_NEAR(voigt_profile(0.0, gd, 0.0) / g0, 1.0, 1e-5);
  EXPECT_NEAR(voigt_profile(gd, gd, 0.0) / g0, 0.5, 1e-5);
  // Lorentz limit: gl >> gd.
  const double gl = 1.0;
  EXPECT_NEAR(voigt_profile(3.0, 1e-4, gl) / (gl / std::numbers::pi / (9.0 + gl * gl)), 1.0, 1e-5);
  // Normalisation of a Voigt line (gd = 0.005, gl = 0.02) over +-50 cm-1 (trapezoid, fine grid);
  // the Lorentz tail beyond 50 cm-1 carries 2 gl/(pi 50).
  const double gl2 = 0.02, h = 2e-4;
  double s = 0;
  for (double d = -50; d <= 50 + 1e-12; d += h) s += voigt_profile(d, gd, gl2) * h;
  EXPECT_NEAR(s + 2 * gl2 / (std::numbers::pi * 50), 1.0, 1e-5);
}
