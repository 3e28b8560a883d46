#include "transport/upwind_operator.hpp"

#include "transport/sweep.hpp"

namespace dgrte::transport {

namespace {
}  // namespace

DirectionCoefficients direction_coefficients(const Discretization& disc, const Vec3& s) {
  const std::size_t K = disc.num_elements();
  DirectionCoefficients c;
  c.direction = s;
  c.stream.resize(K);
  c.inflow.resize(K);
  for (std::size_t e = 0; e < K; ++e) {
    const auto& g = disc.geometry[e];
    for (int d = 0; d < 3; ++d) c.stream[e][d] = dot(s, g.grad_rst[d]);
    for (int f = 0; f < 4; ++f) c.inflow[e][f] = inflow_coefficient(g, f, s);
  }
  return c;
}

Eigen::MatrixXd element_block(const Discretization& disc, const DirectionCoefficients& c, std::size_t e,
                              const ReactionTerm* sigma_t) {
  const auto& ref = disc.ref;
  const int nfp = ref.num_face_nodes;
  Eigen::MatrixXd B = c.stream[e][0] * ref.Dr + c.stream[e][1] * ref.Ds + c.stream[e][2] * ref.Dt;
  if (sigma_t) sigma_t->add_to(e, B.data());
  // The -u^- part of c (u+ - u-) on inflow faces couples the element to itself.
  for (int f = 0; f < 4; ++f) {
    const double cf = c.inflow[e][f];
    if (cf == 0.0) continue;
    for (int j = 0; j < nfp; ++j) B.col(ref.face_nodes[f][j]) -= cf * ref.lift.col(f * nfp + j);
  }
  return B;
}

void add_boundary_inflow(const Discretization& disc, const DirectionCoefficients& c, std::span<const double> g,
                         std::span<double> rhs) {
  const auto& ref = disc.ref;
  const int np = ref.num_nodes, nfp = ref.num_face_nodes;
  const std::size_t K = disc.num_elements();
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < static_cast<std::ptrdiff_t>(K); ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    for (int f = 0; f < 4; ++f) {
      const double cf = c.inflow[e][f];
      if (cf == 0.0 || disc.mesh->neighbour[e][f] >= 0) continue;
      Eigen::Map<Eigen::VectorXd> r(rhs.data() + e * np, np);
      const Eigen::Map<const Eigen::VectorXd> ge(g.data() + (e * 4 + f) * nfp, nfp);
      r.noalias() -= cf * ref.lift.middleCols(f * nfp, nfp) * ge;
    }
  }
}

}  // namespace dgrte::transport
