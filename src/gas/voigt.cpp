#include "gas/voigt.hpp"

#include <array>
#include <cmath>
#include <numbers>

namespace dgrte::gas {
namespace {

constexpr int kWeidemanN = 32;

struct Weideman {
  double L = 0;
  std::array<double, kWeidemanN + 1> a{};  // a[1..N]: coefficient of Z^(k-1)

  Weideman() {
    const int M = 2 * kWeidemanN;
    L = std::sqrt(kWeidemanN / std::numbers::sqrt2);
    // A_n = (1/2M) sum_{k=-M+1}^{M-1} g(k) cos(pi k n / M),  g(k) = exp(-t^2)(L^2 + t^2),
    // t = L tan(k pi / (2M)): the real part of the FFT in Weideman's algorithm (g is even in k).
    for (int n = 1; n <= kWeidemanN; ++n) {
      double s = 0;
      for (int k = -M + 1; k <= M - 1; ++k) {
        const double t = L * std::tan(k * std::numbers::pi / (2.0 * M));
        const double g = std::exp(-t * t) * (L * L + t * t);
        s += g * std::cos(std::numbers::pi * k * n / M);
      }
      a[n] = s / (2.0 * M);
    }
  }
};

const Weideman& weideman() {
  static const Weideman w;
  return w;
}

// Weideman N=32, full complex result, real arithmetic.
inline void weideman_w(double x, double y, double& wr, double& wi) {
  const Weideman& W = weideman();
  const double L = W.L;
  const double lpy = L + y;
  const double den = lpy * lpy + x * x;
  const double inv_den = 1.0 / den;
  // Z = (L + iz)/(L - iz)
  const double zr = (L * L - y * y - x * x) * inv_den;
  const double zi = 2.0 * L * x * inv_den;
  // q = 1/(L - iz) = ((L + y) + i x)/den
  const double qr = lpy * inv_den;
  const double qi = x * inv_den;
  double pr = W.a[kWeidemanN], pi = 0;
  for (int k = kWeidemanN - 1; k >= 1; --k) {
    const double nr = pr * zr - pi * zi + W.a[k];
    const double ni = pr * zi + pi * zr;
    pr = nr;
    pi = ni;
  }
  // q^2
  const double q2r = qr * qr - qi * qi;
  const double q2i = 2.0 * qr * qi;
  constexpr double inv_sqrt_pi = std::numbers::inv_sqrtpi;
  wr = 2.0 * (pr * q2r - pi * q2i) + inv_sqrt_pi * qr;
  wi = 2.0 * (pr * q2i + pi * q2r) + inv_sqrt_pi * qi;
}

// Humlicek region II: w = t (c1 + c2 u)/(0.75 + u (3 + u)), t = y - i x, u = t^2.
inline void humlicek2_w(double x, double y, double& wr, double& wi) {
  constexpr double c2 = std::numbers::inv_sqrtpi;  // 0.5641896
  constexpr double c1 = 2.5 * std::numbers::inv_sqrtpi;  // 1.410474
  const double ur = y * y - x * x;
  const double ui = -2.0 * x * y;
  // numerator n = t (c1 + c2 u)
  const double ar = c1 + c2 * ur, ai = c2 * ui;
  const double nr = y * ar + x * ai;   // (y - i x)(ar + i ai) = y ar + x ai + i (y ai - x ar)
  const double ni = y * ai - x * ar;
  // denominator d = 0.75 + u (3 + u)
  const double br = 3.0 + ur, bi = ui;
  const double dr = 0.75 + ur * br - ui * bi;
  const double di = ur * bi + ui * br;
  const double inv = 1.0 / (dr * dr + di * di);
  wr = (nr * dr + ni * di) * inv;
  wi = (ni * dr - nr * di) * inv;
}

}  // namespace

WeidemanCoefficients weideman_coefficients() {
  const Weideman& w = weideman();
  return {w.L, std::vector<double>(w.a.begin(), w.a.end())};
}

std::complex<double> faddeeva(double x, double y) {
  double wr = 0, wi = 0;
  if (std::abs(x) + y >= kVoigtAsymptoticS) {
    humlicek2_w(x, y, wr, wi);
  } else {
    weideman_w(x, y, wr, wi);
  }
  return {wr, wi};
}

double voigt_k(double x, double y) {
  const double ax = std::abs(x);
  if (ax + y >= kVoigtAsymptoticS) {
    // Real part of the Humlicek region-II form, simplified.
    constexpr double c2 = std::numbers::inv_sqrtpi;
    constexpr double c1 = 2.5 * std::numbers::inv_sqrtpi;
    const double ur = y * y - ax * ax;
    const double ui = -2.0 * ax * y;
    const double ar = c1 + c2 * ur, ai = c2 * ui;
    const double nr = y * ar + ax * ai;
    const double ni = y * ai - ax * ar;
    const double br = 3.0 + ur;
    const double dr = 0.75 + ur * br - ui * ui;
    const double di = ur * ui + ui * br;
    return (nr * dr + ni * di) / (dr * dr + di * di);
  }
  double wr = 0, wi = 0;
  weideman_w(ax, y, wr, wi);
  return wr;
}

double voigt_profile(double dnu, double gamma_d, double gamma_l) {
  constexpr double sqrt_ln2 = 0.83255461115769775635;
  const double inv_gd = 1.0 / gamma_d;
  const double x = sqrt_ln2 * dnu * inv_gd;
  const double y = sqrt_ln2 * gamma_l * inv_gd;
  return sqrt_ln2 * std::numbers::inv_sqrtpi * inv_gd * voigt_k(x, y);
}

}  // namespace dgrte::gas
