// Transport performance harness: the manufactured-solution case of He et al. (2013), sec. 5
// (validation/mms), one direction, timed per mesh, order and preconditioner. Prints one JSON
// object on stdout (and, with --out FILE, writes it atomically: FILE.tmp then rename).
// Progress goes to stderr. See benchmarks/README.md for what is measured and how to read it.
#include "angular/quadrature.hpp"
#include "common/bench_util.hpp"
#include "transport/cpu_transport.hpp"
#include "common/error.hpp"
#include "mesh/tet_mesh.hpp"
#include "transport/discretization.hpp"
#include "transport/field_evaluation.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/sweep.hpp"
#include "transport/upwind_operator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#ifndef DGRTE_SOURCE_DIR
#define DGRTE_SOURCE_DIR "."
#endif

namespace {

using dgrte::transport::BlockKind;
using dgrte::transport::Vec3;
using json = nlohmann::json;
using dgrte::bench::Clock;
using dgrte::bench::median;
using dgrte::bench::seconds_since;
using dgrte::bench::stream_triad;
using dgrte::bench::write_atomically;



// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  std::vector<int> orders{1, 2, 3, 4};
  // Sizes (Mesh.MeshSizeMax for validation/mms/cube.geo) that give about the tet counts of the
  // meshes of He et al. (2013): 2,861 / 22,655 / 181,213 (see benchmarks/README.md).
  std::vector<double> sizes{0.25, 0.124, 0.059};
  std::optional<std::string> mesh_file;
  int repeats = 3;
  int min_applies = 10;
  std::vector<std::string> preconditioners{"partial-block-jacobi", "block-jacobi", "sweep", "none"};
  int threads = 0;  // 0: OpenMP default
  std::string out;
  std::string geo = DGRTE_SOURCE_DIR "/validation/mms/cube.geo";
  double rtol = 1e-10;
  int max_iterations = 5000;
  std::size_t budget = std::size_t{2048} * 1024 * 1024;  // the app's default preconditioner_memory_mb
  bool mesh_only = false;
  // Limits that keep the default run within ~20 min on 2 shared cores (the case JSON says
  // "restricted"): above no_none_above DOFs the unpreconditioned solve (hundreds to thousands of
  // iterations) is skipped; above single_repeat_above DOFs the solves run once.
  double no_none_above = 5e5;
  double single_repeat_above = 5e6;
  bool quick = false;
  std::size_t stream_doubles = std::size_t{1} << 24;  // 128 MiB per array, 3 arrays
  int stream_trials = 20;
};

[[noreturn]] void usage(int code) {
  std::fputs(
      "usage: transport_benchmark [options]\n"
      "  --orders N...            polynomial orders (default 1 2 3 4)\n"
      "  --sizes H...             mesh sizes for validation/mms/cube.geo (default 0.25 0.124 0.059:\n"
      "                           2,710 / 22,726 / 178,934 tets)\n"
      "  --mesh FILE.msh          use this mesh instead of meshing the cube (the exact solution and\n"
      "                           kappa of the cube case are still used)\n"
      "  --geo FILE.geo           .geo file meshed with --sizes (default validation/mms/cube.geo)\n"
      "  --repeats N              timing repeats, median reported (default 3)\n"
      "  --applies N              minimum operator applies per timing repeat (default 10)\n"
      "  --preconditioners P...   of Bi-CGSTAB: partial-block-jacobi block-jacobi sweep none (default\n"
      "                           all four; none given: no Bi-CGSTAB solve, the sweep only)\n"
      "  --threads N              OpenMP threads (default: OMP_NUM_THREADS / all cores)\n"
      "  --rtol R                 Bi-CGSTAB relative tolerance (default 1e-10, as mms.yaml)\n"
      "  --max-iterations N       (default 5000)\n"
      "  --budget-mb M            preconditioner cache budget (default 2048, as the app)\n"
      "  --stream-mb M            STREAM array size per array in MiB (default 128)\n"
      "  --no-none-above N        skip the unpreconditioned solve above N DOFs (default 5e5; 0: never)\n"
      "  --single-repeat-above N  solve once above N DOFs (default 5e6, P4 on ~180k tets; 0: never)\n"
      "  --quick                  sizes 0.6 0.4, orders 1 2, repeats 1 (seconds; the CTest smoke)\n"
      "  --mesh-only              mesh the sizes, print their tet counts, and stop\n"
      "  --out FILE               also write the JSON to FILE (atomically)\n",
      code ? stderr : stdout);
  std::exit(code);
}

Options parse(int argc, char** argv) {
  Options o;
  bool sizes_given = false, orders_given = false, repeats_given = false;
  auto is_value = [&](int i) { return i < argc && std::string(argv[i]).rfind("--", 0) != 0; };
  auto need = [&](int i, const std::string& name) {
    if (!is_value(i)) {
      std::fprintf(stderr, "transport_benchmark: %s needs a value\n", name.c_str());
      usage(2);
    }
  };
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") usage(0);
      if (a == "--orders") {
        need(i + 1, a);
        o.orders.clear();
        orders_given = true;
        while (is_value(i + 1)) o.orders.push_back(std::stoi(argv[++i]));
      } else if (a == "--sizes") {
        need(i + 1, a);
        o.sizes.clear();
        sizes_given = true;
        while (is_value(i + 1)) o.sizes.push_back(std::stod(argv[++i]));
      } else if (a == "--preconditioners") {
        o.preconditioners.clear();  // none given: the sweep only
        while (is_value(i + 1)) o.preconditioners.emplace_back(argv[++i]);
      } else if (a == "--mesh") {
        need(i + 1, a);
        o.mesh_file = argv[++i];
      } else if (a == "--geo") {
        need(i + 1, a);
        o.geo = argv[++i];
      } else if (a == "--repeats") {
        need(i + 1, a);
        o.repeats = std::stoi(argv[++i]);
        repeats_given = true;
      } else if (a == "--applies") {
        need(i + 1, a);
        o.min_applies = std::stoi(argv[++i]);
      } else if (a == "--threads") {
        need(i + 1, a);
        o.threads = std::stoi(argv[++i]);
      } else if (a == "--rtol") {
        need(i + 1, a);
        o.rtol = std::stod(argv[++i]);
      } else if (a == "--max-iterations") {
        need(i + 1, a);
        o.max_iterations = std::stoi(argv[++i]);
      } else if (a == "--budget-mb") {
        need(i + 1, a);
        o.budget = static_cast<std::size_t>(std::stod(argv[++i]) * 1024.0 * 1024.0);
      } else if (a == "--stream-mb") {
        need(i + 1, a);
        o.stream_doubles = static_cast<std::size_t>(std::stod(argv[++i]) * 1024.0 * 1024.0 / sizeof(double));
      } else if (a == "--no-none-above") {
        need(i + 1, a);
        o.no_none_above = std::stod(argv[++i]);
      } else if (a == "--single-repeat-above") {
        need(i + 1, a);
        o.single_repeat_above = std::stod(argv[++i]);
      } else if (a == "--out") {
        need(i + 1, a);
        o.out = argv[++i];
      } else if (a == "--quick") {
        o.quick = true;
      } else if (a == "--mesh-only") {
        o.mesh_only = true;
      } else {
        std::fprintf(stderr, "transport_benchmark: unknown option %s\n", a.c_str());
        usage(2);
      }
    }
  } catch (const std::logic_error&) {
    std::fprintf(stderr, "transport_benchmark: bad number in the arguments\n");
    usage(2);
  }
  if (o.quick) {
    if (!sizes_given) o.sizes = {0.6, 0.4};
    if (!orders_given) o.orders = {1, 2};
    if (!repeats_given) o.repeats = 1;
    o.stream_doubles = std::min<std::size_t>(o.stream_doubles, std::size_t{1} << 22);
    o.stream_trials = 5;
  }
  for (const auto& p : o.preconditioners)
    if (p != "partial-block-jacobi" && p != "block-jacobi" && p != "sweep" && p != "none") {
      std::fprintf(stderr, "transport_benchmark: unknown preconditioner %s\n", p.c_str());
      usage(2);
    }
  for (int p : o.orders)
    if (p < 1 || p > 8) {
      std::fprintf(stderr, "transport_benchmark: order %d out of range 1..8\n", p);
      usage(2);
    }
  if (o.repeats < 1 || o.min_applies < 1 || o.threads < 0) usage(2);
  return o;
}

BlockKind block_kind(const std::string& name) {
  if (name == "partial-block-jacobi") return BlockKind::partial;
  if (name == "block-jacobi") return BlockKind::full;
  return BlockKind::none;
}

// ---------------------------------------------------------------------------------------------
// Memory

// Linux: VmHWM / VmRSS from /proc/self/status in bytes (0 if unavailable).
std::size_t proc_status_bytes(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(f, line))
    if (line.rfind(k, 0) == 0) return std::strtoull(line.c_str() + k.size(), nullptr, 10) * 1024;
  return 0;
}

// Resets the peak-RSS high-water mark (Linux >= 4.0), so each case reports its own peak.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

std::size_t process_peak_rss() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::size_t>(ru.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}


// ---------------------------------------------------------------------------------------------
// A backend decorator that counts and times the operator and preconditioner calls of a solve.

class TimedBackend final : public dgrte::transport::TransportBackend {
 public:
  explicit TimedBackend(dgrte::transport::TransportBackend& inner) : inner_(inner) {}
  std::size_t size() const override { return inner_.size(); }
  void set_direction(const Vec3& s, const dgrte::transport::ReactionTerm& sigma_t, BlockKind blocks) override {
    inner_.set_direction(s, sigma_t, blocks);
  }
  void apply(std::span<const double> u, std::span<double> y) override {
    const auto t0 = Clock::now();
    inner_.apply(u, y);
    apply_seconds += seconds_since(t0);
    ++applies;
  }
  void precondition(std::span<const double> r, std::span<double> z) override {
    const auto t0 = Clock::now();
    inner_.precondition(r, z);
    precondition_seconds += seconds_since(t0);
    ++preconditions;
  }
  std::size_t preconditioner_bytes() const override { return inner_.preconditioner_bytes(); }
  void reset() {
    applies = preconditions = 0;
    apply_seconds = precondition_seconds = 0;
  }
  long applies = 0, preconditions = 0;
  double apply_seconds = 0, precondition_seconds = 0;

 private:
  dgrte::transport::TransportBackend& inner_;
};

// ---------------------------------------------------------------------------------------------
// The manufactured case (validation/mms/mms.yaml)

constexpr double kKappa = 0.1;

Vec3 direction() {
  const Vec3 s{0.62402, 0.52802, 0.57602};
  const double n = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  return {s[0] / n, s[1] / n, s[2] / n};
}

double exact(const Vec3& x) {
  constexpr double h = std::numbers::pi / 2;
  return (1 + std::sin(h * x[0])) * (1 + std::sin(h * x[1])) * (1 + std::sin(h * x[2]));
}

double source(const Vec3& s, const Vec3& x) {  // s . grad I + kappa I
  constexpr double h = std::numbers::pi / 2;
  const double fx = 1 + std::sin(h * x[0]), fy = 1 + std::sin(h * x[1]), fz = 1 + std::sin(h * x[2]);
  const double gx = h * std::cos(h * x[0]), gy = h * std::cos(h * x[1]), gz = h * std::cos(h * x[2]);
  return s[0] * gx * fy * fz + s[1] * fx * gy * fz + s[2] * fx * fy * gz + kKappa * fx * fy * fz;
}

// Bytes a perfect implementation must move per apply (the model is described in the README).
json traffic_model(const dgrte::transport::Discretization& disc, const dgrte::transport::DirectionCoefficients& c) {
  const std::size_t K = disc.num_elements(), N = disc.num_dofs(), nfp = disc.ref.num_face_nodes;
  std::size_t inflow_faces = 0, interior_inflow_faces = 0;
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f)
      if (c.inflow[e][f] != 0.0) {
        ++inflow_faces;
        if (disc.mesh->neighbour[e][f] >= 0) ++interior_inflow_faces;
      }
  const double d = sizeof(double);
  const double u = d * N, y = d * N, kappa = d * N;
  const double traces = d * static_cast<double>(interior_inflow_faces * nfp);
  const double index = sizeof(int) * static_cast<double>(inflow_faces * nfp);
  const double coeffs = d * 7.0 * static_cast<double>(K);  // a_r, a_s, a_t + 4 face coefficients
  const double total = u + y + kappa + traces + index + coeffs;
  return {{"read_u", u},
          {"write_y", y},
          {"read_kappa", kappa},
          {"read_neighbour_traces", traces},
          {"read_neighbour_index", index},
          {"read_coefficients", coeffs},
          {"total", total},
          {"inflow_faces", inflow_faces},
          {"interior_inflow_faces", interior_inflow_faces}};
}

// Floating-point operations per apply (GEMMs + face jumps + the combination), for a GFLOP/s figure.
double flops_per_apply(const dgrte::transport::Discretization& disc, std::size_t inflow_faces) {
  const double K = static_cast<double>(disc.num_elements());
  const double np = disc.ref.num_nodes, nfp = disc.ref.num_face_nodes;
  return K * (2 * 3 * np * np + 2 * np * 4 * nfp + 9 * np) + 2.0 * static_cast<double>(inflow_faces) * nfp;
}

struct MeshEntry {
  std::string label;
  std::optional<double> size;
  dgrte::mesh::TetMesh mesh;
  double mesh_seconds = 0;
};

// The sweep plans of all 80 LQ S8 ordinates on a mesh: do Gmsh meshes have dependency cycles?
// The plan depends on the geometry only (not on the order).
json s8_sweep_plans(const dgrte::mesh::TetMesh& mesh) {
  namespace tr = dgrte::transport;
  const auto disc = tr::make_discretization(mesh, 1);
  const auto quad = dgrte::angular::level_symmetric(8);
  std::size_t cycles = 0, lagged = 0, interior_inflow_faces = 0;
  std::vector<double> levels;
  double max_lagged_fraction = 0;
  const auto t0 = Clock::now();
  for (const auto& s : quad.s) {
    const auto plan = tr::plan_sweep(disc, s);
    cycles += static_cast<std::size_t>(plan.cycles);
    lagged += plan.lagged;
    levels.push_back(static_cast<double>(plan.num_levels()));
    max_lagged_fraction = std::max(max_lagged_fraction, plan.lagged_fraction);
  }
  const double seconds = seconds_since(t0);
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) interior_inflow_faces += mesh.neighbour[e][f] >= 0;
  std::fprintf(stderr, "[transport_benchmark] LQ S8 plans on %zu tets: %zu cycles, %zu lagged faces, levels %g-%g, %.2f s\n",
               mesh.num_elements(), cycles, lagged, *std::min_element(levels.begin(), levels.end()),
               *std::max_element(levels.begin(), levels.end()), seconds);
  return {{"quadrature", quad.name},
          {"ordinates", quad.size()},
          {"cycles", cycles},
          {"lagged_faces", lagged},
          {"interior_inflow_faces_per_ordinate", interior_inflow_faces / 2},
          {"max_lagged_fraction", max_lagged_fraction},
          {"levels_min", *std::min_element(levels.begin(), levels.end())},
          {"levels_median", median(levels)},
          {"levels_max", *std::max_element(levels.begin(), levels.end())},
          {"plan_seconds_total", seconds}};
}

json run_case(const Options& opt, const MeshEntry& m, int order, double stream_gbs) {
  namespace tr = dgrte::transport;
  const bool peak_reset = reset_peak_rss();
  const auto t_disc = Clock::now();
  const auto disc = tr::make_discretization(m.mesh, order);
  const double disc_seconds = seconds_since(t_disc);
  const std::size_t K = disc.num_elements(), N = disc.num_dofs(), np = disc.ref.num_nodes;
  const std::size_t nfp = disc.ref.num_face_nodes;
  const Vec3 s = direction();
  std::fprintf(stderr, "[transport_benchmark] %s P%d: %zu elements, %zu DOFs\n", m.label.c_str(), order, K, N);

  dgrte::transport::CpuTransport cpu(disc, opt.budget);
  TimedBackend op(cpu);
  const tr::ReactionTerm kappa(std::vector<double>(N, kKappa), static_cast<int>(np));
  std::vector<double> ex(N), rhs(N), g(K * 4 * nfp);
  for (std::size_t i = 0; i < N; ++i) {
    ex[i] = exact(disc.node_position[i]);
    rhs[i] = source(s, disc.node_position[i]);
  }
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f)
      for (std::size_t j = 0; j < nfp; ++j) g[(e * 4 + f) * nfp + j] = ex[e * np + disc.ref.face_nodes[f][j]];

  json out;
  out["mesh"] = m.label;
  if (m.size) out["mesh_size"] = *m.size;
  out["order"] = order;
  out["elements"] = K;
  out["dofs"] = N;
  out["nodes_per_element"] = np;
  out["face_nodes"] = nfp;
  out["discretization_seconds"] = disc_seconds;

  // Operator apply: u = exact nodal field, blocks none (apply does not depend on the blocks).
  op.set_direction(s, kappa, BlockKind::none);
  tr::add_boundary_inflow(disc, cpu.coefficients(), g, rhs);  // same coefficients for every solve
  {
    std::vector<double> y(N);
    const auto t1 = Clock::now();
    op.apply(ex, y);  // warm-up, also sizes the batch
    const double one = std::max(seconds_since(t1), 1e-7);
    const int applies = std::max(opt.min_applies, static_cast<int>(std::ceil(0.2 / one)));
    std::vector<double> per_apply;
    for (int r = 0; r < opt.repeats; ++r) {
      const auto t0 = Clock::now();
      for (int k = 0; k < applies; ++k) op.apply(ex, y);
      per_apply.push_back(seconds_since(t0) / applies);
    }
    const double t = median(per_apply);
    auto model = traffic_model(disc, cpu.coefficients());
    const double bytes = model["total"].get<double>();
    const double flops = flops_per_apply(disc, model["inflow_faces"].get<std::size_t>());
    const double gbs = bytes / t * 1e-9;
    out["apply"] = {{"applies_per_repeat", applies},
                    {"median_seconds", t},
                    {"samples_seconds", per_apply},
                    {"ns_per_dof", t / static_cast<double>(N) * 1e9},
                    {"bytes_model", model},
                    {"bytes_per_apply", bytes},
                    {"gb_per_s", gbs},
                    {"stream_fraction", gbs / stream_gbs},
                    {"flops_per_apply", flops},
                    {"gflop_per_s", flops / t * 1e-9}};
    std::fprintf(stderr, "  apply %.3g ms (%.2f GB/s, %.0f%% of STREAM, %.2f GFLOP/s)\n", t * 1e3, gbs,
                 100 * gbs / stream_gbs, flops / t * 1e-9);
  }

  const double dofs = static_cast<double>(N);
  const bool skip_none = opt.no_none_above > 0 && dofs > opt.no_none_above;
  const bool single = opt.single_repeat_above > 0 && dofs > opt.single_repeat_above;
  const int repeats = single ? 1 : opt.repeats;
  out["repeats"] = repeats;
  std::vector<std::string> why;
  if (skip_none) why.push_back(fmt::format("unpreconditioned solve skipped ({} DOFs > --no-none-above {:g})", N,
                                           opt.no_none_above));
  if (single) why.push_back(fmt::format("1 solve repeat ({} DOFs > --single-repeat-above {:g})", N,
                                        opt.single_repeat_above));
  if (!why.empty()) out["restricted"] = fmt::format("{}", fmt::join(why, "; "));
  // The sweep plan (made once; timed with the sweep below) also serves the sweep preconditioner.
  const auto tplan = Clock::now();
  const auto plan = tr::plan_sweep(disc, s);
  const double plan_seconds = seconds_since(tplan);
  tr::SweepPreconditioned sweep_pc(cpu, disc, plan, kappa);
  TimedBackend sweep_op(sweep_pc);
  json pcs = json::object();
  for (const auto& name : opt.preconditioners) {
    if (skip_none && name == "none") continue;
    const BlockKind kind = block_kind(name);
    TimedBackend& solver_op = name == "sweep" ? sweep_op : op;
    json r;
    std::vector<double> solve_s, setup_s, apply_s, pc_s;
    std::vector<int> iterations;
    std::vector<double> u(N);
    try {
      for (int rep = 0; rep < repeats; ++rep) {
        const auto t0 = Clock::now();
        solver_op.set_direction(s, kappa, kind);
        setup_s.push_back(seconds_since(t0));
        std::fill(u.begin(), u.end(), 0.0);
        tr::KrylovOptions ko;
        ko.rtol = opt.rtol;
        ko.max_iterations = opt.max_iterations;
        ko.precondition = name != "none";
        ko.label = fmt::format("{} P{} {}", m.label, order, name);
        solver_op.reset();
        const auto t2 = Clock::now();
        const auto res = tr::solve_bicgstab(solver_op, rhs, u, ko);
        solve_s.push_back(seconds_since(t2));
        apply_s.push_back(solver_op.apply_seconds);
        pc_s.push_back(solver_op.precondition_seconds);
        iterations.push_back(res.iterations);
        r["relative_residual"] = res.relative_residual;
        r["reason"] = res.reason;
        r["operator_applies"] = solver_op.applies;
        r["preconditioner_applies"] = solver_op.preconditions;
      }
      const double t = median(solve_s);
      const std::size_t block_bytes = K * np * np * sizeof(double);
      const std::size_t held = name == "sweep" ? 0 : cpu.preconditioner_bytes();
      r["converged"] = true;
      r["iterations"] = iterations.front();
      r["iterations_samples"] = iterations;
      r["solve_median_seconds"] = t;
      r["solve_samples_seconds"] = solve_s;
      r["setup_median_seconds"] = median(setup_s);
      r["apply_time_in_solve_median_seconds"] = median(apply_s);
      r["preconditioner_time_in_solve_median_seconds"] = median(pc_s);
      r["grind_ns_per_dof"] = t / static_cast<double>(N) * 1e9;
      r["grind_ns_per_dof_per_iteration"] = t / static_cast<double>(N) / std::max(1, iterations.front()) * 1e9;
      r["preconditioner_bytes"] = held;
      r["preconditioner_blocks"] = name == "sweep" ? "sweep plan" : kind == BlockKind::none ? "none" : (held > 0 ? "cached" : "on-the-fly");
      r["preconditioner_bytes_if_cached"] = kind == BlockKind::none ? 0 : block_bytes;
      const auto err = tr::error_norms(disc, u, exact);
      r["error"] = {{"l2", err.l2}, {"relative_l2", err.relative_l2}, {"linf", err.linf}};
      std::fprintf(stderr, "  %-21s %5d it  %8.3f s  %7.1f ns/DOF  L2 %.3e  (%s)\n", name.c_str(),
                   iterations.front(), t, t / static_cast<double>(N) * 1e9, err.l2,
                   r["preconditioner_blocks"].get<std::string>().c_str());
    } catch (const dgrte::SolverError& e) {
      r["converged"] = false;
      r["error_message"] = e.what();
      if (!solve_s.empty()) r["solve_samples_seconds"] = solve_s;
      std::fprintf(stderr, "  %-21s failed: %s\n", name.c_str(), e.what());
    }
    pcs[name] = r;
  }
  out["preconditioners"] = pcs;

  // The sweep (issue 9): the same system solved by one upwind-ordered pass (exact without cycles),
  // timed the same way; the plan (levels, cycles) is timed separately. Memory traffic: the sweep
  // reads and writes about what one operator apply does (geometry, rhs, upwind traces, u), so the
  // apply's byte model gives its fraction of STREAM (an estimate; the local LU makes it compute-bound).
  {
    json r;
    r["plan_seconds"] = plan_seconds;
    r["levels"] = plan.num_levels();
    r["cycles"] = plan.cycles;
    r["lagged_faces"] = plan.lagged;
    r["plan_bytes"] = plan.bytes();
    std::vector<double> u(N), solve_s;
    int passes = 0;
    for (int rep = 0; rep < repeats; ++rep) {
      std::fill(u.begin(), u.end(), 0.0);
      const auto t0 = Clock::now();
      passes = tr::sweep_solve(disc, plan, kappa, rhs, u, opt.rtol).passes;
      solve_s.push_back(seconds_since(t0));
    }
    const double t = median(solve_s);
    std::vector<double> y(N);
    op.set_direction(s, kappa, BlockKind::none);
    op.apply(u, y);
    double rr = 0, rb = 0;
    for (std::size_t i = 0; i < N; ++i) rr += (rhs[i] - y[i]) * (rhs[i] - y[i]), rb += rhs[i] * rhs[i];
    const auto err = tr::error_norms(disc, u, exact);
    const double bytes = out["apply"]["bytes_per_apply"].get<double>() * passes;
    r["passes"] = passes;
    r["solve_median_seconds"] = t;
    r["solve_samples_seconds"] = solve_s;
    r["grind_ns_per_dof"] = t / static_cast<double>(N) * 1e9;
    r["relative_residual"] = std::sqrt(rr / std::max(rb, 1e-300));
    r["error"] = {{"l2", err.l2}, {"relative_l2", err.relative_l2}, {"linf", err.linf}};
    r["stream_fraction_estimate"] = bytes / t * 1e-9 / stream_gbs;
    // Local-solve flops per pass: the block (3 streaming matrices, 6 np^2), its LU (2/3 np^3) and
    // triangular solves (2 np^2), and per inflow face the LIFT columns and upwind trace (4 np nfp).
    std::size_t inflow_faces = 0;
    for (std::size_t e = 0; e < disc.num_elements(); ++e)
      for (int f = 0; f < 4; ++f) inflow_faces += tr::inflow_coefficient(disc.geometry[e], f, s) != 0.0;
    const double npd = disc.ref.num_nodes, nfpd = disc.ref.num_face_nodes;
    const double flops = passes * (static_cast<double>(disc.num_elements()) * (8 * npd * npd + 2.0 / 3.0 * npd * npd * npd) +
                                   static_cast<double>(inflow_faces) * 4 * npd * nfpd);
    r["flops_per_solve"] = flops;
    r["gflop_per_s"] = flops / t * 1e-9;
    json speedup = json::object();
    for (const auto& [name, pr] : pcs.items())
      if (pr.value("converged", false)) speedup[name] = pr["solve_median_seconds"].get<double>() / t;
    r["speedup_over_bicgstab"] = speedup;
    std::fprintf(stderr, "  %-21s %5d pass  %8.3f s  %7.1f ns/DOF  %5.1f GFLOP/s  L2 %.3e  (%zu levels, %d cycles)\n", "sweep",
                 passes, t, t / static_cast<double>(N) * 1e9, flops / t * 1e-9, err.l2, plan.num_levels(), plan.cycles);
    out["sweep"] = r;
  }
  out["rss_bytes_after"] = proc_status_bytes("VmRSS");
  out["peak_rss_bytes"] = peak_reset ? proc_status_bytes("VmHWM") : process_peak_rss();
  out["peak_rss_scope"] = peak_reset ? "this case (VmHWM reset before it)" : "process so far (getrusage)";
  return out;
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}


}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  // Gmsh (mesh_geo / read_mesh) sets the OpenMP thread count to its General.NumThreads (1) when it
  // initialises, so the count is taken here and set again after meshing.
  const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
  try {
    std::vector<MeshEntry> meshes;
    if (opt.mesh_file) {
      MeshEntry m;
      m.label = std::filesystem::path(*opt.mesh_file).filename().string();
      const auto t0 = Clock::now();
      m.mesh = dgrte::mesh::read_mesh(*opt.mesh_file);
      m.mesh_seconds = seconds_since(t0);
      meshes.push_back(std::move(m));
    } else {
      for (double h : opt.sizes) {
        MeshEntry m;
        m.label = fmt::format("cube h={}", h);
        m.size = h;
        const auto t0 = Clock::now();
        m.mesh = dgrte::mesh::mesh_geo(opt.geo, h);
        m.mesh_seconds = seconds_since(t0);
        std::fprintf(stderr, "[transport_benchmark] meshed %s: %zu tets in %.1f s\n", m.label.c_str(),
                     m.mesh.num_elements(), m.mesh_seconds);
        meshes.push_back(std::move(m));
      }
    }
    json meshes_json = json::array();
    for (const auto& m : meshes) {
      json j = {{"label", m.label}, {"elements", m.mesh.num_elements()}, {"vertices", m.mesh.vertices.size()},
                {"mesh_seconds", m.mesh_seconds}, {"source", m.mesh.source}};
      if (m.size) j["size"] = *m.size;
      meshes_json.push_back(j);
    }
    omp_set_num_threads(threads);
    if (!opt.mesh_only)
      for (std::size_t i = 0; i < meshes.size(); ++i) meshes_json[i]["s8_sweep_plans"] = s8_sweep_plans(meshes[i].mesh);
    if (opt.mesh_only) {
      std::cout << json{{"meshes", meshes_json}}.dump(2) << "\n";
      return 0;
    }

    int pargc = 1;
    char** pargv = argv;
    dgrte::transport::PetscSession petsc(&pargc, &pargv);

    utsname un{};
    uname(&un);
    json doc;
    doc["benchmark"] = "dgrte transport: manufactured solution (He et al. 2013, sec. 5), one direction";
    doc["date"] = now_iso();
    doc["host"] = {{"sysname", un.sysname}, {"release", un.release}, {"machine", un.machine},
                   {"hardware_concurrency", omp_get_num_procs()}};
    doc["threads"] = omp_get_max_threads();
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    doc["omp_wait_policy"] = wait ? json(wait) : json(nullptr);
    if (!wait && threads > 1)
      std::fprintf(stderr, "[transport_benchmark] note: OMP_WAIT_POLICY unset; on a shared machine spinning OpenMP "
                           "threads can slow the operator badly (use OMP_WAIT_POLICY=passive)\n");
    doc["load_average_at_start"] = [] {
      double l[3] = {0, 0, 0};
      return getloadavg(l, 3) == 3 ? json(std::vector<double>(l, l + 3)) : json(nullptr);
    }();
    doc["options"] = {{"orders", opt.orders},
                      {"sizes", opt.mesh_file ? json(nullptr) : json(opt.sizes)},
                      {"mesh_file", opt.mesh_file ? json(*opt.mesh_file) : json(nullptr)},
                      {"repeats", opt.repeats},
                      {"min_applies", opt.min_applies},
                      {"preconditioners", opt.preconditioners},
                      {"rtol", opt.rtol},
                      {"max_iterations", opt.max_iterations},
                      {"preconditioner_budget_bytes", opt.budget},
                      {"no_none_above", opt.no_none_above},
                      {"single_repeat_above", opt.single_repeat_above},
                      {"quick", opt.quick}};
    doc["case"] = {{"geometry", "cube [-1,1]^3 (validation/mms/cube.geo)"},
                   {"kappa", kKappa},
                   {"direction", direction()},
                   {"exact", "(1+sin(pi x/2))(1+sin(pi y/2))(1+sin(pi z/2))"},
                   {"boundary", "cold black walls (inflow = exact = 0 on the inflow faces)"},
                   {"initial_guess", "zero"}};
    doc["meshes"] = meshes_json;

    std::fprintf(stderr, "[transport_benchmark] STREAM triad, %d threads...\n", omp_get_max_threads());
    doc["stream"] = stream_triad(opt.stream_doubles, opt.stream_trials);
    const double stream_gbs = doc["stream"]["best_gb_per_s"].get<double>();
    std::fprintf(stderr, "[transport_benchmark] STREAM triad best %.2f GB/s\n", stream_gbs);

    json cases = json::array();
    const auto t_all = Clock::now();
    for (const auto& m : meshes)
      for (int p : opt.orders) {
        cases.push_back(run_case(opt, m, p, stream_gbs));
        if (!opt.out.empty()) {  // partial results survive an interrupted run
          doc["cases"] = cases;
          doc["complete"] = false;
          write_atomically(opt.out, doc.dump(2) + "\n");
        }
      }
    doc["cases"] = cases;
    doc["complete"] = true;
    doc["total_seconds"] = seconds_since(t_all);
    doc["process_peak_rss_bytes"] = process_peak_rss();

    const std::string text = doc.dump(2) + "\n";
    if (!opt.out.empty()) write_atomically(opt.out, text);
    std::cout << text;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transport_benchmark: %s\n", e.what());
    return 1;
  }
}
