#pragma once
// Direction-dependent pieces of the upwind DG transport operator (He et al. 2013, Eqs. 15-25,
// strong form; Hesthaven & Warburton 2008, sec. 2.2):
//   (A u)_e = sum_d a_d(e) D_d u_e + K_e u_e + LIFT ( c_ef (u+ - u-) on inflow faces ),
// where a_d(e) = s . grad(r_d) and c_ef = (sJ/J)_ef (s . n_ef) on faces with s . n < 0 (else 0).
// K_e is the extinction term (transport/reaction.hpp). Boundary inflow (u+ = g) moves to the right-hand side.
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"

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

// Element-local diagonal block of A (N_p x N_p): streaming + inflow face terms, plus the element's
// extinction block when sigma_t is given (null: the partial block without it).
Eigen::MatrixXd element_block(const Discretization& disc, const DirectionCoefficients& c, std::size_t e,
                              const ReactionTerm* sigma_t);

// rhs_e -= LIFT (c_ef g) on boundary inflow faces; g at [(e*4+f)*N_fp + j] (ignored elsewhere).
void add_boundary_inflow(const Discretization& disc, const DirectionCoefficients& c, std::span<const double> g,
                         std::span<double> rhs);

}  // namespace dgrte::transport
