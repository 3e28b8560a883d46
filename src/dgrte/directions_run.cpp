// `directions:` runs: independent one-direction transport solves (CPU, OpenCL device, or
// distributed under mpirun) and their outputs.
#include "dgrte/runner.hpp"

#include "dgrte/device_backend.hpp"
#include "backend/device_data.hpp"
#include "backend/opencl_ordinates.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "io/atomic_file.hpp"
#include "output/radiation_output.hpp"
#include "parallel/distributed_transport.hpp"
#include "parallel/global_order.hpp"
#include "transport/cpu_transport.hpp"
#include "transport/field_evaluation.hpp"
#include "transport/krylov_solver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dgrte::runner {
namespace {

// The right-hand side of direction s: emission kappa I_b, the user source, the wall inflow lifted.
// g: scratch of walls.num_faces() * walls.face_nodes() values.
void direction_rhs(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                   const transport::Vec3& dir, std::span<double> rhs, std::vector<double>& g) {
  std::copy(medium.emission.begin(), medium.emission.end(), rhs.begin());
  problem::add_user_source(medium, disc, dir, rhs);
  walls.inflow(-1, dir, true, {}, {}, g);
  walls.lift(dir, g, rhs);
}

// The directions of a `directions:` run on the OpenCL device: every right-hand side built on the
// host, then batches of directions in one device-resident Bi-CGSTAB (or sweep passes). The true
// residual of each solution is recomputed with the CPU operator.
void solve_directions_on_device(Setup& s, const problem::Medium& medium, const problem::Walls& walls, const BackendChoice& choice,
                                const RunOptions& opt, io::InnerMethod inner, std::unique_ptr<device::DeviceTransport>& device,
                                std::vector<std::vector<double>>& solutions, nlohmann::json& solves, double& solve_seconds) {
  const auto& cs = s.cs;
  const auto& disc = s.disc;
  const std::size_t n = disc.num_dofs(), M = cs.directions.size();
  std::vector<double> rhs(n * M), g(walls.num_faces() * walls.face_nodes());
  for (std::size_t d = 0; d < M; ++d) {
    direction_rhs(disc, medium, walls, cs.directions[d], std::span<double>(rhs.data() + d * n, n), g);
  }
  std::vector<transport::SweepPlan> plans;
  const bool sweeps = inner == io::InnerMethod::sweep || cs.solver.preconditioner == io::Preconditioner::sweep;
  if (sweeps)
    for (const auto& dir : cs.directions) plans.push_back(transport::plan_sweep(disc, dir));
  auto data = backend::device_data(disc, medium.extinction);
  backend::add_directions(data, cs.directions, {}, plans);
  device = std::make_unique<device::DeviceTransport>(std::move(data), choice.options);
  s.log(fmt::format("  OpenCL device {} ({} precision), kernels {} in {:.2f} s", device->device().label(),
                    device->single_precision() ? "single" : "double", device->cache_hit() ? "from the cache" : "built",
                    device->build_seconds()));
  const int vectors = inner == io::InnerMethod::sweep ? device::DeviceTransport::kSweepVectors : device::DeviceTransport::kKrylovVectors;
  const std::size_t chunk = std::max<std::size_t>(1, device->max_columns(vectors));
  if (device->max_columns(vectors) == 0)
    throw SolverError(fmt::format("{}: not one direction of {} unknowns fits the device memory budget", device->device().label(), n));
  transport::CpuTransport check(disc, 0);
  const auto pc = backend::device_preconditioner(cs.solver.preconditioner);
  for (std::size_t d0 = 0; d0 < M; d0 += chunk) {
    const std::size_t cols = std::min(chunk, M - d0);
    const auto t0 = Clock::now();
    std::vector<double> dirs, u(n * cols, 0.0);
    std::vector<int> plan_of_column;
    for (std::size_t c = 0; c < cols; ++c) {
      dirs.insert(dirs.end(), cs.directions[d0 + c].begin(), cs.directions[d0 + c].end());
      plan_of_column.push_back(static_cast<int>(d0 + c));
    }
    const std::span<const double> b(rhs.data() + d0 * n, n * cols);
    std::vector<int> iterations(cols, 1);
    std::vector<std::string> reasons(cols);
    std::vector<bool> converged(cols, true);
    if (inner == io::InnerMethod::sweep) {
      const int passes = device->sweep_solve(dirs, plan_of_column, b, u, cs.solver.rtol);
      bool lagged = false;
      for (std::size_t c = 0; c < cols; ++c) lagged = lagged || plans[d0 + c].lagged > 0;
      std::fill(iterations.begin(), iterations.end(), passes);
      std::fill(reasons.begin(), reasons.end(), lagged ? "sweep passes converged" : "exact sweep (no cycles)");
    } else {
      const auto res = device->solve_bicgstab(dirs, pc, plan_of_column, b, u, cs.solver.rtol, cs.solver.max_iterations);
      for (std::size_t c = 0; c < cols; ++c) {
        iterations[c] = res.iterations[c];
        reasons[c] = device::to_string(res.status[c]);
        converged[c] = res.status[c] == device::BicgStatus::converged;
        if (!converged[c])
          throw SolverError(fmt::format("direction {}: Bi-CGSTAB on {} stopped ({}) after {} iterations (relative residual {:.3e}, "
                                        "rtol {:.1e}); try more iterations (solver.max_iterations) or the block-jacobi preconditioner",
                                        d0 + c, device->device().label(), reasons[c], res.iterations[c],
                                        res.residual_norm[c] / std::max(res.rhs_norm[c], 1e-300), cs.solver.rtol));
      }
    }
    const double sec = seconds_since(t0) / static_cast<double>(cols);
    for (std::size_t c = 0; c < cols; ++c) {
      const auto& dir = cs.directions[d0 + c];
      std::vector<double> x(u.begin() + static_cast<long>(c * n), u.begin() + static_cast<long>((c + 1) * n)), y(n);
      check.set_direction(dir, medium.extinction, transport::BlockKind::none);
      check.apply(x, y);
      double r2 = 0, b2 = 0;
      for (std::size_t i = 0; i < n; ++i) r2 += (y[i] - b[c * n + i]) * (y[i] - b[c * n + i]), b2 += b[c * n + i] * b[c * n + i];
      const double rel = b2 > 0 ? std::sqrt(r2 / b2) : std::sqrt(r2);
      solves.push_back({{"iterations", iterations[c]}, {"relative_residual", rel}, {"converged", converged[c]}, {"reason", reasons[c]},
                        {"direction", {dir[0], dir[1], dir[2]}}, {"seconds", sec}, {"batch", d0 / chunk}});
      s.log(fmt::format("  direction {} ({:.5g}, {:.5g}, {:.5g}): {} iterations, relative residual {:.2e} (OpenCL batch of {})", d0 + c,
                        dir[0], dir[1], dir[2], iterations[c], rel, cols));
      solutions.push_back(std::move(x));
    }
    solve_seconds += seconds_since(t0);
  }
  (void)opt;
}

// The directions of a `directions:` run on a distributed mesh: each rank builds the problem on its
// owned elements and ghost layer, PETSc's Bi-CGSTAB solves the global system over PETSC_COMM_WORLD
// (one ghost exchange per operator apply), and the solutions are gathered on rank 0, which writes the
// outputs. Returns the "parallel" record of summary.json.
nlohmann::json solve_directions_distributed(Setup& s, const Distributed& d, const RunOptions& opt,
                                            std::vector<std::vector<double>>& solutions, nlohmann::json& solves, double& solve_seconds) {
  const auto& cs = s.cs;
  const auto t_setup = Clock::now();
  const auto disc = transport::make_discretization(d.local.mesh, cs.order);
  const problem::Medium medium = problem::build_medium(cs, disc, nullptr);
  std::vector<std::string> local_warnings;  // rank 0's global setup reports the case's warnings
  const problem::Walls walls(cs, disc, nullptr, local_warnings);
  const std::size_t np = static_cast<std::size_t>(disc.num_nodes()), n = disc.num_dofs(), owned = d.local.num_owned * np;
  transport::CpuTransport op(disc, static_cast<std::size_t>(cs.solver.preconditioner_memory_mb * 1024.0 * 1024.0));
  const parallel::GhostExchange exchange(PETSC_COMM_WORLD, d.local, static_cast<int>(np));
  parallel::DistributedTransport dop(op, exchange, owned);
  const auto blocks = solver::block_kind(cs.solver.preconditioner);
  const auto inner = cs.solver.inner.value_or(io::InnerMethod::bicgstab);
  const double setup_seconds = seconds_since(t_setup);
  std::vector<double> rhs(n), g(walls.num_faces() * walls.face_nodes());
  double my_solve = 0;
  for (std::size_t k = 0; k < cs.directions.size(); ++k) {
    const auto& dir = cs.directions[k];
    const auto t0 = Clock::now();
    direction_rhs(disc, medium, walls, dir, rhs, g);
    std::vector<double> u(owned, 0.0);
    const std::string label = fmt::format("direction {} ({:.5g}, {:.5g}, {:.5g})", k, dir[0], dir[1], dir[2]);
    const std::span<const double> b = std::span<const double>(rhs).first(owned);
    nlohmann::json js;
    // Sweeps order the owned elements only; inflow from ghosts is lagged (partition faces).
    const bool sweeps = inner == io::InnerMethod::sweep || cs.solver.preconditioner == io::Preconditioner::sweep;
    const auto plan = sweeps ? transport::plan_sweep(disc, dir, d.local.num_owned) : transport::SweepPlan{};
    if (sweeps) {
      long counts[2] = {static_cast<long>(plan.lagged), static_cast<long>(plan.partition_faces)};  // each face lags on one side
      MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
      js = {{"levels_rank0", plan.num_levels()}, {"cycles_rank0", plan.cycles}, {"lagged_faces", counts[0]}, {"partition_faces", counts[1]}};
    }
    if (inner == io::InnerMethod::sweep) {
      // Block Jacobi across ranks: each pass sweeps the owned elements with the ghosts' values of the
      // previous pass (one exchange), until the largest change relative to max |u| over all ranks is
      // below rtol.
      std::vector<double> full(n, 0.0);
      const transport::PassCoupling coupling{owned, [&](std::span<double> v) { exchange.update(v); }, [](double* v) {
                                               MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
                                             }};
      const auto passes = transport::sweep_solve(disc, plan, medium.extinction, rhs, full, cs.solver.rtol, 1000, false, &coupling).passes;
      std::copy_n(full.begin(), owned, u.begin());
      // The true residual of the global system.
      std::vector<double> y(owned);
      dop.set_direction(dir, medium.extinction, transport::BlockKind::none);
      dop.apply(u, y);
      double sums[2] = {0, 0};
      for (std::size_t i = 0; i < owned; ++i) sums[0] += (y[i] - b[i]) * (y[i] - b[i]), sums[1] += b[i] * b[i];
      MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
      js.update({{"iterations", passes}, {"relative_residual", sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0])},
                 {"converged", true}, {"reason", "sweep passes converged (block Jacobi across ranks)"}});
    } else {
      transport::KrylovOptions ko;
      ko.rtol = cs.solver.rtol;
      ko.max_iterations = cs.solver.max_iterations;
      ko.precondition = cs.solver.preconditioner != io::Preconditioner::none;
      ko.progress = opt.progress && d.rank == 0;
      ko.label = label;
      transport::KrylovResult res;
      if (cs.solver.preconditioner == io::Preconditioner::sweep) {
        // Bi-CGSTAB around one sweep of the owned elements, ghost inflow zero: block Jacobi across
        // ranks inside the global Krylov iteration.
        transport::SweepPreconditioned pc(op, disc, plan, medium.extinction);
        parallel::DistributedTransport dpc(pc, exchange, owned);
        dpc.set_direction(dir, medium.extinction, blocks);
        res = transport::solve_bicgstab(dpc, b, u, ko);
      } else {
        dop.set_direction(dir, medium.extinction, blocks);
        res = transport::solve_bicgstab(dop, b, u, ko);
      }
      js.update({{"iterations", res.iterations}, {"relative_residual", res.relative_residual}, {"converged", res.converged},
                 {"krylov_seconds", res.seconds}, {"reason", res.reason}});
    }
    const double sec = seconds_since(t0);
    my_solve += sec;
    solve_seconds += sec;
    s.log(fmt::format("  {}: {} iterations, relative residual {:.2e}, {:.3f} s ({} ranks)", label, js["iterations"].get<int>(),
                      js["relative_residual"].get<double>(), sec, d.ranks));
    js["direction"] = {dir[0], dir[1], dir[2]};
    js["seconds"] = sec;
    solves.push_back(js);
    solutions.push_back(gather_to_root(d, np, u));
  }
  return parallel_record(d, setup_seconds, my_solve,
                         {{"ghost_values_per_exchange_rank0", exchange.ghost_values()},
                          {"exchanges_rank0", dop.exchanges()},
                          {"method", "Bi-CGSTAB over PETSC_COMM_WORLD on the owned unknowns; one ghost exchange (PetscSF) per operator "
                                     "apply; solutions gathered on rank 0, which writes every output"}});
}

}  // namespace

// `directions:` — independent one-direction transport solves (no quadrature, no coupling).
nlohmann::json run_directions(Setup& s, const RunOptions& opt, const Distributed* distributed) {
  nlohmann::json parallel_json;
  std::vector<std::vector<double>> solutions;
  nlohmann::json solves = nlohmann::json::array();
  double solve_seconds = 0;
  if (distributed) {
    parallel_json = solve_directions_distributed(s, *distributed, opt, solutions, solves, solve_seconds);
    if (distributed->rank != 0) return {};
  }
  const auto& cs = s.cs;
  const auto& disc = s.disc;
  const problem::Medium medium = problem::build_medium(cs, disc, nullptr);
  report_fields(s, medium);
  const problem::Walls walls(cs, disc, nullptr, s.warnings);
  const std::size_t n = disc.num_dofs();
  const auto inner = cs.solver.inner.value_or(io::InnerMethod::bicgstab);
  s.log(fmt::format("dgrte {}: case {} — {} tets, order {}, {} direction(s), inner solver {}", kVersion, cs.file.string(),
                    disc.num_elements(), cs.order, cs.directions.size(), io::to_string(inner)));
  const std::size_t budget = static_cast<std::size_t>(cs.solver.preconditioner_memory_mb * 1024.0 * 1024.0);
  transport::CpuTransport op(disc, budget);
  const auto blocks = solver::block_kind(cs.solver.preconditioner);
  const double setup_seconds = seconds_since(s.start);
  std::size_t preconditioner_bytes = 0;
  std::vector<double> rhs(n), g(walls.num_faces() * walls.face_nodes());
  const auto backend_choice = choose_backend(cs.solver);
  std::unique_ptr<device::DeviceTransport> device;
  if (backend_choice.opencl) {
    if (cs.solver.positivity)
      throw InputError(fmt::format("{}: the positivity limiter runs in the CPU sweeps only; use solver.backend: cpu", cs.solver.positivity_where));
    solve_directions_on_device(s, medium, walls, backend_choice, opt, inner, device, solutions, solves, solve_seconds);
  }
  for (std::size_t d = 0; d < (device || distributed ? 0 : cs.directions.size()); ++d) {
    const auto& dir = cs.directions[d];
    const auto t0 = Clock::now();
    direction_rhs(disc, medium, walls, dir, rhs, g);
    const double rhs_sec = seconds_since(t0);
    std::vector<double> u(n, 0.0);
    const std::string label = fmt::format("direction {} ({:.5g}, {:.5g}, {:.5g})", d, dir[0], dir[1], dir[2]);
    nlohmann::json js;
    if (inner == io::InnerMethod::sweep) {
      const auto tp = Clock::now();
      const auto plan = transport::plan_sweep(disc, dir);
      const double plan_sec = seconds_since(tp);
      const auto ts = Clock::now();
      const auto res = transport::sweep_solve(disc, plan, medium.extinction, rhs, u, cs.solver.rtol, 200, cs.solver.positivity,
                                              nullptr, /*measure_residual=*/true);
      const double sweep_sec = seconds_since(ts);
      // The residual: measured by the exact pass from its element blocks (the rows of L u - rhs),
      // else (lagged faces: passes) by the operator.
      const auto tc = Clock::now();
      const bool measured = !(res.relative_residual < 0);  // NaN (u has NaN) counts as measured
      double rel = res.relative_residual;
      if (!measured) {
        op.set_direction(dir, medium.extinction, transport::BlockKind::none);
        std::vector<double> y(n);
        op.apply(u, y);
        double r2 = 0, b2 = 0;
        for (std::size_t i = 0; i < n; ++i) r2 += (y[i] - rhs[i]) * (y[i] - rhs[i]), b2 += rhs[i] * rhs[i];
        rel = b2 > 0 ? std::sqrt(r2 / b2) : std::sqrt(r2);
      }
      js = {{"iterations", res.passes}, {"relative_residual", rel}, {"converged", true}, {"levels", plan.num_levels()},
            {"cycles", plan.cycles}, {"lagged_faces", plan.lagged}, {"lagged_fraction", plan.lagged_fraction},
            {"plan_seconds", plan_sec}, {"sweep_seconds", sweep_sec}, {"check_seconds", seconds_since(tc)},
            {"residual_from", measured ? "element blocks" : "operator"},
            {"limited_elements", res.limited}, {"reason", plan.lagged ? "sweep passes converged" : "exact sweep (no cycles)"}};
    } else {
      transport::KrylovOptions ko;
      ko.rtol = cs.solver.rtol;
      ko.max_iterations = cs.solver.max_iterations;
      ko.precondition = cs.solver.preconditioner != io::Preconditioner::none;
      ko.progress = opt.progress;
      ko.label = label;
      transport::KrylovResult res;
      if (cs.solver.preconditioner == io::Preconditioner::sweep) {
        // Bi-CGSTAB around one sweep pass (exact without cycles; lagged faces closed by Krylov).
        const auto tp = Clock::now();
        const auto plan = transport::plan_sweep(disc, dir);
        js = {{"levels", plan.num_levels()}, {"cycles", plan.cycles}, {"lagged_faces", plan.lagged},
              {"lagged_fraction", plan.lagged_fraction}, {"plan_seconds", seconds_since(tp)}};
        transport::SweepPreconditioned pc(op, disc, plan, medium.extinction);
        pc.set_direction(dir, medium.extinction, blocks);
        res = transport::solve_bicgstab(pc, rhs, u, ko);
      } else {
        op.set_direction(dir, medium.extinction, blocks);
        preconditioner_bytes = std::max(preconditioner_bytes, op.preconditioner_bytes());
        res = transport::solve_bicgstab(op, rhs, u, ko);
      }
      js.update({{"iterations", res.iterations}, {"relative_residual", res.relative_residual}, {"converged", res.converged},
                 {"krylov_seconds", res.seconds}, {"reason", res.reason}});
    }
    const double sec = seconds_since(t0);
    solve_seconds += sec;
    js["direction"] = {dir[0], dir[1], dir[2]};
    js["seconds"] = sec;
    js["rhs_seconds"] = rhs_sec;
    s.log(fmt::format("  {}: {} iterations, relative residual {:.2e}, {:.3f} s", label, js["iterations"].get<int>(),
                      js["relative_residual"].get<double>(), sec));
    solves.push_back(js);
    solutions.push_back(std::move(u));
  }

  auto summary = summary_header(s);
  summary["directions"] = cs.directions.size();
  // "method": the Krylov method of the one-direction solves, as before solver.method named dg or montecarlo.
  summary["solver"] = {{"method", "bicgstab"}, {"inner", io::to_string(inner)},
                       {"preconditioner", io::to_string(cs.solver.preconditioner)}, {"rtol", cs.solver.rtol},
                       {"max_iterations", cs.solver.max_iterations}, {"preconditioner_bytes", preconditioner_bytes},
                       {"preconditioner_blocks_cached", preconditioner_bytes > 0 || blocks == transport::BlockKind::none}};
  summary["backend"] = backend_summary(backend_choice, device.get());
  if (distributed) summary["parallel"] = parallel_json;
  auto cell_fields = element_fields(s.mesh);
  if (cs.exact) {
    double err2 = 0, ex2 = 0, linf = 0;
    for (std::size_t d = 0; d < solutions.size(); ++d) {
      const auto& dir = cs.directions[d];
      const auto norms = transport::error_norms(disc, solutions[d], [&](const transport::Vec3& x) { return (*cs.exact)(x, dir); });
      err2 += norms.l2 * norms.l2;
      ex2 += norms.exact_l2 * norms.exact_l2;
      linf = std::max(linf, norms.linf);
      solves[d]["error"] = {{"l2", norms.l2}, {"linf", norms.linf}, {"relative_l2", norms.relative_l2}};
      cell_fields.push_back({fmt::format("error_{}", d), norms.element_l2});
    }
    const double rel = ex2 > 0 ? std::sqrt(err2 / ex2) : std::sqrt(err2);
    summary["error"] = {{"l2", std::sqrt(err2)}, {"linf", linf}, {"relative_l2", rel}, {"quadrature_degree", 2 * cs.order + 2}};
    s.log(fmt::format("  error: L2 {:.4e}, max {:.4e}, relative L2 {:.4e}", std::sqrt(err2), linf, rel));
  }
  summary["solves"] = solves;

  const auto& dir = cs.output.directory;
  if (s.write_files) std::filesystem::create_directories(dir);
  const auto t_out = Clock::now();
  {
    std::vector<output::PointField> pf;
    std::vector<std::string> names;
    output::StringData directions{"direction_of_array", {}};
    for (std::size_t d = 0; d < solutions.size(); ++d) {
      names.push_back(fmt::format("I_{}", d));
      directions.values.push_back(fmt::format("I_{}: ({:.9g}, {:.9g}, {:.9g})", d, cs.directions[d][0], cs.directions[d][1], cs.directions[d][2]));
    }
    for (std::size_t d = 0; d < solutions.size(); ++d) pf.push_back({names[d], solutions[d]});
    pf.push_back({"kappa", medium.kappa});
    pf.push_back({"Ib", medium.blackbody_intensity});
    keep_fields(s, disc, pf, medium);
    auto fd = group_names(s.mesh);
    fd.push_back(directions);
    if (cs.output.vtk && s.write_files) output::write_solution_vtu(dir / "solution.vtu", disc, pf, cell_fields, cs.output.linear, fd);
  }
  if (!cs.output.probes.empty()) {
    const transport::PointLocator locator(disc);
    for (const auto& probe : cs.output.probes) {
      if (!probe.wall.empty())
        throw InputError(fmt::format("{}: wall probes need an angular run (wall fluxes are moments over a quadrature)", probe.where));
      // Units and the direction of each I_d column in a comment line, then the header.
      std::string text = "# x, y, z, distance along the line [m]; I_d: intensity [W/(m^2 sr)] along direction d:";
      for (std::size_t d = 0; d < solutions.size(); ++d)
        text += fmt::format(" I_{} = ({:.6g}, {:.6g}, {:.6g})", d, cs.directions[d][0], cs.directions[d][1], cs.directions[d][2]);
      text += "\nx,y,z,distance";
      for (std::size_t d = 0; d < solutions.size(); ++d) text += fmt::format(",I_{}", d);
      text += "\n";
      const double length = std::sqrt(std::pow(probe.to[0] - probe.from[0], 2) + std::pow(probe.to[1] - probe.from[1], 2) +
                                      std::pow(probe.to[2] - probe.from[2], 2));
      int outside = 0;
      for (int i = 0; i < probe.points; ++i) {
        const double t = probe.points > 1 ? static_cast<double>(i) / (probe.points - 1) : 0.0;
        const transport::Vec3 x{probe.from[0] + t * (probe.to[0] - probe.from[0]), probe.from[1] + t * (probe.to[1] - probe.from[1]),
                                probe.from[2] + t * (probe.to[2] - probe.from[2])};
        text += fmt::format("{:.10g},{:.10g},{:.10g},{:.10g}", x[0], x[1], x[2], t * length);
        const auto loc = locator.locate(x);
        if (!loc) ++outside;
        for (const auto& u : solutions) text += loc ? fmt::format(",{:.12g}", locator.evaluate(*loc, u)) : std::string(",nan");
        text += "\n";
      }
      if (outside)
        s.warnings.push_back(fmt::format("probe '{}': {} of {} points lie outside the mesh (written as nan)", probe.name, outside, probe.points));
      keep_probe(s, dir, probe.name, text);
    }
  }
  summary["grind_ns_per_dof"] = solve_seconds * 1e9 / (static_cast<double>(n) * static_cast<double>(cs.directions.size()));
  if (auto soot = soot_summary(gas::LoadedModel{}, medium); !soot.is_null()) summary["spectral"]["soot"] = soot;
  summary["outputs"] = {{"vtk", cs.output.vtk ? "solution.vtu" : ""}, {"vtk_cells", cs.output.linear ? "linear" : "lagrange"}};
  finish(s, summary, setup_seconds, solve_seconds, t_out);
  return summary;
}


}  // namespace dgrte::runner
