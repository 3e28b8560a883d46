// dgrte-bench-device: runs the device solver core on a transport dump written by `dgrte export` and
// prints JSON timings. Needs only the C++ standard library and OpenCL, so that it builds on GPU nodes
// without dgrte's other dependencies (docs/opencl.md).
//   dgrte-bench-device problem.bin [--device auto|P:D|name] [--single] [--repeats 5]
//                      [--preconditioner partial|full|sweep|none] [--rtol 1e-8] [--host] [--no-clblast] [--list]
// On a final-gather dump (`dgrte export` of a case with output.final_gather) it times the gather's
// kernel instead: every receiver's first --rays rays (default 256) in tasks of 32, as one pass of
// the host's doubling control sends them (the transport options do not apply there). On a line-sum
// dump (`dgrte export --line-sum` of an LBL case) it times the line-by-line sum.
#include "device/device_gather.hpp"
#include "device/device_line_sum.hpp"
#include "device/device_transport.hpp"
#include "device/host_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace dgrte::device;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Args {
  std::string file, device = "auto", preconditioner = "partial";
  bool single = false, host = false, list = false, no_clblast = false;
  int repeats = 5, rays = 256;
  double rtol = 1e-8;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "dgrte-bench-device: %s\nusage: dgrte-bench-device problem.bin [--device auto|P:D|name] [--single] "
               "[--repeats N] [--preconditioner partial|full|sweep|none] [--rtol R] [--host] [--no-clblast]\n"
               "       dgrte-bench-device gather.bin [--device D] [--repeats N] [--rays N]\n"
               "       dgrte-bench-device --list\n",
               why);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + s).c_str());
      return argv[++i];
    };
    if (s == "--device") a.device = value();
    else if (s == "--single") a.single = true;
    else if (s == "--host") a.host = true;
    else if (s == "--no-clblast") a.no_clblast = true;
    else if (s == "--list") a.list = true;
    else if (s == "--repeats") a.repeats = std::stoi(value());
    else if (s == "--rays") a.rays = std::stoi(value());
    else if (s == "--rtol") a.rtol = std::stod(value());
    else if (s == "--preconditioner") a.preconditioner = value();
    else if (!s.empty() && s[0] == '-') usage(("unknown option " + s).c_str());
    else a.file = s;
  }
  if (!a.list && a.file.empty()) usage("no problem file");
  return a;
}

DevicePreconditioner preconditioner(const std::string& s) {
  if (s == "partial") return DevicePreconditioner::partial_block_jacobi;
  if (s == "full") return DevicePreconditioner::block_jacobi;
  if (s == "sweep") return DevicePreconditioner::sweep;
  if (s == "none") return DevicePreconditioner::none;
  usage(("unknown preconditioner " + s).c_str());
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

// Bytes an operator apply must move per column at the least: u read, y written, sigma_t read, the
// neighbour traces (4 N_fp per element) and the neighbour map, plus the geometry.
double apply_bytes(const TransportData& d, std::size_t real) {
  const double n = static_cast<double>(d.num_dofs()), K = static_cast<double>(d.K);
  return 3 * n * static_cast<double>(real) + K * 4 * d.nfp * (static_cast<double>(real) + 4) + K * kGeometryStride * static_cast<double>(real);
}

// The final gather's kernel on a gather dump: one pass of every receiver's first a.rays rays.
int bench_gather(const Args& a) {
  const GatherDump d = read_gather_dump(a.file);
  DeviceGather gather(d.geometry, a.device);
  gather.set_fields(d.fields);
  gather.set_receivers(d.receivers);
  const std::size_t receivers = d.receivers.integer.size() / 2;
  constexpr std::uint32_t kChunk = 32;  // as mc::final_gather's passes
  std::vector<std::uint32_t> tasks;
  std::uint64_t rays = 0;
  for (std::size_t r = 0; r < receivers; ++r) {
    const bool sphere = d.receivers.integer[2 * r + 1] != 0;
    const auto samples = static_cast<std::uint32_t>(std::max(1, sphere ? a.rays / 2 : a.rays));  // a sphere's samples are ray pairs
    rays += sphere ? 2 * samples : samples;
    for (std::uint32_t k = 0; k < samples; k += kChunk) tasks.insert(tasks.end(), {static_cast<std::uint32_t>(r), k, std::min(samples, k + kChunk)});
  }
  std::uint64_t segments = 0;
  gather.trace(tasks, 0, &segments);  // warm-up (first launch)
  std::vector<double> seconds;
  for (int i = 0; i < std::max(1, a.repeats); ++i) {
    segments = 0;
    const auto t0 = Clock::now();
    gather.trace(tasks, 0, &segments);
    seconds.push_back(seconds_since(t0));
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const auto& info = gather.info();
  std::printf("{\n  \"kind\": \"final_gather\",\n  \"device\": %s,\n  \"platform\": %s,\n  \"driver\": %s,\n", quoted(info.name).c_str(),
              quoted(info.platform).c_str(), quoted(info.driver_version).c_str());
  std::printf("  \"problem\": %s,\n  \"order\": %d,\n  \"elements\": %zu,\n  \"receivers\": %zu,\n  \"rays_per_receiver\": %d,\n",
              quoted(d.description).c_str(), d.fields.order, d.geometry.original.size(), receivers, a.rays);
  std::printf("  \"tasks\": %zu,\n  \"rays\": %llu,\n  \"segments\": %llu,\n  \"kernel_build_seconds\": %.3f,\n  \"kernel_cache_hit\": %s,\n",
              tasks.size() / 3, static_cast<unsigned long long>(rays), static_cast<unsigned long long>(segments), gather.build_seconds(),
              gather.cache_hit() ? "true" : "false");
  std::printf("  \"seconds_median\": %.6g,\n  \"repeats\": %zu,\n  \"rays_per_second\": %.6g,\n  \"segments_per_second\": %.6g\n}\n", median,
              seconds.size(), static_cast<double>(rays) / median, static_cast<double>(segments) / median);
  return 0;
}

// The line-by-line sum on a line-sum dump: --repeats calls of the whole accumulate (uploads, kernel,
// read-back) and the kernel alone; pairs = line x grid-point pairs inside the wing cut-off.
int bench_line_sum(const Args& a) {
  const LineSumDump d = read_line_sum_dump(a.file);
  DeviceLineSum sum(a.device, d.voigt);
  const auto in = d.input();
  const std::uint64_t pairs = DeviceLineSum::pairs_within_cutoff(in);
  std::vector<double> kappa(d.grid.size(), 0.0);
  sum.accumulate(in, kappa);  // warm-up
  double kmax = 0, ksum = 0;
  for (const double k : kappa) kmax = std::max(kmax, k), ksum += k;
  std::vector<double> total, kernel;
  for (int i = 0; i < std::max(1, a.repeats); ++i) {
    std::fill(kappa.begin(), kappa.end(), 0.0);
    const double k0 = sum.kernel_seconds();
    const auto t0 = Clock::now();
    sum.accumulate(in, kappa);
    total.push_back(seconds_since(t0));
    kernel.push_back(sum.kernel_seconds() - k0);
  }
  std::sort(total.begin(), total.end());
  std::sort(kernel.begin(), kernel.end());
  const double t = total[total.size() / 2], tk = kernel[kernel.size() / 2];
  const auto& info = sum.info();
  std::printf("{\n  \"kind\": \"line_sum\",\n  \"device\": %s,\n  \"platform\": %s,\n  \"driver\": %s,\n  \"problem\": %s,\n",
              quoted(info.name).c_str(), quoted(info.platform).c_str(), quoted(info.driver_version).c_str(), quoted(d.description).c_str());
  std::printf("  \"lines\": %zu,\n  \"grid_points\": %zu,\n  \"cutoff_cm\": %.6g,\n  \"pairs_within_cutoff\": %llu,\n", d.key.size(),
              d.grid.size(), d.cutoff, static_cast<unsigned long long>(pairs));
  std::printf("  \"kernel_build_seconds\": %.3f,\n  \"kernel_cache_hit\": %s,\n  \"repeats\": %zu,\n", sum.build_seconds(),
              sum.cache_hit() ? "true" : "false", total.size());
  std::printf("  \"seconds_median\": %.6g,\n  \"kernel_seconds_median\": %.6g,\n  \"pairs_per_second\": %.6g,\n"
              "  \"kernel_pairs_per_second\": %.6g,\n  \"kappa_max\": %.17g,\n  \"kappa_sum\": %.17g\n}\n",
              t, tk, static_cast<double>(pairs) / t, static_cast<double>(pairs) / tk, kmax, ksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    if (a.list) {
      for (const auto& d : list_devices())
        std::printf("%s  fp64=%d  global=%.1f GB  local=%zu KB  compute units=%u\n", d.label().c_str(), d.fp64 ? 1 : 0,
                    static_cast<double>(d.global_memory) / 1e9, d.local_memory / 1024, d.compute_units);
      return 0;
    }
    if (is_gather_dump(a.file)) return bench_gather(a);
    if (is_line_sum_dump(a.file)) return bench_line_sum(a);
    const TransportData data = read_transport_data(a.file);
    DeviceOptions opt;
    opt.device = a.device;
    opt.single_precision = a.single;
    DeviceTransport dev(data, opt);
    const std::size_t n = static_cast<std::size_t>(data.num_dofs()), M = data.num_directions();
    const std::size_t real = a.single ? 4 : 8;
    const double bandwidth = dev.copy_bandwidth(std::min<std::size_t>(std::size_t{1} << 28, dev.budget_bytes() / 4), a.repeats);
    const std::size_t cols = std::max<std::size_t>(1, std::min(M, dev.max_columns(DeviceTransport::kKrylovVectors)));
    const double t_apply = dev.time_apply(cols, a.repeats);
    const double t_partial = dev.time_block_jacobi(cols, false, a.repeats);
    const double t_full = dev.time_block_jacobi(cols, true, a.repeats);
    const double t_sweep = data.has_plans() ? dev.time_sweep(cols, a.repeats) : 0.0;
    const ElementSolve element_solve = dev.element_solve_used();
    const SweepKernel sweep_kernel = dev.sweep_kernel_used();
    // Both ways of walking the levels with stored inverses, side by side.
    double t_sweep_levels = 0, t_sweep_columns = 0, sweep_kernel_difference = -1;
    if (element_solve == ElementSolve::stored_inverses && data.has_plans()) {
      dev.set_sweep_kernel(SweepKernel::levels);
      t_sweep_levels = dev.time_sweep(cols, a.repeats);
      dev.set_sweep_kernel(SweepKernel::columns);
      t_sweep_columns = dev.time_sweep(cols, a.repeats);
      dev.set_sweep_kernel(SweepKernel::automatic);
      sweep_kernel_difference = dev.compare_sweep_kernels(cols);
    }
    const double t_invert = dev.time_invert_blocks(cols, a.repeats);
    // Krylov around the preconditioner, device-resident (item 3 of issue 30: against the bare sweep).
    int resident_iterations = 0;
    const auto pc_kind = preconditioner(a.preconditioner);
    const double t_resident = (pc_kind != DevicePreconditioner::sweep || data.has_plans())
                                  ? dev.time_bicgstab(cols, pc_kind, a.rtol, a.repeats, &resident_iterations)
                                  : 0.0;
    const ElementSolve resident_element_solve = dev.element_solve_used();
    // The same element solves refactorised at every call (the path without stored inverses).
    double t_full_refactor = 0, t_sweep_refactor = 0;
    if (element_solve == ElementSolve::stored_inverses) {
      dev.set_element_solve(ElementSolve::refactorised);
      t_full_refactor = dev.time_block_jacobi(cols, true, a.repeats);
      t_sweep_refactor = data.has_plans() ? dev.time_sweep(cols, a.repeats) : 0.0;
      dev.set_element_solve(ElementSolve::automatic);
    }
    // The volume term as one CLBlast Gemm + a kernel for the rest, on the same columns (issue 13:
    // report both); only when built with CLBlast.
    double t_apply_gemm = 0;
    std::size_t gemm_cols = 0;
    if (clblast_available() && !a.no_clblast) {
      DeviceOptions gemm_opt = opt;
      gemm_opt.volume = VolumeKernel::clblast;
      DeviceTransport gemm(data, gemm_opt);
      gemm_cols = std::min(cols, std::max<std::size_t>(1, gemm.max_columns(2)));
      t_apply_gemm = gemm.time_apply(gemm_cols, a.repeats);
    }
    auto grind = [&](double t, std::size_t c) { return t / static_cast<double>(n * c) * 1e9; };

    // The whole solve: every direction of the dump, in batches the budget allows.
    double t_solve = 0;
    long total_iterations = 0;
    int max_iterations = 0;
    std::size_t failed = 0;
    if (!data.rhs.empty()) {
      const auto pc = preconditioner(a.preconditioner);
      const auto t0 = Clock::now();
      for (std::size_t m0 = 0; m0 < M; m0 += cols) {
        const std::size_t c = std::min(cols, M - m0);
        std::vector<double> x(n * c, 0.0);
        std::vector<int> plans(c);
        for (std::size_t k = 0; k < c; ++k) plans[k] = static_cast<int>(m0 + k);
        const auto r = dev.solve_bicgstab(std::span(data.directions).subspan(3 * m0, 3 * c), pc, plans,
                                          std::span(data.rhs).subspan(n * m0, n * c), x, a.rtol, 5000);
        for (std::size_t k = 0; k < c; ++k) {
          total_iterations += r.iterations[k];
          max_iterations = std::max(max_iterations, r.iterations[k]);
          failed += r.status[k] != BicgStatus::converged;
        }
      }
      t_solve = seconds_since(t0);
    }
    double h_apply = 0, h_block = 0;
    if (a.host) {
      std::vector<double> u(n * cols, 1.0), y(n * cols);
      const std::vector<int> active(cols, 1);
      std::vector<double> dirs(3 * cols);
      for (std::size_t c = 0; c < cols; ++c) std::copy_n(data.directions.begin() + static_cast<long>(3 * (c % M)), 3, dirs.begin() + static_cast<long>(3 * c));
      auto t0 = Clock::now();
      host_apply(data, dirs, active, u, y);
      h_apply = seconds_since(t0);
      t0 = Clock::now();
      host_block_jacobi(data, false, dirs, active, u, y);
      h_block = seconds_since(t0);
    }
    const auto& info = dev.device();
    std::printf("{\n  \"device\": %s,\n  \"platform\": %s,\n  \"driver\": %s,\n  \"precision\": \"%s\",\n", quoted(info.name).c_str(),
                quoted(info.platform).c_str(), quoted(info.driver_version).c_str(), a.single ? "single" : "double");
    std::printf("  \"problem\": %s,\n  \"order\": %d,\n  \"elements\": %lld,\n  \"dofs\": %zu,\n  \"directions\": %zu,\n  \"columns_per_batch\": %zu,\n",
                quoted(data.description).c_str(), data.order, static_cast<long long>(data.K), n, M, cols);
    std::printf("  \"launch\": %s,\n  \"kernel_build_seconds\": %.3f,\n  \"kernel_cache_hit\": %s,\n", quoted(dev.launch_config()).c_str(),
                dev.build_seconds(), dev.cache_hit() ? "true" : "false");
    std::printf("  \"copy_bandwidth_GBps\": %.2f,\n", bandwidth / 1e9);
    std::printf("  \"apply\": {\"seconds\": %.6g, \"grind_ns\": %.4g, \"bandwidth_fraction\": %.3f},\n", t_apply, grind(t_apply, cols),
                apply_bytes(data, real) * static_cast<double>(cols) / t_apply / bandwidth);
    if (t_apply_gemm > 0)
      std::printf("  \"apply_clblast_gemm\": {\"seconds\": %.6g, \"grind_ns\": %.4g, \"bandwidth_fraction\": %.3f},\n", t_apply_gemm,
                  grind(t_apply_gemm, cols), apply_bytes(data, real) * static_cast<double>(cols) / t_apply_gemm / bandwidth);
    else
      std::printf("  \"apply_clblast_gemm\": null,\n");
    std::printf("  \"block_jacobi_partial\": {\"seconds\": %.6g, \"grind_ns\": %.4g},\n", t_partial, grind(t_partial, cols));
    std::printf("  \"block_jacobi_full\": {\"seconds\": %.6g, \"grind_ns\": %.4g},\n", t_full, grind(t_full, cols));
    std::printf("  \"sweep\": {\"seconds\": %.6g, \"grind_ns\": %.4g, \"levels\": %d, \"kernel\": \"%s\"},\n", t_sweep, grind(t_sweep, cols),
                data.level_stride > 0 ? data.level_stride - 1 : 0, to_string(sweep_kernel).c_str());
    if (t_sweep_levels > 0)
      std::printf("  \"sweep_kernels\": {\"levels_grind_ns\": %.4g, \"columns_grind_ns\": %.4g, \"compute_units\": %u, "
                  "\"max_relative_difference\": %.3g},\n",
                  grind(t_sweep_levels, cols), grind(t_sweep_columns, cols), dev.device().compute_units, sweep_kernel_difference);
    std::printf("  \"element_solve\": \"%s\",\n", to_string(element_solve).c_str());
    if (element_solve == ElementSolve::stored_inverses)
      std::printf("  \"stored_inverses\": {\"bytes\": %.6g, \"invert_seconds\": %.6g, \"invert_grind_ns\": %.4g, "
                  "\"block_jacobi_full_refactorised_grind_ns\": %.4g, \"sweep_refactorised_seconds\": %.6g, \"sweep_refactorised_grind_ns\": %.4g},\n",
                  static_cast<double>(data.K) * data.np * data.np * static_cast<double>(real * cols), t_invert, grind(t_invert, cols),
                  grind(t_full_refactor, cols), t_sweep_refactor, grind(t_sweep_refactor, cols));
    std::printf("  \"solve_resident\": {\"preconditioner\": \"%s\", \"element_solve\": \"%s\", \"seconds\": %.6g, \"grind_ns\": %.4g, "
                "\"iterations_max\": %d, \"over_sweep\": %.3g},\n",
                a.preconditioner.c_str(), to_string(resident_element_solve).c_str(), t_resident, grind(t_resident, cols), resident_iterations, t_sweep > 0 ? t_resident / t_sweep : 0.0);
    std::printf("  \"solve\": {\"preconditioner\": \"%s\", \"rtol\": %.3g, \"seconds\": %.6g, \"grind_ns\": %.4g, "
                "\"iterations_total\": %ld, \"iterations_max\": %d, \"not_converged\": %zu}",
                a.preconditioner.c_str(), a.rtol, t_solve, grind(t_solve, M), total_iterations, max_iterations, failed);
    if (a.host)
      std::printf(",\n  \"host_twins\": {\"apply_seconds\": %.6g, \"apply_grind_ns\": %.4g, \"block_jacobi_partial_seconds\": %.6g}", h_apply,
                  grind(h_apply, cols), h_block);
    std::printf("\n}\n");
    return failed ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dgrte-bench-device: %s\n", e.what());
    return 1;
  }
}
