#include "dgrte/dgrte.hpp"

#include "adapt/error_indicator.hpp"
#include "adapt/refinement.hpp"

#include "dgrte/device_backend.hpp"
#include "dgrte/distributed_run.hpp"
#include "dgrte/final_gather_run.hpp"
#include "backend/device_data.hpp"
#include "backend/device_tracer_data.hpp"
#include "backend/opencl_ordinates.hpp"

#include "transport/cpu_transport.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "fields/field_import.hpp"
#include "io/atomic_file.hpp"
#include "io/case_file.hpp"
#include "output/vtk_output.hpp"
#include "mc/monte_carlo.hpp"
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
#include <sys/resource.h>

#include <chrono>
#include <numbers>
#include <cmath>
#include <iostream>
#include <map>
#include <mutex>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace dgrte::runner {
namespace {

using dgrte::Results;
using dgrte::RunOptions;


// Per spectral point (a band of SNBCK/LBL, a gray gas of WSGG/SLW): its wavenumber interval, the
// power it deposits in the volume and its flux into each wall group; the columns sum to the totals.
void write_spectral_csv(const std::filesystem::path& path, const spectral::SpectralResult& r) {
  std::string text = "# one row per spectral point: wavenumber interval [cm^-1] (nan: none), integral of div q [W], wall "
                     "group fluxes [W] (q_in incident, q_net absorbed - emitted)\npoint,nu_lo_cm,nu_hi_cm,volume_divq_W";
  for (const auto& g : r.wall_groups) text += fmt::format(",{0}:q_in_W,{0}:q_net_W", g);
  text += "\n";
  for (const auto& p : r.points) {
    text += fmt::format("{},{:.10g},{:.10g},{:.10g}", p.point, p.nu_lo, p.nu_hi, p.volume_W);
    for (std::size_t g = 0; g < p.wall_q_in_W.size(); ++g) text += fmt::format(",{:.10g},{:.10g}", p.wall_q_in_W[g], p.wall_q_net_W[g]);
    text += "\n";
  }
  io::write_text_atomically(path, text);
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double peak_memory_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kB
}

// Everything a run shares before it solves: case, mesh, discretisation.
struct Setup {
  io::CaseSpec cs;
  mesh::TetMesh mesh;
  transport::Discretization disc;
  std::vector<std::string> warnings;
  std::function<void(const std::string&)> log;
  Clock::time_point start;
  std::size_t printed = 0;  // warnings already shown on the terminal
  nlohmann::json fields = nlohmann::json::array();  // field files read (summary "fields")
  // Adaptive refinement (run_refined): a cycle's initial guess in (one field per ordinate on disc),
  // its solution's intensities and error indicator out.
  const std::vector<std::vector<double>>* initial_intensities = nullptr;
  std::vector<std::vector<double>> intensities;
  std::optional<adapt::ErrorIndicator> indicator;
  // The same per spectral point of a nongray run (point j's fields; empty where its solve is one
  // sweep, with neither scattering nor diffusely reflecting walls: no start needed). On rank 0.
  const std::vector<std::vector<std::vector<double>>>* initial_point_intensities = nullptr;
  std::vector<std::vector<std::vector<double>>> point_intensities;
  // Library runs (dgrte::Solver): whether outputs are written, whether each solve keeps its
  // intensities for the next one's warm start (keep_solution), and the fields handed back.
  bool write_files = true;
  bool keep_solution = false;
  Results results;
  // A library Solver's sweep plans, made in its first solve and reused by the later ones: a plan
  // orders the elements for one direction on this mesh, which set_field changes neither of.
  std::vector<transport::SweepPlan> kept_plans;
  double outer_rhs_norm = 0;  // the last gray solve's ||T(0)|| (GrayResult::rhs_norm)
};

// Results::fields: the node positions and the point arrays solution.vtu holds.
// With the medium's temperature where the case gives one (solution.vtu has it for gas models only).
void keep_fields(Setup& s, const transport::Discretization& disc, std::span<const output::PointField> pf, const problem::Medium& medium) {
  auto& f = s.results.fields;
  f.clear();
  const std::size_t n = disc.num_dofs();
  std::vector<double> x(n), y(n), z(n);
  for (std::size_t k = 0; k < n; ++k) x[k] = disc.node_position[k][0], y[k] = disc.node_position[k][1], z[k] = disc.node_position[k][2];
  f["x"] = std::move(x), f["y"] = std::move(y), f["z"] = std::move(z);
  for (const auto& a : pf) f[a.name].assign(a.nodal.begin(), a.nodal.end());
  const auto& T = medium.temperature;
  if (!f.contains("temperature") && std::any_of(T.begin(), T.end(), [](double v) { return std::isfinite(v); })) f["temperature"] = T;
}

// A probe's CSV text: probes/<name>.csv when the run writes files, and its columns in
// Results::probes ("nan" where a point lies outside the mesh).
void keep_probe(Setup& s, const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  if (s.write_files) {
    std::filesystem::create_directories(dir / "probes");
    io::write_text_atomically(dir / "probes" / (name + ".csv"), text);
  }
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    return cells;
  };
  auto& table = s.results.probes[name];
  table.clear();
  std::vector<std::string> header;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() == '#') continue;
    const auto cells = split(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    if (cells.size() != header.size())
      throw std::logic_error(fmt::format("keep_probe: probe '{}' has a row of {} values under {} columns", name, cells.size(), header.size()));
    for (std::size_t k = 0; k < cells.size(); ++k) table[header[k]].push_back(std::strtod(cells[k].c_str(), nullptr));
  }
}

// Results::wall_fields: the face-node positions, surface group and arrays of walls.vtu's faces.
void keep_wall_fields(Setup& s, const transport::Discretization& disc, const problem::Walls& walls,
                      std::span<const output::PointField> arrays) {
  auto& f = s.results.wall_fields;
  f.clear();
  const std::size_t nfp = walls.face_nodes(), np = static_cast<std::size_t>(disc.num_nodes());
  std::vector<double> x, y, z, group;
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const std::size_t e = walls.element_face(b) / 4, face = walls.element_face(b) % 4;
    const int g = disc.mesh->boundary_group[e][face];
    for (std::size_t j = 0; j < nfp; ++j) {
      const auto& p = disc.node_position[e * np + static_cast<std::size_t>(disc.ref.face_nodes[face][j])];
      x.push_back(p[0]), y.push_back(p[1]), z.push_back(p[2]);
      group.push_back(g >= 0 ? disc.mesh->surface_groups[static_cast<std::size_t>(g)].tag : -1);
    }
  }
  f["x"] = std::move(x), f["y"] = std::move(y), f["z"] = std::move(z), f["surface_group"] = std::move(group);
  for (const auto& a : arrays) f[a.name].assign(a.nodal.begin(), a.nodal.end());
}

// Field files (media.X.field): a summary record per entry, a log line per quantity (source range vs
// the nodes' range), and a warning where nodes outside the source took the closest value.
void report_fields(Setup& s, const problem::Medium& m) {
  for (const auto& fi : m.field_imports) {
    nlohmann::json arrays = nlohmann::json::object();
    s.log(fmt::format("  {}: {} ({}, {} source {}), {} nodes by {}", fi.where, fi.file, fi.info.source_kind, fi.info.source_points,
                      fi.info.source_kind == "cell data" ? "cells" : "points", fi.nodes, fi.info.method));
    for (std::size_t a = 0; a < fi.quantities.size(); ++a) {
      const auto& r = fi.info.ranges[a];
      arrays[fi.quantities[a]] = {{"array", r.name}, {"source_min", r.source_min}, {"source_max", r.source_max},
                                  {"node_min", r.sampled_min}, {"node_max", r.sampled_max}};
      s.log(fmt::format("    {} <- '{}': file [{:.6g}, {:.6g}], nodes [{:.6g}, {:.6g}]", fi.quantities[a], r.name, r.source_min,
                        r.source_max, r.sampled_min, r.sampled_max));
    }
    if (fi.info.outside > 0) {
      const auto& x = fi.info.first_outside;
      s.warnings.push_back(fmt::format("{}: {} of {} nodes lie outside {} (the first at ({:.6g}, {:.6g}, {:.6g})); they took the value "
                                       "at the closest point of the source (outside: nearest)",
                                       fi.where, fi.info.outside, fi.nodes, fi.file, x[0], x[1], x[2]));
    }
    nlohmann::json rec = {{"entry", fi.where},        {"file", fi.file},
                          {"source", fi.info.source_kind}, {"source_points", fi.info.source_points},
                          {"method", fi.info.method},  {"nodes", fi.nodes},
                          {"outside_nodes", fi.info.outside}, {"quantities", arrays}};
    if (fi.info.max_distance > 0) rec["max_distance"] = fi.info.max_distance;
    s.fields.push_back(rec);
  }
}

std::vector<output::StringData> group_names(const mesh::TetMesh& mesh) {
  output::StringData vol{"volume_group_names", {}}, surf{"surface_group_names", {}};
  for (const auto& g : mesh.volume_groups) vol.values.push_back(fmt::format("{}={}", g.tag, problem::group_label(g)));
  for (const auto& g : mesh.surface_groups) surf.values.push_back(fmt::format("{}={}", g.tag, problem::group_label(g)));
  return {vol, surf};
}

std::vector<output::CellField> element_fields(const mesh::TetMesh& mesh) {
  output::CellField id{"element_id", {}}, group{"volume_group", {}};
  for (std::size_t e = 0; e < mesh.num_elements(); ++e) {
    id.values.push_back(static_cast<double>(e));
    const int gi = mesh.tet_group[e];
    group.values.push_back(gi >= 0 ? mesh.volume_groups[static_cast<std::size_t>(gi)].tag : -1);
  }
  return {std::move(id), std::move(group)};
}

// Whether MPI runs with several processes, and this process's rank.
std::pair<int, int> mpi_rank_and_size() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) return {0, 1};
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  return {rank, size};
}

nlohmann::json summary_header(const Setup& s) {
  nlohmann::json summary;
  summary["dgrte_version"] = kVersion;
  summary["case"] = s.cs.file.string();
  nlohmann::json vg = nlohmann::json::array(), sg = nlohmann::json::array();
  for (const auto& gr : s.mesh.volume_groups) vg.push_back(problem::group_label(gr));
  for (const auto& gr : s.mesh.surface_groups) sg.push_back(problem::group_label(gr));
  summary["mesh"] = {{"file", s.mesh.source}, {"elements", s.disc.num_elements()}, {"vertices", s.mesh.vertices.size()},
                     {"volume_groups", vg}, {"surface_groups", sg}};
  summary["order"] = s.cs.order;
  summary["nodes_per_element"] = s.disc.num_nodes();
  summary["dofs"] = s.disc.num_dofs();
  summary["threads"] = omp_get_max_threads();
  summary["ranks"] = mpi_rank_and_size().second;
  if (!s.fields.empty()) summary["fields"] = s.fields;
  return summary;
}

// gather_seconds: the final gather's time, kept out of solve_seconds (negative: no gather).
void finish(Setup& s, nlohmann::json& summary, double setup_seconds, double solve_seconds, Clock::time_point t_out,
            double gather_seconds = -1) {
  const auto& dir = s.cs.output.directory;
  for (const auto& option : transport::unused_petsc_options())
    s.warnings.push_back(fmt::format("PETSc option {} was not used by any solver of this run (misspelled, or for a solver "
                                     "this case does not use; `dgrte run CASE -help` lists the options)",
                                     option));
  for (std::size_t i = s.printed; i < s.warnings.size(); ++i) std::cerr << "warning: " << s.warnings[i] << "\n";
  summary["timing"] = {{"setup_seconds", setup_seconds}, {"solve_seconds", solve_seconds},
                       {"output_seconds", seconds_since(t_out)}, {"total_seconds", seconds_since(s.start)}};
  if (gather_seconds >= 0) summary["timing"]["gather_seconds"] = gather_seconds;
  summary["peak_memory_mb"] = peak_memory_mb();
  summary["warnings"] = s.warnings;
  s.results.summary = summary;
  if (!s.write_files) return;
  io::write_text_atomically(dir / "summary.json", summary.dump(2) + "\n");
  s.log(fmt::format("  wrote {} (total {:.2f} s)", (dir / "summary.json").string(), seconds_since(s.start)));
}

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

// summary.json `spectral.soot` (a contract): the soot's refractive-index model and its Rayleigh
// constant, how it is combined with the gas (gas/soot.hpp); null without soot.
nlohmann::json soot_summary(const gas::LoadedModel& model, const problem::Medium& medium) {
  if (model.soot) {
    nlohmann::json j{{"model", model.soot->optics.model}, {"constant", model.soot->optics.constant}};
    if (const auto* sooty = dynamic_cast<const gas::SootyModel*>(model.spectral.get()))
      j.update({{"treatment", sooty->treatment()}, {"soot_intervals", sooty->soot_intervals()}});
    return j;
  }
  if (model.spectral || medium.soot_fv.empty()) return nullptr;
  const auto optics = gas::soot_optics(gas::kDefaultSootOptics, "soot");
  return {{"model", optics.model}, {"constant", optics.constant}, {"treatment", "planck-mean, added to kappa (gray run)"}};
}

// `directions:` — independent one-direction transport solves (no quadrature, no coupling).
nlohmann::json run_directions(Setup& s, const RunOptions& opt, const Distributed* distributed = nullptr) {
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

// The case's spectral gas model, or an empty one for a gray run.
// states: what the model will see (its default species are those present in them).
gas::LoadedModel load_gas_model(Setup& s, std::span<const gas::GasState> states) {
  gas::LoadedModel model;
  gas::YamlMap section(*s.cs.model, "model", s.cs.file.string());
  model = gas::make_model(section, {}, states);
  if (!model.spectral)
    throw InputError(fmt::format("{}: model type '{}' is a transmissivity model, usable only by the 1-D slab solver; in 3-D use "
                                 "its k-distribution form (type: snbck) or another k-type model",
                                 section.where("type"), model.type));
  s.log(fmt::format("  gas model {}: {} spectral points", model.name(), model.spectral->num_spectral_points()));
  std::string why_not;
  if (const auto device = move_line_sums_to_device(model, choose_backend(s.cs.solver), &why_not); !device.empty())
    s.log(fmt::format("  line-by-line sums on {}", device));
  else if (!why_not.empty())
    s.warnings.push_back(fmt::format("{}: the line-by-line sums stay on the CPU: {}", s.cs.file.string(), why_not));
  return model;
}

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
      const int g = s.mesh.boundary_group[walls.element_face(b) / 4][walls.element_face(b) % 4];
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

// solver.method: montecarlo — forward bundles for fields and walls, backward rays for probes (src/mc).
nlohmann::json run_montecarlo(Setup& s, const RunOptions& opt) {
  const auto& cs = s.cs;
  const auto& disc = s.disc;
  // The problem layer builds the DG's wall tables from an angular set; the tracer uses none, so a
  // case without `angular:` gets S4 here, and the DG-only warnings of those tables are dropped.
  const auto quad = cs.angular ? problem::build_quadrature(*cs.angular) : angular::level_symmetric(4);
  const problem::Medium medium = problem::build_medium(cs, disc, &quad);
  report_fields(s, medium);
  std::vector<std::string> dg_only_warnings;
  const problem::Walls walls(cs, disc, &quad, dg_only_warnings);
  mc::McModel model = mc::build_model(cs, disc, medium, walls);
  gas::LoadedModel gas_model = medium.has_gas_model() ? load_gas_model(s, medium.gas) : gas::LoadedModel{};
  mc::McOptions mo;
  mo.paths = cs.solver.mc.paths;
  mo.batches = cs.solver.mc.batches;
  mo.seed = cs.solver.mc.seed;
  mo.probe_rays = cs.solver.mc.probe_rays;
  if (opt.progress) mo.progress = s.log;
  // solver.backend opencl: the forward paths run on the device (opencl/mc_forward.cl); probe rays
  // (backward) stay on the host.
  const auto backend_choice = choose_backend(cs.solver);
  std::shared_ptr<device::DeviceTracer> device_tracer;
  if (backend_choice.opencl) {
    device_tracer = std::make_shared<device::DeviceTracer>(backend::tracer_geometry(model), backend_choice.options.device,
                                                           backend_choice.options.cache_dir);
    mo.tracer = backend::device_batch_tracer(device_tracer);
    s.log(fmt::format("  forward paths on {} (kernel {} in {:.2f} s)", device_tracer->info().label(),
                      device_tracer->cache_hit() ? "loaded from the cache" : "built", device_tracer->build_seconds()));
  }

  // Probe points, located before the solve so that a bad probe fails early.
  struct ProbeLine {
    const io::ProbeSpec* spec;
    std::vector<std::pair<io::Vec3, double>> points;
    std::vector<long> index;  // into the traced points, -1: outside the mesh
  };
  std::vector<ProbeLine> lines;
  std::vector<mc::ProbePoint> traced;
  if (!cs.output.probes.empty()) {
    const transport::PointLocator locator(disc);
    for (const auto& probe : cs.output.probes) {
      ProbeLine line{&probe, output::probe_points(probe), {}};
      if (probe.wall.empty()) {
        for (const auto& [x, d] : line.points) {
          const auto loc = locator.locate(x);
          line.index.push_back(loc ? static_cast<long>(traced.size()) : -1);
          if (loc) traced.push_back({x, static_cast<int>(loc->element), -1});
        }
        const auto outside = std::count(line.index.begin(), line.index.end(), -1L);
        if (outside > 0)
          s.warnings.push_back(fmt::format("probe '{}': {} of {} points lie outside the mesh (written as nan)", probe.name, outside, probe.points));
      } else {
        const auto hits = output::locate_wall_probe(probe, disc, walls);
        for (std::size_t i = 0; i < hits.size(); ++i) {
          line.index.push_back(static_cast<long>(traced.size()));
          traced.push_back({line.points[i].first, -1, static_cast<long>(hits[i].front().face)});
        }
      }
      lines.push_back(std::move(line));
    }
  }
  s.log(fmt::format("dgrte {}: case {} — {} tets, Monte Carlo: {} paths in {} batches, seed {}{}{}", kVersion, cs.file.string(),
                    disc.num_elements(), mo.paths, mo.batches, mo.seed, medium.scatters() ? ", scattering" : "",
                    walls.reflects() ? ", reflecting walls" : ""));
  const double setup_seconds = seconds_since(s.start);
  mc::McResult r;
  mc::ProbeRun probes;
  // Emitted power per element and per face (W, W/m^2), summed over spectral points.
  std::vector<double> element_emission = model.emission, face_emission(model.faces.size());
  for (std::size_t b = 0; b < model.faces.size(); ++b) face_emission[b] = model.faces[b].emission;
  spectral::SpectralResult props;  // property report of a nongray run
  std::size_t traced_points = 0;
  if (!gas_model.spectral) {
    r = mc::solve_forward(model, mo);
    if (!traced.empty()) probes = mc::trace_probes(model, traced, mo);
  } else {
    // Nongray. Pass 1: every point's properties, its emitted power and the emission summed over the
    // points (exact, not sampled). Pass 2 traces: per_path — each batch a systematic sample of the
    // points by power (mc::SpectralSampler; points without paths are skipped); per_point — every
    // emitting point gets paths in proportion to its power (at least `batches`) and its own batches.
    spectral::SpectralOptions so;
    so.block_bytes = static_cast<std::size_t>(cs.solver.spectral_block_mb * 1024.0 * 1024.0);
    std::vector<double> power, blackbody;  // per point: emitted [W]; what the sources would emit at kappa = 1 [W]
    const std::vector<double> node_volume = spectral::node_volumes(disc);
    std::size_t clamped = 0;
    std::fill(element_emission.begin(), element_emission.end(), 0.0);
    std::fill(face_emission.begin(), face_emission.end(), 0.0);
    spectral::for_each_spectral_point(disc, medium, walls, *gas_model.spectral, so, props,
                                      [&](int, const problem::Medium& pm, const problem::Walls& pw, const spectral::PointProblem*) {
                                        mc::set_properties(model, disc, pm, pw);
                                        power.push_back(model.total_power());
                                        double bb = 0;
                                        for (std::size_t i = 0; i < node_volume.size(); ++i) bb += 4 * std::numbers::pi * node_volume[i] * pm.blackbody_intensity[i];
                                        for (const auto& f : model.faces) bb += f.emission * f.area;
                                        blackbody.push_back(bb);
                                        clamped = std::max(clamped, model.clamped_elements);
                                        for (std::size_t t = 0; t < element_emission.size(); ++t) element_emission[t] += model.emission[t];
                                        for (std::size_t b = 0; b < face_emission.size(); ++b) face_emission[b] += model.faces[b].emission;
                                      });
    double total = 0;
    for (double p : power) total += p;
    spectral::SpectralResult pass2;
    const auto t_trace = Clock::now();
    auto report = [&](int j, std::uint64_t paths, std::uint64_t paths_so_far) {
      if (opt.progress && (traced_points % 100 == 1 || props.spectral_points < 200))
        s.log(fmt::format("  spectral point {} / {}: {} paths, {:.3g} W ({} points traced, {:.3g} paths/s)", j + 1, props.spectral_points,
                          paths, power[static_cast<std::size_t>(j)], traced_points,
                          static_cast<double>(paths_so_far) / std::max(seconds_since(t_trace), 1e-9)));
    };
    if (cs.solver.mc.per_path) {
      mc::SpectralSampler sampler(power, blackbody, mo, model, traced.size());
      spectral::for_each_spectral_point(
          disc, medium, walls, *gas_model.spectral, so, pass2,
          [&](int j, const problem::Medium& pm, const problem::Walls& pw, const spectral::PointProblem*) {
            mc::set_properties(model, disc, pm, pw);
            sampler.trace_point(j, model, traced);
            ++traced_points;
            report(j, sampler.paths(j), sampler.forward_paths_traced());
          },
          [&](int j) { return sampler.paths(j) + (traced.empty() ? 0 : sampler.probe_rays(j)) > 0; });
      r = sampler.forward_result(model, element_emission, face_emission);
      if (!traced.empty()) probes = sampler.probe_result(model, traced, element_emission, face_emission);
    } else {
      auto share = [&](double p, std::uint64_t n) -> std::uint64_t {
        if (!(p > 0) || !(total > 0)) return 0;
        return std::max<std::uint64_t>(static_cast<std::uint64_t>(mo.batches),
                                       static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * p / total)));
      };
      std::uint64_t first = 0;
      spectral::for_each_spectral_point(
          disc, medium, walls, *gas_model.spectral, so, pass2,
          [&](int j, const problem::Medium& pm, const problem::Walls& pw, const spectral::PointProblem*) {
            const auto jj = static_cast<std::size_t>(j);
            mc::McOptions point = mo;
            point.paths = share(power[jj], mo.paths);
            point.probe_rays = share(power[jj], mo.probe_rays);
            point.first_path = first;
            first += std::max(point.paths, point.probe_rays);
            point.progress = {};
            mc::set_properties(model, disc, pm, pw);
            mc::accumulate(r, mc::solve_forward(model, point));
            if (!traced.empty()) mc::accumulate(probes, mc::trace_probes(model, traced, point));
            ++traced_points;
            report(j, point.paths, r.paths);
          },
          [&](int j) { return share(power[static_cast<std::size_t>(j)], mo.paths) > 0; });
    }
    props.property_seconds += pass2.property_seconds;
    model.clamped_elements = clamped;
    if (traced_points == 0) {  // nothing emits at any point: zero fields of the right sizes
      r = mc::solve_forward(model, mo);
      if (!traced.empty()) probes = mc::trace_probes(model, traced, mo);
    }
    if (props.gas_nodes_clamped > 0 || props.wall_nodes_clamped > 0)
      s.warnings.push_back(fmt::format("{}: the gas model {} covers {:.0f}-{:.0f} K; {} gas nodes and {} emitting wall nodes lie outside "
                                       "and take the properties at the nearest end of that range",
                                       cs.file.string(), gas_model.name(), props.temperature_range.first,
                                       props.temperature_range.second, props.gas_nodes_clamped, props.wall_nodes_clamped));
  }
  const double solve_seconds = seconds_since(s.start) - setup_seconds;
  s.log(fmt::format("  forward: {} paths, {} segments, {:.2f} s ({:.3g} paths/s, {:.3g} segments/s), {} lost", r.paths, r.segments,
                    r.seconds, static_cast<double>(r.paths) / r.seconds, static_cast<double>(r.segments) / r.seconds, r.lost_rays));
  if (!traced.empty())
    s.log(fmt::format("  probes: {} points x {} rays, {:.2f} s, {} lost", traced.size(), mo.probe_rays, probes.seconds, probes.lost_rays));
  if (model.clamped_elements > 0)
    s.warnings.push_back(fmt::format("Monte Carlo: in {} elements the mean of kappa, sigma_s or kappa Ib over the element was below 0 (a "
                                     "steep nodal field) and was set to 0; refine the mesh where the properties change fast",
                                     model.clamped_elements));
  if (probes.unfollowed_specular_beam_hits > 0)
    s.warnings.push_back(fmt::format("Monte Carlo probes: {} backward paths or shadow rays met a specular wall in the light of a collimated "
                                     "beam; the beam's mirror images are not followed by the probe estimator, so probe values may miss "
                                     "them (solution.vtu and walls.vtu, from the forward estimator, include them)",
                                     probes.unfollowed_specular_beam_hits));
  if (r.lost_rays + probes.lost_rays > 0)
    s.warnings.push_back(fmt::format("Monte Carlo: {} of {} forward paths and {} probe rays were lost (stuck on an edge or degenerate); "
                                     "their energy is missing from the tallies",
                                     r.lost_rays, r.paths, probes.lost_rays));

  auto summary = summary_header(s);
  const std::size_t F = model.faces.size(), nfp = walls.face_nodes();
  // Wall groups: totals with standard errors.
  nlohmann::json wj = nlohmann::json::object();
  for (std::size_t g = 0; g < model.group_names.size(); ++g) {
    double area = 0, emitted = 0;
    std::string type;
    for (std::size_t b = 0; b < F; ++b)
      if (model.faces[b].group == static_cast<int>(g)) {
        area += model.faces[b].area, emitted += face_emission[b] * model.faces[b].area;
        type = io::to_string(walls.wall(walls.wall_of(b)).type);
      }
    const double qin = r.group_q_in.mean[g], qnet = r.group_q_net.mean[g];
    wj[model.group_names[g]] = {{"type", type}, {"area", area}, {"q_net_W", qnet}, {"q_net_W_stderr", r.group_q_net.error[g]},
                                {"q_in_W", qin}, {"q_in_W_stderr", r.group_q_in.error[g]}, {"q_out_W", qin - qnet},
                                {"emitted_W", emitted}, {"q_net_mean", area > 0 ? qnet / area : 0.0}};
  }
  // The DG's scale (output::energy_balance): the largest of integral |div q|, integral |q_net| (per
  // face), the incident wall power and the emitted volume power.
  double volume_abs = 0, emitted_volume = 0, walls_abs = 0;
  for (std::size_t t = 0; t < model.kappa.size(); ++t) {
    const auto e = static_cast<std::size_t>(model.mesh.original[t]);
    volume_abs += std::abs(r.divq.mean[e]) * model.mesh.volume[t], emitted_volume += element_emission[t];
  }
  for (std::size_t b = 0; b < F; ++b) walls_abs += std::abs(r.q_net.mean[b]) * model.faces[b].area;
  const double scale = std::max({volume_abs, walls_abs, r.walls_q_in.mean, emitted_volume});
  summary["walls"] = wj;
  summary["energy_balance"] = {
      {"volume_W", r.volume_divq.mean}, {"volume_W_stderr", r.volume_divq.error}, {"walls_W", r.walls_q_net.mean},
      {"walls_W_stderr", r.walls_q_net.error}, {"imbalance_W", r.imbalance.mean}, {"imbalance_W_stderr", r.imbalance.error},
      {"scale_W", scale}, {"relative_imbalance", scale > 0 ? r.imbalance.mean / scale : 0.0},
      {"definition", "volume_W = integral of div q dV (emitted - absorbed by the medium); walls_W = integral of q_net dA (incident - "
                     "leaving, with beams entering through a wall counted as leaving it, as in the DG output); imbalance_W = volume_W - "
                     "walls_W per batch: Monte Carlo conserves energy bundle by bundle, so it is the noise of Russian roulette plus any "
                     "lost rays; relative_imbalance = imbalance_W / scale_W"}};
  summary["solver"] = {{"method", "montecarlo"}};
  summary["backend"] = {{"type", backend_choice.opencl ? "opencl" : "cpu"}, {"reason", backend_choice.reason}};
  if (device_tracer) {
    const auto& d = device_tracer->info();
    summary["backend"].update({{"platform", d.platform}, {"device", d.name}, {"driver", d.driver_version}, {"precision", "double"},
                               {"kernel_cache_hit", device_tracer->cache_hit()}, {"kernel_build_seconds", device_tracer->build_seconds()},
                               {"bytes_to_device", device_tracer->bytes_to_device()}, {"bytes_from_device", device_tracer->bytes_from_device()},
                               {"on_device", "forward paths (opencl/mc_forward.cl); probe rays on the host"}});
  }
  if (gas_model.spectral)
    summary["spectral"] = {{"model", gas_model.name()},
                           {"type", gas_model.type},
                           {"property_backend", property_backend(gas_model)},
                           {"spectral_points", props.spectral_points},
                           {"property_seconds", props.property_seconds},
                           {"sampling", cs.solver.mc.per_path ? "per_path" : "per_point"},
                           {"sampling_definition", cs.solver.mc.per_path
                                                       ? "each batch a systematic sample of the spectral points in proportion to their emitted power; points without paths are not traced"
                                                       : "paths per spectral point in proportion to its emitted power (at least `batches`), each point with its own batches"},
                           {"gas_nodes_clamped", props.gas_nodes_clamped},
                           {"wall_nodes_clamped", props.wall_nodes_clamped}};
  if (auto soot = soot_summary(gas_model, medium); !soot.is_null()) summary["spectral"]["soot"] = soot;
  summary["scattering"] = {{"present", medium.scatters()}};
  summary["montecarlo"] = {{"paths", r.paths},
                           {"batches", mo.batches},
                           {"seed", mo.seed},
                           {"paths_per_second", static_cast<double>(r.paths) / r.seconds},
                           {"segments_per_second", static_cast<double>(r.segments) / r.seconds},
                           {"segments", r.segments},
                           {"scattering_events", r.scattering_events},
                           {"wall_reflections", r.wall_reflections},
                           {"lost_rays", r.lost_rays},
                           {"source_power_W", r.source_power},
                           {"forward_seconds", r.seconds},
                           {"probe_points", traced.size()},
                           {"probe_rays", probes.rays},
                           {"probe_segments", probes.segments},
                           {"probe_lost_rays", probes.lost_rays},
                           {"probe_shadow_rays", probes.shadow_rays},
                           {"unfollowed_specular_beam_hits", probes.unfollowed_specular_beam_hits},
                           {"spectral_points_traced", traced_points},
                           {"probe_seconds", probes.seconds},
                           {"properties", "element means of the nodal fields"},
                           {"error_estimate", "standard error of the mean over independent batches"}};

  const auto& dir = cs.output.directory;
  if (s.write_files) std::filesystem::create_directories(dir);
  const auto t_out = Clock::now();
  {
    auto cells = element_fields(s.mesh);
    for (const auto& [name, est] : {std::pair<const char*, const mc::Estimate*>{"G", &r.G}, {"qx", &r.qx}, {"qy", &r.qy}, {"qz", &r.qz},
                                    {"divq", &r.divq}}) {
      cells.push_back({name, est->mean});
      cells.push_back({std::string(name) + "_stderr", est->error});
    }
    if (!gas_model.spectral) cells.push_back({"kappa_element", model.in_mesh_order(model.kappa)});
    cells.push_back({"sigma_s_element", model.in_mesh_order(model.sigma_s)});
    std::vector<output::PointField> pf{{"sigma_s", medium.sigma_s}, {"Ib", medium.blackbody_intensity}};
    pf.push_back(gas_model.spectral ? output::PointField{"kappa_planck", props.kappa_planck} : output::PointField{"kappa", medium.kappa});
    // Results::fields: the tallies are element means, repeated at each element's nodes.
    std::vector<std::vector<double>> at_nodes;
    for (const auto& c : cells) {
      auto& v = at_nodes.emplace_back(disc.num_dofs());
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = c.values[k / static_cast<std::size_t>(disc.num_nodes())];
    }
    std::vector<output::PointField> kept = pf;
    for (std::size_t c = 0; c < cells.size(); ++c) kept.push_back({cells[c].name, at_nodes[c]});
    keep_fields(s, disc, kept, medium);
    const bool vtk = cs.output.vtk && s.write_files;
    if (vtk) output::write_solution_vtu(dir / "solution.vtu", disc, pf, cells, cs.output.linear, group_names(s.mesh));
    std::vector<std::size_t> faces;
    output::CellField group{"surface_group", {}}, emissivity{"emissivity", {}}, q_out{"q_out", {}}, q_emitted{"q_emitted", {}};
    std::vector<double> wall_T(F * nfp);
    for (std::size_t b = 0; b < F; ++b) {
      faces.push_back(walls.element_face(b));
      const int g = s.mesh.boundary_group[walls.element_face(b) / 4][walls.element_face(b) % 4];
      group.values.push_back(g >= 0 ? s.mesh.surface_groups[static_cast<std::size_t>(g)].tag : -1);
      emissivity.values.push_back(walls.wall(walls.wall_of(b)).emissivity);
      q_out.values.push_back(r.q_in.mean[b] - r.q_net.mean[b]);
      q_emitted.values.push_back(face_emission[b]);
      for (std::size_t j = 0; j < nfp; ++j) wall_T[b * nfp + j] = walls.temperature(b, j);
    }
    const std::vector<output::CellField> face_values{group, emissivity, {"q_in", r.q_in.mean}, {"q_in_stderr", r.q_in.error},
                                                 {"q_net", r.q_net.mean}, {"q_net_stderr", r.q_net.error}, q_out, q_emitted};
    // Results::wall_fields: per-face tallies repeated at each face's nodes.
    std::vector<std::vector<double>> at_face_nodes;
    std::vector<output::PointField> wall_arrays{{"temperature", wall_T}};
    for (std::size_t c = 2; c < face_values.size(); ++c) {
      auto& v = at_face_nodes.emplace_back(F * nfp);
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = face_values[c].values[k / nfp];
    }
    for (std::size_t c = 2; c < face_values.size(); ++c) wall_arrays.push_back({face_values[c].name, at_face_nodes[c - 2]});
    keep_wall_fields(s, disc, walls, wall_arrays);
    if (vtk) output::write_faces_vtu(dir / "walls.vtu", disc, faces, {{"temperature", wall_T}}, face_values, group_names(s.mesh));
  }
  if (!lines.empty()) {
    for (const auto& line : lines) {
      const bool wall = !line.spec->wall.empty();
      std::string text = wall ? "# Monte Carlo (backward rays per point): q_in incident flux [W/m^2], q_net = absorbed - emitted [W/m^2], "
                                "*_stderr their standard errors; distance [m] along the line\nx,y,z,distance,q_in,q_in_stderr,q_net,"
                                "q_net_stderr\n"
                              : "# Monte Carlo (backward rays per point): G, q [W/m^2], divq [W/m^3] (element's kappa and emission), "
                                "*_stderr their standard errors; distance [m] along the line\nx,y,z,distance,G,G_stderr,qx,qx_stderr,"
                                "qy,qy_stderr,qz,qz_stderr,divq,divq_stderr\n";
      for (std::size_t i = 0; i < line.points.size(); ++i) {
        const auto& [x, d] = line.points[i];
        text += fmt::format("{:.10g},{:.10g},{:.10g},{:.10g}", x[0], x[1], x[2], d);
        if (line.index[i] < 0) {
          text += wall ? ",nan,nan,nan,nan\n" : ",nan,nan,nan,nan,nan,nan,nan,nan,nan,nan\n";
          continue;
        }
        const auto& v = probes.values[static_cast<std::size_t>(line.index[i])];
        const auto list = wall ? std::vector<mc::ScalarEstimate>{v.q_in, v.q_net} : std::vector<mc::ScalarEstimate>{v.G, v.qx, v.qy, v.qz, v.divq};
        for (const auto& est : list) text += fmt::format(",{:.12g},{:.6g}", est.mean, est.error);
        text += "\n";
      }
      keep_probe(s, dir, line.spec->name, text);
    }
  }
  summary["outputs"] = {{"vtk", cs.output.vtk ? "solution.vtu" : ""}, {"walls_vtk", cs.output.vtk ? "walls.vtu" : ""},
                        {"vtk_cells", cs.output.linear ? "linear" : "lagrange"}, {"fields_on", "cells (element means)"}};
  finish(s, summary, setup_seconds, solve_seconds, t_out);
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
