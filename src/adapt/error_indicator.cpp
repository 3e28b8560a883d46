#include "adapt/error_indicator.hpp"

#include "common/error.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

namespace dgrte::adapt {

std::vector<double> prolong(const dg::ReferenceTet& from, const dg::ReferenceTet& to, std::span<const double> u) {
  const dg::Matrix P = from.interpolation_matrix(to.nodes);  // N_to x N_from
  const auto nf = static_cast<std::size_t>(from.num_nodes), nt = static_cast<std::size_t>(to.num_nodes);
  const std::size_t K = u.size() / nf;
  std::vector<double> out(K * nt);
  const Eigen::Map<const Eigen::MatrixXd> U(u.data(), static_cast<Eigen::Index>(nf), static_cast<Eigen::Index>(K));
  Eigen::Map<Eigen::MatrixXd>(out.data(), static_cast<Eigen::Index>(nt), static_cast<Eigen::Index>(K)) = P * U;
  return out;
}

std::vector<double> element_l2(const transport::Discretization& disc, std::span<const double> u) {
  const auto np = static_cast<Eigen::Index>(disc.num_nodes());
  std::vector<double> out(disc.num_elements());
  for (std::size_t e = 0; e < out.size(); ++e) {
    const Eigen::Map<const Eigen::VectorXd> ue(u.data() + e * static_cast<std::size_t>(np), np);
    out[e] = std::sqrt(std::max(0.0, disc.geometry[e].jacobian * ue.dot(disc.ref.mass * ue)));
  }
  return out;
}

namespace {

double root_sum_squares(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// Per element, the squared L2 norm over its wall faces of the incident flux of the fields u (one per
// ordinate, on disc): q_in = sum_m max(0, s_bar_m . n) u_m at each face node, the face mass matrix
// integrating it. Accumulated into sq (one value per element).
void add_wall_flux_squares(const transport::Discretization& disc, const problem::Walls& walls, const angular::Quadrature& quad,
                           const std::vector<const std::vector<std::vector<double>>*>& u, const std::vector<double>& weight,
                           std::vector<double>& sq) {
  const auto np = static_cast<std::size_t>(disc.num_nodes()), nfp = static_cast<std::size_t>(disc.ref.num_face_nodes);
  Eigen::VectorXd q(static_cast<Eigen::Index>(nfp));
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const std::size_t ef = walls.element_face(b), e = ef / 4;
    const auto f = static_cast<int>(ef % 4);
    const auto& g = disc.geometry[e];
    const auto& fn = disc.ref.face_nodes[static_cast<std::size_t>(f)];
    q.setZero();
    for (std::size_t m = 0; m < quad.size(); ++m) {
      const auto& sb = quad.s_bar[m];
      const double sn = sb[0] * g.normal[f][0] + sb[1] * g.normal[f][1] + sb[2] * g.normal[f][2];
      if (sn <= 0) continue;  // enters the medium here: the wall's own value, not the solution's
      for (std::size_t set = 0; set < u.size(); ++set) {
        const auto& field = (*u[set])[m];
        for (std::size_t j = 0; j < nfp; ++j) q[static_cast<Eigen::Index>(j)] += weight[set] * sn * field[e * np + static_cast<std::size_t>(fn[j])];
      }
    }
    const double sJ = g.face_scale[f] * g.jacobian;  // face area / 2
    sq[e] += sJ * q.dot(disc.ref.face_mass[static_cast<std::size_t>(f)] * q);
  }
}

}  // namespace

ErrorIndicator estimate_gray_error(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad,
                                   const solver::GrayResult& solution, std::span<const double> divq, const solver::GrayOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const int p = disc.ref.order;
  if (p + 1 > dg::kMaxOrder)
    throw InputError(fmt::format("{}: output.error_indicator solves at order p + 1 = {}, above the largest order {}; use order <= {}",
                                 cs.file.string(), p + 1, dg::kMaxOrder, dg::kMaxOrder - 1));
  if (solution.intensities.size() != quad.size()) throw std::logic_error("estimate_gray_error: the solve must keep its intensities");
  ErrorIndicator ind;
  ind.order = p + 1;
  const auto hi = transport::make_discretization(*disc.mesh, p + 1);
  const problem::Medium medium = problem::build_medium(cs, hi, &quad);
  std::vector<std::string> repeated;  // the walls' and beams' warnings were given by the solve
  const problem::Walls walls(cs, hi, &quad, repeated);
  const auto beams = solver::solve_collimated(cs, hi, quad, medium, walls, repeated);
  std::vector<std::vector<double>> start(quad.size());
  for (std::size_t m = 0; m < quad.size(); ++m) start[m] = prolong(disc.ref, hi.ref, solution.intensities[m]);
  solver::GrayOptions opt = options;
  opt.device = nullptr;
  opt.local_mesh = nullptr;
  opt.distributed_setup = nullptr;
  opt.progress = false;
  // Plans order elements, not nodes: options.plans (the device path's) serve order p + 1 too; on the
  // CPU path it is null and the p + 1 sweeps plan their own.
  const auto enriched = solver::sweep_from(hi, quad, medium, walls, opt, start, kSweepStopFraction, 200, &beams);
  ind.sweeps = enriched.outer_iterations;
  ind.remaining = enriched.outer_residual;

  std::vector<double> dG = prolong(disc.ref, hi.ref, solution.G);
  for (std::size_t i = 0; i < dG.size(); ++i) dG[i] = enriched.G[i] - dG[i];
  ind.element_G = element_l2(hi, dG);
  ind.G = root_sum_squares(ind.element_G);
  ind.G_norm = root_sum_squares(element_l2(disc, solution.G));
  std::vector<double> kdG(dG.size());
  for (std::size_t i = 0; i < dG.size(); ++i) kdG[i] = medium.kappa[i] * dG[i];
  ind.element_divq = element_l2(hi, kdG);
  ind.divq = root_sum_squares(ind.element_divq);
  ind.divq_norm = root_sum_squares(element_l2(disc, divq));

  std::vector<double> sq(disc.num_elements(), 0.0), norm_sq(disc.num_elements(), 0.0);
  add_wall_flux_squares(hi, walls, quad, {&enriched.intensities, &start}, {1.0, -1.0}, sq);
  add_wall_flux_squares(hi, walls, quad, {&start}, {1.0}, norm_sq);
  ind.element_wall_flux.resize(sq.size());
  double total = 0, norm = 0;
  for (std::size_t e = 0; e < sq.size(); ++e) {
    ind.element_wall_flux[e] = std::sqrt(sq[e]);
    total += sq[e];
    norm += norm_sq[e];
  }
  ind.wall_flux = std::sqrt(total);
  ind.wall_flux_norm = std::sqrt(norm);
  ind.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ind;
}

}  // namespace dgrte::adapt
