#include "solver/gray_solver.hpp"

#include "solver/cpu_ordinates.hpp"
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

struct Outputs : NodalMoments {
  std::vector<double> q_in, q_out;
  // G and q at the wall face nodes with the walls' own values (Walls::tally_wall_moments), and what
  // those changed in q_in.
  std::vector<double> wall_G, wall_qx, wall_qy, wall_qz, wall_q_in;
  std::vector<std::vector<double>> intensities;
};

// One pass over all ordinates: x_out = T(x_in) (with or without the sources), and the moments and
// wall fluxes of that pass when `out` is given. The ordinates are solved by the options' backend
// (CpuOrdinates unless GrayOptions::backend), in batches of whole reflection groups.
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
    if (!opt.backend) own_backend_ = std::make_unique<CpuOrdinates>();
    backend_ = opt.backend ? opt.backend : own_backend_.get();
    batch_ = std::min(std::max<std::size_t>(backend_->bind(problem(), opt), 1), M);
    report.partition_unknowns = backend_->ghost_size();
    report.field_bytes = 3 * batch_ * n * sizeof(double);
    kept_.assign(opt.keep_intensities ? M : 0, {});
  }

  // Moments of the solved nodes, the walls' reflection state, and (distributed sweeps) the inflow of
  // the partition faces: the ghosts' values of every ordinate.
  std::size_t size() const { return solved_dofs() * rank() + walls_.state_size() + backend_->ghost_size(); }
  std::size_t solved_dofs() const { return solved_ * static_cast<std::size_t>(disc_.num_nodes()); }
  bool distributed() const { return opt_.local_mesh != nullptr; }
  std::size_t rank() const { return static_cast<std::size_t>(medium_.scattering_rank); }
  long limited() const { return limited_; }

  void apply(std::span<const double> x, bool with_sources, std::span<double> x_out, Outputs* out) {
    std::fill(x_out.begin(), x_out.end(), 0.0);
    const std::size_t nm = solved_dofs() * rank(), ns = walls_.state_size();
    auto phi_out = x_out.subspan(0, nm);
    auto state_out = x_out.subspan(nm, ns);
    const bool keep = out && opt_.keep_intensities;
    clear_outputs(out);
    auto& specular = specular_state(with_sources);
    backend_->begin_sweep(x.subspan(0, nm), x.subspan(nm, ns), x.subspan(nm + ns), with_sources, out != nullptr);
    const auto& groups = *groups_;
    for (std::size_t g0 = 0; g0 < groups.size();) {
      const std::size_t g1 = batch_end(g0);
      OrdinateBatch batch;
      for (std::size_t gi = g0; gi < g1; ++gi) {
        batch.members.insert(batch.members.end(), groups[gi].begin(), groups[gi].end());
        batch.group_begin.push_back(batch.members.size());
      }
      // Boundary traces only when the walls reflect or the wall fluxes are wanted.
      const auto counts = backend_->solve_batch(batch, specular, keep, out || walls_.reflects());
      report_.inner_iterations += counts.inner;
      report_.specular_passes += counts.passes;
      report_.ghost_exchanges += counts.exchanges;
      limited_ += counts.limited;
      backend_->accumulate(batch, phi_out, out);
      for (std::size_t k = 0; k < batch.members.size(); ++k) {
        const int m = batch.members[k];
        const auto u = backend_->solution(k);
        walls_.record(m, u, state_out);
        if (out) tally(m, u, backend_->inflow(k), *out);
        if (keep) kept_[static_cast<std::size_t>(m)].assign(u.begin(), u.end());
      }
      g0 = g1;
    }
    report_.ghost_exchanges += backend_->end_sweep(phi_out, out, x_out.subspan(nm + ns));
    if (keep) out->intensities = std::move(kept_);
    kept_.assign(opt_.keep_intensities ? quad_.size() : 0, {});
    ++report_.transport_sweeps;
  }

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
    accumulate_moments(problem(), members, fields, x.subspan(0, nm), &out);
    for (std::size_t m = 0; m < quad_.size(); ++m) walls_.record(static_cast<int>(m), intensities[m], x.subspan(nm, walls_.state_size()));
    if (ghost_inflow()) {  // distributed sweeps: the ghosts' values of every ordinate (CpuOrdinates' layout)
      const std::size_t np = static_cast<std::size_t>(disc_.num_nodes()), stride = quad_.size() * np;
      const auto ghosts_in = x.subspan(nm + walls_.state_size());
      for (std::size_t g = 0; g < disc_.num_elements() - solved_; ++g)
        for (std::size_t m = 0; m < quad_.size(); ++m)
          std::copy_n(intensities[m].begin() + static_cast<long>((solved_ + g) * np), np,
                      ghosts_in.begin() + static_cast<long>(g * stride + m * np));
    }
  }

 private:
  // Distributed sweeps: the partition faces' inflow is part of x.
  bool ghost_inflow() const { return setup_ && setup_->boundary; }

  GrayProblem problem() const {
    return GrayProblem{.disc = disc_, .quad = quad_, .medium = medium_, .walls = walls_, .beams = beams_, .plans = plans_,
                       .solved = solved_, .distributed = setup_};
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

  // A distributed mesh (GrayOptions::local_mesh): the owned elements are solved, with the ranks'
  // merged reflection groups.
  void set_up_distributed(const parallel::LocalMesh& local) {
    if (local.mesh.tets.size() != disc_.num_elements())
      throw std::logic_error("GrayOptions::local_mesh: the discretisation is not that of the local mesh");
    solved_ = local.num_owned;
    setup_ = opt_.distributed_setup;
    if (!setup_) {
      own_setup_ = std::make_unique<DistributedSetup>(local, disc_, quad_, walls_, opt_);
      setup_ = own_setup_.get();
    }
    if ((opt_.inner == io::InnerMethod::sweep) != ghost_inflow())
      throw std::logic_error("GrayOptions::distributed_setup: made for another inner solver");
    groups_ = &setup_->groups;
  }

  const transport::Discretization& disc_;
  const angular::Quadrature& quad_;
  const problem::Medium& medium_;
  const problem::Walls& walls_;
  const GrayOptions& opt_;
  GrayResult& report_;
  const Collimated* beams_;
  std::array<std::vector<double>, 2> specular_;  // traces persisted between sweeps: without / with sources
  std::vector<std::vector<double>> kept_;
  long limited_ = 0;
  std::vector<transport::SweepPlan> own_plans_;
  const std::vector<transport::SweepPlan>* plans_ = nullptr;  // own_plans_ or GrayOptions::plans
  std::unique_ptr<OrdinateBackend> own_backend_;  // unless GrayOptions::backend
  OrdinateBackend* backend_ = nullptr;
  std::size_t batch_ = 1;
  std::size_t solved_;  // elements solved: all, or a rank's owned ones
  const std::vector<std::vector<int>>* groups_;  // the walls' reflection groups, or the ranks' merged ones
  std::unique_ptr<DistributedSetup> own_setup_;  // unless GrayOptions::distributed_setup
  const DistributedSetup* setup_ = nullptr;      // distributed: own_setup_ or GrayOptions::distributed_setup
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
  if (it == 0 && m->r0 == 0) m->r0 = rnorm;
  const double rel = m->r0 > 0 ? rnorm / m->r0 : 0.0;
  m->history->push_back(rel);
  if (m->progress)
    std::fprintf(stderr, "\r  outer iteration %3d  relative residual %.3e  elapsed %.1f s   ", static_cast<int>(it), rel,
                 seconds_since(m->start));
  return 0;
}

double norm2(bool distributed, std::span<const double> v) {
  double sq = 0;
  for (double a : v) sq += a * a;
  reduce(distributed, &sq, 1, MPI_SUM);
  return std::sqrt(sq);
}

void krylov_outer(TransportSweep& sweep, const GrayOptions& opt, std::vector<double>& x, GrayResult& res) {
  const std::size_t nx = x.size();
  // x holds an initial guess (GrayOptions::initial_intensities) unless it is zero (on every rank:
  // the setting is collective).
  double nonzero = std::any_of(x.begin(), x.end(), [](double v) { return v != 0.0; }) ? 1.0 : 0.0;
  reduce(sweep.distributed(), &nonzero, 1, MPI_MAX);
  const bool guess = nonzero > 0;
  // Warm start with the right-hand side's norm known (GrayOptions::rhs_norm_hint): iterate on the
  // correction d = x - x0 from zero, (I - T0) d = T(x0) - x0. One transport sweep gives that
  // right-hand side, where PETSc's nonzero initial guess would take two (T(0), then T0 x0).
  const bool correction = guess && opt.rhs_norm_hint > 0;
  std::vector<double> b(nx), x0;
  if (correction) {
    sweep.apply(x, true, b, nullptr);
    for (std::size_t i = 0; i < nx; ++i) b[i] -= x[i];
    x0 = std::exchange(x, std::vector<double>(nx, 0.0));
    res.rhs_norm = opt.rhs_norm_hint;
    res.stopping_rule += "; warm start: Krylov iteration on the correction from the previous solution, ||T(0)|| that of the previous solve";
  } else {
    sweep.apply(std::vector<double>(nx, 0.0), true, b, nullptr);
    res.rhs_norm = norm2(sweep.distributed(), b);
  }
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
  // Correction form: ||r|| <= tol ||T(0)|| as the cold solve, with the hint for ||T(0)||.
  if (correction) check(KSPSetTolerances(ksp, 0.0, opt.tolerance * opt.rhs_norm_hint, 1e12, opt.max_outer), "KSPSetTolerances");
  else check(KSPSetTolerances(ksp, opt.tolerance, 0.0, 1e12, opt.max_outer), "KSPSetTolerances");
  PC pc;
  check(KSPGetPC(ksp, &pc), "KSPGetPC");
  check(PCSetType(pc, PCNONE), "PCSetType");
  check(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
  // The history is relative to ||T(0)|| (the first residual of a cold solve).
  OuterMonitor mon{&res.history, opt.progress, Clock::now(), correction ? opt.rhs_norm_hint : 0.0};
  check(KSPMonitorSet(ksp, outer_monitor, &mon, nullptr), "KSPMonitorSet");
  check(KSPSetFromOptions(ksp), "KSPSetFromOptions");
  check(KSPSetInitialGuessNonzero(ksp, guess && !correction ? PETSC_TRUE : PETSC_FALSE), "KSPSetInitialGuessNonzero");
  check(KSPSolve(ksp, vb, vx), "KSPSolve");
  if (correction)
    for (std::size_t i = 0; i < nx; ++i) x[i] += x0[i];
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
  if (options.local_mesh || options.backend) throw std::logic_error("sweep_from: one process, CPU sweeps");
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
