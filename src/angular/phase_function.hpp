#pragma once
// Scattering phase functions Phi(mu), mu = cosine of the scattering angle, normalised so that
// (1/4 pi) integral of Phi over the sphere = 1; the asymmetry factor g is the mean of mu.
#include <string>
#include <vector>

namespace dgrte::angular {

struct PhaseFunction {
  enum class Type { isotropic, linear, henyey_greenstein, legendre };
  Type type = Type::isotropic;
  std::string name = "isotropic";  // "isotropic", "HG g=0.8", "Kim & Lee F2", ...
  double g = 0;                    // Henyey-Greenstein asymmetry
  std::vector<double> a;           // linear/legendre: Phi = sum a_n P_n(mu), a_0 = 1, g = a_1/3
  double operator()(double mu) const;
  double asymmetry() const;  // g
  bool is_isotropic() const;
};

PhaseFunction isotropic();
// 1 + a1 mu; |a1| <= 1 keeps Phi >= 0.
PhaseFunction linear_anisotropic(double a1);
// (1 - g^2) / (1 + g^2 - 2 g mu)^(3/2); |g| < 1.
PhaseFunction henyey_greenstein(double g);
// Finite Legendre series. Checks a_0 = 1 (to 1e-12) and Phi >= 0 on a grid of 20001 cosines (an
// InputError says where Phi is most negative and by how much).
PhaseFunction legendre(std::vector<double> a, std::string name = "Legendre series");
// Kim & Lee (1988) F1, F2, F3, B1, B2 (T.-K. Kim, H. Lee, Int. J. Heat Mass Transfer 31 (1988) 1711).
// F1 uses a_7 = 2.23304, not the 1.23304 of the only transcription found (see phase_function.cpp).
PhaseFunction kim_lee(const std::string& name);

}  // namespace dgrte::angular
