#include "solver/cpu_ordinates.hpp"

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "parallel/boundary_exchange.hpp"
#include "parallel/distributed_transport.hpp"
#include "parallel/ghost_exchange.hpp"
#include "transport/krylov_solver.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>

namespace dgrte::solver {

std::size_t CpuOrdinates::bind(const GrayProblem& problem, const GrayOptions& options) {
  p_.emplace(problem);
  opt_ = &options;
  boundary_ = nullptr, nodes_ = nullptr, any_specular_ = false;
  if (problem.distributed) {
    boundary_ = problem.distributed->boundary.get();
    nodes_ = problem.distributed->nodes.get();
    any_specular_ = problem.distributed->any_specular;
    if (boundary_) sent_.assign(boundary_->sent_elements().size() * boundary_->values_per_element(), 0.0);
  }
  const std::size_t n = problem.disc.num_dofs();
  if (options.inner == io::InnerMethod::sweep) {
    // As many ordinates per batch as a 64 MB field budget allows (at least two per thread):
    // fewer OpenMP regions per transport sweep; barriers are costly on a loaded machine.
    const std::size_t per_ordinate = 3 * n * sizeof(double) + problem.walls.num_faces() * problem.walls.face_nodes() * sizeof(double);
    return std::max<std::size_t>(2 * static_cast<std::size_t>(omp_get_max_threads()), (std::size_t{64} << 20) / per_ordinate);
  }
  cpu_ = std::make_unique<transport::CpuTransport>(problem.disc, options.block_budget_bytes);
  return 1;
}

std::size_t CpuOrdinates::ghost_size() const { return boundary_ ? boundary_->ghost_values() : 0; }

void CpuOrdinates::begin_sweep(std::span<const double> phi, std::span<const double> wall_state, std::span<const double> ghosts_in,
                               bool with_sources, bool) {
  phi_ = phi, wall_state_ = wall_state, ghosts_in_ = ghosts_in, with_sources_ = with_sources;
}

BatchCounts CpuOrdinates::solve_batch(const OrdinateBatch& batch, std::vector<double>& specular, bool, bool) {
  const auto& p = *p_;
  const std::size_t n = p.disc.num_dofs(), nb = p.walls.num_faces() * p.walls.face_nodes();
  if (slots_.size() < batch.members.size()) slots_.resize(batch.members.size());
  for (std::size_t k = 0; k < batch.members.size(); ++k) {
    slots_[k].u.resize(n), slots_[k].base.resize(n), slots_[k].rhs.resize(n), slots_[k].g.resize(nb);
  }
  const auto ng = static_cast<long>(batch.group_begin.size() - 1);
  std::vector<BatchCounts> counts(static_cast<std::size_t>(ng));
  // Groups in parallel with sweeps (PETSc's Bi-CGSTAB runs one ordinate at a time).
  parallel_for(ng, opt_->inner == io::InnerMethod::sweep && !opt_->threads_over_levels ? 2 : ng + 1, [&](long gi) {
    const auto gu = static_cast<std::size_t>(gi);
    counts[gu] = solve_group(batch, batch.group_begin[gu], batch.group_begin[gu + 1], specular);
  }, 1);
  BatchCounts total;
  for (const auto& c : counts) total.inner += c.inner, total.passes += c.passes, total.limited += c.limited, total.exchanges += c.exchanges;
  return total;
}

// The ordinates members[k0, k1) of one reflection group. Specular reflection couples them: block
// Gauss-Seidel over the group until the traces they exchange stop changing.
BatchCounts CpuOrdinates::solve_group(const OrdinateBatch& batch, std::size_t k0, std::size_t k1, std::vector<double>& specular) {
  const auto& p = *p_;
  BatchCounts counts;
  for (std::size_t k = k0; k < k1; ++k) scattering_sources(p, batch.members[k], phi_, with_sources_, slots_[k].base);
  // Global inner solves (nodes_) pass in step on every rank: the same test everywhere.
  const bool coupled = k1 - k0 > 1 && (nodes_ ? any_specular_ : p.walls.specular_size() > 0);
  const std::span<const double> extra = p.beams ? std::span<const double>(p.beams->diffuse_irradiation) : std::span<const double>();
  for (int pass = 1; pass <= kMaxSpecularPasses; ++pass) {
    double change = 0, magnitude = 0;
    for (std::size_t k = k0; k < k1; ++k) {
      const int m = batch.members[k];
      auto& sl = slots_[k];
      const auto& v = p.walls.streaming(m);
      p.walls.inflow(m, v, with_sources_, wall_state_, specular, sl.g, extra);
      std::copy(sl.base.begin(), sl.base.end(), sl.rhs.begin());
      p.walls.lift(v, sl.g, sl.rhs);
      std::fill(sl.u.begin(), sl.u.end(), 0.0);
      if (boundary_) load_ghosts(m, sl.u);
      counts.inner += solve_one(m, sl.rhs, sl.u, counts);
      if (boundary_) store_sent(m, sl.u);
      const auto [c, a] = p.walls.record_specular(m, sl.u, specular);
      change = std::max(change, c);
      magnitude = std::max(magnitude, a);
    }
    if (nodes_ && coupled) {
      double cm[2] = {change, magnitude};
      MPI_Allreduce(MPI_IN_PLACE, cm, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
      change = cm[0], magnitude = cm[1];
    }
    if (!coupled || change <= std::max(opt_->inner_rtol, 1e-13) * magnitude) {
      counts.passes = pass;
      return counts;
    }
  }
  throw_specular_divergence(batch.members[k0], kMaxSpecularPasses);
}

long CpuOrdinates::solve_one(int m, const std::vector<double>& rhs, std::vector<double>& u, BatchCounts& counts) {
  if (opt_->inner == io::InnerMethod::sweep) {
    const auto r = transport::sweep_solve(p_->disc, (*p_->plans)[static_cast<std::size_t>(m)], p_->medium.extinction, rhs, u,
                                          opt_->inner_rtol, 200, opt_->positivity);
    counts.limited += r.limited;
    return r.passes;
  }
  return solve_bicgstab(m, rhs, u, counts);
}

int CpuOrdinates::solve_bicgstab(int m, const std::vector<double>& rhs, std::vector<double>& u, BatchCounts& counts) {
  const auto& p = *p_;
  const auto blocks = block_kind(opt_->preconditioner);
  const auto& v = p.walls.streaming(m);
  transport::KrylovOptions ko;
  ko.rtol = opt_->inner_rtol;
  ko.max_iterations = opt_->inner_max_iterations;
  ko.precondition = opt_->preconditioner != io::Preconditioner::none;
  ko.label = fmt::format("ordinate {} ({:.5g}, {:.5g}, {:.5g})", m, v[0], v[1], v[2]);
  auto solve = [&](transport::TransportBackend& local) {
    if (!nodes_) {
      local.set_direction(v, p.medium.extinction, blocks);
      return transport::solve_bicgstab(local, rhs, u, ko).iterations;
    }
    // One global solve over the owned unknowns (block Jacobi across ranks with the sweep).
    const std::size_t owned = p.solved * static_cast<std::size_t>(p.disc.num_nodes());
    parallel::DistributedTransport global(local, *nodes_, owned);
    global.set_direction(v, p.medium.extinction, blocks);
    const int its = transport::solve_bicgstab(global, std::span(rhs).first(owned), std::span(u).first(owned), ko).iterations;
    counts.exchanges += static_cast<long>(global.exchanges());
    return its;
  };
  if (opt_->preconditioner == io::Preconditioner::sweep) {
    transport::SweepPreconditioned op(*cpu_, p.disc, (*p.plans)[static_cast<std::size_t>(m)], p.medium.extinction);
    return solve(op);
  }
  return solve(*cpu_);
}

// Ordinate m's inflow through the partition faces: its ghost values from the outer vector (laid
// out ghost by ghost, ordinate by ordinate, node by node), into u's ghost block.
void CpuOrdinates::load_ghosts(int m, std::span<double> u) const {
  const auto& p = *p_;
  const std::size_t np = static_cast<std::size_t>(p.disc.num_nodes()), stride = p.quad.size() * np;
  const std::size_t ghosts = p.disc.num_elements() - p.solved, offset = static_cast<std::size_t>(m) * np;
  for (std::size_t g = 0; g < ghosts; ++g)
    std::copy_n(ghosts_in_.begin() + static_cast<long>(g * stride + offset), np, u.begin() + static_cast<long>((p.solved + g) * np));
}

// Ordinate m's solution on the elements other ranks hold as ghosts, for the exchange.
void CpuOrdinates::store_sent(int m, std::span<const double> u) {
  const std::size_t np = static_cast<std::size_t>(p_->disc.num_nodes()), stride = p_->quad.size() * np;
  const auto& sent = boundary_->sent_elements();
  for (std::size_t i = 0; i < sent.size(); ++i)
    std::copy_n(u.begin() + static_cast<long>(sent[i] * np), np, sent_.begin() + static_cast<long>(i * stride + static_cast<std::size_t>(m) * np));
}

void CpuOrdinates::accumulate(const OrdinateBatch& batch, std::span<double> phi_out, NodalMoments* moments) {
  std::vector<const double*> fields(batch.members.size());
  for (std::size_t k = 0; k < fields.size(); ++k) fields[k] = slots_[k].u.data();
  accumulate_moments(*p_, batch.members, fields, phi_out, moments);
}

// Every rank's boundary elements, all ordinates, to their ghost copies: the next sweep's inflow.
long CpuOrdinates::end_sweep(std::span<double>, NodalMoments*, std::span<double> ghosts_out) {
  if (!boundary_) return 0;
  boundary_->update(sent_, ghosts_out);
  return 1;
}

}  // namespace dgrte::solver
