#include "adapt/error_indicator.hpp"

#include "common/error.hpp"
#include "output/radiation_output.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

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
    const auto [e, f] = walls.face(b);
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
    const auto [e, f] = walls.face(b);
    const Eigen::Map<const Eigen::VectorXd> qb(q.data() + b * static_cast<std::size_t>(nfp), nfp);
    const double sJ = disc.geometry[e].face_scale[f] * disc.geometry[e].jacobian;  // face area / 2
    sq[e] += sJ * qb.dot(disc.ref.face_mass[static_cast<std::size_t>(f)] * qb);
  }
  return sq;
}

// A field given per wall face node of order p (b * N_fp + j, Walls order) at the wall face nodes of
// order p + 1 on the same faces: each face's polynomial interpolated with P[f] (wall_prolongation).
std::vector<double> prolong_wall_faces(const std::array<dg::Matrix, 4>& P, const problem::Walls& walls, std::span<const double> u) {
  const auto nf = static_cast<std::size_t>(P[0].cols()), nt = static_cast<std::size_t>(P[0].rows());
  if (u.size() != walls.num_faces() * nf) throw std::logic_error("prolong_wall_faces: one value per wall face node");
  std::vector<double> out(walls.num_faces() * nt, 0.0);
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const Eigen::Map<const Eigen::VectorXd> ub(u.data() + b * nf, static_cast<Eigen::Index>(nf));
    Eigen::Map<Eigen::VectorXd>(out.data() + b * nt, static_cast<Eigen::Index>(nt)) = P[static_cast<std::size_t>(walls.face(b).face)] * ub;
  }
  return out;
}

// Per element, the largest |u| at its nodes (of disc).
std::vector<double> element_peak(const transport::Discretization& disc, const std::vector<double>& u) {
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  std::vector<double> out(disc.num_elements(), 0.0);
  for (std::size_t i = 0; i < u.size(); ++i) out[i / np] = std::max(out[i / np], std::abs(u[i]));
  return out;
}

// The differences at the probe points (ErrorIndicator::element_probe_*): volume lines evaluate the
// polynomials of order p + 1 (dG, kappa dG; G_p and div q_p prolonged, for each line's largest
// |value|) at each point, wall lines interpolate dq_in and q_in,p on the wall faces at the point.
// A point outside the mesh is skipped (the run writes it as nan).
struct ProbeFields {
  std::span<const double> dG, kappa_dG;      // summed differences at the p + 1 nodes
  std::vector<double> G_p, divq_p;           // the run's, prolonged to the p + 1 nodes
  std::span<const double> dq_in, q_in;       // at the p + 1 wall face nodes
  std::span<const double> wall_dG, wall_kappa_dG;
  std::vector<double> wall_G_p, wall_divq_p;  // the run's walls' values, prolonged (empty: none)
};

void measure_on_probes(const transport::Discretization& enriched, const problem::Walls& walls, std::span<const io::ProbeSpec> probes,
                       const ProbeFields& f, ErrorIndicator& ind) {
  const std::size_t K = enriched.num_elements();
  ind.element_probe_G.assign(K, 0.0);
  ind.element_probe_divq.assign(K, 0.0);
  ind.element_probe_wall_flux.assign(K, 0.0);
  if (probes.empty()) return;
  const transport::PointLocator locator(enriched);
  std::vector<std::size_t> all_faces(walls.num_faces());
  std::iota(all_faces.begin(), all_faces.end(), std::size_t{0});
  auto record = [](std::vector<double>& per_element, const std::vector<std::pair<std::size_t, double>>& diffs, double scale) {
    for (const auto& [e, d] : diffs) per_element[e] = std::max(per_element[e], scale > 0 ? d / scale : d);
  };
  for (const auto& probe : probes) {
    std::vector<std::pair<std::size_t, double>> d_first, d_second;  // (element, |difference|) per point
    double scale_first = 0, scale_second = 0;
    if (probe.wall.empty()) {
      ind.has_volume_probes = true;
      for (const auto& [x, distance] : output::probe_points(probe)) {
        const auto loc = locator.locate(x);
        if (!loc) continue;
        // On a wall the run writes G and div q with the walls' values (output::probe_tables): theirs.
        const auto hits = output::wall_faces_at(x, enriched, walls, all_faces);
        const bool on_wall = !hits.empty() && !f.wall_G_p.empty();
        auto at = [&](std::span<const double> nodal, std::span<const double> wall) {
          return std::abs(on_wall ? output::wall_value(enriched, walls, hits, wall) : locator.evaluate(*loc, nodal));
        };
        d_first.push_back({loc->element, at(f.dG, f.wall_dG)});
        d_second.push_back({loc->element, at(f.kappa_dG, f.wall_kappa_dG)});
        scale_first = std::max(scale_first, at(f.G_p, f.wall_G_p));
        scale_second = std::max(scale_second, at(f.divq_p, f.wall_divq_p));
      }
      record(ind.element_probe_G, d_first, scale_first);
      record(ind.element_probe_divq, d_second, scale_second);
    } else {
      ind.has_wall_probes = true;
      for (const auto& hits : output::locate_wall_probe(probe, enriched, walls)) {
        const double d = std::abs(output::wall_value(enriched, walls, hits, f.dq_in));
        for (const auto& hit : hits) d_first.push_back({walls.face(hit.face).element, d});
        scale_first = std::max(scale_first, std::abs(output::wall_value(enriched, walls, hits, f.q_in)));
      }
      record(ind.element_probe_wall_flux, d_first, scale_first);
    }
  }
}

}  // namespace

ErrorEstimator::ErrorEstimator(const transport::Discretization& disc, const transport::Discretization& enriched,
                               const angular::Quadrature& quad, const problem::Walls& enriched_walls, const solver::GrayOptions& options)
    : disc_(disc), enriched_(enriched), quad_(quad), walls_(enriched_walls), options_(options) {
  if (enriched.ref.order != disc.ref.order + 1 || enriched.num_elements() != disc.num_elements())
    throw std::logic_error("ErrorEstimator: the enriched discretisation is order p + 1 on the same mesh");
  options_.backend = nullptr;  // the P+1 sweeps run on the CPU (sweep_from)
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
  for (int f = 0; f < 4; ++f)
    wall_prolongation_[static_cast<std::size_t>(f)] = disc.ref.face_interpolation_matrix(f, enriched.ref.face_node_coordinates(f));
  wall_dG_.assign(wall_nodes, 0.0);
  wall_kappa_dG_.assign(wall_nodes, 0.0);
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
  if (!solution.wall_G.empty() && !hi.wall_G.empty()) {
    const auto wall_G_p = prolong_wall_faces(wall_prolongation_, enriched_walls, solution.wall_G);
    for (std::size_t k = 0; k < wall_G_p.size(); ++k) {
      const double d = hi.wall_G[k] - wall_G_p[k];
      wall_dG_[k] += d;
      wall_kappa_dG_[k] += enriched_medium.kappa[enriched_walls.element_node(k)] * d;
    }
  }
  ++problems_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ErrorIndicator ErrorEstimator::finish(const solver::GrayResult& run, const output::RadiationFields& fields,
                                      std::span<const io::ProbeSpec> probes) const {
  const std::span<const double> G = run.G, divq = fields.divq;
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
    const std::size_t e = enriched_walls.face(k / nfp).element;
    ind.element_peak_wall_flux[e] = std::max(ind.element_peak_wall_flux[e], std::abs(dq_in_[k]));
  }
  ind.G_max = max_abs(G);
  ind.divq_max = max_abs(divq);
  ind.wall_flux_max = max_abs(q_in_);
  ProbeFields f;
  if (!probes.empty()) {
    f = {dG_, kappa_dG_, prolong(disc_.ref, enriched_.ref, G), prolong(disc_.ref, enriched_.ref, divq), dq_in_, q_in_, wall_dG_, wall_kappa_dG_, {}, {}};
    if (!run.wall_G.empty() && !fields.wall_divq.empty()) {
      f.wall_G_p = prolong_wall_faces(wall_prolongation_, enriched_walls, run.wall_G);
      f.wall_divq_p = prolong_wall_faces(wall_prolongation_, enriched_walls, fields.wall_divq);
    }
  }
  measure_on_probes(enriched_, enriched_walls, probes, f, ind);
  ind.seconds = seconds_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ind;
}

double ErrorIndicator::max_relative_G() const { return max_relative(element_peak_G, G_max); }
double ErrorIndicator::max_relative_wall_flux() const { return max_relative(element_peak_wall_flux, wall_flux_max); }
double ErrorIndicator::max_relative_divq() const { return max_relative(element_peak_divq, divq_max); }
double ErrorIndicator::probe_relative_G() const { return max_relative(element_probe_G, 1.0); }
double ErrorIndicator::probe_relative_wall_flux() const { return max_relative(element_probe_wall_flux, 1.0); }
double ErrorIndicator::probe_relative_divq() const { return max_relative(element_probe_divq, 1.0); }

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
                                   const solver::GrayResult& solution, const output::RadiationFields& fields, const solver::GrayOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  EnrichedProblem hi(cs, disc, quad);
  const auto beams = solver::solve_collimated(cs, hi.disc, quad, hi.medium, hi.walls, hi.repeated);
  ErrorEstimator estimator(disc, hi.disc, quad, hi.walls, options);
  estimator.add(hi.medium, hi.walls, solution, &beams);
  auto ind = estimator.finish(solution, fields, cs.output.probes);
  ind.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ind;
}

}  // namespace dgrte::adapt
