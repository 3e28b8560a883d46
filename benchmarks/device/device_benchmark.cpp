// The OpenCL backend against the CPU path, side by side in one run (issue 13): per mesh and order,
// grind times (ns per DOF x direction) of the operator apply, the element block solve and a sweep
// pass on both paths, the CLBlast-GEMM variant of the apply, the fraction of the memory bandwidth
// each reaches (host STREAM triad for the CPU path, the device's copy kernel for OpenCL, measured
// in this run), and a whole S8 gray solve through `dgrte run` on both backends.
// Prints one JSON document (benchmarks/README.md, "device_benchmark"); --out FILE also writes it
// atomically after every case.
#include "angular/quadrature.hpp"
#include "dgrte/dgrte.hpp"
#include "transport/cpu_transport.hpp"
#include "backend/device_data.hpp"
#include "common/bench_util.hpp"
#include "device/device_transport.hpp"
#include "mesh/tet_mesh.hpp"
#include "transport/discretization.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/sweep.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#ifndef DGRTE_SOURCE_DIR
#define DGRTE_SOURCE_DIR "."
#endif

namespace {

using dgrte::transport::BlockKind;
using dgrte::transport::ElementSolves;
using dgrte::bench::Clock;
using dgrte::bench::median;
using dgrte::bench::seconds_since;
using dgrte::transport::Vec3;
using json = nlohmann::json;
namespace fs = std::filesystem;

struct Options {
  std::vector<double> sizes{0.124, 0.059};  // 22,726 and 178,934 tets (benchmarks/README.md)
  std::vector<int> orders{1, 2, 3, 4};
  std::size_t columns = 16;   // directions per batch in the kernel timings (every 5th of S8)
  int repeats = 3;
  double solve_max = 8e7;     // whole S8 solves only up to this many DOFs x ordinates
  std::string device = "auto";
  int threads = 0;
  bool solve = true;
  bool cpu_only = false;  // the CPU path alone (no OpenCL device needed)
  std::string out;
};

[[noreturn]] void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "device_benchmark: the OpenCL backend against the CPU path (benchmarks/README.md)\n"
               "  --sizes H...        cube.geo mesh sizes (default 0.124 0.059: ~23k and ~179k tets)\n"
               "  --orders P...       (default 1 2 3 4)\n"
               "  --columns C         directions per batch in the kernel timings (default 16)\n"
               "  --repeats N         timing repeats, median reported (default 3)\n"
               "  --solve-max X       whole S8 solves only up to X DOFs x ordinates (default 8e7)\n"
               "  --no-solve          kernel timings only\n"
               "  --cpu-only          the CPU path alone (kernel timings; no OpenCL device needed)\n"
               "  --device D          OpenCL device: auto | P:D | index | name (default auto)\n"
               "  --threads T         OpenMP threads of the CPU path (default: OMP_NUM_THREADS)\n"
               "  --quick             sizes 0.6 0.4, orders 1 2, 4 columns, 1 repeat (a smoke run)\n"
               "  --out FILE          also write the JSON there (atomically, after every case)\n");
  std::exit(code);
}

Options parse(int argc, char** argv) {
  Options o;
  auto values = [&](int& i) {
    std::vector<double> v;
    while (i + 1 < argc && argv[i + 1][0] != '-') v.push_back(std::stod(argv[++i]));
    if (v.empty()) usage(2);
    return v;
  };
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage(2);
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") usage(0);
    else if (a == "--sizes") o.sizes = values(i);
    else if (a == "--orders") {
      o.orders.clear();
      for (double p : values(i)) o.orders.push_back(static_cast<int>(p));
    } else if (a == "--columns") o.columns = std::stoul(value(i));
    else if (a == "--repeats") o.repeats = std::stoi(value(i));
    else if (a == "--solve-max") o.solve_max = std::stod(value(i));
    else if (a == "--no-solve") o.solve = false;
    else if (a == "--cpu-only") o.cpu_only = true, o.solve = false;
    else if (a == "--device") o.device = value(i);
    else if (a == "--threads") o.threads = std::stoi(value(i));
    else if (a == "--out") o.out = value(i);
    else if (a == "--quick") {
      o.sizes = {0.6, 0.4};
      o.orders = {1, 2};
      o.columns = 4;
      o.repeats = 1;
    } else {
      std::fprintf(stderr, "device_benchmark: unknown option %s\n", a.c_str());
      usage(2);
    }
  }
  if (o.columns == 0 || o.repeats < 1) usage(2);
  return o;
}

// Median seconds of `repeats` runs after one warm-up.
template <typename F>
double timed(int repeats, F&& run) {
  run();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    run();
    t.push_back(seconds_since(t0));
  }
  return median(t);
}

// Compulsory traffic of one apply per column (as dgrte-bench-device counts it): u read, y written,
// sigma_t read, the neighbour traces and the neighbour map (4 N_fp per element), the geometry
// (25 values per element). The block solve and the sweep move about the same; they are
// compute-bound (an LU of N_p^2 per element), which their fraction shows.
double bytes_per_column(const dgrte::transport::Discretization& disc, std::size_t real) {
  const double n = static_cast<double>(disc.num_dofs()), K = static_cast<double>(disc.num_elements());
  const double nfp = static_cast<double>(disc.ref.num_face_nodes);
  return 3 * n * static_cast<double>(real) + K * 4 * nfp * (static_cast<double>(real) + 4) + K * 25 * static_cast<double>(real);
}

json grind_entry(double seconds, std::size_t dofs, std::size_t cols, double bytes_per_col, double bandwidth) {
  const double dof_dirs = static_cast<double>(dofs) * static_cast<double>(cols);
  return {{"seconds", seconds},
          {"grind_ns", seconds / dof_dirs * 1e9},
          {"bandwidth_fraction", bytes_per_col * static_cast<double>(cols) / seconds / bandwidth}};
}

// The CPU path of each kernel, `cols` directions, threads as the gray solver uses them: the apply
// and the block solve parallel over elements (one direction at a time, CpuTransport), the sweeps
// parallel over directions (threads over ordinates, the default of solver.threads).
json cpu_kernels(const dgrte::transport::Discretization& disc, const dgrte::transport::ReactionTerm& sigma, const std::vector<Vec3>& dirs,
                 const std::vector<dgrte::transport::SweepPlan>& plans, int repeats, double stream_bw) {
  const std::size_t n = disc.num_dofs(), cols = dirs.size();
  const double bytes = bytes_per_column(disc, 8);
  dgrte::transport::CpuTransport cpu(disc, std::size_t{2} << 30);  // the app's default block budget
  std::vector<double> u(n, 1.0), y(n);
  double t_apply = 0, t_block = 0, t_setup = 0;
  for (const auto& s : dirs) {
    cpu.set_direction(s, sigma, BlockKind::none);
    t_apply += timed(repeats, [&] { cpu.apply(u, y); });
    const auto t0 = Clock::now();
    cpu.set_direction(s, sigma, BlockKind::partial);
    t_setup += seconds_since(t0);
    t_block += timed(repeats, [&] { cpu.precondition(u, y); });
  }
  std::vector<double> rhs(n * cols, 1.0), field(n * cols), reference(n * cols);
  const auto C = static_cast<std::ptrdiff_t>(cols);
  auto sweeps = [&](std::vector<double>& out, ElementSolves solves) {
    return timed(repeats, [&] {
#pragma omp parallel for schedule(dynamic)
      for (std::ptrdiff_t c = 0; c < C; ++c) {
        const auto k = static_cast<std::size_t>(c);
        dgrte::transport::sweep_pass(disc, plans[k], sigma, std::span(rhs).subspan(k * n, n), std::span(out).subspan(k * n, n), {},
                                     false, solves);
      }
    });
  };
  // The interleaved element solves (the default) beside the one-by-one kernel, the same sweeps.
  const double t_sweep = sweeps(field, ElementSolves::interleaved);
  const double t_one_by_one = sweeps(reference, ElementSolves::one_by_one);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < field.size(); ++i) diff = std::max(diff, std::abs(field[i] - reference[i])), scale = std::max(scale, std::abs(reference[i]));
  json j;
  j["apply"] = grind_entry(t_apply, n, cols, bytes, stream_bw);
  // With cached inverses the block solve also reads K N_p^2 values per direction (they are often
  // cache resident on small meshes, which the fraction then shows as > 1).
  const double inverse_bytes = cpu.preconditioner_bytes() > 0 ? static_cast<double>(cpu.preconditioner_bytes()) : 0.0;
  j["block_jacobi_partial"] = grind_entry(t_block, n, cols, bytes + inverse_bytes, stream_bw);
  j["block_jacobi_partial"]["setup_seconds"] = t_setup;
  j["block_jacobi_partial"]["blocks"] = cpu.preconditioner_bytes() > 0 ? "cached inverses" : "on the fly";
  j["sweep"] = grind_entry(t_sweep, n, cols, bytes, stream_bw);
  j["sweep"]["element_solves"] = "interleaved";
  j["sweep_one_by_one"] = grind_entry(t_one_by_one, n, cols, bytes, stream_bw);
  j["sweep_one_by_one"]["max_relative_difference"] = scale > 0 ? diff / scale : diff;
  return j;
}

json device_kernels(const dgrte::transport::Discretization& disc, const dgrte::device::TransportData& data, std::size_t cols,
                    const Options& opt) {
  dgrte::device::DeviceOptions dopt;
  dopt.device = opt.device;
  dgrte::device::DeviceTransport dev(data, dopt);
  const std::size_t n = disc.num_dofs();
  const double bytes = bytes_per_column(disc, 8);
  const double bw = dev.copy_bandwidth(std::min<std::size_t>(std::size_t{1} << 28, dev.budget_bytes() / 4), std::max(5, opt.repeats));
  json j;
  j["copy_bandwidth_GBps"] = bw * 1e-9;
  j["launch"] = dev.launch_config();
  j["apply"] = grind_entry(dev.time_apply(cols, opt.repeats), n, cols, bytes, bw);
  j["block_jacobi_partial"] = grind_entry(dev.time_block_jacobi(cols, false, opt.repeats), n, cols, bytes, bw);
  j["block_jacobi_full"] = grind_entry(dev.time_block_jacobi(cols, true, opt.repeats), n, cols, bytes, bw);
  j["sweep"] = grind_entry(dev.time_sweep(cols, opt.repeats), n, cols, bytes, bw);
  j["sweep"]["levels"] = data.level_stride - 1;
  if (dgrte::device::clblast_available()) {
    dopt.volume = dgrte::device::VolumeKernel::clblast;
    dgrte::device::DeviceTransport gemm(data, dopt);
    const std::size_t gemm_cols = std::min(cols, gemm.max_columns(2));  // its 3 n gradients per column must fit one buffer
    j["apply_clblast_gemm"] = grind_entry(gemm.time_apply(gemm_cols, opt.repeats), n, gemm_cols, bytes, bw);
    j["apply_clblast_gemm"]["columns"] = gemm_cols;
  } else {
    j["apply_clblast_gemm"] = nullptr;
  }
  return j;
}

// A whole S8 gray solve through run_case (mesh, setup, GMRES outer iteration, inner sweeps): an
// emitting, scattering cube (beta 1, albedo 0.5, 1000 K, black walls at 300 K).
json whole_solve(double size, int order, const std::string& backend, const Options& opt) {
  const auto dir = fs::temp_directory_path() / fmt::format("dgrte_device_benchmark_{}", ::getpid());
  fs::create_directories(dir);
  const auto file = dir / "case.yaml";
  std::ofstream(file) << fmt::format(
      "mesh: {{geo: {}/validation/mms/cube.geo, size: {}}}\norder: {}\nangular: {{quadrature: sn, order: 8}}\n"
      "media: {{\"*\": {{kappa: \"0.5\", scattering: \"0.5\", temperature: \"1000\"}}}}\n"
      "boundaries: {{\"*\": {{type: black, temperature: 300}}}}\n"
      "solver: {{outer: gmres, outer_tolerance: 1.0e-6, inner: sweep, backend: {}{}}}\noutput: {{vtk: false}}\n",
      DGRTE_SOURCE_DIR, size, order, backend, backend == "opencl" ? ", device: \"" + opt.device + "\"" : std::string());
  dgrte::RunOptions ro;
  ro.case_file = file;
  ro.output_directory = dir / ("out_" + backend);
  ro.quiet = true;
  const auto s = dgrte::run_case(ro);
  omp_set_num_threads(opt.threads);  // Gmsh reset it while meshing
  json walls;
  for (const auto& [name, w] : s["walls"].items()) walls[name] = w["q_in_W"];
  fs::remove_all(dir);
  return {{"backend", backend},
          {"solve_seconds", s["timing"]["solve_seconds"]},
          {"outer_iterations", s["solver"]["outer_iterations"]},
          {"transport_sweeps", s["solver"]["transport_sweeps"]},
          {"grind_ns_per_dof_ordinate_sweep", s["grind_ns_per_dof"]},
          {"wall_q_in_W", walls},
          {"relative_energy_imbalance", s["energy_balance"]["relative_imbalance"]}};
}

double max_relative_difference(const json& a, const json& b) {
  double worst = 0;
  for (const auto& [name, v] : a.items()) {
    const double x = v.get<double>(), y = b.at(name).get<double>();
    worst = std::max(worst, std::abs(x - y) / std::max(std::abs(y), 1e-300));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  if (opt.threads <= 0) opt.threads = omp_get_max_threads();
  try {
    int pargc = 1;  // PETSc sees none of the harness's options
    char** pargv = argv;
    dgrte::transport::PetscSession petsc(&pargc, &pargv);  // the CPU path's outer GMRES in the whole solve
    json doc;
    doc["benchmark"] = "device";
    doc["threads"] = opt.threads;
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    doc["omp_wait_policy"] = policy ? policy : "unset";
    if (!policy) std::fprintf(stderr, "device_benchmark: OMP_WAIT_POLICY is unset; set it to passive on a shared machine\n");
    doc["options"] = {{"sizes", opt.sizes}, {"orders", opt.orders}, {"columns", opt.columns}, {"repeats", opt.repeats},
                      {"solve_max", opt.solve_max}, {"device", opt.device}};
    doc["cpu_only"] = opt.cpu_only;
    if (!opt.cpu_only) {
      const auto info = dgrte::device::select_device(opt.device);
      doc["device"] = {{"label", info.label()}, {"driver", info.driver_version}, {"fp64", info.fp64},
                       {"compute_units", info.compute_units}, {"global_memory_bytes", info.global_memory}};
      doc["clblast"] = dgrte::device::clblast_available();
    }
    omp_set_num_threads(opt.threads);
    doc["stream"] = dgrte::bench::stream_triad(std::size_t{1} << 24, 20);
    const double stream_bw = doc["stream"]["best_gb_per_s"].get<double>() * 1e9;
    const auto s8 = dgrte::angular::level_symmetric(8);
    doc["cases"] = json::array();
    const auto t_start = Clock::now();
    for (double size : opt.sizes) {
      const auto t0 = Clock::now();
      const auto mesh = dgrte::mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", size);
      omp_set_num_threads(opt.threads);  // Gmsh sets it to General.NumThreads while meshing
      std::fprintf(stderr, "mesh h = %g: %zu tets (%.1f s)\n", size, mesh.num_elements(), seconds_since(t0));
      // Every 5th ordinate of S8 (all octants), cycled when more columns are asked for.
      std::vector<Vec3> dirs;
      for (std::size_t c = 0; c < opt.columns; ++c) dirs.push_back(s8.s[(5 * c) % s8.size()]);
      for (int order : opt.orders) {
        const auto disc = dgrte::transport::make_discretization(mesh, order);
        const std::size_t n = disc.num_dofs();
        const dgrte::transport::ReactionTerm sigma(std::vector<double>(n, 1.0), disc.ref.num_nodes);
        std::vector<dgrte::transport::SweepPlan> plans;
        for (const auto& s : dirs) plans.push_back(dgrte::transport::plan_sweep(disc, s));
        json c = {{"mesh_size", size}, {"elements", disc.num_elements()}, {"order", order}, {"dofs", n}, {"columns", opt.columns}};
        std::fprintf(stderr, "  P%d, %zu DOFs, %zu directions: CPU path...\n", order, n, dirs.size());
        c["cpu"] = cpu_kernels(disc, sigma, dirs, plans, opt.repeats, stream_bw);
        std::fprintf(stderr, "  sweep %.1f ns interleaved, %.1f ns one by one (CPU)\n", c["cpu"]["sweep"]["grind_ns"].get<double>(),
                     c["cpu"]["sweep_one_by_one"]["grind_ns"].get<double>());
        if (opt.cpu_only) {
          doc["cases"].push_back(c);
          doc["total_seconds"] = seconds_since(t_start);
          doc["complete"] = false;
          if (!opt.out.empty()) dgrte::bench::write_atomically(opt.out, doc.dump(2) + "\n");
          continue;
        }
        std::fprintf(stderr, "  OpenCL...\n");
        auto data = dgrte::backend::device_data(disc, sigma);
        dgrte::backend::add_directions(data, dirs, {}, plans);
        c["opencl"] = device_kernels(disc, data, opt.columns, opt);
        for (const char* k : {"apply", "block_jacobi_partial", "sweep"})
          c["speedup_opencl_over_cpu"][k] = c["cpu"][k]["seconds"].get<double>() / c["opencl"][k]["seconds"].get<double>();
        const double dof_dirs = static_cast<double>(n) * static_cast<double>(s8.size());
        if (opt.solve && dof_dirs <= opt.solve_max) {
          std::fprintf(stderr, "  whole S8 solve: CPU path...\n");
          const auto cpu = whole_solve(size, order, "cpu", opt);
          std::fprintf(stderr, "  whole S8 solve: OpenCL...\n");
          const auto ocl = whole_solve(size, order, "opencl", opt);
          c["s8_solve"] = {{"cpu", cpu},
                           {"opencl", ocl},
                           {"speedup_opencl_over_cpu", cpu["solve_seconds"].get<double>() / ocl["solve_seconds"].get<double>()},
                           {"wall_q_in_max_relative_difference", max_relative_difference(ocl["wall_q_in_W"], cpu["wall_q_in_W"])}};
        } else {
          c["s8_solve"] = {{"restricted", opt.solve ? fmt::format("skipped: {:.3g} DOFs x ordinates > --solve-max {:.3g}", dof_dirs, opt.solve_max)
                                                    : std::string("skipped: --no-solve")}};
        }
        std::fprintf(stderr, "  apply %.1f / %.1f ns, block %.1f / %.1f ns, sweep %.1f / %.1f ns (CPU / OpenCL)\n",
                     c["cpu"]["apply"]["grind_ns"].get<double>(), c["opencl"]["apply"]["grind_ns"].get<double>(),
                     c["cpu"]["block_jacobi_partial"]["grind_ns"].get<double>(), c["opencl"]["block_jacobi_partial"]["grind_ns"].get<double>(),
                     c["cpu"]["sweep"]["grind_ns"].get<double>(), c["opencl"]["sweep"]["grind_ns"].get<double>());
        doc["cases"].push_back(c);
        doc["total_seconds"] = seconds_since(t_start);
        doc["complete"] = false;
        if (!opt.out.empty()) dgrte::bench::write_atomically(opt.out, doc.dump(2) + "\n");
      }
    }
    doc["complete"] = true;
    doc["total_seconds"] = seconds_since(t_start);
    const std::string text = doc.dump(2) + "\n";
    if (!opt.out.empty()) dgrte::bench::write_atomically(opt.out, text);
    std::cout << text;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_benchmark: %s\n", e.what());
    return 1;
  }
}
