#include "backend/opencl_ordinates.hpp"

#include "common/error.hpp"
#include "solver/gray_solver.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dgrte::backend {

device::DevicePreconditioner device_preconditioner(io::Preconditioner p) {
  switch (p) {
    case io::Preconditioner::none: return device::DevicePreconditioner::none;
    case io::Preconditioner::partial_block_jacobi: return device::DevicePreconditioner::partial_block_jacobi;
    case io::Preconditioner::block_jacobi: return device::DevicePreconditioner::block_jacobi;
    case io::Preconditioner::sweep: return device::DevicePreconditioner::sweep;
  }
  return device::DevicePreconditioner::none;
}

std::size_t OpenclOrdinates::bind(const solver::GrayProblem& problem, const solver::GrayOptions& options) {
  if (problem.distributed) throw InputError("solver.backend: opencl does not run distributed yet; use solver.backend: cpu under mpirun");
  if (options.positivity) throw InputError("solver.positivity: the positivity limiter runs in the CPU sweeps only; use solver.backend: cpu");
  p_.emplace(problem);
  opt_ = &options;
  const auto& ext = problem.medium.extinction;
  dev_.set_sigma_t(ext.nodal(), ext.block_of_element(), ext.block_data());
  dev_.set_scattering(scattering_tables());
  std::vector<int> element_face(problem.walls.num_faces());
  for (std::size_t b = 0; b < element_face.size(); ++b) element_face[b] = static_cast<int>(problem.walls.element_face(b));
  dev_.set_boundary_faces(element_face);
  // The device solves a batch together: as many ordinates as its memory budget holds.
  const int vectors = options.inner == io::InnerMethod::sweep ? device::DeviceTransport::kSweepVectors : device::DeviceTransport::kKrylovVectors;
  chunk_ = dev_.max_columns(vectors);
  if (chunk_ == 0)
    throw SolverError(fmt::format("{}: not one ordinate of {} unknowns fits the device memory budget", dev_.device().label(), problem.disc.num_dofs()));
  return chunk_;
}

device::BatchMethod OpenclOrdinates::method() const {
  device::BatchMethod b;
  b.sweep = opt_->inner == io::InnerMethod::sweep;
  b.preconditioner = device_preconditioner(opt_->preconditioner);
  b.rtol = opt_->inner_rtol;
  b.max_iterations = opt_->inner_max_iterations;
  return b;
}

// The medium's scattering operators as the device's tables ([op][m][R], zero-padded).
device::ScatteringTables OpenclOrdinates::scattering_tables() const {
  const auto& p = *p_;
  device::ScatteringTables t;
  const std::size_t M = p.quad.size(), r = p.rank();
  t.rank = static_cast<int>(r);
  t.weights.assign(p.quad.w.begin(), p.quad.w.end());
  for (const auto& sb : p.quad.s_bar) t.s_bar.insert(t.s_bar.end(), sb.begin(), sb.end());
  if (r == 0) return t;
  const auto& medium = p.medium;
  t.sigma_s.assign(medium.scattering_term.nodal().begin(), medium.scattering_term.nodal().end());
  t.sigma_s_block_of.assign(medium.scattering_term.block_of_element().begin(), medium.scattering_term.block_of_element().end());
  t.sigma_s_blocks.assign(medium.scattering_term.block_data().begin(), medium.scattering_term.block_data().end());
  t.operator_of_element.assign(medium.scattering_of_element.begin(), medium.scattering_of_element.end());
  const std::size_t ops = medium.scattering.size();
  t.to_direction.assign(ops * M * r, 0.0);
  t.to_moment.assign(ops * M * r, 0.0);
  for (std::size_t op = 0; op < ops; ++op) {
    const auto& sm = medium.scattering[op];
    const auto ro = static_cast<std::size_t>(sm.rank);
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t j = 0; j < ro; ++j) {
        t.to_direction[(op * M + m) * r + j] = sm.to_direction[m * ro + j];
        t.to_moment[(op * M + m) * r + j] = sm.to_moment[m * ro + j];
      }
  }
  return t;
}

void OpenclOrdinates::begin_sweep(std::span<const double> phi, std::span<const double> wall_state, std::span<const double>,
                                  bool with_sources, bool moments) {
  wall_state_ = wall_state, with_sources_ = with_sources;
  dev_.begin_transport_sweep(phi, moments);
}

// Columns k0.. of members: directions, ordinates, plans and (with sources) the fixed sources.
void OpenclOrdinates::load(const std::vector<int>& members, std::size_t k0, std::size_t cols) {
  const auto& p = *p_;
  const std::size_t n = p.disc.num_dofs();
  std::vector<double> dirs(3 * cols), fixed(with_sources_ ? n * cols : 0);
  std::vector<int> ordinates(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    const int m = members[k0 + c];
    const auto& v = p.walls.streaming(m);
    std::copy(v.begin(), v.end(), dirs.begin() + static_cast<long>(3 * c));
    ordinates[c] = m;
    if (with_sources_) solver::fixed_sources(p, m, std::span(fixed).subspan(n * c, n));
  }
  dev_.load_batch(dirs, ordinates, solver::uses_sweep_plans(*opt_) ? std::span<const int>(ordinates) : std::span<const int>(), fixed, method());
}

// Solves the loaded columns k0.. with the walls' inflow; their traces into the slots.
long OpenclOrdinates::solve(const std::vector<int>& members, std::size_t k0, std::size_t cols, std::vector<double>& specular, bool need_traces) {
  const auto& p = *p_;
  const std::size_t nb = p.walls.num_faces() * p.walls.face_nodes();
  const std::span<const double> extra = p.beams ? std::span<const double>(p.beams->diffuse_irradiation) : std::span<const double>();
  std::vector<double> g(nb * cols), traces(need_traces ? nb * cols : 0);
  for (std::size_t c = 0; c < cols; ++c) {
    auto& sl = slots_[k0 + c];
    const int m = members[k0 + c];
    p.walls.inflow(m, p.walls.streaming(m), with_sources_, wall_state_, specular, sl.g, extra);
    std::copy(sl.g.begin(), sl.g.end(), g.begin() + static_cast<long>(nb * c));
  }
  const long its = checked_iterations(dev_.solve_batch(g, traces), members, k0);
  if (need_traces)
    for (std::size_t c = 0; c < cols; ++c)
      std::copy(traces.begin() + static_cast<long>(nb * c), traces.begin() + static_cast<long>(nb * (c + 1)), slots_[k0 + c].traces.begin());
  return its;
}

// The moments of the converged columns k0.. are added on the device; their fields come back when kept.
void OpenclOrdinates::finish(std::size_t k0, std::size_t cols, bool keep) {
  dev_.accumulate_batch();
  if (!keep) return;
  const std::size_t n = p_->disc.num_dofs();
  std::vector<double> u(n * cols);
  dev_.read_batch_solution(u);
  for (std::size_t c = 0; c < cols; ++c)
    std::copy(u.begin() + static_cast<long>(n * c), u.begin() + static_cast<long>(n * (c + 1)), slots_[k0 + c].u.begin());
}

// The ordinates of the batch, chunk_ at a time. Specular reflection couples ordinates of a group:
// block Jacobi over the batch (every ordinate's inflow from the previous pass's traces) until the
// exchanged traces stop changing; then the moments of the converged solutions are added (a batch
// larger than a chunk is solved once more, chunk by chunk, for that).
solver::BatchCounts OpenclOrdinates::solve_batch(const solver::OrdinateBatch& batch, std::vector<double>& specular, bool keep_fields,
                                                 bool need_traces) {
  const auto& p = *p_;
  const auto& members = batch.members;
  const std::size_t count = members.size(), n = p.disc.num_dofs(), nb = p.walls.num_faces() * p.walls.face_nodes();
  const bool specular_walls = p.walls.specular_size() > 0;
  need_traces = need_traces || specular_walls;
  keep_ = keep_fields;
  if (slots_.size() < count) slots_.resize(count);
  for (std::size_t k = 0; k < count; ++k) {  // boundary-sized: no field per ordinate on the host
    slots_[k].g.resize(nb);
    slots_[k].traces.resize(nb);
    if (keep_fields) slots_[k].u.resize(n);
  }
  const std::size_t chunks = (count + chunk_ - 1) / chunk_;
  solver::BatchCounts counts;
  for (int pass = 1; pass <= solver::kMaxSpecularPasses; ++pass) {
    for (std::size_t k0 = 0; k0 < count; k0 += chunk_) {
      const std::size_t cols = std::min(chunk_, count - k0);
      if (pass == 1 || chunks > 1) load(members, k0, cols);
      counts.inner += solve(members, k0, cols, specular, need_traces);
    }
    double change = 0, magnitude = 0;
    for (std::size_t k = 0; k < count && specular_walls; ++k) {
      const auto [c, a] = p.walls.record_specular(members[k], trace_view(k), specular);
      change = std::max(change, c);
      magnitude = std::max(magnitude, a);
    }
    if (specular_walls && change > std::max(opt_->inner_rtol, 1e-13) * magnitude) continue;
    if (chunks == 1) {
      finish(0, count, keep_fields);
    } else {
      for (std::size_t k0 = 0; k0 < count; k0 += chunk_) {
        const std::size_t cols = std::min(chunk_, count - k0);
        load(members, k0, cols);
        counts.inner += solve(members, k0, cols, specular, need_traces);
        finish(k0, cols, keep_fields);
      }
    }
    counts.passes = pass;
    return counts;
  }
  solver::throw_specular_divergence(members.front(), solver::kMaxSpecularPasses);
}

// Column k's solution as the field the wall model reads: the whole field when kept, else its traces.
std::span<const double> OpenclOrdinates::solution(std::size_t k) { return keep_ ? std::span<const double>(slots_[k].u) : trace_view(k); }

// One shared scratch field whose boundary face nodes (all that Walls::record, record_specular and
// tally read) hold column k's traces; the rest of it is stale.
std::span<const double> OpenclOrdinates::trace_view(std::size_t k) {
  const auto& p = *p_;
  const std::size_t np = static_cast<std::size_t>(p.disc.num_nodes()), nfp = p.walls.face_nodes();
  trace_scratch_.resize(p.disc.num_dofs());
  const auto& traces = slots_[k].traces;
  for (std::size_t b = 0; b < p.walls.num_faces(); ++b) {
    const auto [e, f] = p.walls.face(b);
    const auto& fn = p.disc.ref.face_nodes[static_cast<std::size_t>(f)];
    for (std::size_t j = 0; j < nfp; ++j) trace_scratch_[e * np + static_cast<std::size_t>(fn[j])] = traces[b * nfp + j];
  }
  return trace_scratch_;
}

// Inner iterations of a device batch (columns k0.. of members); a column that stopped unconverged
// is an error naming its ordinate.
long OpenclOrdinates::checked_iterations(const device::BatchedSolve& res, const std::vector<int>& members, std::size_t k0) const {
  long its = 0;
  for (std::size_t c = 0; c < res.iterations.size(); ++c) {
    its += res.iterations[c];
    if (res.status[c] != device::BicgStatus::converged)
      throw SolverError(fmt::format("{}: Bi-CGSTAB of ordinate {} stopped ({}) after {} iterations, residual {:.3e} of ||b|| {:.3e} "
                                    "(rtol {:.1e}); raise solver.max_iterations or use solver.preconditioner: block-jacobi",
                                    dev_.device().label(), members[k0 + c], device::to_string(res.status[c]), res.iterations[c],
                                    res.residual_norm[c], res.rhs_norm[c], opt_->inner_rtol));
  }
  return its;
}

long OpenclOrdinates::end_sweep(std::span<double> phi_out, solver::NodalMoments* moments, std::span<double>) {
  if (moments) dev_.finish_transport_sweep(phi_out, moments->G, moments->qx, moments->qy, moments->qz);
  else dev_.finish_transport_sweep(phi_out, {}, {}, {}, {});
  return 0;
}

}  // namespace dgrte::backend
