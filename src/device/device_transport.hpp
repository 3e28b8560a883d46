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
#include <vector>

namespace dgrte::device {

// Who does the volume term's GEMM [Dr;Ds;Dt] U: the apply kernel itself (own), or CLBlast's Gemm
// over all elements and columns at once followed by a kernel for the rest (3 n extra values per
// column of device memory; only when built with CLBlast).
enum class VolumeKernel { own, clblast };
// How the element blocks of sweeps and block Jacobi are solved: factorised in local memory at every
// call (refactorised), or inverted once per element and column of a batch and applied as a dense
// product until the batch's directions or sigma_t change (stored_inverses: K NP^2 values per column
// of device memory); automatic stores them when they fit the budget beside the batch's fields.
enum class ElementSolve { automatic, stored_inverses, refactorised };
std::string to_string(ElementSolve s);
// How a sweep with stored inverses walks its levels: one launch per level for all columns (levels),
// or one work-group per column looping over its levels (columns: no launch per level, but only as
// many work-groups as columns); automatic picks columns when the mean level width is at most one
// chunk of the column kernel's work-group and the batch has at least `columns_per_compute_unit`
// columns per compute unit of the device.
enum class SweepKernel { automatic, levels, columns };
std::string to_string(SweepKernel k);
bool clblast_available();  // built with CLBlast
std::string to_string(VolumeKernel v);

struct DeviceOptions {
  std::string device = "auto";  // see select_device
  bool single_precision = false;
  std::size_t memory_budget_bytes = 0;  // 0: 3/4 of the device's global memory
  // Work decomposition; 0 = chosen from the device (tunable per device, reported by launch_config()).
  VolumeKernel volume = VolumeKernel::own;
  ElementSolve element_solve = ElementSolve::automatic;
  SweepKernel sweep_kernel = SweepKernel::automatic;
  double columns_per_compute_unit = 0.5;
  std::size_t gemm_slice_bytes = std::size_t{64} << 20;  // CLBlast Gemm output per call (see volume_gemm)
  int apply_elements_per_group = 0, solve_elements_per_group = 0, blas_work_group = 0, dot_groups = 0;
  int sweep_elements_per_group = 0;  // the column sweep's chunk (elements per pass over a level)
  // Binary cache folder: "" = $DGRTE_KERNEL_CACHE, else $XDG_CACHE_HOME/dgrte/kernels, else
  // ~/.cache/dgrte/kernels; "none" = no cache.
  std::string cache_dir;
};

enum class DevicePreconditioner { none, partial_block_jacobi, block_jacobi, sweep };

// How a resident batch is solved: sweeps (passes while lagged faces change by more than rtol
// relative, at most 200), or Bi-CGSTAB with `preconditioner`.
struct BatchMethod {
  bool sweep = true;
  DevicePreconditioner preconditioner = DevicePreconditioner::partial_block_jacobi;
  double rtol = 1e-12;
  int max_iterations = 5000;
};

class DeviceTransport {
 public:
  // Device fields per column a resident batch needs (within the memory budget, see max_columns).
  static constexpr int kSweepVectors = 4, kKrylovVectors = 12;

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

  // Switches the element-solve policy (benchmarks compare both on one upload).
  void set_element_solve(ElementSolve s);
  void set_sweep_kernel(SweepKernel k);
  SweepKernel sweep_kernel_used() const;  // of the last sweep (levels when it refactorised)
  // What the last sweep or full block Jacobi used (stored_inverses or refactorised), and how often
  // the inverses were computed so far.
  ElementSolve element_solve_used() const;
  int inversions() const;
  // Batched preconditioner applications (sweeps, block solves) by Bi-CGSTAB so far.
  long preconditioner_applications() const;

  // New extinction term (another spectral point, another case): sigma_t at the nodes and the element
  // blocks where it varies (TransportData::sigma_block_of / sigma_blocks; empty: none).
  void set_sigma_t(std::span<const double> sigma_t, std::span<const int> block_of = {}, std::span<const double> blocks = {});

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

  // Sweeps of every column to convergence of the lagged faces (one pass when no column's plan lags a
  // face): passes until max|u - u_previous| <= tol max|u| in every column; throws after 200 passes.
  // Returns the passes.
  int sweep_solve(std::span<const double> directions, std::span<const int> plan_of_column, std::span<const double> rhs,
                  std::span<double> u, double tol);

  // ---- The outer iteration on the device: only moments and boundary values cross the bus -------
  // Once per solve (and again when sigma_s changes): the scattering tables; the boundary faces
  // (b -> 4 e + f, the order of the host's wall model).
  void set_scattering(const ScatteringTables& tables);
  void set_boundary_faces(std::span<const int> element_face);
  // One transport sweep: begin (upload the moments, R per node; zero the accumulators), then per
  // batch: load, solve (as often as the specular coupling needs), accumulate; then finish (read
  // the new moments, and G, qx, qy, qz when `outputs` was set; otherwise pass empty spans).
  void begin_transport_sweep(std::span<const double> moments, bool outputs);
  // The batch's columns: ordinate[c] (into the tables), its direction and plan (needed by sweeps
  // and the sweep preconditioner); base = fixed_source (empty: zero) + the in-scattering of the
  // moments; `method` solves it.
  void load_batch(std::span<const double> directions, std::span<const int> ordinate, std::span<const int> plan_of_column,
                  std::span<const double> fixed_source, const BatchMethod& method);
  // rhs = base - LIFT(c g) with the wall inflow g (faces x NFP per column), solved from a zero
  // start; returns per column iterations (sweep passes) and status; traces (faces x NFP per column;
  // empty: not read back) receive the solution at the boundary face nodes. Called again after new
  // inflow (specular passes).
  BatchedSolve solve_batch(std::span<const double> inflow, std::span<double> traces);
  void read_batch_solution(std::span<double> u);  // the whole fields (only when the host keeps intensities)
  void accumulate_batch();                        // moments (and outputs) += those of the batch's solution
  void finish_transport_sweep(std::span<double> moments, std::span<double> G, std::span<double> qx, std::span<double> qy,
                              std::span<double> qz);
  // Bytes moved between host and device so far (uploads, read-backs): what the outer iteration costs.
  std::size_t bytes_to_device() const;
  std::size_t bytes_from_device() const;

  // Benchmarks: median seconds of `repeats` launches on device-resident fields of `columns` columns
  // (directions from the data, cycled), and the copy bandwidth (bytes read + written per second).
  double time_apply(std::size_t columns, int repeats);
  double time_block_jacobi(std::size_t columns, bool include_sigma, int repeats);
  double time_sweep(std::size_t columns, int repeats);
  double time_invert_blocks(std::size_t columns, int repeats);  // computing the stored inverses once
  // max over columns of max|u_levels - u_columns| / max|u_levels|: the two level walks of a sweep on
  // the same right-hand side (-1 without stored inverses), a check of the device's barriers.
  double compare_sweep_kernels(std::size_t columns);
  // Bi-CGSTAB on device-resident fields (b = 1 in every column, x = 0): what the Krylov loop costs
  // around its preconditioner, without host transfers or allocations. `iterations` receives the most
  // iterations any column took.
  double time_bicgstab(std::size_t columns, DevicePreconditioner pc, double rtol, int repeats, int* iterations = nullptr);
  double copy_bandwidth(std::size_t bytes, int repeats);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The OpenCL sources of the kernels, concatenated in build order (kernel_sources.cpp, generated
// from opencl/*.cl at build time).
const char* kernel_source();

}  // namespace dgrte::device
