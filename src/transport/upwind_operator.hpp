#pragma once
// Direction-dependent pieces of the upwind DG transport operator (He et al. 2013, Eqs. 15-25,
// strong form; Hesthaven & Warburton 2008, sec. 2.2):
//   (A u)_e = sum_d a_d(e) D_d u_e + kappa u_e + LIFT ( c_ef (u+ - u-) on inflow faces ),
// where a_d(e) = s . grad(r_d) and c_ef = (sJ/J)_ef (s . n_ef) on faces with s . n < 0 (else 0).
// Boundary inflow (u+ = g) moves to the right-hand side.
#include "transport/discretization.hpp"

#include <Eigen/Dense>

#include <span>
#include <vector>

namespace dgrte::transport {

struct DirectionCoefficients {
  Vec3 direction{};
  std::vector<std::array<double, 3>> stream;  // a_r, a_s, a_t per element
  std::vector<std::array<double, 4>> inflow;  // c_ef per element face (0 on outflow faces)
};

DirectionCoefficients direction_coefficients(const Discretization& disc, const Vec3& s);

// Element-local diagonal block of A (N_p x N_p): streaming + inflow face terms, plus kappa when
// include_kappa. Block Jacobi and sweeps both use it. kappa_e = nodal kappa of the element.
Eigen::MatrixXd element_block(const Discretization& disc, const DirectionCoefficients& c, std::size_t e,
                              const double* kappa_e, bool include_kappa);

// rhs_e -= LIFT (c_ef g) on boundary inflow faces; g at [(e*4+f)*N_fp + j] (ignored elsewhere).
void add_boundary_inflow(const Discretization& disc, const DirectionCoefficients& c, std::span<const double> g,
                         std::span<double> rhs);

}  // namespace dgrte::transport
