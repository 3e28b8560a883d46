#include "solver/gray_solver.hpp"

#include "transport/cpu_transport.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "parallel/boundary_exchange.hpp"
#include "parallel/distributed_transport.hpp"
#include "parallel/ghost_exchange.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/petsc_arrays.hpp"
#include "transport/sweep.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <petscksp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

namespace dgrte::solver {

transport::BlockKind block_kind(io::Preconditioner p) {
  switch (p) {
    case io::Preconditioner::block_jacobi: return transport::BlockKind::full;
    case io::Preconditioner::partial_block_jacobi: return transport::BlockKind::partial;
    case io::Preconditioner::none:
    case io::Preconditioner::sweep: break;
  }
  return transport::BlockKind::none;
}

device::DevicePreconditioner device_preconditioner(io::Preconditioner p) {
  switch (p) {
    case io::Preconditioner::none: return device::DevicePreconditioner::none;
    case io::Preconditioner::partial_block_jacobi: return device::DevicePreconditioner::partial_block_jacobi;
    case io::Preconditioner::block_jacobi: return device::DevicePreconditioner::block_jacobi;
    case io::Preconditioner::sweep: return device::DevicePreconditioner::sweep;
  }
  return device::DevicePreconditioner::none;
}

std::vector<transport::SweepPlan> plan_sweeps(const transport::Discretization& disc, const problem::Walls& walls,
                                             const angular::Quadrature& quad, std::size_t solved) {
  std::vector<transport::SweepPlan> plans(quad.size());
  parallel_for(static_cast<long>(quad.size()), 2, [&](long m) {
    plans[static_cast<std::size_t>(m)] = transport::plan_sweep(disc, walls.streaming(static_cast<int>(m)), solved);
  }, 1);
  return plans;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check(PetscErrorCode ierr, const char* what) {
  if (ierr) throw SolverError(fmt::format("PETSc error {} in {} (outer solve)", static_cast<int>(ierr), what));
}

// Sum (op MPI_SUM) or maximum (MPI_MAX) of values over the ranks of a distributed solve; nothing on
// one process.
void reduce(bool distributed, double* values, int count, MPI_Op op) {
  if (distributed) MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, op, PETSC_COMM_WORLD);
}

// The reflection groups of all ranks merged: ordinates a mirror couples on any rank share a group
// on every rank, so every rank solves the same ordinates in the same order (inner Bi-CGSTAB is one
// global solve per ordinate). A coarser group is always valid: its Gauss-Seidel passes just span
// more ordinates. Labels (the smallest ordinate of a group) are merged until no rank changes one.
std::vector<std::vector<int>> merged_reflection_groups(const std::vector<std::vector<int>>& local, std::size_t M) {
  std::vector<int> label(M);
  for (std::size_t m = 0; m < M; ++m) label[m] = static_cast<int>(m);
  for (int changed = 1; changed;) {
    changed = 0;
    for (const auto& g : local) {
      int low = label[static_cast<std::size_t>(g.front())];
      for (int m : g) low = std::min(low, label[static_cast<std::size_t>(m)]);
      for (int m : g) changed |= std::exchange(label[static_cast<std::size_t>(m)], low) != low;
    }
    MPI_Allreduce(MPI_IN_PLACE, label.data(), static_cast<int>(M), MPI_INT, MPI_MIN, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_LOR, PETSC_COMM_WORLD);
  }
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of(M, -1);
  for (std::size_t m = 0; m < M; ++m) {
    int& g = group_of[static_cast<std::size_t>(label[m])];
    if (g < 0) g = static_cast<int>(groups.size()), groups.emplace_back();
    groups[static_cast<std::size_t>(g)].push_back(static_cast<int>(m));
  }
  return groups;
}

struct Outputs {
  std::vector<double> G, qx, qy, qz, q_in, q_out;
  // G and q at the wall face nodes with the walls' own values (Walls::tally_wall_moments), and what
  // those changed in q_in.
  std::vector<double> wall_G, wall_qx, wall_qy, wall_qz, wall_q_in;
  std::vector<std::vector<double>> intensities;
};

// One pass over all ordinates: x_out = T(x_in) (with or without the sources), and the moments and
// wall fluxes of that pass when `out` is given.
class TransportSweep {
 public:
  TransportSweep(const transport::Discretization& disc, const angular::Quadrature& quad, const problem::Medium& medium,
                 const problem::Walls& walls, const GrayOptions& opt, GrayResult& report, const Collimated* beams)
      : disc_(disc), quad_(quad), medium_(medium), walls_(walls), opt_(opt), report_(report), beams_(beams),
        solved_(disc.num_elements()), groups_(&walls.reflection_groups()) {
    const std::size_t n = disc.num_dofs(), M = quad.size();
    if (opt.local_mesh) set_up_distributed(*opt.local_mesh);
    if (uses_sweep_plans(opt)) {
      if (opt.plans) {
        if (opt.plans->size() != M) throw std::logic_error("GrayOptions::plans: one sweep plan per ordinate");
        plans_ = opt.plans;
      } else {
        const auto t0 = Clock::now();
        own_plans_ = plan_sweeps(disc, walls, quad, solved_);
        report.plan_seconds = seconds_since(t0);
        plans_ = &own_plans_;
      }
      for (const auto& p : *plans_) {
        report.plan_bytes += p.bytes();
        report.max_levels = std::max(report.max_levels, static_cast<int>(p.num_levels()));
        report.total_cycles += p.cycles;
        report.lagged_fraction.push_back(p.lagged_fraction);
        report.partition_faces += p.partition_faces;
      }
    }
    if (opt.device) {
      if (opt.positivity) throw InputError("solver.positivity: the positivity limiter runs in the CPU sweeps only; use solver.backend: cpu");
      opt.device->set_sigma_t(medium.extinction.nodal(), medium.extinction.block_of_element(), medium.extinction.block_data());
      opt.device->set_scattering(scattering_tables());
      std::vector<int> element_face(walls.num_faces());
      for (std::size_t b = 0; b < element_face.size(); ++b) element_face[b] = static_cast<int>(walls.element_face(b));
      opt.device->set_boundary_faces(element_face);
      // The device solves a batch together: as many ordinates as its memory budget holds.
      const std::size_t fit = opt.device->max_columns(device_vectors());
      if (fit == 0)
        throw SolverError(fmt::format("{}: not one ordinate of {} unknowns fits the device memory budget", opt.device->device().label(), n));
      batch_ = fit;
    } else if (opt.inner == io::InnerMethod::sweep) {
      // As many ordinates per batch as a 64 MB field budget allows (at least two per thread):
      // fewer OpenMP regions per transport sweep; barriers are costly on a loaded machine.
      const std::size_t per_ordinate = 3 * n * sizeof(double) + walls.num_faces() * walls.face_nodes() * sizeof(double);
      batch_ = std::max<std::size_t>(2 * static_cast<std::size_t>(omp_get_max_threads()), (std::size_t{64} << 20) / per_ordinate);
    } else {
      cpu_ = std::make_unique<transport::CpuTransport>(disc, opt.block_budget_bytes);
      batch_ = 1;
    }
    batch_ = std::min(batch_, M);
    report.field_bytes = 3 * batch_ * n * sizeof(double);
    kept_.assign(opt.keep_intensities ? M : 0, {});
  }

  // Moments of the solved nodes, the walls' reflection state, and (distributed sweeps) the inflow of
  // the partition faces: the ghosts' values of every ordinate.
  std::size_t size() const { return solved_dofs() * rank() + walls_.state_size() + ghost_size(); }
  std::size_t solved_dofs() const { return solved_ * static_cast<std::size_t>(disc_.num_nodes()); }
  std::size_t ghost_size() const { return boundary_ ? boundary_->ghost_values() : 0; }
  bool distributed() const { return opt_.local_mesh != nullptr; }
  std::size_t rank() const { return static_cast<std::size_t>(medium_.scattering_rank); }

  void apply(std::span<const double> x, bool with_sources, std::span<double> x_out, Outputs* out) {
    const std::size_t n = disc_.num_dofs(), r = rank(), nb = walls_.num_faces() * walls_.face_nodes();
    std::fill(x_out.begin(), x_out.end(), 0.0);
    if (opt_.device) {
      apply_on_device(x, with_sources, x_out, out);
      ++report_.transport_sweeps;
      return;
    }
    const std::size_t nm = solved_dofs() * r, ns = walls_.state_size();
    const auto phi = x.subspan(0, nm);
    const auto state = x.subspan(nm, ns);
    const auto ghosts_in = x.subspan(nm + ns);
    auto phi_out = x_out.subspan(0, nm);
    auto state_out = x_out.subspan(nm, ns);
    clear_outputs(out);
    auto& specular = specular_state(with_sources);
    const auto& groups = *groups_;
    for (std::size_t g0 = 0; g0 < groups.size();) {
      const std::size_t g1 = batch_end(g0);
      std::vector<int> members;
      std::vector<std::size_t> slot_of_group{0};
      for (std::size_t gi = g0; gi < g1; ++gi) {
        members.insert(members.end(), groups[gi].begin(), groups[gi].end());
        slot_of_group.push_back(members.size());
      }
      if (slots_.size() < members.size()) slots_.resize(members.size());
      for (std::size_t k = 0; k < members.size(); ++k) slots_[k].resize(n, nb);
      const auto ng = static_cast<long>(g1 - g0);
      std::vector<std::pair<long, long>> counts(static_cast<std::size_t>(ng));
      // Groups in parallel with sweeps (PETSc's Bi-CGSTAB runs one ordinate at a time).
      parallel_for(ng, opt_.inner == io::InnerMethod::sweep && !opt_.threads_over_levels ? 2 : ng + 1, [&](long gi) {
        const auto gu = static_cast<std::size_t>(gi);
        counts[gu] = solve_group(members, slot_of_group[gu], slot_of_group[gu + 1], phi, state, ghosts_in, with_sources, specular);
      }, 1);
      for (const auto& [p, gp] : counts) {
        report_.inner_iterations += p;
        report_.specular_passes += gp;
      }
      std::vector<const double*> fields(members.size());
      for (std::size_t k = 0; k < members.size(); ++k) fields[k] = slots_[k].u.data();
      accumulate(members, fields, phi_out, out);
      for (std::size_t k = 0; k < members.size(); ++k) {
        walls_.record(members[k], slots_[k].u, state_out);
        if (out) tally(members[k], slots_[k].u, slots_[k].g, *out);
      }
      if (out && opt_.keep_intensities)
        for (std::size_t k = 0; k < members.size(); ++k) kept_[static_cast<std::size_t>(members[k])] = slots_[k].u;
      g0 = g1;
    }
    // Every rank's boundary elements, all ordinates, to their ghost copies: the next sweep's inflow.
    if (boundary_) {
      boundary_->update(sent_, x_out.subspan(nm + ns));
      ++report_.ghost_exchanges;
    }
    if (out && opt_.keep_intensities) out->intensities = std::move(kept_);
    kept_.assign(opt_.keep_intensities ? quad_.size() : 0, {});
    ++report_.transport_sweeps;
  }

 private:
  struct Slot {  // work arrays of one ordinate of a batch
    std::vector<double> u, base, rhs, g;
    std::vector<double> traces;  // device path: the solution on the boundary face nodes
    void resize(std::size_t n, std::size_t nb) {
      u.resize(n);
      base.resize(n);
      rhs.resize(n);
      g.resize(nb);
    }
  };

  // Solves the ordinates members[k0, k1) of one reflection group. Specular reflection couples
  // them: block Gauss-Seidel over the group until the traces they exchange stop changing. Returns
  // (inner iterations, group passes).
  std::pair<long, long> solve_group(const std::vector<int>& members, std::size_t k0, std::size_t k1, std::span<const double> phi,
                                    std::span<const double> state, std::span<const double> ghosts_in, bool with_sources,
                                    std::vector<double>& specular) {
    for (std::size_t k = k0; k < k1; ++k) build_base(members[k], phi, with_sources, slots_[k].base);
    // Global inner solves (nodes_) pass in step on every rank: the same test everywhere.
    const bool coupled = k1 - k0 > 1 && (nodes_ ? any_specular_ : walls_.specular_size() > 0);
    const std::span<const double> extra = beams_ ? std::span<const double>(beams_->diffuse_irradiation) : std::span<const double>();
    long inner = 0;
    constexpr int kMaxPasses = 20000;
    for (int pass = 1; pass <= kMaxPasses; ++pass) {
      double change = 0, magnitude = 0;
      for (std::size_t k = k0; k < k1; ++k) {
        const int m = members[k];
        auto& sl = slots_[k];
        const auto& v = walls_.streaming(m);
        walls_.inflow(m, v, with_sources, state, specular, sl.g, extra);
        std::copy(sl.base.begin(), sl.base.end(), sl.rhs.begin());
        walls_.lift(v, sl.g, sl.rhs);
        std::fill(sl.u.begin(), sl.u.end(), 0.0);
        if (boundary_) load_ghosts(m, ghosts_in, sl.u);
        inner += solve_one(m, sl.rhs, sl.u);
        if (boundary_) store_sent(m, sl.u);
        const auto [c, a] = walls_.record_specular(m, sl.u, specular);
        change = std::max(change, c);
        magnitude = std::max(magnitude, a);
      }
      if (nodes_ && coupled) {
        double cm[2] = {change, magnitude};
        reduce(true, cm, 2, MPI_MAX);
        change = cm[0], magnitude = cm[1];
      }
      if (!coupled || change <= std::max(opt_.inner_rtol, 1e-13) * magnitude) return {inner, pass};
    }
    throw SolverError(fmt::format("specular reflections of the ordinate group of ordinate {} did not converge in {} passes: "
                                  "a mirror enclosure with (almost) no absorption traps the radiation; add absorption or "
                                  "a non-reflecting wall",
                                  members[k0], kMaxPasses));
  }

  // The end of the batch starting at reflection group g0: whole groups, about batch_ ordinates
  // (at least one group, however large).
  std::size_t batch_end(std::size_t g0) const {
    const auto& groups = *groups_;
    std::size_t g1 = g0, count = 0;
    while (g1 < groups.size() && (count == 0 || count + groups[g1].size() <= batch_)) count += groups[g1++].size();
    return g1;
  }

  // Ordinate m's wall fluxes and its change of the moments at the nodes on walls.
  void tally(int m, std::span<const double> u, std::span<const double> g, Outputs& out) const {
    walls_.tally(m, u, g, out.q_in, out.q_out, out.wall_q_in);
    walls_.tally_wall_moments(m, u, g, out.wall_G, out.wall_qx, out.wall_qy, out.wall_qz);
  }

  void clear_outputs(Outputs* out) const {
    if (!out) return;
    for (auto* v : {&out->G, &out->qx, &out->qy, &out->qz}) v->assign(disc_.num_dofs(), 0.0);
    for (auto* v : {&out->q_in, &out->q_out, &out->wall_G, &out->wall_qx, &out->wall_qy, &out->wall_qz, &out->wall_q_in})
      v->assign(walls_.num_faces() * walls_.face_nodes(), 0.0);
    out->intensities.clear();
  }

  // Specular traces persisted between transport sweeps (one set with sources, one without).
  std::vector<double>& specular_state(bool with_sources) {
    auto& specular = specular_[with_sources ? 1 : 0];
    if (specular.size() != walls_.specular_size()) specular.assign(walls_.specular_size(), 0.0);
    return specular;
  }

  // ---- The OpenCL backend: the fields stay on the device ----------------------------------------
  // Per transport sweep the moments go up once and come back once; per batch the wall inflow goes up
  // and the boundary traces come back (all that Walls::record, record_specular and tally read), and
  // the fixed sources go up in the sweeps that carry them (twice per GMRES solve).

  int device_vectors() const {
    return opt_.inner == io::InnerMethod::sweep ? device::DeviceTransport::kSweepVectors : device::DeviceTransport::kKrylovVectors;
  }

  device::BatchMethod device_method() const {
    device::BatchMethod b;
    b.sweep = opt_.inner == io::InnerMethod::sweep;
    b.preconditioner = device_preconditioner(opt_.preconditioner);
    b.rtol = opt_.inner_rtol;
    b.max_iterations = opt_.inner_max_iterations;
    return b;
  }

  // The medium's scattering operators as the device's tables ([op][m][R], zero-padded).
  device::ScatteringTables scattering_tables() const {
    device::ScatteringTables t;
    const std::size_t M = quad_.size(), r = rank();
    t.rank = static_cast<int>(r);
    t.weights.assign(quad_.w.begin(), quad_.w.end());
    for (const auto& sb : quad_.s_bar) t.s_bar.insert(t.s_bar.end(), sb.begin(), sb.end());
    if (r == 0) return t;
    t.sigma_s.assign(medium_.scattering_term.nodal().begin(), medium_.scattering_term.nodal().end());
    t.sigma_s_block_of.assign(medium_.scattering_term.block_of_element().begin(), medium_.scattering_term.block_of_element().end());
    t.sigma_s_blocks.assign(medium_.scattering_term.block_data().begin(), medium_.scattering_term.block_data().end());
    t.operator_of_element.assign(medium_.scattering_of_element.begin(), medium_.scattering_of_element.end());
    const std::size_t ops = medium_.scattering.size();
    t.to_direction.assign(ops * M * r, 0.0);
    t.to_moment.assign(ops * M * r, 0.0);
    for (std::size_t op = 0; op < ops; ++op) {
      const auto& sm = medium_.scattering[op];
      const auto ro = static_cast<std::size_t>(sm.rank);
      for (std::size_t m = 0; m < M; ++m)
        for (std::size_t j = 0; j < ro; ++j) {
          t.to_direction[(op * M + m) * r + j] = sm.to_direction[m * ro + j];
          t.to_moment[(op * M + m) * r + j] = sm.to_moment[m * ro + j];
        }
    }
    return t;
  }

  // TransportSweep::apply on the device: the same batches of whole reflection groups.
  void apply_on_device(std::span<const double> x, bool with_sources, std::span<double> x_out, Outputs* out) {
    auto& dev = *opt_.device;
    const std::size_t n = disc_.num_dofs(), r = rank(), nb = walls_.num_faces() * walls_.face_nodes();
    const auto state = x.subspan(n * r);
    auto state_out = x_out.subspan(n * r);
    const bool keep = out && opt_.keep_intensities;
    clear_outputs(out);
    auto& specular = specular_state(with_sources);
    dev.begin_transport_sweep(x.subspan(0, n * r), out != nullptr);
    const auto& groups = *groups_;
    for (std::size_t g0 = 0; g0 < groups.size();) {
      const std::size_t g1 = batch_end(g0);
      std::vector<int> members;
      for (std::size_t gi = g0; gi < g1; ++gi) members.insert(members.end(), groups[gi].begin(), groups[gi].end());
      if (slots_.size() < members.size()) slots_.resize(members.size());
      for (std::size_t k = 0; k < members.size(); ++k) {  // boundary-sized: no field per ordinate on the host
        slots_[k].g.resize(nb);
        slots_[k].traces.resize(nb);
        if (keep) slots_[k].u.resize(n);
      }
      // Boundary traces only when the walls reflect or the wall fluxes are wanted.
      const auto [inner, passes] = solve_on_device(members, state, with_sources, specular, keep, out || walls_.reflects());
      report_.inner_iterations += inner;
      report_.specular_passes += passes;
      for (std::size_t k = 0; k < members.size(); ++k) {
        const auto u = trace_field(k, keep);
        walls_.record(members[k], u, state_out);
        if (out) tally(members[k], u, slots_[k].g, *out);
        if (keep) kept_[static_cast<std::size_t>(members[k])] = slots_[k].u;
      }
      g0 = g1;
    }
    if (out) dev.finish_transport_sweep(x_out.subspan(0, n * r), out->G, out->qx, out->qy, out->qz);
    else dev.finish_transport_sweep(x_out.subspan(0, n * r), {}, {}, {}, {});
    if (keep) out->intensities = std::move(kept_);
    kept_.assign(opt_.keep_intensities ? quad_.size() : 0, {});
  }

  // The ordinates `members` (whole reflection groups) on the device, batch_ at a time. Specular
  // reflection couples ordinates of a group: block Jacobi over the batch (every ordinate's inflow
  // from the previous pass's traces) until the exchanged traces stop changing; then the moments of
  // the converged solutions are added (a group larger than a batch is solved once more, chunk by
  // chunk, for that). Slot traces hold the solution on the boundary face nodes (need_traces), slot
  // u the whole field (only with `keep`). Returns (inner iterations, passes).
  std::pair<long, long> solve_on_device(const std::vector<int>& members, std::span<const double> state, bool with_sources,
                                        std::vector<double>& specular, bool keep, bool need_traces) {
    auto& dev = *opt_.device;
    const std::size_t count = members.size(), n = disc_.num_dofs(), nb = walls_.num_faces() * walls_.face_nodes();
    const std::span<const double> extra = beams_ ? std::span<const double>(beams_->diffuse_irradiation) : std::span<const double>();
    const std::size_t chunk = batch_, chunks = (count + chunk - 1) / chunk;
    long inner = 0;
    auto load = [&](std::size_t k0, std::size_t cols) {
      std::vector<double> dirs(3 * cols), fixed(with_sources ? n * cols : 0);
      std::vector<int> ordinates(cols);
      for (std::size_t c = 0; c < cols; ++c) {
        const int m = members[k0 + c];
        const auto& v = walls_.streaming(m);
        std::copy(v.begin(), v.end(), dirs.begin() + static_cast<long>(3 * c));
        ordinates[c] = m;
        if (with_sources) build_fixed(m, std::span(fixed).subspan(n * c, n));
      }
      dev.load_batch(dirs, ordinates, uses_sweep_plans(opt_) ? std::span<const int>(ordinates) : std::span<const int>(), fixed,
                     device_method());
    };
    auto solve = [&](std::size_t k0, std::size_t cols) {
      std::vector<double> g(nb * cols), traces(need_traces ? nb * cols : 0);
      for (std::size_t c = 0; c < cols; ++c) {
        auto& sl = slots_[k0 + c];
        walls_.inflow(members[k0 + c], walls_.streaming(members[k0 + c]), with_sources, state, specular, sl.g, extra);
        std::copy(sl.g.begin(), sl.g.end(), g.begin() + static_cast<long>(nb * c));
      }
      inner += checked_iterations(dev.solve_batch(g, traces), members, k0);
      if (need_traces)
        for (std::size_t c = 0; c < cols; ++c)
          std::copy(traces.begin() + static_cast<long>(nb * c), traces.begin() + static_cast<long>(nb * (c + 1)), slots_[k0 + c].traces.begin());
    };
    auto finish = [&](std::size_t k0, std::size_t cols) {
      dev.accumulate_batch();
      if (!keep) return;
      std::vector<double> u(n * cols);
      dev.read_batch_solution(u);
      for (std::size_t c = 0; c < cols; ++c)
        std::copy(u.begin() + static_cast<long>(n * c), u.begin() + static_cast<long>(n * (c + 1)), slots_[k0 + c].u.begin());
    };
    constexpr int kMaxPasses = 20000;
    for (int pass = 1; pass <= kMaxPasses; ++pass) {
      for (std::size_t k0 = 0; k0 < count; k0 += chunk) {
        const std::size_t cols = std::min(chunk, count - k0);
        if (pass == 1 || chunks > 1) load(k0, cols);
        solve(k0, cols);
      }
      double change = 0, magnitude = 0;
      for (std::size_t k = 0; k < count && walls_.specular_size() > 0; ++k) {
        const auto [c, a] = walls_.record_specular(members[k], trace_field(k, false), specular);
        change = std::max(change, c);
        magnitude = std::max(magnitude, a);
      }
      if (walls_.specular_size() > 0 && change > std::max(opt_.inner_rtol, 1e-13) * magnitude) continue;
      if (chunks == 1) {
        finish(0, count);
      } else {
        for (std::size_t k0 = 0; k0 < count; k0 += chunk) {
          const std::size_t cols = std::min(chunk, count - k0);
          load(k0, cols);
          solve(k0, cols);
          finish(k0, cols);
        }
      }
      return {inner, pass};
    }
    throw SolverError(fmt::format("specular reflections of the ordinate batch of ordinate {} did not converge in {} passes: "
                                  "a mirror enclosure with (almost) no absorption traps the radiation; add absorption or "
                                  "a non-reflecting wall",
                                  members[0], kMaxPasses));
  }

  // Slot k's solution as the field the wall model reads: the whole field when kept, else one shared
  // scratch field whose boundary face nodes (all that Walls::record, record_specular and tally read)
  // hold slot k's traces; the rest of it is stale.
  std::span<const double> trace_field(std::size_t k, bool keep) {
    if (keep) return slots_[k].u;
    const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), nfp = walls_.face_nodes();
    trace_scratch_.resize(disc_.num_dofs());
    const auto& traces = slots_[k].traces;
    for (std::size_t b = 0; b < walls_.num_faces(); ++b) {
      const std::size_t ef = walls_.element_face(b), e = ef / 4;
      const auto& fn = disc_.ref.face_nodes[ef % 4];
      for (std::size_t j = 0; j < nfp; ++j) trace_scratch_[e * np + static_cast<std::size_t>(fn[j])] = traces[b * nfp + j];
    }
    return trace_scratch_;
  }

  // Inner iterations of a device batch (columns k0.. of members); a column that stopped unconverged
  // is an error naming its ordinate.
  long checked_iterations(const device::BatchedSolve& res, const std::vector<int>& members, std::size_t k0) const {
    long its = 0;
    for (std::size_t c = 0; c < res.iterations.size(); ++c) {
      its += res.iterations[c];
      if (res.status[c] != device::BicgStatus::converged)
        throw SolverError(fmt::format("{}: Bi-CGSTAB of ordinate {} stopped ({}) after {} iterations, residual {:.3e} of ||b|| {:.3e} "
                                      "(rtol {:.1e}); raise solver.max_iterations or use solver.preconditioner: block-jacobi",
                                      opt_.device->device().label(), members[k0 + c], device::to_string(res.status[c]),
                                      res.iterations[c], res.residual_norm[c], res.rhs_norm[c], opt_.inner_rtol));
    }
    return its;
  }

  long solve_one(int m, const std::vector<double>& rhs, std::vector<double>& u) {
    if (opt_.inner == io::InnerMethod::sweep) {
      const auto r = transport::sweep_solve(disc_, (*plans_)[static_cast<std::size_t>(m)], medium_.extinction, rhs, u, opt_.inner_rtol, 200,
                                            opt_.positivity);
      if (r.limited) {
#pragma omp atomic
        limited_ += r.limited;
      }
      return r.passes;
    }
    return solve_bicgstab(m, rhs, u);
  }

 public:
  long limited() const { return limited_; }

  // The coupling unknowns x of given intensities (one field per ordinate; sweep_from), as if a
  // transport sweep had returned them, and their G (out.G).
  void coupling_of(const std::vector<std::vector<double>>& intensities, std::span<double> x, Outputs& out) {
    if (intensities.size() != quad_.size()) throw std::logic_error("coupling_of: one intensity field per ordinate");
    std::fill(x.begin(), x.end(), 0.0);
    clear_outputs(&out);
    std::vector<int> members(quad_.size());
    std::vector<const double*> fields(quad_.size());
    for (std::size_t m = 0; m < quad_.size(); ++m) {
      if (intensities[m].size() != disc_.num_dofs()) throw std::logic_error("coupling_of: a field of the wrong size");
      members[m] = static_cast<int>(m);
      fields[m] = intensities[m].data();
    }
    const std::size_t nm = solved_dofs() * rank();
    accumulate(members, fields, x.subspan(0, nm), &out);
    for (std::size_t m = 0; m < quad_.size(); ++m) walls_.record(static_cast<int>(m), intensities[m], x.subspan(nm, walls_.state_size()));
    if (boundary_) {  // distributed sweeps: the ghosts' values of every ordinate (load_ghosts' layout)
      const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), stride = quad_.size() * np;
      const auto ghosts_in = x.subspan(nm + walls_.state_size());
      for (std::size_t g = 0; g < disc_.num_elements() - solved_; ++g)
        for (std::size_t m = 0; m < quad_.size(); ++m)
          std::copy_n(intensities[m].begin() + static_cast<long>((solved_ + g) * np), np,
                      ghosts_in.begin() + static_cast<long>(g * stride + m * np));
    }
  }

 private:

  // The sources of ordinate m that do not depend on the iterate: emission, user source, scattered beams.
  void build_fixed(int m, std::span<double> rhs) const {
    const auto mu = static_cast<std::size_t>(m);
    std::copy(medium_.emission.begin(), medium_.emission.end(), rhs.begin());
    problem::add_user_source(medium_, disc_, quad_.s[mu], rhs);
    if (beams_) add_beam_scattering(mu, rhs);
  }

  // rhs = fixed sources (with_sources) + scattering of the moments.
  void build_base(int m, std::span<const double> phi, bool with_sources, std::vector<double>& rhs) const {
    const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), K = solved_, r = rank();
    const auto mu = static_cast<std::size_t>(m);
    if (with_sources) build_fixed(m, rhs);
    else std::fill(rhs.begin(), rhs.end(), 0.0);
    if (r > 0) {
      std::vector<double> s(np);
      for (std::size_t e = 0; e < K; ++e) {
        const int op = medium_.scattering_of_element[e];
        if (op < 0) continue;
        const auto& sm = medium_.scattering[static_cast<std::size_t>(op)];
        const std::size_t ro = static_cast<std::size_t>(sm.rank);
        const double* Y = sm.to_direction.data() + mu * ro;
        for (std::size_t i = 0; i < np; ++i) {
          const std::size_t k = e * np + i;
          s[i] = 0;
          for (std::size_t j = 0; j < ro; ++j) s[i] += Y[j] * phi[k * r + j];
        }
        medium_.scattering_term.apply_add(e, s.data(), rhs.data() + e * np);
      }
    }
  }

  // sigma_s F_c Phi(s_m.s_c)/4 pi of every collimated beam: a known source of the diffuse field.
  void add_beam_scattering(std::size_t m, std::span<double> rhs) const {
    const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), M = quad_.size();
    std::vector<double> s(np);
    for (const auto& beam : beams_->beams)
      for (std::size_t e = 0; e < disc_.num_elements(); ++e) {
        const int op = medium_.scattering_of_element[e];
        if (op < 0) continue;
        const double weight = beam.scatter_weight[static_cast<std::size_t>(op) * M + m];
        for (std::size_t i = 0; i < np; ++i) s[i] = beam.F[e * np + i] * weight;
        medium_.scattering_term.apply_add(e, s.data(), rhs.data() + e * np);
      }
  }

  int solve_bicgstab(int m, const std::vector<double>& rhs, std::vector<double>& u) {
    const auto blocks = block_kind(opt_.preconditioner);
    const auto& v = walls_.streaming(m);
    transport::KrylovOptions ko;
    ko.rtol = opt_.inner_rtol;
    ko.max_iterations = opt_.inner_max_iterations;
    ko.precondition = opt_.preconditioner != io::Preconditioner::none;
    ko.label = fmt::format("ordinate {} ({:.5g}, {:.5g}, {:.5g})", m, v[0], v[1], v[2]);
    auto solve = [&](transport::TransportBackend& local) {
      if (!nodes_) {
        local.set_direction(v, medium_.extinction, blocks);
        return transport::solve_bicgstab(local, rhs, u, ko).iterations;
      }
      // One global solve over the owned unknowns (block Jacobi across ranks with the sweep).
      const std::size_t owned = solved_dofs();
      parallel::DistributedTransport global(local, *nodes_, owned);
      global.set_direction(v, medium_.extinction, blocks);
      const int its = transport::solve_bicgstab(global, std::span(rhs).first(owned), std::span(u).first(owned), ko).iterations;
      report_.ghost_exchanges += static_cast<long>(global.exchanges());
      return its;
    };
    if (opt_.preconditioner == io::Preconditioner::sweep) {
      transport::SweepPreconditioned op(*cpu_, disc_, (*plans_)[static_cast<std::size_t>(m)], medium_.extinction);
      return solve(op);
    }
    return solve(*cpu_);
  }

  // ---- A distributed mesh (GrayOptions::local_mesh) ------------------------------------------------
  void set_up_distributed(const parallel::LocalMesh& local) {
    if (local.mesh.tets.size() != disc_.num_elements())
      throw std::logic_error("GrayOptions::local_mesh: the discretisation is not that of the local mesh");
    if (opt_.device) throw InputError("solver.backend: opencl does not run distributed yet; use solver.backend: cpu under mpirun");
    solved_ = local.num_owned;
    const DistributedSetup* setup = opt_.distributed_setup;
    if (!setup) {
      own_setup_ = std::make_unique<DistributedSetup>(local, disc_, quad_, walls_, opt_);
      setup = own_setup_.get();
    }
    boundary_ = setup->boundary.get();
    nodes_ = setup->nodes.get();
    if ((opt_.inner == io::InnerMethod::sweep) != (boundary_ != nullptr))
      throw std::logic_error("GrayOptions::distributed_setup: made for another inner solver");
    if (boundary_) {
      sent_.assign(boundary_->sent_elements().size() * boundary_->values_per_element(), 0.0);
      report_.partition_unknowns = boundary_->ghost_values();
    }
    groups_ = &setup->groups;
    any_specular_ = setup->any_specular;
  }

  // Ordinate m's inflow through the partition faces: its ghost values from the outer vector (laid
  // out ghost by ghost, ordinate by ordinate, node by node), into u's ghost block.
  void load_ghosts(int m, std::span<const double> ghosts_in, std::span<double> u) const {
    const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), stride = quad_.size() * np;
    const std::size_t ghosts = disc_.num_elements() - solved_, offset = static_cast<std::size_t>(m) * np;
    for (std::size_t g = 0; g < ghosts; ++g)
      std::copy_n(ghosts_in.begin() + static_cast<long>(g * stride + offset), np, u.begin() + static_cast<long>((solved_ + g) * np));
  }

  // Ordinate m's solution on the elements other ranks hold as ghosts, for the exchange.
  void store_sent(int m, std::span<const double> u) {
    const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), stride = quad_.size() * np;
    const auto& sent = boundary_->sent_elements();
    for (std::size_t i = 0; i < sent.size(); ++i)
      std::copy_n(u.begin() + static_cast<long>(sent[i] * np), np, sent_.begin() + static_cast<long>(i * stride + static_cast<std::size_t>(m) * np));
  }

  // Moments of a batch: new scattering moments, and G, q for the outputs. Parallel over nodes,
  // ordinates summed in a fixed order: results do not depend on the thread count.
  // Adds the moments (phi_out) and, with `out`, G and q of the fields u[b] of ordinates members[b].
  void accumulate(const std::vector<int>& members, const std::vector<const double*>& u, std::span<double> phi_out, Outputs* out) const {
    const std::size_t bsz = members.size();
    const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), r = rank();
    const auto K = static_cast<std::ptrdiff_t>(solved_);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t ei = 0; ei < K; ++ei) {
      const auto e = static_cast<std::size_t>(ei);
      const int op = r > 0 ? medium_.scattering_of_element[e] : -1;
      for (std::size_t i = 0; i < np; ++i) {
        const std::size_t k = e * np + i;
        if (op >= 0) {
          const auto& sm = medium_.scattering[static_cast<std::size_t>(op)];
          const std::size_t ro = static_cast<std::size_t>(sm.rank);
          for (std::size_t b = 0; b < bsz; ++b) {
            const double* Z = sm.to_moment.data() + static_cast<std::size_t>(members[b]) * ro;
            const double I = u[b][k];
            for (std::size_t j = 0; j < ro; ++j) phi_out[k * r + j] += Z[j] * I;
          }
        }
        if (out) {
          for (std::size_t b = 0; b < bsz; ++b) {
            const auto m = static_cast<std::size_t>(members[b]);
            const double I = u[b][k];
            out->G[k] += quad_.w[m] * I;
            out->qx[k] += quad_.s_bar[m][0] * I;
            out->qy[k] += quad_.s_bar[m][1] * I;
            out->qz[k] += quad_.s_bar[m][2] * I;
          }
        }
      }
    }
  }

  const transport::Discretization& disc_;
  const angular::Quadrature& quad_;
  const problem::Medium& medium_;
  const problem::Walls& walls_;
  const GrayOptions& opt_;
  GrayResult& report_;
  const Collimated* beams_;
  std::vector<Slot> slots_;
  std::vector<double> trace_scratch_;  // device path: see trace_field
  std::array<std::vector<double>, 2> specular_;  // traces persisted between sweeps: without / with sources
  std::vector<std::vector<double>> kept_;
  long limited_ = 0;
  std::vector<transport::SweepPlan> own_plans_;
  const std::vector<transport::SweepPlan>* plans_ = nullptr;  // own_plans_ or GrayOptions::plans
  std::unique_ptr<transport::CpuTransport> cpu_;
  std::size_t batch_ = 1;
  std::size_t solved_;  // elements solved: all, or a rank's owned ones
  const std::vector<std::vector<int>>* groups_;  // the walls' reflection groups, or the ranks' merged ones
  std::unique_ptr<DistributedSetup> own_setup_;         // unless GrayOptions::distributed_setup
  const parallel::BoundaryExchange* boundary_ = nullptr;  // distributed sweeps
  std::vector<double> sent_;                              // its sent values: boundary elements x ordinates x nodes
  const parallel::GhostExchange* nodes_ = nullptr;        // distributed Bi-CGSTAB
  bool any_specular_ = false;
};

}  // namespace

DistributedSetup::DistributedSetup(const parallel::LocalMesh& local, const transport::Discretization& disc, const angular::Quadrature& quad,
                                   const problem::Walls& walls, const GrayOptions& options) {
  const std::size_t np = static_cast<std::size_t>(disc.num_nodes()), M = quad.size();
  if (options.inner == io::InnerMethod::sweep) boundary = std::make_unique<parallel::BoundaryExchange>(PETSC_COMM_WORLD, local, M * np);
  else nodes = std::make_unique<parallel::GhostExchange>(PETSC_COMM_WORLD, local, static_cast<int>(np));
  groups = merged_reflection_groups(walls.reflection_groups(), M);
  int specular = walls.specular_size() > 0;
  MPI_Allreduce(MPI_IN_PLACE, &specular, 1, MPI_INT, MPI_LOR, PETSC_COMM_WORLD);
  any_specular = specular != 0;
}

DistributedSetup::~DistributedSetup() = default;

namespace {

double max_abs(std::span<const double> v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// PETSc Krylov solve of (I - T0) x = b with a shell matrix.
struct OuterContext {
  TransportSweep* sweep;
};

PetscErrorCode outer_mult(Mat A, Vec x, Vec y) {
  OuterContext* ctx = nullptr;
  PetscCall(MatShellGetContext(A, &ctx));
  return transport::apply_on_arrays(x, y, [ctx](std::span<const double> in, std::span<double> out) {
    ctx->sweep->apply(in, false, out, nullptr);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i] - out[i];
  });
}

struct OuterMonitor {
  std::vector<double>* history;
  bool progress;
  Clock::time_point start;
  double r0 = 0;
};

PetscErrorCode outer_monitor(KSP, PetscInt it, PetscReal rnorm, void* vctx) {
  auto* m = static_cast<OuterMonitor*>(vctx);
  if (it == 0) m->r0 = rnorm;
  const double rel = m->r0 > 0 ? rnorm / m->r0 : 0.0;
  m->history->push_back(rel);
  if (m->progress)
    std::fprintf(stderr, "\r  outer iteration %3d  relative residual %.3e  elapsed %.1f s   ", static_cast<int>(it), rel,
                 seconds_since(m->start));
  return 0;
}

void krylov_outer(TransportSweep& sweep, const GrayOptions& opt, std::vector<double>& x, GrayResult& res) {
  const std::size_t nx = x.size();
  std::vector<double> b(nx);
  sweep.apply(std::vector<double>(nx, 0.0), true, b, nullptr);
  OuterContext ctx{&sweep};
  Vec vb = nullptr, vx = nullptr;
  Mat A = nullptr;
  KSP ksp = nullptr;
  struct Cleanup {
    Vec* b; Vec* x; Mat* A; KSP* k;
    ~Cleanup() {
      if (*k) KSPDestroy(k);
      if (*A) MatDestroy(A);
      if (*b) VecDestroy(b);
      if (*x) VecDestroy(x);
    }
  } cleanup{&vb, &vx, &A, &ksp};
  const auto n = static_cast<PetscInt>(nx);
  check(VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, n, PETSC_DECIDE, b.data(), &vb), "VecCreate(b)");
  check(VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, n, PETSC_DECIDE, x.data(), &vx), "VecCreate(x)");
  check(MatCreateShell(PETSC_COMM_WORLD, n, n, PETSC_DETERMINE, PETSC_DETERMINE, &ctx, &A), "MatCreateShell");
  check(MatShellSetOperation(A, MATOP_MULT, reinterpret_cast<void (*)(void)>(outer_mult)), "MatShellSetOperation");
  check(KSPCreate(PETSC_COMM_WORLD, &ksp), "KSPCreate");
  check(KSPSetOptionsPrefix(ksp, "outer_"), "KSPSetOptionsPrefix");
  check(KSPSetOperators(ksp, A, A), "KSPSetOperators");
  check(KSPSetType(ksp, opt.outer == io::OuterMethod::gmres ? KSPGMRES : KSPBCGS), "KSPSetType");
  check(KSPSetTolerances(ksp, opt.tolerance, 0.0, 1e12, opt.max_outer), "KSPSetTolerances");
  PC pc;
  check(KSPGetPC(ksp, &pc), "KSPGetPC");
  check(PCSetType(pc, PCNONE), "PCSetType");
  check(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
  OuterMonitor mon{&res.history, opt.progress, Clock::now()};
  check(KSPMonitorSet(ksp, outer_monitor, &mon, nullptr), "KSPMonitorSet");
  check(KSPSetFromOptions(ksp), "KSPSetFromOptions");
  // x holds an initial guess (GrayOptions::initial_intensities) unless it is zero (on every rank:
  // the setting is collective).
  double nonzero = std::any_of(x.begin(), x.end(), [](double v) { return v != 0.0; }) ? 1.0 : 0.0;
  reduce(sweep.distributed(), &nonzero, 1, MPI_MAX);
  const bool guess = nonzero > 0;
  check(KSPSetInitialGuessNonzero(ksp, guess ? PETSC_TRUE : PETSC_FALSE), "KSPSetInitialGuessNonzero");
  check(KSPSolve(ksp, vb, vx), "KSPSolve");
  if (opt.progress) std::fprintf(stderr, "\r%*s\r", 90, "");
  PetscInt its;
  KSPConvergedReason reason;
  check(KSPGetIterationNumber(ksp, &its), "KSPGetIterationNumber");
  check(KSPGetConvergedReason(ksp, &reason), "KSPGetConvergedReason");
  res.outer_iterations = static_cast<int>(its);
  res.converged = reason > 0;
  if (!res.converged)
    throw SolverError(fmt::format("outer {} did not converge ({}) in {} iterations (relative residual {:.3e}, tolerance {:.1e}); "
                                  "raise solver.outer_max_iterations or try solver.outer: gmres",
                                  io::to_string(opt.outer), KSPConvergedReasons[reason], its,
                                  res.history.empty() ? 0.0 : res.history.back(), opt.tolerance));
}

// The fields of the last transport sweep (out) into res: the walls' values, the collimated part, and
// the emission of all ordinates.
void collect_outputs(const transport::Discretization& disc, const angular::Quadrature& quad, const problem::Medium& medium,
                     const problem::Walls& walls, const Collimated* beams, Outputs& out, GrayResult& res) {
  res.wall_G = std::move(out.wall_G);
  res.wall_qx = std::move(out.wall_qx);
  res.wall_qy = std::move(out.wall_qy);
  res.wall_qz = std::move(out.wall_qz);
  // The walls reflect the incident flux with the walls' values (it differs from the DG's only at edges
  // and corners): q_out follows it.
  res.wall_delta_q_in = std::move(out.wall_q_in);
  for (std::size_t b = 0; b < walls.num_faces(); ++b)
    for (std::size_t j = 0; j < walls.face_nodes(); ++j) {
      const std::size_t bj = b * walls.face_nodes() + j;
      out.q_out[bj] += walls.reflectance(b) * res.wall_delta_q_in[bj];
    }
  res.G = std::move(out.G);
  res.qx = std::move(out.qx);
  res.qy = std::move(out.qy);
  res.qz = std::move(out.qz);
  res.q_in = std::move(out.q_in);
  res.q_out = std::move(out.q_out);
  res.intensities = std::move(out.intensities);
  if (beams) {
    for (std::size_t k = 0; k < res.G.size(); ++k) {
      res.G[k] += beams->G[k];
      res.qx[k] += beams->qx[k];
      res.qy[k] += beams->qy[k];
      res.qz[k] += beams->qz[k];
    }
    for (std::size_t k = 0; k < res.q_in.size(); ++k) {
      res.q_in[k] += beams->q_in[k];
      res.q_out[k] += beams->q_out[k];
    }
    walls.add_nodal(beams->G, res.wall_G);  // the collimated part at the wall face nodes
    walls.add_nodal(beams->qx, res.wall_qx);
    walls.add_nodal(beams->qy, res.wall_qy);
    walls.add_nodal(beams->qz, res.wall_qz);
    res.G_collimated = beams->G;
    res.qx_collimated = beams->qx;
    res.qy_collimated = beams->qy;
    res.qz_collimated = beams->qz;
  }
  // Emission of all ordinates: 4 pi kappa Ib (+ the user source summed over the set).
  const std::size_t n = disc.num_dofs();
  res.source_total.resize(n);
  double wsum = 0;
  for (double w : quad.w) wsum += w;
  for (std::size_t i = 0; i < n; ++i) res.source_total[i] = wsum * medium.kappa[i] * medium.blackbody_intensity[i];
  if (medium.has_source()) {
    std::vector<double> s(n);
    for (std::size_t m = 0; m < quad.size(); ++m) {
      std::fill(s.begin(), s.end(), 0.0);
      problem::add_user_source(medium, disc, quad.s[m], s);
      for (std::size_t i = 0; i < n; ++i) res.source_total[i] += quad.w[m] * s[i];
    }
  }
}

}  // namespace

GrayResult solve_gray(const transport::Discretization& disc, const angular::Quadrature& quad, const problem::Medium& medium,
                      const problem::Walls& walls, const GrayOptions& opt, const Collimated* beams) {
  const auto t0 = Clock::now();
  GrayResult res;
  res.inner_method = opt.inner == io::InnerMethod::sweep
                         ? std::string("sweep")
                         : fmt::format("bicgstab ({} preconditioner)", io::to_string(opt.preconditioner));
  if (beams && beams->empty()) beams = nullptr;
  if (opt.positivity && opt.inner != io::InnerMethod::sweep)
    throw InputError("solver.positivity: the positivity limiter works inside sweeps; use solver.inner: sweep");
  TransportSweep sweep(disc, quad, medium, walls, opt, res, beams);
  const bool distributed = sweep.distributed();
  const std::size_t nx = sweep.size();
  double sizes[2] = {static_cast<double>(nx), static_cast<double>(res.partition_unknowns)};
  reduce(distributed, sizes, 2, MPI_SUM);  // the global outer vector, and the branch every rank takes
  res.coupling_unknowns = static_cast<std::size_t>(sizes[0]);
  res.partition_unknowns = static_cast<std::size_t>(sizes[1]);
  std::vector<double> x(nx, 0.0), x_new(nx, 0.0);
  Outputs out;
  if (opt.initial_intensities && res.coupling_unknowns > 0) sweep.coupling_of(*opt.initial_intensities, x, out);
  if (res.coupling_unknowns == 0) {
    res.outer_method = "none (no scattering, no diffusely reflecting walls: one transport sweep, specular reflections converged inside it)";
    res.stopping_rule = "exact after one sweep";
    sweep.apply(x, true, x_new, &out);
  } else if (opt.outer == io::OuterMethod::source_iteration) {
    res.outer_method = "source-iteration";
    res.stopping_rule =
        "estimated error of G below tolerance: max|G_k - G_{k-1}| rho/(1 - rho) <= tol max|G_k|, rho = ratio of successive changes";
    std::vector<double> G_old(disc.num_dofs(), 0.0);
    double change_old = 0;
    res.converged = false;
    for (int it = 1; it <= opt.max_outer; ++it) {
      sweep.apply(x, true, x_new, &out);
      double change_scale[2] = {0, max_abs(out.G)};
      for (std::size_t i = 0; i < G_old.size(); ++i) change_scale[0] = std::max(change_scale[0], std::abs(out.G[i] - G_old[i]));
      reduce(distributed, change_scale, 2, MPI_MAX);
      const double change = change_scale[0] / std::max(change_scale[1], 1e-300);
      const double rho = it >= 2 && change_old > 0 ? std::min(change / change_old, 0.999999) : 0.0;
      const double estimate = it >= 2 ? change * std::max(rho / (1 - rho), 1.0) : change;
      res.history.push_back(estimate);
      res.outer_iterations = it;
      res.outer_residual = estimate;
      if (opt.progress) std::fprintf(stderr, "\r  source iteration %4d  G change %.3e  rho %.4f   ", it, change, rho);
      std::swap(x, x_new);
      G_old = out.G;
      change_old = change;
      if (it >= 2 && estimate <= opt.tolerance) {
        res.converged = true;
        break;
      }
    }
    if (opt.progress) std::fprintf(stderr, "\r%*s\r", 80, "");
    if (!res.converged)
      throw SolverError(fmt::format("source iteration did not converge in {} iterations (estimated G error {:.3e}, tolerance {:.1e}); "
                                    "use solver.outer: gmres (much faster for albedos near 1 or strong reflection)",
                                    opt.max_outer, res.outer_residual, opt.tolerance));
  } else {
    res.outer_method = io::to_string(opt.outer);
    res.stopping_rule = "||(I - T0) x - T(0)||_2 <= tol ||T(0)||_2 on the coupling unknowns (scattering moments, wall reflection state)";
    krylov_outer(sweep, opt, x, res);
    sweep.apply(x, true, x_new, &out);
    double squares[2] = {0, 0};
    for (std::size_t i = 0; i < nx; ++i) squares[0] += (x_new[i] - x[i]) * (x_new[i] - x[i]), squares[1] += x_new[i] * x_new[i];
    reduce(distributed, squares, 2, MPI_SUM);
    res.outer_residual = std::sqrt(squares[0]) / std::max(std::sqrt(squares[1]), 1e-300);
  }
  res.limited_elements = sweep.limited();
  // Over the ranks: inner iterations and group passes, the largest (every rank solves every
  // ordinate: a global Bi-CGSTAB counts the same iterations on each); limited elements and
  // partition faces, the sum. The outer counts are global already.
  double most[2] = {static_cast<double>(res.inner_iterations), static_cast<double>(res.specular_passes)};
  double sums[2] = {static_cast<double>(res.limited_elements), static_cast<double>(res.partition_faces)};
  reduce(distributed, most, 2, MPI_MAX);
  reduce(distributed, sums, 2, MPI_SUM);
  res.inner_iterations = static_cast<long>(most[0]), res.specular_passes = static_cast<long>(most[1]);
  res.limited_elements = static_cast<long>(sums[0]), res.partition_faces = static_cast<std::size_t>(sums[1]);
  collect_outputs(disc, quad, medium, walls, beams, out, res);
  res.seconds = seconds_since(t0);
  return res;
}

GrayResult sweep_from(const transport::Discretization& disc, const angular::Quadrature& quad, const problem::Medium& medium,
                      const problem::Walls& walls, const GrayOptions& options, const std::vector<std::vector<double>>& intensities,
                      double stop_fraction, int max_sweeps, const Collimated* beams) {
  const auto t0 = Clock::now();
  if (options.local_mesh || options.device) throw std::logic_error("sweep_from: one process, CPU sweeps");
  GrayOptions opt = options;
  opt.keep_intensities = true;
  GrayResult res;
  res.inner_method = opt.inner == io::InnerMethod::sweep ? std::string("sweep") : std::string("bicgstab");
  res.outer_method = "source iteration from the given intensities";
  if (beams && beams->empty()) beams = nullptr;
  TransportSweep sweep(disc, quad, medium, walls, opt, res, beams);
  std::vector<double> x(sweep.size(), 0.0), x_new(sweep.size(), 0.0);
  res.coupling_unknowns = x.size();
  Outputs out;
  sweep.coupling_of(intensities, x, out);
  const std::vector<double> G_start = std::move(out.G);
  std::vector<double> G_old = G_start;
  double change_old = 0;
  res.stopping_rule = res.coupling_unknowns == 0
                          ? "exact after one sweep"
                          : "estimated remaining change of G below stop_fraction x max|G_k - G_start| (rho/(1 - rho) rule of source iteration)";
  for (int it = 1; it <= max_sweeps; ++it) {
    sweep.apply(x, true, x_new, &out);
    std::swap(x, x_new);
    res.outer_iterations = it;
    if (res.coupling_unknowns == 0) break;
    double change = 0, distance = 0;
    for (std::size_t i = 0; i < G_old.size(); ++i) {
      change = std::max(change, std::abs(out.G[i] - G_old[i]));
      distance = std::max(distance, std::abs(out.G[i] - G_start[i]));
    }
    const double rho = it >= 2 && change_old > 0 ? std::min(change / change_old, 0.999999) : 0.0;
    const double remaining = change * std::max(rho / (1 - rho), 1.0);
    res.outer_residual = distance > 0 ? remaining / distance : 0.0;
    res.history.push_back(res.outer_residual);
    if (it >= 2 && remaining <= stop_fraction * distance) break;
    G_old = out.G;
    change_old = change;
  }
  res.converged = res.coupling_unknowns == 0 || res.outer_residual <= stop_fraction;
  res.limited_elements = sweep.limited();
  collect_outputs(disc, quad, medium, walls, beams, out, res);
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace dgrte::solver
