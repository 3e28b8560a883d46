#pragma once
// The transport operator, its element-local solves, sweeps and a batched Bi-CGSTAB on an OpenCL
// device. Fields stay on the device during a solve; only per-column scalars (the active flags) are
// read back each iteration. Kernels (opencl/*.cl, embedded at build time) are built at run time
// with the order and sizes as constants and cached as binaries per device, driver and source.
#include "device/host_kernels.hpp"
#include "device/opencl_runtime.hpp"
#include "device/transport_data.hpp"

#include <memory>
#include <span>
#include <string>

namespace dgrte::device {

// Who does the volume term's GEMM [Dr;Ds;Dt] U: the apply kernel itself (own), or CLBlast's Gemm
// over all elements and columns at once followed by a kernel for the rest (3 n extra values per
// column of device memory; only when built with CLBlast).
enum class VolumeKernel { own, clblast };
bool clblast_available();  // built with CLBlast
std::string to_string(VolumeKernel v);

struct DeviceOptions {
  std::string device = "auto";  // see select_device
  bool single_precision = false;
  std::size_t memory_budget_bytes = 0;  // 0: 3/4 of the device's global memory
  // Work decomposition; 0 = chosen from the device (tunable per device, reported by launch_config()).
  VolumeKernel volume = VolumeKernel::own;
  int apply_elements_per_group = 0, solve_elements_per_group = 0, blas_work_group = 0, dot_groups = 0;
  // Binary cache folder: "" = $DGRTE_KERNEL_CACHE, else $XDG_CACHE_HOME/dgrte/kernels, else
  // ~/.cache/dgrte/kernels; "none" = no cache.
  std::string cache_dir;
};

enum class DevicePreconditioner { none, partial_block_jacobi, block_jacobi, sweep };

class DeviceTransport {
 public:
  // Takes the data (move it in): uploaded once, then the host copies of the large arrays are freed.
  DeviceTransport(TransportData data, const DeviceOptions& options);
  ~DeviceTransport();
  DeviceTransport(const DeviceTransport&) = delete;
  DeviceTransport& operator=(const DeviceTransport&) = delete;

  const DeviceInfo& device() const;
  bool single_precision() const;
  std::string launch_config() const;   // the build options: sizes, types, work-group shapes
  bool cache_hit() const;              // kernels loaded from the binary cache
  double build_seconds() const;        // kernel build (or cache load)
  std::size_t budget_bytes() const;
  std::size_t resident_bytes() const;  // problem arrays on the device
  // The most columns a batch may have: `vectors` device fields of num_dofs() values each per column
  // (2 for apply, 11 for Bi-CGSTAB) within the memory budget.
  std::size_t max_columns(int vectors) const;

  // New extinction coefficient at the nodes (another spectral point, another case).
  void set_sigma_t(std::span<const double> sigma_t);

  // Host arrays in and out; `directions` holds 3 values per column, fields num_dofs() per column.
  void apply(std::span<const double> directions, std::span<const double> u, std::span<double> y);
  void block_jacobi(std::span<const double> directions, bool include_sigma, std::span<const double> r,
                    std::span<double> z);
  // One sweep pass; column c follows plan plan_of_column[c] of the data; lagged faces read `lagged`
  // (empty: zero).
  void sweep(std::span<const double> directions, std::span<const int> plan_of_column, std::span<const double> rhs,
             std::span<double> u, std::span<const double> lagged = {});
  // Batched right-preconditioned Bi-CGSTAB; x holds the initial guess. plan_of_column is needed for
  // the sweep preconditioner only.
  BatchedSolve solve_bicgstab(std::span<const double> directions, DevicePreconditioner pc,
                              std::span<const int> plan_of_column, std::span<const double> b, std::span<double> x,
                              double rtol, int max_iterations);

  // Benchmarks: median seconds of `repeats` launches on device-resident fields of `columns` columns
  // (directions from the data, cycled), and the copy bandwidth (bytes read + written per second).
  double time_apply(std::size_t columns, int repeats);
  double time_block_jacobi(std::size_t columns, bool include_sigma, int repeats);
  double time_sweep(std::size_t columns, int repeats);
  double copy_bandwidth(std::size_t bytes, int repeats);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The OpenCL sources of the kernels, concatenated in build order (kernel_sources.cpp, generated
// from opencl/*.cl at build time).
const char* kernel_source();

}  // namespace dgrte::device
