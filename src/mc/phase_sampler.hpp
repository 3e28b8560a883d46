#pragma once
// Sampling the cosine of the scattering angle from a phase function Phi(mu) (normalised,
// (1/2) integral_{-1}^{1} Phi dmu = 1): exactly, by inverting its cumulative distribution.
// Isotropic and Henyey-Greenstein in closed form; linear and Legendre series through the exact
// CDF, (1/2)[(mu + 1) + sum_{n>=1} a_n (P_{n+1} - P_{n-1})(mu) / (2n + 1)], tabulated on a grid for
// the bracket and solved there by safeguarded Newton to round-off (no tabulation bias).
#include "angular/phase_function.hpp"

#include <array>
#include <vector>

namespace dgrte::mc {

class PhaseSampler {
 public:
  explicit PhaseSampler(const angular::PhaseFunction& phase);
  // mu with density Phi(mu)/2 on [-1, 1], for u uniform in (0, 1).
  double cosine(double u) const;
  // The cumulative distribution (1/2) integral_{-1}^{mu} Phi (for tests).
  double cdf(double mu) const;
  double value(double mu) const { return phase_(mu); }  // Phi(mu)
  const angular::PhaseFunction& phase() const { return phase_; }
  const std::vector<double>& table() const { return table_; }  // linear/Legendre: the CDF on the bracketing grid

 private:
  angular::PhaseFunction phase_;
  std::vector<double> table_;  // cdf at mu_k = -1 + 2k/(size - 1)
};

// A unit direction at cosine mu from unit d, azimuth 2 pi u about it.
std::array<double, 3> scatter_direction(const std::array<double, 3>& d, double mu, double u);

}  // namespace dgrte::mc
