#include "dgrte/dgrte.hpp"
#include "dgrte/runner.hpp"

#include "adapt/error_indicator.hpp"
#include "adapt/refinement.hpp"

#include "dgrte/device_backend.hpp"
#include "dgrte/distributed_run.hpp"
#include "dgrte/final_gather_run.hpp"
#include "backend/device_data.hpp"
#include "backend/device_tracer_data.hpp"
#include "backend/opencl_ordinates.hpp"

#include "common/error.hpp"
#include "common/version.hpp"
#include "fields/field_import.hpp"
#include "io/atomic_file.hpp"
#include "io/case_file.hpp"
#include "output/vtk_output.hpp"
#include "mesh/tet_mesh.hpp"
#include "output/radiation_output.hpp"
#include "parallel/distributed_transport.hpp"
#include "parallel/global_order.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "spectral/spectral_solver.hpp"
#include "gas/model_factory.hpp"
#include "transport/discretization.hpp"
#include "transport/field_evaluation.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/sweep.hpp"
#include "angular/quadrature.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <chrono>
#include <numbers>
#include <cmath>
#include <iostream>
#include <map>
#include <mutex>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace dgrte::runner {
namespace {



// The gray solver's options from the case file (the settings every rank shares).
solver::GrayOptions gray_options(const io::CaseSpec& cs, const RunOptions& opt) {
  solver::GrayOptions go;
  go.outer = cs.solver.outer;
  go.tolerance = cs.solver.outer_tolerance;
  go.max_outer = cs.solver.outer_max_iterations;
  go.inner = cs.solver.inner.value_or(io::InnerMethod::sweep);
  // The floor is round-off: 1e-13 in double, 1e-6 in single precision.
  go.inner_rtol = std::max(cs.solver.single_precision ? io::SolverSpec::kSingleRtol : 1e-13,
                           std::min(cs.solver.rtol, 1e-2 * cs.solver.outer_tolerance));
  go.inner_max_iterations = cs.solver.max_iterations;
  go.preconditioner = cs.solver.preconditioner;
  go.block_budget_bytes = static_cast<std::size_t>(cs.solver.preconditioner_memory_mb * 1024.0 * 1024.0);
  go.keep_intensities = cs.output.intensities || cs.output.error_indicator;  // the indicator starts from them
  go.positivity = cs.solver.positivity;
  go.threads_over_levels = cs.solver.threads_over_levels;
  go.progress = opt.progress;
  return go;
}

// Rank 0's output points (probes, located on the whole mesh) for a rank's medium: the points in its
// owned elements, with rank 0's interpolation weights (a local element keeps its global vertex
// order). A nongray run's div q at the probes is then summed over the points' owners
// (reduce_output_points). Collective.
void share_output_points(const Distributed& d, const RootProblem* root, const io::CaseSpec& cs, const transport::Discretization& disc,
                         problem::Medium& medium) {
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  const problem::Medium::OutputPoints* from = root && root->medium ? &root->medium->output_points : nullptr;
  long count = from ? static_cast<long>(from->size()) : 0;
  MPI_Bcast(&count, 1, MPI_LONG, 0, PETSC_COMM_WORLD);
  if (count == 0) return;
  const auto P = static_cast<std::size_t>(count);
  std::vector<double> x(3 * P), weights(P * np);
  std::vector<long> element(P);
  if (from) {
    for (std::size_t p = 0; p < P; ++p) std::copy(from->position[p].begin(), from->position[p].end(), x.begin() + static_cast<long>(3 * p));
    element = from->element;
    weights = from->weights;
  }
  MPI_Bcast(x.data(), static_cast<int>(x.size()), MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  MPI_Bcast(element.data(), static_cast<int>(P), MPI_LONG, 0, PETSC_COMM_WORLD);
  MPI_Bcast(weights.data(), static_cast<int>(weights.size()), MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  std::unordered_map<long, long> local_of;
  for (std::size_t e = 0; e < d.local.num_owned; ++e) local_of[d.local.global_element[e]] = static_cast<long>(e);
  std::vector<problem::Vec3> points(P);
  for (std::size_t p = 0; p < P; ++p) {
    points[p] = {x[3 * p], x[3 * p + 1], x[3 * p + 2]};
    const auto it = local_of.find(element[p]);
    element[p] = it == local_of.end() ? -1 : it->second;
  }
  problem::attach_output_points(medium, cs, disc, points, element, weights);
}

// A rank's div q at the output points (NaN where another rank owns the point) summed on rank 0 (NaN
// where no rank has the point: outside the mesh). Collective.
std::vector<double> reduce_output_points(const Distributed& d, std::span<const double> local) {
  long count = static_cast<long>(local.size());
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_LONG, MPI_MAX, PETSC_COMM_WORLD);
  if (count == 0) return {};
  std::vector<double> sums(2 * static_cast<std::size_t>(count), 0.0);
  for (std::size_t p = 0; p < local.size(); ++p)
    if (!std::isnan(local[p])) sums[2 * p] = local[p], sums[2 * p + 1] = 1;
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  if (d.rank != 0) return {};
  std::vector<double> out(static_cast<std::size_t>(count));
  for (std::size_t p = 0; p < out.size(); ++p) out[p] = sums[2 * p + 1] > 0 ? sums[2 * p] : std::nan("");
  return out;
}

// The solve of a distributed mesh (GrayOptions::local_mesh): every rank builds the medium and walls
// of its piece and solves its owned elements; the outer iteration runs over all ranks. The nodal and
// wall results are gathered on rank 0 in the global order (global_walls: rank 0's walls of the whole
// mesh; null elsewhere), where they are what a one-process solve returns. With a gas model (`model:`)
// the spectral points are solved in turn, each over all ranks (spectral_run: the nongray report,
// rank 0's model passed in; other ranks load their own). Collective.
solver::GrayResult solve_distributed(Setup& s, const Distributed& d, const angular::Quadrature& quad, solver::GrayOptions go,
                                     const RootProblem* root, spectral::SpectralResult* spectral_run, nlohmann::json& parallel_json) {
  const auto& cs = s.cs;
  const auto t0 = Clock::now();
  const mesh::TetMesh mesh = parallel::without_ghost_walls(d.local);
  const auto disc = transport::make_discretization(mesh, cs.order);
  problem::Medium medium = problem::build_medium(cs, disc, &quad);
  if (cs.model) share_output_points(d, root, cs, disc, medium);
  std::vector<std::string> local_warnings;  // rank 0's global setup reports the case's warnings
  const problem::Walls walls(cs, disc, &quad, local_warnings);
  go.local_mesh = &d.local;
  go.progress = go.progress && d.rank == 0;
  // Rank 0 decides from the whole medium (the final gather's anisotropic source needs every
  // ordinate); a rank's piece may lack the scattering medium.
  int keep = go.keep_intensities;
  MPI_Bcast(&keep, 1, MPI_INT, 0, PETSC_COMM_WORLD);
  go.keep_intensities = keep != 0;
  const problem::Walls* global_walls = root ? root->walls : nullptr;
  gas::SpectralModel* model = root ? root->model : nullptr;
  gas::LoadedModel own_model;
  if (cs.model) {
    // The model's default species are those present anywhere in the medium: rank 0 saw the whole
    // medium; the others load it for one state holding the largest mole fractions of all ranks.
    gas::GasState present{};
    double x[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < d.local.num_owned * static_cast<std::size_t>(disc.num_nodes()) && i < medium.gas.size(); ++i) {
      const auto& g = medium.gas[i];
      x[0] = std::max(x[0], g.x_h2o), x[1] = std::max(x[1], g.x_co2), x[2] = std::max(x[2], g.x_co), x[3] = std::max(x[3], g.soot_fv);
    }
    MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    present.x_h2o = x[0], present.x_co2 = x[1], present.x_co = x[2], present.soot_fv = x[3];
    if (!model) {
      own_model = load_gas_model(s, std::span<const gas::GasState>(&present, 1));
      model = own_model.spectral.get();
    }
  }
  const std::size_t np = static_cast<std::size_t>(disc.num_nodes()), owned = d.local.num_owned * np;
  // Adaptive refinement's start: rank 0's fields on the whole mesh, sent to every rank's local elements.
  int has_guess = go.initial_intensities ? 1 : 0;
  MPI_Bcast(&has_guess, 1, MPI_INT, 0, PETSC_COMM_WORLD);
  std::vector<std::vector<double>> local_guess;
  for (std::size_t m = 0; has_guess && m < quad.size(); ++m)
    local_guess.push_back(parallel::scatter_from_global_order(
        PETSC_COMM_WORLD, d.local, d.rank == 0 ? std::span<const double>((*go.initial_intensities)[m]) : std::span<const double>(), np));
  go.initial_intensities = has_guess ? &local_guess : nullptr;
  const double setup_seconds = seconds_since(t0);
  solver::GrayResult res;
  if (model) {
    spectral::SpectralOptions so;
    so.block_bytes = static_cast<std::size_t>(cs.solver.spectral_block_mb * 1024.0 * 1024.0);
    // The error indicator sweeps each point's whole-mesh solution at order p + 1 on rank 0: every
    // rank sends its owned part as each point is solved.
    int gather_points = root && root->point_gathered ? 1 : 0;
    MPI_Bcast(&gather_points, 1, MPI_INT, 0, PETSC_COMM_WORLD);
    if (gather_points) {
      if (root) so.companion = root->companion;
      so.point_solved = [&](int, const problem::Medium&, const problem::Walls& point_walls, const solver::GrayResult& r,
                            const spectral::PointProblem* companion) {
        solver::GrayResult whole;
        for (const auto& I : r.intensities) whole.intensities.push_back(gather_to_root(d, np, std::span<const double>(I).first(owned)));
        whole.G = gather_to_root(d, np, std::span<const double>(r.G).first(owned));
        whole.wall_G = gather_wall_values(d, point_walls, r.wall_G, global_walls);
        whole.coupling_unknowns = r.coupling_unknowns;
        if (root) root->point_gathered(whole, companion);
      };
    }
    int point_starts = root && root->point_start ? 1 : 0;
    MPI_Bcast(&point_starts, 1, MPI_INT, 0, PETSC_COMM_WORLD);
    if (point_starts)
      so.point_start = [&](int j) {
        std::vector<std::vector<double>> whole;
        if (root) whole = root->point_start(j);
        int count = static_cast<int>(whole.size());
        MPI_Bcast(&count, 1, MPI_INT, 0, PETSC_COMM_WORLD);
        std::vector<std::vector<double>> local;
        for (int m = 0; m < count; ++m)
          local.push_back(parallel::scatter_from_global_order(PETSC_COMM_WORLD, d.local,
                                                              root ? std::span<const double>(whole[static_cast<std::size_t>(m)]) : std::span<const double>(), np));
        return local;
      };
    *spectral_run = spectral::solve_spectral(disc, quad, medium, walls, *model, go, so, go.progress ? s.log : decltype(s.log){});
    res = std::move(spectral_run->total);
    auto& f = spectral_run->fields;  // div q_from_q and the face areas: rank 0 recomputes them globally
    f.divq = gather_to_root(d, np, std::span<const double>(f.divq).first(owned));
    f.divq_element = gather_to_root(d, 1, std::span<const double>(f.divq_element).first(d.local.num_owned));
    f.output_divq = reduce_output_points(d, f.output_divq);
    f.q_net = gather_wall_values(d, walls, f.q_net, global_walls);
    for (auto* w : {&f.balance_q_in, &f.balance_q_out, &f.balance_q_net}) *w = gather_wall_values(d, walls, *w, global_walls);
    f.wall_divq = gather_wall_values(d, walls, f.wall_divq, global_walls);
    f.q_emitted = gather_wall_values(d, walls, f.q_emitted, global_walls);
    spectral_run->kappa_planck = gather_to_root(d, np, std::span<const double>(spectral_run->kappa_planck).first(owned));
  } else {
    // Collimated beams: solved once on the whole mesh by rank 0 (one sweep per beam), sent to the ranks.
    const auto beams = distribute_beams(d, root, np, medium, walls);
    res = solver::solve_gray(disc, quad, medium, walls, go, &beams);
  }
  for (auto* f : {&res.G, &res.qx, &res.qy, &res.qz, &res.source_total, &res.G_collimated, &res.qx_collimated, &res.qy_collimated,
                  &res.qz_collimated})
    if (!f->empty()) *f = gather_to_root(d, np, std::span<const double>(*f).first(owned));
  for (auto& I : res.intensities) I = gather_to_root(d, np, std::span<const double>(I).first(owned));
  res.q_in = gather_wall_values(d, walls, res.q_in, global_walls);
  res.q_out = gather_wall_values(d, walls, res.q_out, global_walls);
  for (auto* f : {&res.wall_G, &res.wall_qx, &res.wall_qy, &res.wall_qz, &res.wall_delta_q_in})
    if (!f->empty()) *f = gather_wall_values(d, walls, *f, global_walls);
  const bool sweeps = go.inner == io::InnerMethod::sweep;
  parallel_json = parallel_record(
      d, setup_seconds, res.seconds,
      {{"partition_faces", res.partition_faces},
       {"partition_unknowns", res.partition_unknowns},
       {"ghost_exchanges_rank0", res.ghost_exchanges},
       {"method", sweeps ? "sweeps of the owned elements, block Jacobi across ranks: the partition faces' inflow of every ordinate joins "
                           "the outer unknowns (moments, wall state), one exchange of the boundary elements per transport sweep; "
                           "results gathered on rank 0, which writes every output"
                         : "one Bi-CGSTAB over PETSC_COMM_WORLD per ordinate (one ghost exchange per operator apply) inside the outer "
                           "iteration; results gathered on rank 0, which writes every output"}});
  return res;
}

// The order p + 1 problem of a nongray run's error indicator (src/adapt/error_indicator.hpp): the
// case's medium (with its gas states) and walls at order p + 1 on the run's mesh, which the spectral
// loop rebuilds for each point beside the run's (spectral::SpectralCompanion).
struct NongrayIndicator {
  NongrayIndicator(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad,
                   const solver::GrayOptions& options)
      : start(Clock::now()),
        problem(cs, disc, quad),
        estimator(disc, problem.disc, quad, problem.walls, options),
        companion{&problem.disc, &problem.medium, &problem.walls},
        setup_seconds(seconds_since(start)) {}
  Clock::time_point start;
  adapt::EnrichedProblem problem;
  adapt::ErrorEstimator estimator;
  spectral::SpectralCompanion companion;
  double setup_seconds;
};

// `angular:` — the gray radiative-transfer solve over a quadrature. distributed: under mpirun,
// every rank solves its piece; rank 0 writes the outputs.
nlohmann::json run_angular(Setup& s, const RunOptions& opt, const Distributed* distributed = nullptr) {
  const auto& cs = s.cs;
  const auto& disc = s.disc;
  const auto quad = problem::build_quadrature(*cs.angular);
  nlohmann::json parallel_json;
  if (distributed && distributed->rank != 0) {
    spectral::SpectralResult spectral_run;
    solve_distributed(s, *distributed, quad, gray_options(cs, opt), nullptr, &spectral_run, parallel_json);
    return {};
  }
  problem::Medium medium = problem::build_medium(cs, disc, &quad);
  report_fields(s, medium);
  const problem::Walls walls(cs, disc, &quad, s.warnings);
  for (const auto& probe : cs.output.probes)
    if (!probe.wall.empty()) output::locate_wall_probe(probe, disc, walls);  // fail before the solve, not after
  if (!medium.properties_at_nodes) {
    // div q at the volume probes with the properties at each point (a nongray distributed run: each
    // rank takes the points in its owned elements, share_output_points).
    std::vector<problem::Vec3> points;
    for (const auto& probe : cs.output.probes)
      if (probe.wall.empty())
        for (const auto& [x, distance] : output::probe_points(probe)) points.push_back(x);
    if (!points.empty()) problem::attach_output_points(medium, cs, disc, points);
  }
  solver::GrayOptions go = gray_options(cs, opt);
  if (s.keep_solution) go.keep_intensities = true;  // the next solve's start (dgrte::Solver)
  go.initial_intensities = s.initial_intensities;  // distributed: rank 0's, on the whole mesh (solve_distributed sends it)
  if (go.positivity && (medium.scatters() || walls.state_size() > 0) && go.outer != io::OuterMethod::source_iteration)
    throw InputError(fmt::format("{}: the positivity limiter makes each sweep nonlinear, and a Krylov outer method needs a linear "
                                 "one; with scattering or diffusely reflecting walls use solver.outer: source-iteration",
                                 cs.solver.positivity_where));
  const auto backend_choice = choose_backend(cs.solver);
  double plan_seconds = 0;  // plans made here, not by solve_gray
  if (s.keep_solution && !cs.refine && !distributed && solver::uses_sweep_plans(go)) {
    if (s.kept_plans.size() != quad.size()) {
      const auto t0 = Clock::now();
      s.kept_plans = solver::plan_sweeps(disc, walls, quad);
      plan_seconds = seconds_since(t0);
    }
    go.plans = &s.kept_plans;
  }
  std::unique_ptr<device::DeviceTransport> device;
  std::unique_ptr<backend::OpenclOrdinates> device_ordinates;
  std::vector<transport::SweepPlan> device_plans;
  if (backend_choice.opencl) {
    if (go.positivity) throw InputError(fmt::format("{}: the positivity limiter runs in the CPU sweeps only; use solver.backend: cpu", cs.solver.positivity_where));
    std::vector<transport::Vec3> dirs;
    for (std::size_t m = 0; m < quad.size(); ++m) dirs.push_back(walls.streaming(static_cast<int>(m)));
    if (solver::uses_sweep_plans(go) && !go.plans) {
      const auto t0 = Clock::now();
      device_plans = solver::plan_sweeps(disc, walls, quad);
      plan_seconds = seconds_since(t0);
      go.plans = &device_plans;
    }
    auto data = backend::device_data(disc, medium.extinction);
    backend::add_directions(data, dirs, {}, go.plans ? *go.plans : device_plans);
    device = std::make_unique<device::DeviceTransport>(std::move(data), backend_choice.options);
    device_ordinates = std::make_unique<backend::OpenclOrdinates>(*device);
    go.backend = device_ordinates.get();
    s.log(fmt::format("  OpenCL device {} ({} precision), kernels {} in {:.2f} s", device->device().label(),
                      device->single_precision() ? "single" : "double", device->cache_hit() ? "from the cache" : "built",
                      device->build_seconds()));
  }
  s.log(fmt::format("dgrte {}: case {} — {} tets, order {}, {}, {} ordinates{}{}", kVersion, cs.file.string(), disc.num_elements(),
                    cs.order, quad.name, quad.size(), medium.scatters() ? ", scattering" : "",
                    walls.reflects() ? ", reflecting walls" : ""));
  // A spectral gas model (`model:`) turns the run into a sum of gray solves (src/spectral).
  gas::LoadedModel model = medium.has_gas_model() ? load_gas_model(s, medium.gas) : gas::LoadedModel{};
  const bool gather_on = cs.output.final_gather;
  if (gather_on) {
    if (model.spectral && distributed)
      throw InputError(fmt::format("{}: the final gather of a nongray run gathers each spectral point's DG solution on one process; "
                                   "under mpirun it runs for gray cases only (run without mpirun, or set output.final_gather: false)",
                                   cs.output.final_gather_where));
    for (const auto& p : medium.phase)
      if (!p.is_isotropic()) go.keep_intensities = true;  // the anisotropic scattering source needs every ordinate
  }
  const double setup_seconds = seconds_since(s.start);
  const auto beams = solver::solve_collimated(cs, disc, quad, medium, walls, s.warnings);
  solver::GrayResult result;
  output::RadiationFields fields;
  spectral::SpectralResult spectral_run;
  // Final gather: wall fluxes at every face and probe G, q from rays through the DG source (of every
  // spectral point of a nongray run, as each is solved).
  std::optional<FinalGatherRun> gather;
  if (gather_on) {
    // solver.backend opencl: the gather's rays run on the device too (opencl/final_gather.cl).
    mc::GatherTracer tracer;
    std::string tracer_name;
    if (backend_choice.opencl) {
      tracer = backend::device_gather_tracer(backend_choice.options.device, backend_choice.options.cache_dir);
      tracer_name = device ? "opencl: " + device->device().label() : "opencl: " + backend_choice.options.device;
    }
    gather.emplace(cs, disc, medium, walls, quad, beams, std::move(tracer), std::move(tracer_name));
    if (opt.gather_arrays) gather->set_arrays_out(opt.gather_arrays);
  }
  // A nongray run's error indicator: each spectral point's problem is built at order p + 1 too (a
  // companion, from the same block of properties) and swept from the point's solution as it is solved.
  std::optional<NongrayIndicator> nongray_indicator;
  if (model.spectral && cs.output.error_indicator) nongray_indicator.emplace(cs, disc, quad, go);
  if (model.spectral) {
    spectral::SpectralOptions so;
    so.block_bytes = static_cast<std::size_t>(cs.solver.spectral_block_mb * 1024.0 * 1024.0);
    if (nongray_indicator) so.companion = &nongray_indicator->companion;
    // Adaptive refinement: each point's solution is the next cycle's start for that point, where its
    // solve iterates (scattering, diffusely reflecting walls); points x ordinates x unknowns of memory.
    s.point_intensities.clear();
    auto keep_point = [&](int j, const solver::GrayResult& r) {
      if (!(cs.refine || s.keep_solution) || r.coupling_unknowns == 0) return;
      s.point_intensities.resize(static_cast<std::size_t>(j) + 1);
      s.point_intensities[static_cast<std::size_t>(j)] = r.intensities;
    };
    auto start_of = [&](int j) {
      const auto* starts = s.initial_point_intensities;
      return starts && static_cast<std::size_t>(j) < starts->size() ? (*starts)[static_cast<std::size_t>(j)]
                                                                   : std::vector<std::vector<double>>();
    };
    if (s.initial_point_intensities) so.point_start = start_of;
    if (gather || nongray_indicator || cs.refine || s.keep_solution)
      so.point_solved = [&](int j, const problem::Medium& point, const problem::Walls& point_walls, const solver::GrayResult& r,
                            const spectral::PointProblem* companion) {
        if (gather) gather->add(point, point_walls, r);
        if (nongray_indicator) nongray_indicator->estimator.add(*companion->medium, *companion->walls, r);
        keep_point(j, r);
      };
    if (distributed) {
      RootProblem root;
      root.medium = &medium, root.walls = &walls, root.model = model.spectral.get();
      int point = 0;  // the points come in order
      if (nongray_indicator) {
        root.companion = &nongray_indicator->companion;
        root.point_gathered = [&](const solver::GrayResult& whole, const spectral::PointProblem* companion) {
          nongray_indicator->estimator.add(*companion->medium, *companion->walls, whole);
          keep_point(point++, whole);
        };
      }
      if (s.initial_point_intensities) root.point_start = start_of;
      result = solve_distributed(s, *distributed, quad, go, &root, &spectral_run, parallel_json);
      const auto global = output::radiation_fields(disc, medium, walls, result);  // the DG divergence needs neighbours
      spectral_run.fields.divq_from_q = global.divq_from_q;
      spectral_run.fields.face_area = global.face_area;
    } else {
      spectral_run = spectral::solve_spectral(disc, quad, medium, walls, *model.spectral, go, so, go.progress ? s.log : decltype(s.log){});
      result = std::move(spectral_run.total);
    }
    fields = std::move(spectral_run.fields);
  } else {
    RootProblem root;
    root.medium = &medium, root.walls = &walls, root.beams = &beams;
    // A kept solver's warm start knows ||T(0)|| from its last solve (one transport sweep saved).
    if (s.keep_solution && !distributed && !cs.refine && go.initial_intensities) go.rhs_norm_hint = s.outer_rhs_norm;
    result = distributed ? solve_distributed(s, *distributed, quad, go, &root, nullptr, parallel_json)
                         : solver::solve_gray(disc, quad, medium, walls, go, &beams);
    s.outer_rhs_norm = result.rhs_norm;
    fields = output::radiation_fields(disc, medium, walls, result);
  }
  std::optional<adapt::ErrorIndicator> indicator;
  if (nongray_indicator) {
    indicator = nongray_indicator->estimator.finish(result, fields, cs.output.probes);
    indicator->seconds += nongray_indicator->setup_seconds;
  } else if (cs.output.error_indicator) {
    indicator = adapt::estimate_gray_error(cs, disc, quad, result, fields, go);
  }
  if (indicator)
    s.log(fmt::format("  error indicator (order {} sweeps from the solution: {}{}): G {:.3e} of its L2 norm, wall flux {:.3e}, div q {:.3e}, {:.2f} s",
                      indicator->order, indicator->sweeps, model.spectral ? fmt::format(" per spectral point, {} points", indicator->problems) : "",
                      indicator->relative_G(), indicator->relative_wall_flux(), indicator->relative_divq(), indicator->seconds));
  nlohmann::json gather_json;
  output::GatheredProbes gathered;
  double gather_seconds = -1;
  if (gather) {
    if (!model.spectral) gather->add(medium, walls, result);
    gather_json = gather->finish(result, fields, gathered);
    gather_seconds = gather->seconds();
    s.log(fmt::format("  final gather: {} points{}, {:.0f} rays per point ({} to {}), {:.2f} s", gather_json["receiver_points"].get<std::uint64_t>(),
                      model.spectral ? fmt::format(" x {} spectral points", gather_json["spectral_points_gathered"].get<int>()) : std::string(),
                      gather_json["rays_per_point"]["mean"].get<double>(), cs.output.final_gather_min_rays, cs.output.final_gather_max_rays,
                      gather_seconds));
  }
  const double solve_seconds =
      seconds_since(s.start) - setup_seconds - std::max(gather_seconds, 0.0) - (indicator ? indicator->seconds : 0.0);
  const auto balance = output::energy_balance(disc, walls, fields, result);
  s.log(fmt::format("  {}: {} outer iterations, {} transport sweeps, {} inner iterations, {:.2f} s", result.outer_method,
                    result.outer_iterations, result.transport_sweeps, result.inner_iterations, result.seconds));
  s.log(fmt::format("  energy balance: integral div q = {:.6g} W, wall net flux = {:.6g} W, relative imbalance {:.2e}",
                    balance["volume_W"].get<double>(), balance["walls_W"].get<double>(), balance["relative_imbalance"].get<double>()));

  auto summary = summary_header(s);
  const std::size_t n = disc.num_dofs();
  nlohmann::json q = {{"name", quad.name}, {"type", cs.angular->quadrature}, {"directions", quad.size()},
                      {"wall_flux_normalisation", cs.angular->wall_flux_normalisation}};
  summary["quadrature"] = q;
  summary["directions"] = quad.size();
  nlohmann::json phases = nlohmann::json::array();
  for (std::size_t i = 0; i < medium.phase.size(); ++i)
    phases.push_back({{"name", medium.phase[i].name}, {"g", medium.phase[i].asymmetry()}, {"rank", medium.scattering[i].rank},
                      {"energy_residual", medium.scattering[i].energy_residual},
                      {"asymmetry_residual", medium.scattering[i].asymmetry_residual},
                      {"phase_matrix", medium.scattering[i].cell_averaged ? "cell-average" : "point"}});
  summary["scattering"] = {{"present", medium.scatters()}, {"phase_functions", phases}, {"moments_per_node", medium.scattering_rank}};
  summary["solver"] = {{"outer", result.outer_method},
                       {"inner", result.inner_method},
                       {"outer_tolerance", go.tolerance},
                       {"inner_rtol", go.inner_rtol},
                       {"stopping_rule", result.stopping_rule},
                       {"outer_iterations", result.outer_iterations},
                       {"transport_sweeps", result.transport_sweeps},
                       {"inner_iterations", result.inner_iterations},
                       {"specular_group_passes", result.specular_passes},
                       {"positivity", go.positivity},
                       {"threads_over", go.threads_over_levels ? "levels" : "directions"},
                       {"limited_elements", result.limited_elements},
                       {"reflection_groups", walls.reflection_groups().size()},
                       {"outer_residual", result.outer_residual},
                       {"history", result.history},
                       {"coupling_unknowns", result.coupling_unknowns},
                       {"plan_seconds", result.plan_seconds + plan_seconds},  // made here or by the solver
                       {"plan_bytes", result.plan_bytes},
                       {"field_bytes", result.field_bytes},
                       {"max_levels", result.max_levels},
                       {"cycles", result.total_cycles},
                       {"lagged_fraction", result.lagged_fraction}};
  summary["backend"] = backend_summary(backend_choice, device.get());
  if (distributed) summary["parallel"] = parallel_json;
  if (!beams.empty()) {
    nlohmann::json jb = nlohmann::json::array();
    for (const auto& b : beams.beams) jb.push_back({{"direction", b.direction}, {"generation", b.generation}});
    summary["collimated"] = {{"beams", jb}, {"generations", beams.generations}, {"unfollowed_fraction", beams.unfollowed_fraction},
                             {"G_integral_W_per_m", output::volume_integral(disc, beams.G)}};
  }
  if (model.spectral && (spectral_run.gas_nodes_clamped > 0 || spectral_run.wall_nodes_clamped > 0))
    s.warnings.push_back(fmt::format(
        "{}: the gas model {} covers {:.0f}-{:.0f} K; {} of {} gas nodes (the gas spans {:.0f}-{:.0f} K) and {} of {} emitting wall nodes "
        "lie outside and take the properties at the nearest end of that range",
        cs.file.string(), model.name(), spectral_run.temperature_range.first, spectral_run.temperature_range.second,
        spectral_run.gas_nodes_clamped, n, spectral_run.gas_temperature_min, spectral_run.gas_temperature_max,
        spectral_run.wall_nodes_clamped, spectral_run.wall_nodes_emitting));
  if (model.spectral)
    summary["spectral"] = {{"model", model.name()},
                           {"type", model.type},
                           {"property_backend", property_backend(model)},
                           {"spectral_points", spectral_run.spectral_points},
                           {"property_seconds", spectral_run.property_seconds},
                           {"transport_seconds", spectral_run.transport_seconds},
                           {"property_blocks", spectral_run.property_blocks},
                           {"max_block_points", spectral_run.max_block_points},
                           {"block_mb", static_cast<double>(spectral_run.block_bytes) / (1024.0 * 1024.0)},
                           {"max_outer_iterations", spectral_run.max_outer_iterations},
                           {"wall_nodes_emitting", spectral_run.wall_nodes_emitting},
                           {"property_evaluation", {{"points", spectral_run.evaluated_points},
                                                    {"distinct_states", spectral_run.distinct_states},
                                                    {"where", model.spectral && medium.properties_at_nodes
                                                                  ? "nodes" : "nodes, quadrature points and probe points"}}},
                           {"temperature_range_K", {spectral_run.temperature_range.first,
                                                    std::isfinite(spectral_run.temperature_range.second)
                                                        ? nlohmann::json(spectral_run.temperature_range.second)
                                                        : nlohmann::json(nullptr)}},
                           {"gas_nodes_clamped", spectral_run.gas_nodes_clamped},
                           {"wall_nodes_clamped", spectral_run.wall_nodes_clamped},
                           {"planck_mean_kappa_volume_average", output::volume_integral(disc, spectral_run.kappa_planck) /
                                                                    output::volume_integral(disc, std::vector<double>(n, 1.0))}};
  if (auto soot = soot_summary(model, medium); !soot.is_null()) summary["spectral"]["soot"] = soot;
  summary["walls"] = output::wall_summary(disc, walls, fields);
  summary["energy_balance"] = balance;
  if (gather_on) summary["final_gather"] = gather_json;
  auto cell_fields = element_fields(s.mesh);
  std::optional<transport::ErrorNorms> G_error;
  if (cs.exact) {
    // The exact G of the set: sum_m w_m I_exact(x, s_m) (the discrete-ordinates answer the DG space approximates).
    G_error = transport::error_norms(disc, result.G, [&](const transport::Vec3& x) {
      double G = 0;
      for (std::size_t m = 0; m < quad.size(); ++m) G += quad.w[m] * (*cs.exact)(x, quad.s[m]);
      return G;
    });
    summary["error"] = {{"quantity", "G"}, {"G_l2", G_error->l2}, {"G_linf", G_error->linf}, {"G_relative_l2", G_error->relative_l2},
                        {"quadrature_degree", 2 * cs.order + 2}};
    cell_fields.push_back({"error_G", G_error->element_l2});
    s.log(fmt::format("  error of G against exact: L2 {:.4e}, max {:.4e}, relative L2 {:.4e}", G_error->l2, G_error->linf, G_error->relative_l2));
  }
  if (indicator) {
    summary["error_indicator"] = {
        {"method", "order p+1 transport sweeps from the solution (src/adapt/error_indicator.hpp)"},
        {"order", indicator->order},
        {"sweeps", indicator->sweeps},
        {"problems", indicator->problems},
        {"sweeps_remaining_ratio", indicator->remaining},
        {"G_l2", indicator->G},
        {"G_norm_l2", indicator->G_norm},
        {"G_relative", indicator->relative_G()},
        {"wall_flux_l2", indicator->wall_flux},
        {"wall_flux_norm_l2", indicator->wall_flux_norm},
        {"wall_flux_relative", indicator->relative_wall_flux()},
        {"divq_l2", indicator->divq},
        {"divq_norm_l2", indicator->divq_norm},
        {"divq_relative", indicator->relative_divq()},
        {"G_max_relative", indicator->max_relative_G()},
        {"wall_flux_max_relative", indicator->max_relative_wall_flux()},
        {"divq_max_relative", indicator->max_relative_divq()},
        {"G_max", indicator->G_max},
        {"wall_flux_max", indicator->wall_flux_max},
        {"divq_max", indicator->divq_max},
        {"max_element_G", *std::max_element(indicator->element_G.begin(), indicator->element_G.end())},
        {"seconds", indicator->seconds}};
    // On the probe lines (the largest difference relative to each line's largest |value|; null
    // without a line of that kind).
    auto on_lines = [](bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(); };
    summary["error_indicator"]["G_probes_relative"] = on_lines(indicator->has_volume_probes, indicator->probe_relative_G());
    summary["error_indicator"]["divq_probes_relative"] = on_lines(indicator->has_volume_probes, indicator->probe_relative_divq());
    summary["error_indicator"]["wall_flux_probes_relative"] = on_lines(indicator->has_wall_probes, indicator->probe_relative_wall_flux());
    if (G_error) summary["error_indicator"]["effectivity_G"] = G_error->l2 > 0 ? indicator->G / G_error->l2 : 0.0;
    cell_fields.push_back({"error_indicator", indicator->element_G});
    cell_fields.push_back({"error_indicator_wall_flux", indicator->element_wall_flux});
    cell_fields.push_back({"error_indicator_divq", indicator->element_divq});
  }
  summary["grind_ns_per_dof"] =
      result.seconds * 1e9 / (static_cast<double>(n) * static_cast<double>(quad.size()) * std::max(1, result.transport_sweeps));
  summary["grind_definition"] = "solve seconds / (DOFs x ordinates x transport sweeps)";

  const auto& dir = cs.output.directory;
  if (s.write_files) std::filesystem::create_directories(dir);
  const auto t_out = Clock::now();
  if (s.write_files) output::write_quadrature_csv(dir / "quadrature.csv", quad);
  {
    // G, q and div q with the walls' values at the nodes of boundary faces (docs/case-file.md).
    const auto on_walls = [&](const std::vector<double>& nodal, const std::vector<double>& wall) {
      return output::with_wall_values(walls, nodal, wall);
    };
    const auto G = on_walls(result.G, result.wall_G), qx = on_walls(result.qx, result.wall_qx),
               qy = on_walls(result.qy, result.wall_qy), qz = on_walls(result.qz, result.wall_qz),
               divq = on_walls(fields.divq, fields.wall_divq);
    std::vector<output::PointField> pf{{"G", G},       {"qx", qx},     {"qy", qy},
                                   {"qz", qz},     {"divq", divq}, {"divq_from_q", fields.divq_from_q},
                                   {"sigma_s", medium.sigma_s}, {"Ib", medium.blackbody_intensity}};
    // The gas state's arrays: pf holds spans into them, so they live as long as pf.
    std::vector<double> t, xh2o, xco2, xco, p;
    if (model.spectral) {
      // The gas: its Planck-mean absorption sum_j a_j kappa_j and its state.
      pf.push_back({"kappa_planck", spectral_run.kappa_planck});
      for (auto* f : {&t, &xh2o, &xco2, &xco, &p}) f->resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto& g = medium.gas[i];
        t[i] = g.temperature, p[i] = g.pressure, xh2o[i] = g.x_h2o, xco2[i] = g.x_co2, xco[i] = g.x_co;
      }
      for (const auto& [name, f] : {std::pair{"temperature", &t}, {"pressure", &p}, {"x_h2o", &xh2o}, {"x_co2", &xco2}, {"x_co", &xco}})
        pf.push_back({name, *f});
    } else {
      pf.push_back({"kappa", medium.kappa});
    }
    if (!medium.soot_fv.empty()) pf.push_back({"soot_fv", medium.soot_fv});
    std::vector<std::string> names;
    output::StringData directions{"direction_of_array", {}};
    const std::size_t written = cs.output.intensities ? result.intensities.size() : 0;  // kept for the final gather only otherwise
    for (std::size_t m = 0; m < written; ++m) {
      names.push_back(fmt::format("I_{}", m));
      directions.values.push_back(fmt::format("I_{}: ({:.9g}, {:.9g}, {:.9g}) w {:.9g}", m, quad.s[m][0], quad.s[m][1], quad.s[m][2], quad.w[m]));
    }
    for (std::size_t m = 0; m < written; ++m) pf.push_back({names[m], result.intensities[m]});
    if (!result.G_collimated.empty()) {
      pf.push_back({"G_collimated", result.G_collimated});
      pf.push_back({"qx_collimated", result.qx_collimated});
      pf.push_back({"qy_collimated", result.qy_collimated});
      pf.push_back({"qz_collimated", result.qz_collimated});
    }
    auto fd = group_names(s.mesh);
    if (!directions.values.empty()) fd.push_back(directions);
    keep_fields(s, disc, pf, medium);
    const bool vtk = cs.output.vtk && s.write_files;
    if (vtk) output::write_solution_vtu(dir / "solution.vtu", disc, pf, cell_fields, cs.output.linear, fd);
    std::vector<std::size_t> faces;
    output::CellField group{"surface_group", {}}, emissivity{"emissivity", {}};
    std::vector<double> wall_T(fields.q_net.size());
    for (std::size_t b = 0; b < walls.num_faces(); ++b) {
      faces.push_back(walls.element_face(b));
      const auto [e, f] = walls.face(b);
      const int g = s.mesh.boundary_group[e][static_cast<std::size_t>(f)];
      group.values.push_back(g >= 0 ? s.mesh.surface_groups[static_cast<std::size_t>(g)].tag : -1);
      emissivity.values.push_back(walls.wall(walls.wall_of(b)).emissivity);
      for (std::size_t j = 0; j < walls.face_nodes(); ++j) wall_T[b * walls.face_nodes() + j] = walls.temperature(b, j);
    }
    const std::vector<output::PointField> wall_arrays{{"q_in", result.q_in},         {"q_net", fields.q_net}, {"q_out", result.q_out},
                                                  {"q_emitted", fields.q_emitted}, {"temperature", wall_T},  {"G", result.wall_G}};
    keep_wall_fields(s, disc, walls, wall_arrays);
    if (vtk) output::write_faces_vtu(dir / "walls.vtu", disc, faces, wall_arrays, {group, emissivity}, group_names(s.mesh));
  }
  for (const auto& table : output::probe_tables(cs, disc, walls, result, fields, s.warnings, gather_on ? &gathered : nullptr))
    keep_probe(s, dir, table.name, table.text);
  if (model.spectral && s.write_files) write_spectral_csv(dir / "spectral.csv", spectral_run);
  summary["outputs"] = {{"vtk", cs.output.vtk ? "solution.vtu" : ""}, {"walls_vtk", cs.output.vtk ? "walls.vtu" : ""},
                        {"quadrature", "quadrature.csv"}, {"vtk_cells", cs.output.linear ? "linear" : "lagrange"},
                        {"spectral", model.spectral ? "spectral.csv" : ""}};
  finish(s, summary, setup_seconds, solve_seconds, t_out, gather_seconds);
  s.indicator = std::move(indicator);
  if (cs.refine || s.keep_solution) s.intensities = std::move(result.intensities);  // the next cycle's (solve's) start
  return summary;
}

std::string marking_rule(io::RefineNorm norm) {
  switch (norm) {
    case io::RefineNorm::max: return "elements above the target (maximum strategy)";
    case io::RefineNorm::probes:
      return fmt::format("Doerfler, fraction {}, and the elements of probe points above the target", adapt::kMarkingFraction);
    case io::RefineNorm::l2: break;
  }
  return fmt::format("Doerfler, fraction {}", adapt::kMarkingFraction);
}

// Read once (rank 0), partition, send each rank its piece of s.mesh; rank 0 keeps the global mesh
// and builds the discretisation for the outputs. Collective.
Distributed distribute(Setup& s, int rank, int ranks) {
  Distributed d;
  d.rank = rank, d.ranks = ranks;
  d.local = parallel::distribute_mesh(PETSC_COMM_WORLD, rank == 0 ? &s.mesh : nullptr, "auto", &d.partitioner);
  long fewest = static_cast<long>(d.local.num_owned);
  MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_LONG, MPI_MIN, PETSC_COMM_WORLD);
  if (fewest == 0)
    throw InputError(fmt::format("{}: {} MPI processes for a mesh of {} elements: a process would own none; run with fewer processes",
                                 s.cs.file.string(), ranks, d.local.global_elements));
  if (rank == 0) s.disc = transport::make_discretization(s.mesh, s.cs.order);
  s.log(fmt::format("  {} ranks, partitioner {}: rank 0 owns {} of {} elements (+ {} ghosts)", ranks, d.partitioner, d.local.num_owned,
                    d.local.global_elements, d.local.num_ghosts()));
  return d;
}

// `refine:` (issue 32): cycles of solve (run_angular, which writes the cycle's outputs over the last
// one's), estimate (its error indicator), mark (Doerfler) and refine (h: re-mesh the .geo with a size
// field; p: one order more), until the estimate meets refine.target, or max_cycles, max_dofs or the
// highest order stops it. The last solved cycle's outputs stay; summary.json gains `refinement`.
nlohmann::json run_refined(Setup& s, const RunOptions& opt) {
  const io::RefineSpec rs = *s.cs.refine;
  const auto [rank, ranks] = mpi_rank_and_size();
  nlohmann::json cycles = nlohmann::json::array();
  nlohmann::json summary;
  std::vector<std::vector<double>> guess;
  std::vector<std::vector<std::vector<double>>> point_guess;  // a nongray run's, per spectral point
  std::string stop;
  bool reached = false;
  double remesh_seconds = 0;  // the re-meshing that made this cycle's mesh (h)
  mesh::TetMesh previous_mesh;  // h: the mesh before this cycle's, and the size field on it that made this cycle's
  mesh::SizeField size_field;
  // Rank 0's decision after a cycle (it holds the mesh, the summary and the indicator): refine the
  // mesh or the order for another cycle (true), or stop (false, with `stop` and `reached` set).
  auto refine_again = [&](int cycle, const Clock::time_point t0) {
    const auto& ind = *s.indicator;
    const double estimate = adapt::relative_estimate(ind, rs.quantity, rs.norm);
    cycles.push_back({{"cycle", cycle}, {"elements", s.disc.num_elements()}, {"order", s.cs.order}, {"dofs", s.disc.num_dofs()},
                      {"estimate", estimate}, {"G_relative", ind.relative_G()}, {"wall_flux_relative", ind.relative_wall_flux()},
                      {"divq_relative", ind.relative_divq()},
                      {"G_max_relative", ind.max_relative_G()}, {"wall_flux_max_relative", ind.max_relative_wall_flux()},
                      {"divq_max_relative", ind.max_relative_divq()},
                      {"G_probes_relative", ind.probe_relative_G()}, {"wall_flux_probes_relative", ind.probe_relative_wall_flux()},
                      {"divq_probes_relative", ind.probe_relative_divq()},
                      {"solver_outer_iterations", summary["solver"]["outer_iterations"]}, {"seconds", seconds_since(t0)},
                      {"remesh_seconds", remesh_seconds}});
    s.log(fmt::format("  cycle {}: estimated relative error of {} ({} norm) {:.3e} (target {:.3e})", cycle, io::to_string(rs.quantity),
                      io::to_string(rs.norm), estimate, rs.target));
    if (estimate <= rs.target) {
      reached = true;
      stop = "target reached";
      return false;
    }
    if (cycle >= rs.max_cycles) {
      stop = fmt::format("refine.max_cycles ({}) solved", rs.max_cycles);
      return false;
    }
    const auto marked = adapt::mark_elements(ind, rs);
    if (rs.strategy == io::RefineStrategy::p) {
      if (s.cs.order + 1 > dg::kMaxOrder - 1) {
        stop = fmt::format("order {} reached: the error indicator of order {} needs p + 1 <= {}", s.cs.order, s.cs.order, dg::kMaxOrder);
        return false;
      }
      const std::size_t next = s.disc.num_elements() * static_cast<std::size_t>(dg::tet_num_nodes(s.cs.order + 1));
      if (rs.max_dofs > 0 && next > rs.max_dofs) {
        stop = fmt::format("refine.max_dofs ({}): order {} would have {} unknowns per ordinate", rs.max_dofs, s.cs.order + 1, next);
        return false;
      }
      const auto hi = dg::ReferenceTet::build(s.cs.order + 1);
      for (const auto& u : s.intensities) guess.push_back(adapt::prolong(s.disc.ref, hi, u));
      point_guess.assign(s.point_intensities.size(), {});
      for (std::size_t j = 0; j < s.point_intensities.size(); ++j)
        for (const auto& u : s.point_intensities[j]) point_guess[j].push_back(adapt::prolong(s.disc.ref, hi, u));
      s.cs.order += 1;
    } else {
      const auto t_mesh = Clock::now();
      const auto requested = adapt::requested_sizes(s.mesh, size_field.mesh ? &size_field : nullptr, s.cs.mesh.size);
      auto next_field = adapt::refined_size_field(s.mesh, marked, requested);
      mesh::TetMesh next_mesh;
      try {
        next_mesh = mesh::mesh_geo(s.cs.mesh.geo, s.cs.mesh.size, next_field);
      } catch (const InputError& e) {  // Gmsh failed on the size field: the last cycle's outputs stand
        stop = fmt::format("re-meshing with the refined size field failed ({})", e.what());
        return false;
      }
      remesh_seconds = seconds_since(t_mesh);
      const std::size_t next = next_mesh.num_elements() * static_cast<std::size_t>(s.disc.num_nodes());
      if (rs.max_dofs > 0 && next > rs.max_dofs) {
        stop = fmt::format("refine.max_dofs ({}): the refined mesh ({} tets) would have {} unknowns per ordinate", rs.max_dofs,
                           next_mesh.num_elements(), next);
        return false;
      }
      if (!s.intensities.empty() || !s.point_intensities.empty()) {
        const auto next_disc = transport::make_discretization(next_mesh, s.cs.order);
        if (!s.intensities.empty()) guess = adapt::transfer_fields(s.disc, next_disc, s.intensities);
        point_guess.assign(s.point_intensities.size(), {});
        for (std::size_t j = 0; j < s.point_intensities.size(); ++j)
          if (!s.point_intensities[j].empty()) point_guess[j] = adapt::transfer_fields(s.disc, next_disc, s.point_intensities[j]);
      }
      // The field that made the next mesh, on the mesh it was built on: the next cycle's requested sizes.
      previous_mesh = std::move(s.mesh);
      size_field = {&previous_mesh, std::move(next_field.vertex_size)};
      s.mesh = std::move(next_mesh);
    }
    return true;
  };
  for (int cycle = 1;; ++cycle) {
    const auto t0 = Clock::now();
    // Under mpirun each cycle's mesh is partitioned anew (rank 0 refines it); the ranks solve it.
    std::optional<Distributed> distributed;
    if (ranks > 1) distributed.emplace(distribute(s, rank, ranks));
    else s.disc = transport::make_discretization(s.mesh, s.cs.order);
    s.initial_intensities = guess.empty() ? nullptr : &guess;
    s.initial_point_intensities = point_guess.empty() ? nullptr : &point_guess;
    s.log(fmt::format("refinement cycle {}: {} tets, order {}, {} unknowns per ordinate", cycle, s.disc.num_elements(), s.cs.order,
                      s.disc.num_dofs()));
    summary = run_angular(s, opt, distributed ? &*distributed : nullptr);
    guess.clear();
    point_guess.clear();
    int next[2] = {rank == 0 && refine_again(cycle, t0) ? 1 : 0, s.cs.order};
    if (ranks > 1) MPI_Bcast(next, 2, MPI_INT, 0, PETSC_COMM_WORLD);
    s.cs.order = next[1];
    s.intensities.clear();
    s.point_intensities.clear();
    if (!next[0]) break;
  }
  if (rank != 0) return {};
  if (!reached)
    s.warnings.push_back(fmt::format("{}: refinement stopped before the target: {}; the estimated relative error of {} is {:.3e} "
                                     "(target {:.3e}); the outputs are the last cycle's",
                                     rs.where, stop, io::to_string(rs.quantity), cycles.back()["estimate"].get<double>(), rs.target));
  // Each cycle repeats the set-up's warnings: keep one of each.
  std::vector<std::string> unique;
  for (const auto& w : s.warnings)
    if (std::find(unique.begin(), unique.end(), w) == unique.end()) unique.push_back(w);
  if (!reached) std::cerr << "warning: " << unique.back() << "\n";
  summary["warnings"] = unique;
  summary["refinement"] = {{"target", rs.target},          {"quantity", io::to_string(rs.quantity)},
                           {"strategy", rs.strategy == io::RefineStrategy::h ? "h" : "p"},
                           {"norm", io::to_string(rs.norm)},
                           {"marking", marking_rule(rs.norm)},
                           {"max_cycles", rs.max_cycles},  {"max_dofs", rs.max_dofs},
                           {"target_reached", reached},    {"stopped", stop},
                           {"cycles", cycles}};
  s.results.summary = summary;
  if (s.write_files) io::write_text_atomically(s.cs.output.directory / "summary.json", summary.dump(2) + "\n");
  return summary;
}

// What runs distributed so far (issue 14): `directions:` and `angular:` runs (gray or with a gas
// model, collimated beams, final gather, positivity limiter, error indicator, adaptive refinement) on the CPU.
// Anything else under mpirun is an input error rather than N copies of the whole run.
void require_distributable(const io::CaseSpec& cs, int ranks) {
  std::string why;
  if (cs.solver.monte_carlo()) why = "solver.method: montecarlo";
  else if (cs.solver.backend != "cpu") why = "solver.backend: " + cs.solver.backend;
  else if (cs.angular && cs.solver.positivity && cs.solver.outer != io::OuterMethod::source_iteration)
    // One process without scattering or diffuse walls sweeps once; distributed, the partition faces'
    // inflow is an outer unknown, and a Krylov method needs a linear sweep (the limiter is not).
    throw InputError(fmt::format("{}: solver.positivity on {} MPI processes needs solver.outer: source-iteration (the partition "
                                 "faces' inflow is iterated by the outer method, and the limiter makes the sweep nonlinear)",
                                 cs.file.string(), ranks));
  if (!why.empty())
    throw InputError(fmt::format("{}: run on {} MPI processes, but {} does not run distributed yet (so far: directions and angular runs "
                                 "on the CPU, docs/parallel.md); run it on one process (without mpirun)",
                                 cs.file.string(), ranks, why));
}

// The case, the mesh and (one process) the discretisation: everything a solve starts from. In place:
// the discretisation points to s.mesh.
void prepare(Setup& s, const RunOptions& opt) {
  transport::ensure_petsc();  // library callers (a command line has started it)
  s.cs = io::read_case(opt.case_file);
  s.start = Clock::now();
  if (opt.output_directory) s.cs.output.directory = *opt.output_directory;
  if (opt.linear_vtk) s.cs.output.linear = *opt.linear_vtk;
  if (opt.backend) {
    if (*opt.backend != "cpu" && *opt.backend != "opencl" && *opt.backend != "auto")
      throw InputError(fmt::format("--backend {}: use cpu, opencl or auto", *opt.backend));
    s.cs.solver.backend = *opt.backend;
    s.cs.solver.backend_where.clear();
  }
  s.write_files = opt.write_files;
  const bool quiet = opt.quiet;
  s.log = [quiet](const std::string& line) {
    if (!quiet) std::cout << line << std::endl;
  };
  s.warnings = s.cs.warnings;
  const auto [rank, ranks] = mpi_rank_and_size();
  if (rank == 0)
    for (const auto& w : s.warnings) std::cerr << "warning: " << w << "\n";
  s.printed = s.warnings.size();
  if (ranks > 1) require_distributable(s.cs, ranks);
  if (rank != 0) s.log = [](const std::string&) {};  // rank 0 speaks for the run
  io::check_mesh_file_exists(s.cs.mesh);
  if (rank == 0) s.mesh = s.cs.mesh.file.empty() ? mesh::mesh_geo(s.cs.mesh.geo, s.cs.mesh.size) : mesh::read_mesh(s.cs.mesh.file);
  for (std::size_t g = 0; g < s.mesh.surface_groups.size(); ++g)
    if (s.mesh.interior_tagged_faces[g] > 0) {
      const auto& c = s.mesh.first_interior_tagged[g];
      const auto& group = s.mesh.surface_groups[g];
      s.warnings.push_back(fmt::format(
          "{}: Physical Surface '{}' contains {} interior faces (first at ({:.6g}, {:.6g}, {:.6g})); they are not walls and "
          "get no boundary condition (in a .geo, CombinedBoundary{{}} rather than Boundary{{}} gives only the outer surface)",
          s.mesh.source, group.name.empty() ? fmt::format("#{}", group.tag) : group.name, s.mesh.interior_tagged_faces[g], c[0], c[1],
          c[2]));
    }
  if (!s.cs.refine && ranks == 1) s.disc = transport::make_discretization(s.mesh, s.cs.order);
}

// One solve of a prepared case. The device core throws DeviceError (out of device memory, kernel
// build failure, ...): a solver failure for the command line's exit codes, not an internal error.
nlohmann::json solve(Setup& s, const RunOptions& opt, std::optional<Distributed>& distributed) {
  try {
    if (s.cs.refine) return run_refined(s, opt);
    const auto [rank, ranks] = mpi_rank_and_size();
    if (ranks > 1) {
      if (!distributed) distributed.emplace(distribute(s, rank, ranks));
      return s.cs.angular ? run_angular(s, opt, &*distributed) : run_directions(s, opt, &*distributed);
    }
    if (s.cs.solver.monte_carlo()) return run_montecarlo(s, opt);
    return s.cs.angular ? run_angular(s, opt) : run_directions(s, opt);
  } catch (const device::DeviceError& e) {
    throw SolverError(fmt::format("OpenCL backend: {}", e.what()));
  }
}

// A caller's nodal values as a function of (element, point): the element's polynomial through
// them (the DG space they live in), clamped at 0 where interpolation undershoots between nodes.
std::function<double(std::size_t, const Vec3&)> nodal_function(const transport::Discretization& disc, std::vector<double> values) {
  // The modal coefficients V^-1 u_e of every element, once: a point then costs one basis evaluation
  // (the medium is sampled at ~10^5 points per solve).
  const auto np = static_cast<Eigen::Index>(disc.ref.num_nodes);
  const auto elements = static_cast<Eigen::Index>(disc.num_elements());
  struct Basis {
    Eigen::MatrixXd modal;
    // The basis at the reference points met so far (rounded to 1e-12): the medium is sampled at the
    // same few reference points in every element (nodes, property points), and evaluating the basis
    // (Jacobi polynomials with gamma-function norms) costs more than the rest of the sample.
    std::mutex mutex;
    std::map<std::array<long long, 3>, Eigen::RowVectorXd> rows;
  };
  auto basis = std::make_shared<Basis>();
  basis->modal = disc.ref.vandermonde.partialPivLu().solve(Eigen::Map<const Eigen::MatrixXd>(values.data(), np, elements));
  return [&disc, basis](std::size_t e, const Vec3& x) {
    const dg::Points rst = transport::reference_coordinates(disc, e, x);
    const std::array<long long, 3> key{std::llround(rst(0, 0) * 1e12), std::llround(rst(0, 1) * 1e12), std::llround(rst(0, 2) * 1e12)};
    Eigen::RowVectorXd psi;
    {
      const std::lock_guard lock(basis->mutex);
      if (const auto it = basis->rows.find(key); it != basis->rows.end()) psi = it->second;
    }
    if (psi.size() == 0) {
      psi = dg::orthonormal_basis(disc.ref.order, rst);
      const std::lock_guard lock(basis->mutex);
      if (basis->rows.size() > 4096) basis->rows.clear();  // arbitrary points (probes, rays): no reuse to keep
      basis->rows.emplace(key, psi);
    }
    return std::max(psi.dot(basis->modal.col(static_cast<Eigen::Index>(e))), 0.0);
  };
}

}  // namespace
}  // namespace dgrte::runner

namespace dgrte {

const std::vector<std::string>& settable_fields() {
  static const std::vector<std::string> names{"temperature", "kappa", "sigma_s", "soot_fv", "pressure", "x_h2o", "x_co2", "x_co"};
  return names;
}

struct Solver::State {
  RunOptions options;
  runner::Setup setup;
  std::optional<runner::Distributed> distributed;  // under mpirun: this rank's piece, partitioned once
  // The previous solve's intensities (the next solve's start), per spectral point for a nongray run.
  std::vector<std::vector<double>> warm;
  std::vector<std::vector<std::vector<double>>> warm_points;
};

Solver::Solver(RunOptions options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  runner::prepare(state_->setup, state_->options);
  state_->setup.keep_solution = true;
}
Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

std::size_t Solver::num_nodes() const { return state_->setup.disc.num_dofs(); }

std::vector<std::array<double, 3>> Solver::node_positions() const {
  const auto& p = state_->setup.disc.node_position;
  return {p.begin(), p.end()};
}

void Solver::set_field(const std::string& name, std::span<const double> values) {
  auto& s = state_->setup;
  const auto& names = settable_fields();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError(fmt::format("set_field('{}'): not a settable quantity; use one of {}", name, fmt::join(names, ", ")));
  if (s.cs.refine)
    throw InputError(fmt::format("set_field('{}'): {} refines its mesh (refine:), so its nodes change from cycle to cycle; remove "
                                 "refine: to set fields at the nodes",
                                 name, s.cs.file.string()));
  if (const int ranks = runner::mpi_rank_and_size().second; ranks > 1)
    throw InputError(fmt::format("set_field('{}'): fields are set on one process only so far (the solver runs on {} MPI processes)", name,
                                 ranks));
  const bool gas_quantity = name == "pressure" || name.starts_with("x_");
  if (gas_quantity && !s.cs.model)
    throw InputError(fmt::format("set_field('{}'): {} has no gas model (model:), so the gas composition is not used", name, s.cs.file.string()));
  if (values.size() != num_nodes())
    throw InputError(fmt::format("set_field('{}'): {} values given, but the solver has {} nodes (num_nodes(); order {} on {} elements)", name,
                                 values.size(), num_nodes(), s.cs.order, s.disc.num_elements()));
  const double upper = name == "soot_fv" || name.starts_with("x_") ? 1.0 : std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < values.size(); ++k)
    if (!std::isfinite(values[k]) || values[k] < 0 || values[k] > upper || (name == "soot_fv" && values[k] >= 1))
      throw InputError(fmt::format("set_field('{}'): value {} at node {} (element {}, at ({:.6g}, {:.6g}, {:.6g})): it must be finite and "
                                   "in [0, {}]",
                                   name, values[k], k, k / static_cast<std::size_t>(s.disc.num_nodes()), s.disc.node_position[k][0],
                                   s.disc.node_position[k][1], s.disc.node_position[k][2], upper));
  s.cs.given[name] = runner::nodal_function(s.disc, {values.begin(), values.end()});
}

void Solver::set_field_at_points(const std::string& name, std::span<const std::array<double, 3>> points, std::span<const double> values) {
  if (points.size() != values.size())
    throw InputError(fmt::format("set_field_at_points('{}'): {} points but {} values", name, points.size(), values.size()));
  fields::PointCloud cloud{{points.begin(), points.end()}, {{values.begin(), values.end()}}};
  fields::FieldRequest request{{}, {name}, false, 0, fmt::format("set_field_at_points('{}')", name)};
  const auto& disc = state_->setup.disc;
  set_field(name, fields::sample_cloud(cloud, request, disc.node_position).values[0]);
}

void Solver::clear_fields() { state_->setup.cs.given.clear(); }

std::vector<double> Solver::interpolate(std::span<const double> nodal, std::span<const std::array<double, 3>> points) const {
  const auto& disc = state_->setup.disc;
  if (nodal.size() != disc.num_dofs())
    throw InputError(fmt::format("interpolate: {} nodal values given, but the solver has {} nodes", nodal.size(), disc.num_dofs()));
  const transport::PointLocator locator(disc);
  std::vector<double> out(points.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < points.size(); ++i)
    if (const auto loc = locator.locate(points[i])) out[i] = locator.evaluate(*loc, nodal);
  return out;
}

void Solver::reset_warm_start() {
  state_->setup.intensities.clear();
  state_->setup.point_intensities.clear();
}

Results Solver::solve() {
  auto& s = state_->setup;
  s.start = runner::Clock::now();
  s.results = {};
  s.warnings = s.cs.warnings;
  s.printed = s.warnings.size();
  s.fields = nlohmann::json::array();
  // The last solve's intensities are this one's start (run_angular keeps them: keep_solution).
  state_->warm = std::move(s.intensities);
  state_->warm_points = std::move(s.point_intensities);
  s.intensities.clear(), s.point_intensities.clear();
  s.initial_intensities = state_->warm.empty() ? nullptr : &state_->warm;
  s.initial_point_intensities = state_->warm_points.empty() ? nullptr : &state_->warm_points;
  runner::solve(s, state_->options, state_->distributed);
  s.initial_intensities = nullptr, s.initial_point_intensities = nullptr;
  return std::move(s.results);
}

Results run(const RunOptions& options) {
  runner::Setup s;
  runner::prepare(s, options);
  std::optional<runner::Distributed> distributed;
  runner::solve(s, options, distributed);
  return std::move(s.results);
}

nlohmann::json run_case(const RunOptions& options) { return run(options).summary; }

}  // namespace dgrte
