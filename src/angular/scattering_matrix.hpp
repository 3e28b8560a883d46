#pragma once
// The discrete scattering operator on a quadrature: S_m = (1/4 pi) sum_m' w_m' P_mm' I_m',
// P_mm' = Phi(s_m . s_m'), normalised so that on the set every row conserves energy,
// (1/4 pi) sum_m' w_m' P_mm' = 1, and the asymmetry, (1/4 pi) sum_m' w_m' P_mm' (s_m.s_m') = g.
// Naive P fails both for strongly forward phase functions on coarse sets (Boulet et al. 2007;
// Hunter & Pilon 2013). We correct it symmetrically and linearly,
//   P~_mm' = P_mm' (1 + x_m + x_m' + (y_m + y_m') s_m.s_m'),
// the 2M unknowns (x, y) being the minimum-norm solution of the 2M constraints.
// The solver uses P~ through its eigen-factorisation (exact, truncated at round-off):
//   W^{1/2} (P~/4 pi) W^{1/2} = V L V^T, so S_m = sum_k Y[m][k] phi_k, phi_k = sum_m Z[m][k] I_m,
//   Y = W^{-1/2} V L, Z = W^{1/2} V. Rank 1 for isotropic scattering, 4 for linear anisotropic.
#include "angular/phase_function.hpp"
#include "angular/quadrature.hpp"

#include <vector>

namespace dgrte::angular {

struct ScatteringMoments {
  int rank = 0;
  std::vector<double> to_moment;     // Z, M x rank row-major
  std::vector<double> to_direction;  // Y, M x rank row-major (the 1/4 pi included)
  double energy_residual = 0, asymmetry_residual = 0;        // after normalisation, max over m
  double energy_error_naive = 0, asymmetry_error_naive = 0;  // of the un-normalised matrix
  bool normalised = false;
};

// P~ (M x M, row-major) of a phase function on a set, with the residuals.
std::vector<double> normalised_phase_matrix(const Quadrature& q, const PhaseFunction& phase, ScatteringMoments* report = nullptr);

ScatteringMoments scattering_moments(const Quadrature& q, const PhaseFunction& phase);

}  // namespace dgrte::angular
