#pragma once
// Scattering phase functions Phi(mu), mu = cosine of the scattering angle, normalised so that
// (1/4 pi) integral of Phi over the sphere = 1 and g = average of mu.
#include <string>
#include <vector>

namespace dgrte::angular {

struct PhaseFunction {
  enum class Type { isotropic, linear, henyey_greenstein, legendre };
  Type type = Type::isotropic;
  std::string name = "isotropic";
  double g = 0;           // Henyey-Greenstein asymmetry
  std::vector<double> a;  // Legendre coefficients: Phi = sum a_n P_n(mu), a_0 = 1, g = a_1 / 3
  double operator()(double mu) const;
  double asymmetry() const;
  bool is_isotropic() const;
};

PhaseFunction isotropic();
PhaseFunction linear_anisotropic(double a1);  // 1 + a1 mu, |a1| <= 1
PhaseFunction henyey_greenstein(double g);    // |g| < 1
// Legendre series; a_0 = 1 and Phi >= 0 on [-1, 1] are checked (InputError saying where).
PhaseFunction legendre(std::vector<double> a, std::string name = "Legendre series");
// Kim & Lee (1988) F1, F2, F3, B1, B2 (Int. J. Heat Mass Transfer 31, 1711), coefficients as
// transcribed in F18/CFFC src_2D/Rte2D/Scatter.h. F1 there prints a_7 = 1.23304, which makes Phi
// negative (min -0.32 at mu = -0.875); we use a_7 = 2.23304, the value most citations give,
// which makes F1 positive. Not confirmed against the original table.
PhaseFunction kim_lee(const std::string& name);

}  // namespace dgrte::angular
