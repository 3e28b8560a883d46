#pragma once
// The discrete scattering operator on a quadrature,
//   S_m / sigma_s = (1/4 pi) sum_m' w_m' P~_mm' I_m',
// with P~ the phase matrix P_mm' normalised so that on the set every row conserves
// the scattered energy, (1/4 pi) sum_m' w_m' P~_mm' = 1, and the asymmetry factor,
// (1/4 pi) sum_m' w_m' P~_mm' (s_m . s_m') = g, with P~ symmetric (reciprocity). See
// scattering_matrix.cpp for the method and why. Before normalisation P_mm' is either
//  * point: Phi(s_m . s_m'), or
//  * cell-averaged: the mean of Phi(s_m . s) over the control angle of ordinate m' (sets with cells:
//    finite-volume and product), i.e. the scattering integral with I constant on each control angle,
//    as finite-volume codes do (Chui & Raithby 1993; Boulet et al. 2007). On a product set it
//    integrates the azimuth exactly, which a peaked function needs: HG g = 0.8 on product 16 x 8 has
//    0.8 % error in G on the scattering slab with point values (validation/scattering_slab).
// `automatic` (the default) cell-averages Henyey-Greenstein, whose harmonics never end, and samples
// finite Legendre series (linear, legendre, Kim & Lee) at points: uniform azimuths integrate their
// harmonics exactly once the set has more azimuths than the degree, and the factorised rank stays
// at most (L+1)^2 (averaging by sub-quadrature would fill it up to M).
//
// For the solver P~ is factorised exactly (truncated at round-off): with W = diag(w),
//   W^{1/2} (P~/4 pi) W^{1/2} = V L V^T,  Z = W^{1/2} V,  Y = W^{-1/2} V L,
// so that S_m / sigma_s = sum_k Y[m][k] phi_k with the moments phi_k = sum_m' Z[m'][k] I_m'.
// Isotropic scattering has rank 1 (Z[m] = w_m, so phi = G; Y = 1/4 pi); a linear-anisotropic
// function rank 4; a Legendre series of degree L at most (L+1)^2 where P needs no normalisation.
// The normalisation P~ = P o (1 + x_m + x_m' + (y_m + y_m') mu_mm') keeps rank(P~) <= 8 rank(P).
#include "angular/phase_function.hpp"
#include "angular/quadrature.hpp"

#include <vector>

namespace dgrte::angular {

struct ScatteringMoments {
  int rank = 0;                      // r
  std::vector<double> to_moment;     // Z: M x r row-major, phi_k = sum_m Z[m*r+k] I_m
  std::vector<double> to_direction;  // Y: M x r row-major, S_m/sigma_s = sum_k Y[m*r+k] phi_k (includes 1/4 pi)
  // max over m of |(1/4pi) sum_m' w_m' P_mm' - 1| and |(1/4pi) sum_m' w_m' P_mm' mu_mm' - g|:
  double energy_residual = 0, asymmetry_residual = 0;        // of P~, after normalisation
  double energy_error_naive = 0, asymmetry_error_naive = 0;  // of P = Phi(s_m . s_m')
  bool normalised = false;                                   // P~ differs from P
  bool cell_averaged = false;                                // P from control-angle averages
};

enum class PhaseSampling { automatic, cell_average, point };

// P~ (M x M, row-major) of a phase function on a set; fills the residual fields of *report if given.
// InputError (naming the function and the set) if no non-negative P~ of this form meets both conditions
// to 1e-8: a set too coarse for the function (degenerate sets such as product 2 x 1 with HG -0.9).
// Cell averaging on a set without cells (q.cells empty: LQ, T_N, file sets) falls back to point values.
std::vector<double> normalised_phase_matrix(const Quadrature& q, const PhaseFunction& phase, ScatteringMoments* report = nullptr,
                                            PhaseSampling sampling = PhaseSampling::automatic);

ScatteringMoments scattering_moments(const Quadrature& q, const PhaseFunction& phase,
                                     PhaseSampling sampling = PhaseSampling::automatic);

}  // namespace dgrte::angular
