#include "adapt/error_indicator.hpp"

#include "common/error.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"

#include <fmt/format.h>

#include <algorithm>
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

double max_abs(std::span<const double> v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

double max_relative(const std::vector<double>& peak, double scale) {
  const double m = peak.empty() ? 0.0 : *std::max_element(peak.begin(), peak.end());
  return scale > 0 ? m / scale : m;
}

// The incident flux of the fields u (one per ordinate, on disc) at every wall face node (b * N_fp + j):
// q_in = sum_m max(0, s_bar_m . n) u_m, added into q.
void add_incident_flux(const transport::Discretization& disc, const problem::Walls& walls, const angular::Quadrature& quad,
                       const std::vector<std::vector<double>>& u, double weight, std::vector<double>& q) {
  const auto np = static_cast<std::size_t>(disc.num_nodes()), nfp = static_cast<std::size_t>(disc.ref.num_face_nodes);
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const std::size_t ef = walls.element_face(b), e = ef / 4;
    const auto f = static_cast<int>(ef % 4);
    const auto& g = disc.geometry[e];
    const auto& fn = disc.ref.face_nodes[static_cast<std::size_t>(f)];
    for (std::size_t m = 0; m < quad.size(); ++m) {
      const auto& sb = quad.s_bar[m];
      const double sn = sb[0] * g.normal[f][0] + sb[1] * g.normal[f][1] + sb[2] * g.normal[f][2];
      if (sn <= 0) continue;  // enters the medium here: the wall's own value, not the solution's
      for (std::size_t j = 0; j < nfp; ++j) q[b * nfp + j] += weight * sn * u[m][e * np + static_cast<std::size_t>(fn[j])];
    }
  }
}

// Per element, the squared L2 norm over its wall faces of a field given at the wall face nodes (the
// face mass matrix integrating it).
std::vector<double> wall_squares(const transport::Discretization& disc, const problem::Walls& walls, const std::vector<double>& q) {
  const auto nfp = static_cast<Eigen::Index>(disc.ref.num_face_nodes);
  std::vector<double> sq(disc.num_elements(), 0.0);
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const std::size_t ef = walls.element_face(b), e = ef / 4;
    const auto f = static_cast<int>(ef % 4);
    const Eigen::Map<const Eigen::VectorXd> qb(q.data() + b * static_cast<std::size_t>(nfp), nfp);
    const double sJ = disc.geometry[e].face_scale[f] * disc.geometry[e].jacobian;  // face area / 2
    sq[e] += sJ * qb.dot(disc.ref.face_mass[static_cast<std::size_t>(f)] * qb);
  }
  return sq;
}

// Per element, the largest |u| at its nodes (of disc).
std::vector<double> element_peak(const transport::Discretization& disc, const std::vector<double>& u) {
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  std::vector<double> out(disc.num_elements(), 0.0);
  for (std::size_t i = 0; i < u.size(); ++i) out[i / np] = std::max(out[i / np], std::abs(u[i]));
  return out;
}

}  // namespace

ErrorEstimator::ErrorEstimator(const transport::Discretization& disc, const transport::Discretization& enriched,
                               const angular::Quadrature& quad, const problem::Walls& enriched_walls, const solver::GrayOptions& options)
    : disc_(disc), enriched_(enriched), quad_(quad), walls_(enriched_walls), options_(options) {
  if (enriched.ref.order != disc.ref.order + 1 || enriched.num_elements() != disc.num_elements())
    throw std::logic_error("ErrorEstimator: the enriched discretisation is order p + 1 on the same mesh");
  options_.device = nullptr;
  options_.local_mesh = nullptr;
  options_.distributed_setup = nullptr;
  options_.progress = false;
  options_.initial_intensities = nullptr;
  // Plans order elements, not nodes: made once here, they serve every problem added (a nongray
  // run's spectral points share the streaming directions).
  if (solver::uses_sweep_plans(options_)) {
    plans_ = solver::plan_sweeps(enriched, enriched_walls, quad);
    options_.plans = &plans_;
  } else {
    options_.plans = nullptr;
  }
  dG_.assign(enriched.num_dofs(), 0.0);
  kappa_dG_.assign(enriched.num_dofs(), 0.0);
  const std::size_t wall_nodes = enriched_walls.num_faces() * static_cast<std::size_t>(enriched.ref.num_face_nodes);
  dq_in_.assign(wall_nodes, 0.0);
  q_in_.assign(wall_nodes, 0.0);
}

void ErrorEstimator::add(const problem::Medium& enriched_medium, const problem::Walls& enriched_walls, const solver::GrayResult& solution,
                         const solver::Collimated* beams) {
  const auto t0 = std::chrono::steady_clock::now();
  if (solution.intensities.size() != quad_.size()) throw std::logic_error("ErrorEstimator: the solve must keep its intensities");
  std::vector<std::vector<double>> start(quad_.size());
  for (std::size_t m = 0; m < quad_.size(); ++m) start[m] = prolong(disc_.ref, enriched_.ref, solution.intensities[m]);
  const auto hi = solver::sweep_from(enriched_, quad_, enriched_medium, enriched_walls, options_, start, kSweepStopFraction, 200, beams);
  sweeps_ = std::max(sweeps_, hi.outer_iterations);
  remaining_ = std::max(remaining_, hi.outer_residual);
  const std::vector<double> G_p = prolong(disc_.ref, enriched_.ref, solution.G);
  for (std::size_t i = 0; i < dG_.size(); ++i) {
    const double d = hi.G[i] - G_p[i];
    dG_[i] += d;
    kappa_dG_[i] += enriched_medium.kappa[i] * d;
  }
  std::vector<double> q_start(q_in_.size(), 0.0);
  add_incident_flux(enriched_, enriched_walls, quad_, start, 1.0, q_start);
  add_incident_flux(enriched_, enriched_walls, quad_, hi.intensities, 1.0, dq_in_);
  for (std::size_t k = 0; k < q_start.size(); ++k) dq_in_[k] -= q_start[k], q_in_[k] += q_start[k];
  ++problems_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ErrorIndicator ErrorEstimator::finish(std::span<const double> G, std::span<const double> divq) const {
  const problem::Walls& enriched_walls = walls_;
  const auto t0 = std::chrono::steady_clock::now();
  ErrorIndicator ind;
  ind.order = enriched_.ref.order;
  ind.sweeps = sweeps_;
  ind.remaining = remaining_;
  ind.problems = problems_;
  ind.element_G = element_l2(enriched_, dG_);
  ind.G = root_sum_squares(ind.element_G);
  ind.G_norm = root_sum_squares(element_l2(disc_, G));
  ind.element_divq = element_l2(enriched_, kappa_dG_);
  ind.divq = root_sum_squares(ind.element_divq);
  ind.divq_norm = root_sum_squares(element_l2(disc_, divq));
  const auto sq = wall_squares(enriched_, enriched_walls, dq_in_), norm_sq = wall_squares(enriched_, enriched_walls, q_in_);
  ind.element_wall_flux.resize(sq.size());
  double total = 0, norm = 0;
  for (std::size_t e = 0; e < sq.size(); ++e) {
    ind.element_wall_flux[e] = std::sqrt(sq[e]);
    total += sq[e];
    norm += norm_sq[e];
  }
  ind.wall_flux = std::sqrt(total);
  ind.wall_flux_norm = std::sqrt(norm);
  ind.element_peak_G = element_peak(enriched_, dG_);
  ind.element_peak_divq = element_peak(enriched_, kappa_dG_);
  ind.element_peak_wall_flux.assign(disc_.num_elements(), 0.0);
  const std::size_t nfp = static_cast<std::size_t>(enriched_.ref.num_face_nodes);
  for (std::size_t k = 0; k < dq_in_.size(); ++k) {
    const std::size_t e = enriched_walls.element_face(k / nfp) / 4;
    ind.element_peak_wall_flux[e] = std::max(ind.element_peak_wall_flux[e], std::abs(dq_in_[k]));
  }
  ind.G_max = max_abs(G);
  ind.divq_max = max_abs(divq);
  ind.wall_flux_max = max_abs(q_in_);
  ind.seconds = seconds_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ind;
}

double ErrorIndicator::max_relative_G() const { return max_relative(element_peak_G, G_max); }
double ErrorIndicator::max_relative_wall_flux() const { return max_relative(element_peak_wall_flux, wall_flux_max); }
double ErrorIndicator::max_relative_divq() const { return max_relative(element_peak_divq, divq_max); }

void check_indicator_order(const io::CaseSpec& cs, int order) {
  if (order + 1 > dg::kMaxOrder)
    throw InputError(fmt::format("{}: output.error_indicator solves at order p + 1 = {}, above the largest order {}; use order <= {}",
                                 cs.file.string(), order + 1, dg::kMaxOrder, dg::kMaxOrder - 1));
}

namespace {
transport::Discretization enriched_discretization(const io::CaseSpec& cs, const transport::Discretization& disc) {
  check_indicator_order(cs, disc.ref.order);
  return transport::make_discretization(*disc.mesh, disc.ref.order + 1);
}
}  // namespace

EnrichedProblem::EnrichedProblem(const io::CaseSpec& cs, const transport::Discretization& run, const angular::Quadrature& quad)
    : disc(enriched_discretization(cs, run)), medium(problem::build_medium(cs, disc, &quad)), walls(cs, disc, &quad, repeated) {}

ErrorIndicator estimate_gray_error(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad,
                                   const solver::GrayResult& solution, std::span<const double> divq, const solver::GrayOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  EnrichedProblem hi(cs, disc, quad);
  const auto beams = solver::solve_collimated(cs, hi.disc, quad, hi.medium, hi.walls, hi.repeated);
  ErrorEstimator estimator(disc, hi.disc, quad, hi.walls, options);
  estimator.add(hi.medium, hi.walls, solution, &beams);
  auto ind = estimator.finish(solution.G, divq);
  ind.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ind;
}

}  // namespace dgrte::adapt
