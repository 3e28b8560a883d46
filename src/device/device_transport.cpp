#include "device/device_transport.hpp"

#include "device/cl_handles.hpp"
#include "device/cl_program.hpp"

#if DGRTE_HAVE_CLBLAST
#include <clblast_c.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

namespace dgrte::device {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Fields of a batch: x (the solution), b (the right-hand side), the base source of a resident batch
// (fixed source + in-scattering, kept while specular passes change the wall inflow), then the
// Bi-CGSTAB work vectors (blas1.cl) y, r, r^, p, v, s, t, p^, s^. Sweeps use kY for lagged traces.
enum Field { kX, kB, kBase, kY, kR, kRhat, kP, kV, kS, kT, kPhat, kShat, kNumFields };
static_assert(DeviceTransport::kKrylovVectors == kNumFields && DeviceTransport::kSweepVectors == kY + 1);
constexpr int kStateValues = 9;  // BICG_STATE in blas1.cl
constexpr int kSlots = 2;        // NSLOT

std::string mb(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

template <typename T>
std::vector<T> converted(std::span<const double> v) {
  return std::vector<T>(v.begin(), v.end());
}

}  // namespace

bool clblast_available() { return DGRTE_HAVE_CLBLAST != 0; }

std::string to_string(VolumeKernel v) { return v == VolumeKernel::clblast ? "clblast" : "own"; }

std::string to_string(SweepKernel k) {
  switch (k) {
    case SweepKernel::automatic: return "automatic";
    case SweepKernel::levels: return "levels";
    case SweepKernel::columns: return "columns";
  }
  return "?";
}

std::string to_string(ElementSolve s) {
  switch (s) {
    case ElementSolve::automatic: return "automatic";
    case ElementSolve::stored_inverses: return "stored inverses";
    case ElementSolve::refactorised: return "refactorised";
  }
  return "?";
}

struct DeviceTransport::Impl {
  TransportData data;  // sizes, directions and level offsets; the large arrays are freed after upload
  bool has_plans = false;
  DeviceOptions opt;
  DeviceInfo info;
  bool single = false;
  std::size_t real_size = 8, acc_size = 8;
  int apply_epg = 1, solve_epg = 1, invert_epg = 0, sweep_slots = 0, blas_wg = 256, dot_groups = 8;
  std::size_t n = 0;  // dofs per column
  std::size_t budget = 0, resident = 0;
  std::string options;
  bool cache_hit = false;
  double build_seconds = 0;

  cl_device_id dev = nullptr;
  cl::Context context;
  cl::Queue queue;
  cl::Program program;
  std::map<std::string, cl::Kernel> kernels;

  cl::Memory d_ref, lift, face_nodes, geometry, neighbour_node, sigma_t;
  cl::Memory sigma_block_of, sigma_blocks;  // the extinction's element blocks (sigma_block_of: -1 per element without)
  cl::Memory d_stacked, gradients;  // VolumeKernel::clblast: [Dr;Ds;Dt] (3 NP x NP) and its product
  cl::Memory plan_order, plan_level_begin, plan_lagged;
  std::vector<int> level_width;  // per level: the most elements any plan has in it

  // Stored inverses of the full element blocks (element_solve.cl): valid for the directions they
  // were computed with (inverse_directions) until sigma_t changes.
  cl::Memory inverses;
  std::size_t inverse_capacity = 0;  // columns
  bool inverses_ready = false;
  std::vector<double> column_directions, inverse_directions;
  ElementSolve last_element_solve = ElementSolve::refactorised;
  SweepKernel last_sweep_kernel = SweepKernel::levels;
  int inversions = 0;
  long preconditioner_applications = 0;  // batched: one per call, whatever the columns

  // Work buffers of the current batch.
  std::size_t columns = 0;
  std::array<cl::Memory, kNumFields> fields;
  int fields_allocated = 0;
  cl::Memory directions, active, status, iterations, state, partial, plan_of_column;
  std::vector<char> plan_lags;     // per plan: whether it lags a face (sweeps then need passes)
  std::vector<int> batch_plans;    // the current batch's plan of each column (host copy)
  std::size_t batch_columns = 0;
  BatchMethod batch_method;

  // The outer iteration on the device (outer_iteration.cl).
  int rank = 0, table_ordinates = 0;
  cl::Memory sigma_s, op_of_element, to_direction, to_moment, weights, s_bar;
  cl::Memory sigma_s_block_of, sigma_s_blocks;
  int faces = 0, boundary_elements = 0;
  cl::Memory element_face, boundary_element, boundary_face;
  cl::Memory moments_in, moments_out, fluxes, ordinate, inflow, traces;
  std::size_t boundary_capacity = 0;  // columns the inflow/traces/ordinate buffers hold
  bool outputs = false, sweep_open = false;

  std::size_t to_device = 0, from_device = 0;  // bytes moved

  Impl(TransportData d, const DeviceOptions& o) : data(std::move(d)), opt(o) {
    data.validate();
    has_plans = data.has_plans();
    info = select_device(o.device);
    dev = cl::device_id(info);
    single = o.single_precision;
    if (!single && !info.fp64)
      throw DeviceError(info.label() + " has no double precision (cl_khr_fp64): use solver.precision: single or another device");
    real_size = single ? 4 : 8;
    if (o.volume == VolumeKernel::clblast && !clblast_available())
      throw DeviceError("the CLBlast volume kernel was asked for, but this build has no CLBlast (install libclblast-dev and rebuild)");
    acc_size = info.fp64 ? 8 : 4;
    n = static_cast<std::size_t>(data.num_dofs());
    budget = o.memory_budget_bytes ? o.memory_budget_bytes : info.global_memory / 4 * 3;
    choose_launch_shape();
    cl_int err = CL_SUCCESS;
    context = cl::Context(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err));
    cl::check(err, "clCreateContext", info.label());
    queue = cl::Queue(clCreateCommandQueue(context.get(), dev, 0, &err));
    cl::check(err, "clCreateCommandQueue", info.label());
    build_program();
    upload_problem();
  }

  void choose_launch_shape() {
    const int np = data.np, nfp = data.nfp;
    const auto max_wg = static_cast<int>(std::min<std::size_t>(info.max_work_group, 1024));
    apply_epg = opt.apply_elements_per_group > 0 ? opt.apply_elements_per_group : std::max(1, 128 / np);
    while (apply_epg > 1 && apply_epg * np > max_wg) --apply_epg;
    const std::size_t per_element =
        static_cast<std::size_t>(np * (np + 1) + np + 4 * nfp) * real_size + static_cast<std::size_t>(np) * sizeof(int);
    if (per_element > info.local_memory)
      throw DeviceError(info.label() + ": the element block of order " + std::to_string(data.order) + " needs " +
                        std::to_string(per_element) + " bytes of local memory, the device has " +
                        std::to_string(info.local_memory) + "; use a lower order or the CPU backend");
    solve_epg = opt.solve_elements_per_group > 0 ? opt.solve_elements_per_group : std::max(1, 64 / np);
    while (solve_epg > 1 && (solve_epg * per_element > info.local_memory || solve_epg * np > max_wg)) --solve_epg;
    if (np > max_wg || apply_epg * np > max_wg || solve_epg * per_element > info.local_memory)
      throw DeviceError(info.label() + ": work-group of " + std::to_string(std::max(apply_epg, solve_epg) * np) +
                        " work-items or " + std::to_string(solve_epg * per_element) +
                        " bytes of local memory exceeds the device's limits; lower the elements per group");
    // Gauss-Jordan on [B | I] needs NP x 2 NP values per element in local memory; without room the
    // inverses are not offered (INVERT_EPG=0 compiles the kernel out).
    const std::size_t per_inverse = static_cast<std::size_t>(2 * np * np) * real_size + static_cast<std::size_t>(np) * sizeof(int);
    invert_epg = per_inverse <= info.local_memory ? std::max(1, 64 / np) : 0;
    while (invert_epg > 1 && (static_cast<std::size_t>(invert_epg) * per_inverse > info.local_memory || invert_epg * np > max_wg)) --invert_epg;
    if (invert_epg == 0 && opt.element_solve == ElementSolve::stored_inverses)
      throw DeviceError(info.label() + ": stored element inverses of order " + std::to_string(data.order) + " need " +
                        std::to_string(per_inverse) + " bytes of local memory to compute, the device has " +
                        std::to_string(info.local_memory) + "; use the automatic or refactorised element solve");
    // The column sweep's work-group: about 512 work-items, whole elements, within the local memory.
    const std::size_t per_slot = static_cast<std::size_t>(4 * nfp + np) * real_size;
    sweep_slots = opt.sweep_elements_per_group > 0 ? opt.sweep_elements_per_group : std::max(1, std::min(512, max_wg) / np);
    while (sweep_slots > 1 && sweep_slots * np > max_wg) --sweep_slots;
    while (sweep_slots > 1 && static_cast<std::size_t>(sweep_slots) * per_slot > info.local_memory) --sweep_slots;
    blas_wg = opt.blas_work_group > 0 ? opt.blas_work_group : 256;
    while (blas_wg > max_wg) blas_wg /= 2;
    if ((blas_wg & (blas_wg - 1)) != 0) throw DeviceError("blas work-group size must be a power of two");
    dot_groups = opt.dot_groups > 0 ? opt.dot_groups : static_cast<int>(std::max(1u, 4 * info.compute_units));
    std::ostringstream os;
    os << "-cl-std=CL1.2 -DNP=" << np << " -DNFP=" << nfp << " -DREAL=" << (single ? "float" : "double")
       << " -DACC=" << (acc_size == 8 ? "double" : "float") << " -DUSE_FP64=" << (info.fp64 ? 1 : 0)
       << " -DTANGENT_TOL=" << (single ? "1e-6f" : "1e-12") << " -DAPPLY_EPG=" << apply_epg << " -DSOLVE_EPG=" << solve_epg
       << " -DINVERT_EPG=" << invert_epg << " -DSWEEP_SLOTS=" << sweep_slots
       << " -DBLAS_WG=" << blas_wg << " -DDOT_GROUPS=" << dot_groups << " -DNSLOT=" << kSlots;
    options = os.str();
  }

  void build_program() {
    auto built = cl::build_program(context.get(), dev, info, kernel_source(), options, opt.cache_dir);
    program = std::move(built.program);
    cache_hit = built.cache_hit;
    build_seconds = built.seconds;
    for (const char* name : {"apply_operator", "block_jacobi", "scatter_source", "lift_inflow",
                             "gather_traces", "accumulate_moments", "max_change", "sweep_level", "dot_partial", "bicg_start", "bicg_rho",
                             "bicg_alpha", "bicg_omega", "bicg_check", "bicg_residual", "bicg_update_p", "bicg_update_s",
                             "bicg_update_xr", "bicg_half", "bicg_finish_half", "copy_columns", "stream_copy", "apply_block_inverses", "sweep_level_stored",
                             "sweep_columns_stored"})
      kernels[name] = cl::make_kernel(program, name);
    if (invert_epg > 0) kernels["invert_blocks"] = cl::make_kernel(program, "invert_blocks");
  }

  // A device buffer of `bytes`, counted against the budget; `what` names it in errors.
  cl::Memory allocate(std::size_t bytes, const char* what, std::size_t* counter = nullptr) {
    bytes = std::max<std::size_t>(bytes, 16);
    if (bytes > info.max_allocation)
      throw DeviceError(info.label() + ": " + what + " needs one buffer of " + mb(bytes) + ", the device allows " +
                        mb(info.max_allocation) + " per buffer; use fewer columns per batch or a coarser mesh");
    cl_int err = CL_SUCCESS;
    cl::Memory m(clCreateBuffer(context.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY)
      throw DeviceError(info.label() + ": out of device memory allocating " + what + " (" + mb(bytes) + "; budget " +
                        mb(budget) + ", device " + mb(info.global_memory) + ")");
    cl::check(err, "clCreateBuffer", what);
    if (counter) *counter += bytes;
    return m;
  }

  void write(const cl::Memory& m, const void* src, std::size_t bytes, const char* what) {
    if (bytes == 0) return;
    to_device += bytes;
    cl::check(clEnqueueWriteBuffer(queue.get(), m.get(), CL_TRUE, 0, bytes, src, 0, nullptr, nullptr), "clEnqueueWriteBuffer", what);
  }
  void read(const cl::Memory& m, void* dst, std::size_t bytes, const char* what) {
    if (bytes == 0) return;
    from_device += bytes;
    cl::check(clEnqueueReadBuffer(queue.get(), m.get(), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr), "clEnqueueReadBuffer", what);
  }

  // Doubles to the device in REAL.
  void write_real(const cl::Memory& m, std::span<const double> v, const char* what, std::size_t offset_values = 0) {
    if (v.empty()) return;
    cl_int err;
    to_device += v.size() * real_size;
    if (single) {
      const auto f = converted<float>(v);
      err = clEnqueueWriteBuffer(queue.get(), m.get(), CL_TRUE, offset_values * 4, f.size() * 4, f.data(), 0, nullptr, nullptr);
    } else {
      err = clEnqueueWriteBuffer(queue.get(), m.get(), CL_TRUE, offset_values * 8, v.size() * 8, v.data(), 0, nullptr, nullptr);
    }
    cl::check(err, "clEnqueueWriteBuffer", what);
  }
  void read_real(const cl::Memory& m, std::span<double> v, const char* what) {
    if (v.empty()) return;
    if (single) {
      std::vector<float> f(v.size());
      read(m, f.data(), f.size() * 4, what);
      std::copy(f.begin(), f.end(), v.begin());
    } else {
      read(m, v.data(), v.size() * 8, what);
    }
  }

  // Accumulators (ACC: double where the device has fp64) to the host.
  void read_acc(const cl::Memory& m, std::span<double> v, std::size_t offset_values, const char* what) {
    if (v.empty()) return;
    from_device += v.size() * acc_size;
    cl_int err;
    if (acc_size == 4) {
      std::vector<float> f(v.size());
      err = clEnqueueReadBuffer(queue.get(), m.get(), CL_TRUE, offset_values * 4, f.size() * 4, f.data(), 0, nullptr, nullptr);
      std::copy(f.begin(), f.end(), v.begin());
    } else {
      err = clEnqueueReadBuffer(queue.get(), m.get(), CL_TRUE, offset_values * 8, v.size() * 8, v.data(), 0, nullptr, nullptr);
    }
    cl::check(err, "clEnqueueReadBuffer", what);
  }

  // Zeroes `bytes` of m on the device (a multiple of 4; REAL and ACC zeros are all-zero bytes).
  void zero(const cl::Memory& m, std::size_t bytes, const char* what) {
    if (bytes == 0) return;
    const cl_int pattern = 0;
    cl::check(clEnqueueFillBuffer(queue.get(), m.get(), &pattern, sizeof pattern, 0, bytes, 0, nullptr, nullptr), "clEnqueueFillBuffer", what);
  }

  cl::Memory upload_real(std::span<const double> v, const char* what) {
    auto m = allocate(v.size() * real_size, what, &resident);
    write_real(m, v, what);
    return m;
  }
  template <typename T>
  cl::Memory upload(const std::vector<T>& v, const char* what) {
    auto m = allocate(v.size() * sizeof(T), what, &resident);
    write(m, v.data(), v.size() * sizeof(T), what);
    return m;
  }
  // Writes v into m, reallocating m only when its size changes (arrays that change per spectral
  // point); an empty v becomes one zero (kernels take a valid buffer).
  void put_real(cl::Memory& m, std::span<const double> v, const char* what) {
    const std::vector<double> one{0.0};
    const std::span<const double> src = v.empty() ? std::span<const double>(one) : v;
    std::size_t bytes = 0;
    if (m) cl::check(clGetMemObjectInfo(m.get(), CL_MEM_SIZE, sizeof bytes, &bytes, nullptr), "clGetMemObjectInfo");
    if (!m || bytes != std::max<std::size_t>(src.size() * real_size, 16)) m = allocate(src.size() * real_size, what, &resident);
    write_real(m, src, what);
  }
  // Per-element block indices (empty: -1 for every element) and the blocks.
  void put_blocks(cl::Memory& index, cl::Memory& blocks, std::span<const int> block_of, std::span<const double> values,
                  const char* what) {
    const auto K = static_cast<std::size_t>(data.K);
    if (!block_of.empty() && block_of.size() != K) throw DeviceError(std::string(what) + ": one block index per element expected");
    const std::vector<int> none(K, -1);
    const std::span<const int> src = block_of.empty() ? std::span<const int>(none) : block_of;
    if (!index) index = allocate(K * sizeof(int), what, &resident);
    write(index, src.data(), K * sizeof(int), what);
    put_real(blocks, values, what);
  }

  void upload_problem() {
    d_ref = upload_real(data.d_ref, "reference matrices");
    if (opt.volume == VolumeKernel::clblast) {
      // Dr|Ds|Dt (each NP x NP column-major) stacked into one 3 NP x NP column-major matrix.
      const auto np = static_cast<std::size_t>(data.np);
      std::vector<double> stacked(3 * np * np);
      for (std::size_t d = 0; d < 3; ++d)
        for (std::size_t j = 0; j < np; ++j)
          for (std::size_t i = 0; i < np; ++i) stacked[j * 3 * np + d * np + i] = data.d_ref[d * np * np + j * np + i];
      d_stacked = upload_real(stacked, "stacked reference matrices");
    }
    lift = upload_real(data.lift, "lift matrix");
    face_nodes = upload(data.face_nodes, "face nodes");
    geometry = upload_real(data.geometry, "element geometry");
    neighbour_node = upload(data.neighbour_node, "neighbour map");
    sigma_t = upload_real(data.sigma_t, "extinction coefficient");
    put_blocks(sigma_block_of, sigma_blocks, data.sigma_block_of, data.sigma_blocks, "extinction blocks");
    if (has_plans) {
      plan_order = upload(data.plan_order, "sweep orders");
      plan_level_begin = upload(data.plan_level_begin, "sweep levels");
      plan_lagged = upload(data.plan_lagged, "lagged faces");
      const auto K = static_cast<std::size_t>(data.K);
      plan_lags.assign(data.num_directions(), 0);
      for (std::size_t m = 0; m < plan_lags.size(); ++m)
        plan_lags[m] = std::any_of(data.plan_lagged.begin() + static_cast<long>(m * K), data.plan_lagged.begin() + static_cast<long>((m + 1) * K),
                                   [](std::uint8_t b) { return b != 0; });
      const auto M = data.num_directions();
      level_width.assign(static_cast<std::size_t>(data.level_stride - 1), 0);
      for (std::size_t m = 0; m < M; ++m)
        for (int l = 0; l + 1 < data.level_stride; ++l) {
          const int* lb = data.plan_level_begin.data() + m * static_cast<std::size_t>(data.level_stride);
          level_width[static_cast<std::size_t>(l)] = std::max(level_width[static_cast<std::size_t>(l)], lb[l + 1] - lb[l]);
        }
    }
    if (resident > budget)
      throw DeviceError(info.label() + ": the problem arrays need " + mb(resident) + " of device memory, the budget is " +
                        mb(budget));
    for (auto* v : {&data.d_ref, &data.lift, &data.geometry, &data.sigma_t, &data.sigma_blocks, &data.rhs}) std::vector<double>().swap(*v);
    for (auto* v : {&data.neighbour_node, &data.plan_order, &data.face_nodes, &data.sigma_block_of}) std::vector<int>().swap(*v);
    std::vector<std::uint8_t>().swap(data.plan_lagged);
  }

  std::size_t column_bytes(int vectors) const { return static_cast<std::size_t>(vectors) * n * real_size; }
  int gradient_vectors() const { return opt.volume == VolumeKernel::clblast ? 3 : 0; }

  std::size_t max_columns(int vectors) const {
    const std::size_t per = column_bytes(vectors + gradient_vectors()) + kStateValues * acc_size + kSlots * static_cast<std::size_t>(dot_groups) * acc_size + 64;
    const std::size_t by_budget = budget > resident ? (budget - resident) / per : 0;
    // Each field (and the CLBlast gradients) is one buffer over all columns: within the device's
    // largest allocation too.
    const std::size_t by_buffer = info.max_allocation / column_bytes(std::max(1, gradient_vectors()));
    return std::min(by_budget, by_buffer);
  }

  // Work buffers for `cols` columns and `vectors` fields; reallocated only when they grow.
  void reserve(std::size_t cols, int vectors, const char* purpose) {
    if (cols == 0) throw DeviceError("no columns to solve");
    if (cols <= columns && vectors <= fields_allocated) return;
    const std::size_t need = std::max(cols, columns);
    const int nv = std::max(vectors, fields_allocated);
    if (need > max_columns(nv))
      throw DeviceError(info.label() + ": " + purpose + " of " + std::to_string(need) + " columns needs " +
                        mb(need * column_bytes(nv + gradient_vectors())) + " of device memory (" +
                        std::to_string(nv + gradient_vectors()) + " fields of " +
                        std::to_string(n) + " values per column) beyond the " + mb(resident) + " of problem data; the budget is " +
                        mb(budget) + ": solve fewer columns per batch (at most " + std::to_string(max_columns(nv)) + ")");
    for (auto& f : fields) f.reset();
    drop_inverses();  // recomputed when they still fit beside the larger batch
    for (int v = 0; v < nv; ++v) fields[static_cast<std::size_t>(v)] = allocate(column_bytes(1) * need, "a field batch");
    gradients.reset();
    if (gradient_vectors() > 0) gradients = allocate(column_bytes(gradient_vectors()) * need, "reference gradients (CLBlast)");
    directions = allocate(need * 3 * real_size, "directions");
    active = allocate(need * sizeof(cl_int), "column flags");
    status = allocate(need * sizeof(cl_int), "column status");
    iterations = allocate(need * sizeof(cl_int), "iteration counts");
    state = allocate(need * kStateValues * acc_size, "Bi-CGSTAB scalars");
    partial = allocate(need * kSlots * static_cast<std::size_t>(dot_groups) * acc_size, "dot partials");
    plan_of_column = allocate(need * sizeof(cl_int), "plan of each column");
    columns = need;
    fields_allocated = nv;
  }

  void set_columns(std::span<const double> dirs, std::size_t cols) {
    if (dirs.size() != 3 * cols) throw DeviceError("directions: expected 3 values per column");
    write_real(directions, dirs, "directions");
    column_directions.assign(dirs.begin(), dirs.end());
    reset_flags(cols);
  }

  void set_plans(std::span<const int> plans, std::size_t cols) {
    if (!has_plans) throw DeviceError("the sweep needs sweep plans in the transport data (dgrte export writes them)");
    if (plans.size() != cols) throw DeviceError("plan_of_column: one plan per column");
    for (int p : plans)
      if (p < 0 || static_cast<std::size_t>(p) >= data.num_directions()) throw DeviceError("plan_of_column: no plan " + std::to_string(p));
    write(plan_of_column, plans.data(), cols * sizeof(cl_int), "plan of each column");
    batch_plans.assign(plans.begin(), plans.end());
  }

  void reset_flags(std::size_t cols) {
    const std::vector<cl_int> ones(cols, 1), zeros(cols, 0);
    write(active, ones.data(), cols * sizeof(cl_int), "column flags");
    write(status, zeros.data(), cols * sizeof(cl_int), "column status");
    write(iterations, zeros.data(), cols * sizeof(cl_int), "iteration counts");
  }

  // ---- launches -------------------------------------------------------------------------------
  template <typename... Args>
  void launch(const char* name, std::size_t g0, std::size_t g1, std::size_t l0, std::size_t l1, const Args&... args) {
    cl_kernel k = kernels.at(name).get();
    cl_uint index = 0;
    auto set = [&](const auto& a) {
      using A = std::decay_t<decltype(a)>;
      cl_int err;
      if constexpr (std::is_same_v<A, cl::Memory>) {
        cl_mem m = a.get();
        err = clSetKernelArg(k, index, sizeof(cl_mem), &m);
      } else {
        err = clSetKernelArg(k, index, sizeof(A), &a);
      }
      cl::check(err, "clSetKernelArg", std::string(name) + " argument " + std::to_string(index));
      ++index;
    };
    (set(args), ...);
    const std::size_t global[2] = {(g0 + l0 - 1) / l0 * l0, g1}, local[2] = {l0, l1};
    const cl_int err = clEnqueueNDRangeKernel(queue.get(), k, l1 ? 2 : 1, nullptr, global, local, 0, nullptr, nullptr);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES)
      throw DeviceError(info.label() + ": out of device resources launching " + name + " (device memory in use " +
                        mb(resident + columns * column_bytes(fields_allocated + gradient_vectors())) + ", budget " + mb(budget) + ")");
    cl::check(err, "clEnqueueNDRangeKernel", name);
  }
  void launch_columns(const char* name, std::size_t work, std::size_t local, std::size_t cols, const auto&... args) {
    launch(name, work, cols, local, 1, args...);
  }
  void launch_scalars(const char* name, std::size_t cols, const auto&... args) { launch(name, cols, 0, 1, 0, args...); }

  cl_long n_long() const { return static_cast<cl_long>(n); }
  cl_int K_int() const { return static_cast<cl_int>(data.K); }

  void apply(const cl::Memory& u, const cl::Memory& y, std::size_t cols) {
    const auto np = static_cast<std::size_t>(data.np);
    const std::size_t groups = (static_cast<std::size_t>(data.K) + static_cast<std::size_t>(apply_epg) - 1) / static_cast<std::size_t>(apply_epg);
    const std::size_t work = groups * static_cast<std::size_t>(apply_epg) * np, local = static_cast<std::size_t>(apply_epg) * np;
    const bool gemm = opt.volume == VolumeKernel::clblast;
    if (gemm) volume_gemm(u, cols);
    launch_columns("apply_operator", work, local, cols, K_int(), n_long(), directions, geometry, neighbour_node, face_nodes, d_ref,
                   gemm ? gradients : d_ref, cl_int(gemm ? 1 : 0), lift, sigma_t, sigma_block_of, sigma_blocks, active, u, y);  // d_ref: any buffer when unused
  }

  // gradients = [Dr;Ds;Dt] U over every element and column (U: NP x K cols, column-major = the
  // field layout). Converged columns are multiplied too: one GEMM is cheaper than a gather.
  void volume_gemm([[maybe_unused]] const cl::Memory& u, [[maybe_unused]] std::size_t cols) {
#if DGRTE_HAVE_CLBLAST
    const auto np = static_cast<std::size_t>(data.np), elements = static_cast<std::size_t>(data.K) * cols;
    cl_command_queue q = queue.get();
    // In slices of at most 64 MB of output: CLBlast's indirect Gemm copies B and C into padded
    // temporaries, and a temporary it cannot allocate aborts the process (a throw from a deleter
    // inside CLBlast 1.5, seen at 180k tets P3 x 16 columns on PoCL) instead of returning a status.
    const std::size_t slice = std::max<std::size_t>(1, opt.gemm_slice_bytes / (3 * np * real_size));
    for (std::size_t e0 = 0; e0 < elements; e0 += slice) {
      const std::size_t len = std::min(slice, elements - e0);
      const CLBlastStatusCode status =
          single ? CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, 3 * np, len, np, 1.0f, d_stacked.get(), 0,
                                3 * np, u.get(), e0 * np, np, 0.0f, gradients.get(), e0 * 3 * np, 3 * np, &q, nullptr)
                 : CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, 3 * np, len, np, 1.0, d_stacked.get(), 0,
                                3 * np, u.get(), e0 * np, np, 0.0, gradients.get(), e0 * 3 * np, 3 * np, &q, nullptr);
      if (status != CLBlastSuccess)
        throw DeviceError(info.label() + ": CLBlast Gemm of the volume term failed with status " + std::to_string(static_cast<int>(status)) +
                          " (" + std::to_string(3 * np) + " x " + std::to_string(len) + " x " + std::to_string(np) + ")");
    }
#else
    throw DeviceError("built without CLBlast");
#endif
  }
  // ---- stored inverses -------------------------------------------------------------------------
  std::size_t inverse_bytes(std::size_t cols) const {
    return cols * static_cast<std::size_t>(data.K) * static_cast<std::size_t>(data.np * data.np) * real_size;
  }
  // Whether solves of `cols` columns use stored inverses: asked for, or automatic and within the
  // budget beside the problem arrays and the batch's fields (and within one buffer).
  // Stored inverses that are not used are freed (device memory for the fields instead).
  bool use_inverses(std::size_t cols) {
    if (opt.element_solve == ElementSolve::refactorised || invert_epg == 0) {
      drop_inverses();
      return false;
    }
    const std::size_t bytes = inverse_bytes(cols);
    const std::size_t in_use = resident + columns * column_bytes(fields_allocated + gradient_vectors());
    const bool fits = bytes <= info.max_allocation && in_use + bytes <= budget;
    if (!fits && opt.element_solve == ElementSolve::stored_inverses)
      throw DeviceError(info.label() + ": stored element inverses for " + std::to_string(cols) + " columns need " + mb(bytes) +
                        " beside " + mb(in_use) + " in use (budget " + mb(budget) + ", largest buffer " + mb(info.max_allocation) +
                        "): use fewer columns per batch or the refactorised element solve");
    if (!fits) drop_inverses();
    return fits;
  }
  // The inverses of the batch's first `cols` columns, computed when the directions or sigma_t changed.
  void ensure_inverses(std::size_t cols) {
    const auto dirs = std::span<const double>(column_directions).first(3 * cols);
    if (inverses_ready && inverse_capacity >= cols && inverse_directions.size() == dirs.size() &&
        std::equal(dirs.begin(), dirs.end(), inverse_directions.begin()))
      return;
    if (inverse_capacity < cols) {
      drop_inverses();  // first: a failed allocation leaves no stale state behind
      inverses = allocate(inverse_bytes(cols), "stored element inverses");
      inverse_capacity = cols;
    }
    inverses_ready = false;  // until the launch below is queued
    const auto np = static_cast<std::size_t>(data.np), epg = static_cast<std::size_t>(invert_epg);
    const std::size_t groups = (static_cast<std::size_t>(data.K) + epg - 1) / epg;
    launch_columns("invert_blocks", groups * epg * np, epg * np, cols, K_int(), directions, geometry, face_nodes, d_ref, lift,
                   sigma_t, sigma_block_of, sigma_blocks, inverses);
    inverse_directions.assign(dirs.begin(), dirs.end());
    inverses_ready = true;
    ++inversions;
  }
  void drop_inverses() {
    inverses.reset();
    inverse_capacity = 0;
    inverses_ready = false;
  }

  void block_jacobi(bool include_sigma, const cl::Memory& r, const cl::Memory& z, std::size_t cols) {
    const auto np = static_cast<std::size_t>(data.np);
    if (include_sigma && use_inverses(cols)) {
      ensure_inverses(cols);
      last_element_solve = ElementSolve::stored_inverses;
      const auto epg = static_cast<std::size_t>(apply_epg);
      const std::size_t groups = (static_cast<std::size_t>(data.K) + epg - 1) / epg;
      launch_columns("apply_block_inverses", groups * epg * np, epg * np, cols, K_int(), n_long(), inverses, active, r, z);
      return;
    }
    if (include_sigma) last_element_solve = ElementSolve::refactorised;
    const std::size_t groups = (static_cast<std::size_t>(data.K) + static_cast<std::size_t>(solve_epg) - 1) / static_cast<std::size_t>(solve_epg);
    launch_columns("block_jacobi", groups * static_cast<std::size_t>(solve_epg) * np, static_cast<std::size_t>(solve_epg) * np, cols,
                   K_int(), n_long(), cl_int(include_sigma ? 1 : 0), directions, geometry, face_nodes, d_ref, lift, sigma_t, sigma_block_of, sigma_blocks, active, r, z);
  }
  void sweep(const cl::Memory& rhs, const cl::Memory& u, std::size_t cols, bool has_lagged) {
    const auto np = static_cast<std::size_t>(data.np), epg = static_cast<std::size_t>(solve_epg);
    const cl::Memory& lag = has_lagged ? F(kY) : rhs;  // any valid buffer when unused
    if (use_inverses(cols)) {
      ensure_inverses(cols);
      last_element_solve = ElementSolve::stored_inverses;
      // Automatic: one group per column pays off when launches dominate, i.e. a level is at most one
      // group's chunk on average (P1 on the H100, 80 columns, 22,757 tets: 0.20 against 0.26-0.55 ns
      // per DOF x direction by levels, whose ~9 us launches vary from run to run), and the columns fill
      // the device; with wider levels the levels' launches carry more parallelism (P2-P4: 0.13-0.16 by
      // levels against 0.18-0.30 by columns). benchmarks/results/gpu-h100-2026-11-27-stored-inverses.
      const double mean_width = static_cast<double>(data.K) / std::max(1, data.level_stride - 1);
      const bool by_columns = opt.sweep_kernel == SweepKernel::columns ||
                              (opt.sweep_kernel == SweepKernel::automatic && mean_width <= sweep_slots &&
                               static_cast<double>(cols) >= opt.columns_per_compute_unit * static_cast<double>(info.compute_units));
      last_sweep_kernel = by_columns ? SweepKernel::columns : SweepKernel::levels;
      if (by_columns) {
        const auto wg = static_cast<std::size_t>(sweep_slots) * np;
        launch("sweep_columns_stored", cols * wg, 0, wg, 0, K_int(), n_long(), cl_int(data.level_stride - 1), cl_int(data.level_stride),
               plan_of_column, plan_level_begin, plan_order, plan_lagged, cl_int(has_lagged ? 1 : 0), lag, directions, geometry,
               neighbour_node, lift, inverses, active, rhs, u);
        return;
      }
      const auto aepg = static_cast<std::size_t>(apply_epg);
      for (int l = 0; l + 1 < data.level_stride; ++l) {
        const auto width = static_cast<std::size_t>(level_width[static_cast<std::size_t>(l)]);
        if (width == 0) continue;
        launch_columns("sweep_level_stored", (width + aepg - 1) / aepg * aepg * np, aepg * np, cols, K_int(), n_long(), cl_int(l),
                       cl_int(data.level_stride), plan_of_column, plan_level_begin, plan_order, plan_lagged,
                       cl_int(has_lagged ? 1 : 0), lag, directions, geometry, neighbour_node, lift, inverses, active, rhs, u);
      }
      return;
    }
    last_element_solve = ElementSolve::refactorised;
    last_sweep_kernel = SweepKernel::levels;
    for (int l = 0; l + 1 < data.level_stride; ++l) {
      const auto width = static_cast<std::size_t>(level_width[static_cast<std::size_t>(l)]);
      if (width == 0) continue;
      launch_columns("sweep_level", (width + epg - 1) / epg * epg * np, epg * np, cols, K_int(), n_long(), cl_int(l),
                     cl_int(data.level_stride), plan_of_column, plan_level_begin, plan_order, plan_lagged,
                     cl_int(has_lagged ? 1 : 0), lag, directions, geometry, neighbour_node, face_nodes, d_ref, lift, sigma_t,
                     sigma_block_of, sigma_blocks, active, rhs, u);
    }
  }
  void precondition(DevicePreconditioner pc, const cl::Memory& r, const cl::Memory& z, std::size_t cols) {
    ++preconditioner_applications;
    switch (pc) {
      case DevicePreconditioner::none: launch_columns("copy_columns", vector_work(), static_cast<std::size_t>(blas_wg), cols, n_long(), active, r, z); return;
      case DevicePreconditioner::partial_block_jacobi: block_jacobi(false, r, z, cols); return;
      case DevicePreconditioner::block_jacobi: block_jacobi(true, r, z, cols); return;
      case DevicePreconditioner::sweep: sweep(r, z, cols, false); return;
    }
  }
  std::size_t vector_work() const {
    return std::min<std::size_t>(static_cast<std::size_t>(dot_groups) * static_cast<std::size_t>(blas_wg) * 4,
                                 (n + static_cast<std::size_t>(blas_wg) - 1) / static_cast<std::size_t>(blas_wg) * static_cast<std::size_t>(blas_wg));
  }
  void dot(const cl::Memory& a, const cl::Memory& b, int slot, std::size_t cols) {
    launch_columns("dot_partial", static_cast<std::size_t>(dot_groups) * static_cast<std::size_t>(blas_wg), static_cast<std::size_t>(blas_wg), cols,
                   n_long(), cl_int(slot), active, a, b, partial);
  }
  const cl::Memory& F(Field f) const { return fields[f]; }

  // zero_guess: x = 0 on entry, so A x = 0 is not computed (PETSc's default zero initial guess).
  BatchedSolve bicgstab(DevicePreconditioner pc, std::size_t cols, double rtol, int max_iterations, bool zero_guess) {
    const auto wg = static_cast<std::size_t>(blas_wg), work = vector_work();
    if (zero_guess) zero(F(kY), cols * column_bytes(1), "A x of the zero guess");
    else apply(F(kX), F(kY), cols);
    launch_columns("bicg_residual", work, wg, cols, n_long(), active, F(kB), F(kY), F(kR), F(kRhat), F(kP), F(kV));
    dot(F(kB), F(kB), 0, cols);
    dot(F(kR), F(kR), 1, cols);
    if (acc_size == 8) launch_scalars("bicg_start", cols, rtol, state, partial, active, status);
    else launch_scalars("bicg_start", cols, static_cast<float>(rtol), state, partial, active, status);
    std::vector<cl_int> flags(cols);
    for (int it = 0; it < max_iterations; ++it) {
      read(active, flags.data(), cols * sizeof(cl_int), "column flags");
      if (std::none_of(flags.begin(), flags.end(), [](cl_int a) { return a != 0; })) break;
      dot(F(kR), F(kRhat), 0, cols);
      launch_scalars("bicg_rho", cols, state, partial, active, status);
      launch_columns("bicg_update_p", work, wg, cols, n_long(), active, state, F(kR), F(kV), F(kP));
      precondition(pc, F(kP), F(kPhat), cols);
      apply(F(kPhat), F(kV), cols);
      dot(F(kV), F(kRhat), 0, cols);
      launch_scalars("bicg_alpha", cols, state, partial, active, status);
      launch_columns("bicg_update_s", work, wg, cols, n_long(), active, state, F(kR), F(kV), F(kS));
      dot(F(kS), F(kS), 0, cols);
      launch_scalars("bicg_half", cols, state, partial, active, status, iterations, cl_int(it + 1));
      launch_columns("bicg_finish_half", work, wg, cols, n_long(), cl_int(it + 1), state, F(kPhat), F(kX));
      read(active, flags.data(), cols * sizeof(cl_int), "column flags");
      if (std::none_of(flags.begin(), flags.end(), [](cl_int a) { return a != 0; })) break;
      precondition(pc, F(kS), F(kShat), cols);
      apply(F(kShat), F(kT), cols);
      dot(F(kT), F(kS), 0, cols);
      dot(F(kT), F(kT), 1, cols);
      launch_scalars("bicg_omega", cols, state, partial, active);
      launch_columns("bicg_update_xr", work, wg, cols, n_long(), active, state, F(kPhat), F(kShat), F(kS), F(kT), F(kX), F(kR));
      dot(F(kR), F(kR), 0, cols);
      launch_scalars("bicg_check", cols, state, partial, active, status, iterations);
    }
    BatchedSolve out;
    std::vector<cl_int> st(cols), its(cols);
    read(status, st.data(), cols * sizeof(cl_int), "column status");
    read(iterations, its.data(), cols * sizeof(cl_int), "iteration counts");
    std::vector<double> scalars(cols * kStateValues);
    if (acc_size == 8) {
      read(state, scalars.data(), scalars.size() * 8, "Bi-CGSTAB scalars");
    } else {
      std::vector<float> f(scalars.size());
      read(state, f.data(), f.size() * 4, "Bi-CGSTAB scalars");
      std::copy(f.begin(), f.end(), scalars.begin());
    }
    for (std::size_t c = 0; c < cols; ++c) {
      out.iterations.push_back(its[c]);
      out.status.push_back(st[c] == 0 ? BicgStatus::iteration_limit : static_cast<BicgStatus>(st[c]));
      out.residual_norm.push_back(scalars[c * kStateValues + 5]);
      out.rhs_norm.push_back(scalars[c * kStateValues + 7]);
    }
    return out;
  }

  // Sweeps of b = F(kB) into x = F(kX) (zero start), the plans set: one pass without lagged faces,
  // else passes (lagged faces reading the previous pass, kept in F(kY)) until every column's
  // max|x - previous| <= tol max|x|. Only DOT_GROUPS partial maxima per column cross the bus.
  // max over the columns of max|a - b| / max|a| (max_change, reduced on the device; only DOT_GROUPS
  // partial maxima per column cross the bus).
  double worst_relative_change(const cl::Memory& a, const cl::Memory& b, std::size_t cols) {
    const auto wg = static_cast<std::size_t>(blas_wg);
    std::vector<double> partials(cols * kSlots * static_cast<std::size_t>(dot_groups));
    launch_columns("max_change", static_cast<std::size_t>(dot_groups) * wg, wg, cols, n_long(), active, a, b, partial);
    read_acc(partial, partials, 0, "column changes");
    double worst = 0;
    for (std::size_t c = 0; c < cols; ++c) {
      const double* p = partials.data() + c * kSlots * static_cast<std::size_t>(dot_groups);
      const double change = *std::max_element(p, p + dot_groups), size = *std::max_element(p + dot_groups, p + 2 * dot_groups);
      worst = std::max(worst, size > 0 ? change / size : change);
    }
    return worst;
  }

  int resident_sweeps(std::size_t cols, double tol) {
    bool lags = false;
    for (int p : batch_plans) lags = lags || plan_lags[static_cast<std::size_t>(p)];
    zero(F(kX), cols * column_bytes(1), "sweep start");
    if (!lags) {
      sweep(F(kB), F(kX), cols, false);
      return 1;
    }
    zero(F(kY), cols * column_bytes(1), "lagged traces");
    for (int passes = 1; passes <= 200; ++passes) {
      sweep(F(kB), F(kX), cols, true);
      if (worst_relative_change(F(kX), F(kY), cols) <= tol) return passes;
      launch_columns("copy_columns", vector_work(), static_cast<std::size_t>(blas_wg), cols, n_long(), active, F(kX), F(kY));
    }
    throw DeviceError(info.label() + ": sweeps: the lagged faces did not converge in 200 passes; use solver.inner: bicgstab");
  }

  std::size_t node_work() const { return (n + static_cast<std::size_t>(blas_wg) - 1) / static_cast<std::size_t>(blas_wg) * static_cast<std::size_t>(blas_wg); }

  // Inflow, traces and ordinate buffers for `cols` columns (small: boundary values).
  void reserve_boundary(std::size_t cols) {
    if (cols <= boundary_capacity) return;
    const std::size_t values = static_cast<std::size_t>(faces) * static_cast<std::size_t>(data.nfp) * cols;
    inflow = allocate(values * real_size, "wall inflow");
    traces = allocate(values * real_size, "boundary traces");
    ordinate = allocate(cols * sizeof(cl_int), "ordinate of each column");
    boundary_capacity = cols;
  }

  double median_seconds(int repeats, const auto& run) {
    run();  // warm-up
    cl::check(clFinish(queue.get()), "clFinish");
    std::vector<double> t;
    for (int r = 0; r < std::max(1, repeats); ++r) {
      const auto t0 = Clock::now();
      run();
      cl::check(clFinish(queue.get()), "clFinish");
      t.push_back(seconds_since(t0));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

  // Columns with the data's directions (cycled) and the matching plans, fields filled with ones.
  void prepare_benchmark(std::size_t cols, int vectors) {
    reserve(cols, vectors, "a benchmark batch");
    std::vector<double> dirs(3 * cols);
    std::vector<int> plans(cols);
    const std::size_t M = std::max<std::size_t>(1, data.num_directions());
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t m = c % M;
      plans[c] = static_cast<int>(m);
      for (int k = 0; k < 3; ++k)
        dirs[3 * c + static_cast<std::size_t>(k)] = data.directions.empty() ? (k == 0 ? 1.0 : 0.0) : data.directions[3 * m + static_cast<std::size_t>(k)];
    }
    set_columns(dirs, cols);
    if (has_plans) set_plans(plans, cols);
    const std::vector<double> ones(n * cols, 1.0);
    for (int v = 0; v < vectors; ++v) write_real(fields[static_cast<std::size_t>(v)], ones, "benchmark field");
  }
};

DeviceTransport::DeviceTransport(TransportData data, const DeviceOptions& options)
    : impl_(std::make_unique<Impl>(std::move(data), options)) {}
DeviceTransport::~DeviceTransport() = default;

const DeviceInfo& DeviceTransport::device() const { return impl_->info; }
bool DeviceTransport::single_precision() const { return impl_->single; }
std::string DeviceTransport::launch_config() const {
  return impl_->options + (impl_->opt.volume == VolumeKernel::clblast ? " +CLBlast Gemm volume term" : "");
}
bool DeviceTransport::cache_hit() const { return impl_->cache_hit; }
double DeviceTransport::build_seconds() const { return impl_->build_seconds; }
std::size_t DeviceTransport::budget_bytes() const { return impl_->budget; }
std::size_t DeviceTransport::resident_bytes() const { return impl_->resident; }
std::size_t DeviceTransport::max_columns(int vectors) const { return impl_->max_columns(vectors); }

void DeviceTransport::set_sigma_t(std::span<const double> sigma_t, std::span<const int> block_of, std::span<const double> blocks) {
  impl_->inverses_ready = false;  // first: whatever happens below, the stored inverses are stale
  if (sigma_t.size() != impl_->n) throw DeviceError("set_sigma_t: one value per node expected");
  if (!block_of.empty() && block_of.size() != static_cast<std::size_t>(impl_->data.K))
    throw DeviceError("set_sigma_t: one block index per element expected");
  impl_->write_real(impl_->sigma_t, sigma_t, "extinction coefficient");
  impl_->put_blocks(impl_->sigma_block_of, impl_->sigma_blocks, block_of, blocks, "extinction blocks");
}

void DeviceTransport::set_element_solve(ElementSolve s) {
  auto& d = *impl_;
  if (s == ElementSolve::stored_inverses && d.invert_epg == 0)
    throw DeviceError(d.info.label() + ": stored element inverses do not fit the device's local memory at order " + std::to_string(d.data.order));
  d.opt.element_solve = s;
}
ElementSolve DeviceTransport::element_solve_used() const { return impl_->last_element_solve; }
void DeviceTransport::set_sweep_kernel(SweepKernel k) { impl_->opt.sweep_kernel = k; }
SweepKernel DeviceTransport::sweep_kernel_used() const { return impl_->last_sweep_kernel; }
int DeviceTransport::inversions() const { return impl_->inversions; }
long DeviceTransport::preconditioner_applications() const { return impl_->preconditioner_applications; }

namespace {
void expect_columns(std::span<const double> v, std::size_t n, std::size_t cols, const char* what) {
  if (v.size() != n * cols) throw DeviceError(std::string(what) + ": expected " + std::to_string(cols) + " columns of " + std::to_string(n) + " values");
}
}  // namespace

void DeviceTransport::apply(std::span<const double> directions, std::span<const double> u, std::span<double> y) {
  auto& d = *impl_;
  const std::size_t cols = directions.size() / 3;
  expect_columns(u, d.n, cols, "apply: u");
  expect_columns(y, d.n, cols, "apply: y");
  d.reserve(cols, 2, "an operator apply");
  d.set_columns(directions, cols);
  d.write_real(d.fields[kX], u, "u");
  d.apply(d.F(kX), d.F(kB), cols);
  d.read_real(d.F(kB), y, "y");
}

void DeviceTransport::block_jacobi(std::span<const double> directions, bool include_sigma, std::span<const double> r,
                                   std::span<double> z) {
  auto& d = *impl_;
  const std::size_t cols = directions.size() / 3;
  expect_columns(r, d.n, cols, "block_jacobi: r");
  expect_columns(z, d.n, cols, "block_jacobi: z");
  d.reserve(cols, 2, "a block-Jacobi solve");
  d.set_columns(directions, cols);
  d.write_real(d.fields[kX], r, "r");
  d.block_jacobi(include_sigma, d.F(kX), d.F(kB), cols);
  d.read_real(d.F(kB), z, "z");
}

void DeviceTransport::sweep(std::span<const double> directions, std::span<const int> plan_of_column,
                            std::span<const double> rhs, std::span<double> u, std::span<const double> lagged) {
  auto& d = *impl_;
  const std::size_t cols = directions.size() / 3;
  expect_columns(rhs, d.n, cols, "sweep: rhs");
  expect_columns(u, d.n, cols, "sweep: u");
  d.reserve(cols, lagged.empty() ? 2 : kSweepVectors, "a sweep");
  d.set_columns(directions, cols);
  d.set_plans(plan_of_column, cols);
  d.write_real(d.fields[kB], rhs, "rhs");
  d.write_real(d.fields[kX], u, "u");
  if (!lagged.empty()) {
    expect_columns(lagged, d.n, cols, "sweep: lagged");
    d.write_real(d.fields[kY], lagged, "lagged");
  }
  d.sweep(d.F(kB), d.F(kX), cols, !lagged.empty());
  d.read_real(d.F(kX), u, "u");
}

int DeviceTransport::sweep_solve(std::span<const double> directions, std::span<const int> plan_of_column,
                                 std::span<const double> rhs, std::span<double> u, double tol) {
  auto& d = *impl_;
  const std::size_t cols = directions.size() / 3;
  expect_columns(rhs, d.n, cols, "sweep_solve: rhs");
  expect_columns(u, d.n, cols, "sweep_solve: u");
  d.reserve(cols, kSweepVectors, "sweeps");
  d.set_columns(directions, cols);
  d.set_plans(plan_of_column, cols);
  d.write_real(d.fields[kB], rhs, "rhs");
  const int passes = d.resident_sweeps(cols, tol);
  d.read_real(d.F(kX), u, "u");
  return passes;
}

void DeviceTransport::set_scattering(const ScatteringTables& t) {
  auto& d = *impl_;
  const std::size_t M = t.weights.size(), R = static_cast<std::size_t>(std::max(0, t.rank));
  if (t.s_bar.size() != 3 * M) throw DeviceError("scattering tables: weights and s_bar must cover the same ordinates");
  if (R > 0) {
    if (t.sigma_s.size() != d.n || t.operator_of_element.size() != static_cast<std::size_t>(d.data.K))
      throw DeviceError("scattering tables: sigma_s per node and an operator per element expected");
    int ops = 0;
    for (int op : t.operator_of_element) ops = std::max(ops, op + 1);
    if (t.to_direction.size() < static_cast<std::size_t>(ops) * M * R || t.to_moment.size() != t.to_direction.size())
      throw DeviceError("scattering tables: to_direction and to_moment need [operator][ordinate][rank] values");
  }
  // Reallocated only when a size changes; sigma_s changes per spectral point.
  d.put_real(d.sigma_s, t.sigma_s, "scattering coefficient");
  d.put_blocks(d.sigma_s_block_of, d.sigma_s_blocks, t.sigma_s_block_of, t.sigma_s_blocks, "scattering blocks");
  d.put_real(d.to_direction, t.to_direction, "phase-function tables");
  d.put_real(d.to_moment, t.to_moment, "moment tables");
  d.put_real(d.weights, t.weights, "ordinate weights");
  d.put_real(d.s_bar, t.s_bar, "ordinate flux vectors");
  const std::vector<int> ops = t.operator_of_element.empty() ? std::vector<int>{-1} : t.operator_of_element;
  if (!d.op_of_element || d.rank != t.rank) d.op_of_element = d.allocate(ops.size() * sizeof(int), "scattering operator of each element", &d.resident);
  d.write(d.op_of_element, ops.data(), ops.size() * sizeof(int), "scattering operator of each element");
  if (d.rank != t.rank || !d.moments_in) {
    d.moments_in = d.allocate(d.n * std::max<std::size_t>(R, 1) * d.real_size, "scattering moments", &d.resident);
    d.moments_out = d.allocate(d.n * std::max<std::size_t>(R, 1) * d.acc_size, "new scattering moments", &d.resident);
  }
  if (!d.fluxes) d.fluxes = d.allocate(4 * d.n * d.acc_size, "G and q", &d.resident);
  d.rank = static_cast<int>(R);
  d.table_ordinates = static_cast<int>(M);
}

void DeviceTransport::set_boundary_faces(std::span<const int> element_face) {
  auto& d = *impl_;
  const auto K = static_cast<int>(d.data.K);
  std::vector<int> boundary_element, boundary_face;
  std::vector<int> slot(static_cast<std::size_t>(K), -1);  // element -> its index in boundary_element
  for (std::size_t b = 0; b < element_face.size(); ++b) {
    const int ef = element_face[b];
    if (ef < 0 || ef / 4 >= K) throw DeviceError("boundary faces: element face " + std::to_string(ef) + " is not on this mesh");
    int& t = slot[static_cast<std::size_t>(ef / 4)];
    if (t < 0) {
      t = static_cast<int>(boundary_element.size());
      boundary_element.push_back(ef / 4);
      boundary_face.insert(boundary_face.end(), 4, -1);
    }
    boundary_face[static_cast<std::size_t>(4 * t + ef % 4)] = static_cast<int>(b);
  }
  d.faces = static_cast<int>(element_face.size());
  d.boundary_elements = static_cast<int>(boundary_element.size());
  const std::vector<int> ef(element_face.begin(), element_face.end());
  d.element_face = d.upload(ef.empty() ? std::vector<int>{0} : ef, "boundary faces");
  d.boundary_element = d.upload(boundary_element.empty() ? std::vector<int>{0} : boundary_element, "boundary elements");
  d.boundary_face = d.upload(boundary_face.empty() ? std::vector<int>{-1, -1, -1, -1} : boundary_face, "faces of boundary elements");
  d.boundary_capacity = 0;
}

void DeviceTransport::begin_transport_sweep(std::span<const double> moments, bool outputs) {
  auto& d = *impl_;
  if (!d.fluxes) throw DeviceError("begin_transport_sweep: set_scattering first");
  const std::size_t R = static_cast<std::size_t>(d.rank);
  if (moments.size() != d.n * R) throw DeviceError("begin_transport_sweep: expected " + std::to_string(R) + " moments per node");
  d.write_real(d.moments_in, moments, "scattering moments");
  d.zero(d.moments_out, d.n * std::max<std::size_t>(R, 1) * d.acc_size, "new scattering moments");
  if (outputs) d.zero(d.fluxes, 4 * d.n * d.acc_size, "G and q");
  d.outputs = outputs;
  d.sweep_open = true;
}

void DeviceTransport::load_batch(std::span<const double> directions, std::span<const int> ordinate,
                                 std::span<const int> plan_of_column, std::span<const double> fixed_source, const BatchMethod& method) {
  auto& d = *impl_;
  if (!d.sweep_open) throw DeviceError("load_batch: begin_transport_sweep first");
  const std::size_t cols = directions.size() / 3;
  if (ordinate.size() != cols) throw DeviceError("load_batch: one ordinate per column");
  for (int m : ordinate)
    if (m < 0 || m >= d.table_ordinates) throw DeviceError("load_batch: ordinate " + std::to_string(m) + " is not in the tables");
  if ((method.sweep || method.preconditioner == DevicePreconditioner::sweep) && plan_of_column.size() != cols)
    throw DeviceError("load_batch: sweeps need the plan of each column");
  d.reserve(cols, method.sweep ? kSweepVectors : kKrylovVectors, "a batch of ordinates");
  d.reserve_boundary(cols);
  d.set_columns(directions, cols);
  if (!plan_of_column.empty()) d.set_plans(plan_of_column, cols);
  d.write(d.ordinate, ordinate.data(), cols * sizeof(cl_int), "ordinate of each column");
  if (!fixed_source.empty()) {
    expect_columns(fixed_source, d.n, cols, "load_batch: fixed source");
    d.write_real(d.fields[kBase], fixed_source, "fixed source");
  }
  d.launch("scatter_source", d.node_work(), cols, static_cast<std::size_t>(d.blas_wg), 1, d.n_long(), cl_int(d.table_ordinates),
           cl_int(d.rank), cl_int(fixed_source.empty() ? 0 : 1), d.ordinate, d.op_of_element, d.to_direction, d.sigma_s,
           d.sigma_s_block_of, d.sigma_s_blocks, d.moments_in, d.F(kBase));
  d.batch_columns = cols;
  d.batch_method = method;
}

BatchedSolve DeviceTransport::solve_batch(std::span<const double> inflow, std::span<double> traces) {
  auto& d = *impl_;
  const BatchMethod& method = d.batch_method;
  const std::size_t cols = d.batch_columns, per = static_cast<std::size_t>(d.faces) * static_cast<std::size_t>(d.data.nfp);
  if (cols == 0) throw DeviceError("solve_batch: load_batch first");
  if (inflow.size() != per * cols || (!traces.empty() && traces.size() != per * cols))
    throw DeviceError("solve_batch: inflow and traces need " + std::to_string(per) + " boundary values per column");
  const auto wg = static_cast<std::size_t>(d.blas_wg);
  d.reset_flags(cols);
  d.launch_columns("copy_columns", d.vector_work(), wg, cols, d.n_long(), d.active, d.F(kBase), d.F(kB));
  if (per > 0) {
    d.write_real(d.inflow, inflow, "wall inflow");
    d.launch("lift_inflow", static_cast<std::size_t>(d.boundary_elements) * static_cast<std::size_t>(d.data.np), cols, wg, 1,
             cl_int(d.boundary_elements), d.n_long(), cl_int(d.faces), d.boundary_element, d.boundary_face, d.directions, d.geometry,
             d.lift, d.inflow, d.F(kB));
  }
  BatchedSolve out;
  if (method.sweep) {
    const int passes = d.resident_sweeps(cols, method.rtol);
    out.iterations.assign(cols, passes);
    out.status.assign(cols, BicgStatus::converged);
    out.residual_norm.assign(cols, 0.0);
    out.rhs_norm.assign(cols, 0.0);
  } else {
    d.zero(d.F(kX), cols * d.column_bytes(1), "initial guess");
    out = d.bicgstab(method.preconditioner, cols, method.rtol, method.max_iterations, true);
  }
  if (per > 0 && !traces.empty()) {
    d.launch("gather_traces", per, cols, wg, 1, cl_int(d.faces), d.n_long(), d.element_face, d.face_nodes, d.F(kX), d.traces);
    d.read_real(d.traces, traces, "boundary traces");
  }
  return out;
}

void DeviceTransport::read_batch_solution(std::span<double> u) {
  auto& d = *impl_;
  expect_columns(u, d.n, d.batch_columns, "read_batch_solution: u");
  d.read_real(d.F(kX), u, "intensities");
}

void DeviceTransport::accumulate_batch() {
  auto& d = *impl_;
  if (d.batch_columns == 0) throw DeviceError("accumulate_batch: load_batch first");
  d.launch("accumulate_moments", d.node_work(), 0, static_cast<std::size_t>(d.blas_wg), 0, d.n_long(), cl_int(d.batch_columns),
           cl_int(d.table_ordinates), cl_int(d.rank), cl_int(d.outputs ? 1 : 0), d.ordinate, d.op_of_element, d.to_moment, d.weights,
           d.s_bar, d.F(kX), d.moments_out, d.fluxes);
}

void DeviceTransport::finish_transport_sweep(std::span<double> moments, std::span<double> G, std::span<double> qx,
                                             std::span<double> qy, std::span<double> qz) {
  auto& d = *impl_;
  if (!d.sweep_open) throw DeviceError("finish_transport_sweep: begin_transport_sweep first");
  if (moments.size() != d.n * static_cast<std::size_t>(d.rank)) throw DeviceError("finish_transport_sweep: moments size");
  d.read_acc(d.moments_out, moments, 0, "scattering moments");
  if (d.outputs) {
    std::size_t part = 0;
    for (auto v : {G, qx, qy, qz}) {
      if (v.size() != d.n) throw DeviceError("finish_transport_sweep: G, qx, qy, qz need one value per node");
      d.read_acc(d.fluxes, v, part++ * d.n, "G and q");
    }
  }
  d.sweep_open = false;
  d.batch_columns = 0;
}

std::size_t DeviceTransport::bytes_to_device() const { return impl_->to_device; }
std::size_t DeviceTransport::bytes_from_device() const { return impl_->from_device; }

BatchedSolve DeviceTransport::solve_bicgstab(std::span<const double> directions, DevicePreconditioner pc,
                                             std::span<const int> plan_of_column, std::span<const double> b,
                                             std::span<double> x, double rtol, int max_iterations) {
  auto& d = *impl_;
  const std::size_t cols = directions.size() / 3;
  expect_columns(b, d.n, cols, "solve: b");
  expect_columns(x, d.n, cols, "solve: x");
  d.reserve(cols, kNumFields, "a Bi-CGSTAB batch");
  d.set_columns(directions, cols);
  if (pc == DevicePreconditioner::sweep) d.set_plans(plan_of_column, cols);
  d.write_real(d.fields[kB], b, "b");
  d.write_real(d.fields[kX], x, "x");
  auto out = d.bicgstab(pc, cols, rtol, max_iterations, false);
  d.read_real(d.F(kX), x, "x");
  return out;
}

double DeviceTransport::time_apply(std::size_t columns, int repeats) {
  auto& d = *impl_;
  d.prepare_benchmark(columns, 2);
  return d.median_seconds(repeats, [&] { d.apply(d.F(kX), d.F(kB), columns); });
}

double DeviceTransport::time_block_jacobi(std::size_t columns, bool include_sigma, int repeats) {
  auto& d = *impl_;
  d.prepare_benchmark(columns, 2);
  return d.median_seconds(repeats, [&] { d.block_jacobi(include_sigma, d.F(kX), d.F(kB), columns); });
}

double DeviceTransport::time_sweep(std::size_t columns, int repeats) {
  auto& d = *impl_;
  if (!d.has_plans) throw DeviceError("time_sweep: the transport data has no sweep plans");
  d.prepare_benchmark(columns, 2);
  return d.median_seconds(repeats, [&] { d.sweep(d.F(kX), d.F(kB), columns, false); });
}

double DeviceTransport::compare_sweep_kernels(std::size_t columns) {
  auto& d = *impl_;
  if (!d.has_plans) throw DeviceError("compare_sweep_kernels: the transport data has no sweep plans");
  d.prepare_benchmark(columns, kSweepVectors);
  if (!d.use_inverses(columns)) return -1.0;
  const SweepKernel was = d.opt.sweep_kernel;
  d.opt.sweep_kernel = SweepKernel::levels;
  d.sweep(d.F(kB), d.F(kX), columns, false);
  d.opt.sweep_kernel = SweepKernel::columns;
  d.sweep(d.F(kB), d.F(kY), columns, false);
  d.opt.sweep_kernel = was;
  return d.worst_relative_change(d.F(kX), d.F(kY), columns);
}

double DeviceTransport::time_invert_blocks(std::size_t columns, int repeats) {
  auto& d = *impl_;
  d.prepare_benchmark(columns, 2);
  if (!d.use_inverses(columns)) return 0.0;
  return d.median_seconds(repeats, [&] {
    d.inverses_ready = false;
    d.ensure_inverses(columns);
  });
}

double DeviceTransport::time_bicgstab(std::size_t columns, DevicePreconditioner pc, double rtol, int repeats, int* iterations) {
  auto& d = *impl_;
  d.prepare_benchmark(columns, kNumFields);
  int most = 0;
  const double t = d.median_seconds(repeats, [&] {
    d.zero(d.F(kX), columns * d.column_bytes(1), "Bi-CGSTAB start");
    d.reset_flags(columns);
    const auto r = d.bicgstab(pc, columns, rtol, 5000, true);
    most = *std::max_element(r.iterations.begin(), r.iterations.end());
  });
  if (iterations) *iterations = most;
  return t;
}

double DeviceTransport::copy_bandwidth(std::size_t bytes, int repeats) {
  auto& d = *impl_;
  const std::size_t values = bytes / d.real_size;
  auto a = d.allocate(values * d.real_size, "bandwidth probe");
  auto y = d.allocate(values * d.real_size, "bandwidth probe");
  const std::vector<double> ones(values, 1.0);
  d.write_real(a, ones, "bandwidth probe");
  const double t = d.median_seconds(repeats, [&] {
    d.launch("stream_copy", values, 0, static_cast<std::size_t>(d.blas_wg), 0, static_cast<cl_long>(values), a, y);
  });
  return 2.0 * static_cast<double>(values * d.real_size) / t;
}

}  // namespace dgrte::device
