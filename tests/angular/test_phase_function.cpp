// Phase functions: normalisation and asymmetry by 64-point Gauss-Legendre quadrature in mu, positivity,
// the Kim & Lee (1988) sets, and the error cases.
#include "angular/phase_function.hpp"
#include "common/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace dgrte::angular {
namespace {

// 64-point Gauss-Legendre on (-1, 1) (Newton on P_64), for (1/2) integral Phi mu^k dmu.
struct Gauss64 {
  std::vector<double> x, w;
  Gauss64() {
    const int n = 64;
    for (int i = 0; i < n; ++i) {
      double z = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5)), p1 = 0, p0 = 0;
      for (int it = 0; it < 50; ++it) {
        p0 = 1, p1 = z;
        for (int k = 2; k <= n; ++k) {
          const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
          p0 = p1, p1 = p2;
        }
        z -= p1 / (n * (z * p1 - p0) / (z * z - 1));
      }
      p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1, p1 = p2;
      }
      const double dp = n * (z * p1 - p0) / (z * z - 1);
      x.push_back(z);
      w.push_back(2 / ((1 - z * z) * dp * dp));
    }
  }
  double mean(const PhaseFunction& p, int power) const {
    double s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s += w[i] * p(x[i]) * std::pow(x[i], power);
    return s / 2;
  }
};

std::vector<PhaseFunction> all_functions() {
  return {isotropic(),          linear_anisotropic(0.6), linear_anisotropic(-1), henyey_greenstein(0.5), henyey_greenstein(-0.4),
          henyey_greenstein(0.8), kim_lee("F1"),         kim_lee("F2"),          kim_lee("F3"),          kim_lee("B1"),
          kim_lee("B2"),        legendre({1, 0, 0.5})};
}

TEST(PhaseFunction, NormalisedWithTheirAsymmetry) {
  const Gauss64 gauss;
  for (const auto& p : all_functions()) {
    // Series up to degree 12 are integrated exactly; HG g = 0.8 (pole at mu = 1.025) only to 5e-12 by
    // 64 points.
    const double tol = p.type == PhaseFunction::Type::henyey_greenstein ? 1e-11 : 1e-13;
    EXPECT_NEAR(gauss.mean(p, 0), 1.0, tol) << p.name;
    EXPECT_NEAR(gauss.mean(p, 1), p.asymmetry(), tol) << p.name;
  }
  // He et al. (2013) quote g for the Kim & Lee sets; they equal a_1/3.
  EXPECT_NEAR(kim_lee("F1").asymmetry(), 0.84534, 5e-6);
  EXPECT_NEAR(kim_lee("F2").asymmetry(), 0.66972, 5e-6);
  EXPECT_NEAR(kim_lee("B1").asymmetry(), -0.18841, 5e-6);
  EXPECT_NEAR(kim_lee("B2").asymmetry(), -0.4, 1e-15);
  EXPECT_NEAR(kim_lee("F3").asymmetry(), 0.4, 1e-15);
}

TEST(PhaseFunction, Values) {
  EXPECT_EQ(isotropic()(0.3), 1.0);
  EXPECT_NEAR(linear_anisotropic(0.6)(-0.5), 0.7, 1e-15);
  const double g = 0.8;
  EXPECT_NEAR(henyey_greenstein(g)(1), (1 + g) / ((1 - g) * (1 - g)), 1e-12);
  EXPECT_NEAR(henyey_greenstein(g)(-1), (1 - g) / ((1 + g) * (1 + g)), 1e-15);
  EXPECT_NEAR(legendre({1, 0, 0.5})(0.4), 1 + 0.5 * (3 * 0.16 - 1) / 2, 1e-15);
  // P_3 by the recurrence: (5 mu^3 - 3 mu)/2.
  EXPECT_NEAR(legendre({1, 0, 0, 0.2})(0.7), 1 + 0.2 * (5 * 0.343 - 3 * 0.7) / 2, 1e-15);
  EXPECT_EQ(kim_lee("F2").name, "Kim & Lee F2");
  EXPECT_EQ(henyey_greenstein(0.8).name, "HG g=0.8");
}

TEST(PhaseFunction, PositiveEverywhere) {
  for (const auto& p : all_functions()) {
    double lowest = 1e300;
    for (int i = 0; i <= 200000; ++i) lowest = std::min(lowest, p(-1 + i / 100000.0));
    EXPECT_GE(lowest, 0.0) << p.name;
  }
  // F1 with a_7 = 2.23304 dips to +0.026 near mu = -0.497 (shared/literature/phase-functions).
  const auto f1 = kim_lee("F1");
  double lowest = 1e300, at = 0;
  for (int i = 0; i <= 200000; ++i)
    if (const double mu = -1 + i / 100000.0, v = f1(mu); v < lowest) lowest = v, at = mu;
  EXPECT_NEAR(lowest, 0.026, 1e-3);
  EXPECT_NEAR(at, -0.497, 2e-3);
}

TEST(PhaseFunction, KimLeeF1AsPrintedIsNegative) {
  // The CFFC transcription prints a_7 = 1.23304: Phi < 0 (min -0.322 at mu = -0.875), refused.
  try {
    legendre({1.0, 2.53602, 3.56549, 3.97976, 4.00292, 3.66401, 3.01601, 1.23304, 1.30351, 0.53463, 0.20136, 0.05480, 0.01099},
             "F1 as printed");
    FAIL() << "a negative phase function was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("F1 as printed"), std::string::npos) << m;
    EXPECT_NE(m.find("negative, min -0.3219"), std::string::npos) << m;
    EXPECT_NE(m.find("-0.875"), std::string::npos) << m;
  }
}

TEST(PhaseFunction, IsIsotropic) {
  EXPECT_TRUE(isotropic().is_isotropic());
  EXPECT_TRUE(henyey_greenstein(0).is_isotropic());
  EXPECT_TRUE(legendre({1}).is_isotropic());
  EXPECT_TRUE(legendre({1, 0, 0}).is_isotropic());
  EXPECT_TRUE(linear_anisotropic(0).is_isotropic());
  EXPECT_FALSE(linear_anisotropic(0.1).is_isotropic());
  EXPECT_FALSE(henyey_greenstein(-0.1).is_isotropic());
  EXPECT_FALSE(kim_lee("B2").is_isotropic());
  EXPECT_EQ(isotropic().asymmetry(), 0.0);
}

TEST(PhaseFunction, BadInputIsAnError) {
  for (double g : {1.0, -1.0, 1.5, std::nan("")}) EXPECT_THROW(henyey_greenstein(g), InputError) << g;
  for (double a1 : {1.0001, -2.0, std::nan("")}) EXPECT_THROW(linear_anisotropic(a1), InputError) << a1;
  EXPECT_NO_THROW(linear_anisotropic(1.0));
  EXPECT_NO_THROW(henyey_greenstein(0.99));
  try {
    legendre({0.9, 0.5});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a0 = 0.9"), std::string::npos) << e.what();
  }
  EXPECT_THROW(legendre({}), InputError);
  EXPECT_THROW(legendre({1.0, 2.9}), InputError);  // 1 - 2.9 at mu = -1
  EXPECT_THROW(legendre({1.0, std::nan("")}), InputError);
  EXPECT_THROW(kim_lee("F9"), InputError);
  EXPECT_EQ(kim_lee("f2").name, "Kim & Lee F2");
}

}  // namespace
}  // namespace dgrte::angular
