// Parity of the OpenCL kernels (run on PoCL in CI) with the CPU path: operator apply, block-Jacobi
// solves, sweeps and batched Bi-CGSTAB against CpuTransport, transport::sweep_pass and PETSc's
// KSPBCGS, P1-P4 in double; single precision against double. Without an OpenCL platform the tests
// skip with a message, unless DGRTE_REQUIRE_OPENCL=1 (set by .ci/run), where they fail.
#include "transport/cpu_transport.hpp"
#include "backend/device_data.hpp"
#include "backend/opencl_transport.hpp"
#include "device/device_transport.hpp"
#include "device/host_kernels.hpp"
#include "transport/discretization.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/sweep.hpp"
#include "transport/upwind_operator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace dgrte {
namespace {

using transport::Vec3;

#define REQUIRE_OPENCL()                                                                                       \
  do {                                                                                                         \
    if (device::list_devices().empty()) {                                                                      \
      if (const char* req = std::getenv("DGRTE_REQUIRE_OPENCL"); req && std::string(req) == "1")               \
        FAIL() << "DGRTE_REQUIRE_OPENCL=1 but no OpenCL platform: install pocl-opencl-icd";                    \
      GTEST_SKIP() << "no OpenCL platform on this machine (install pocl-opencl-icd): OpenCL parity not tested"; \
    }                                                                                                          \
  } while (0)

const mesh::TetMesh& cube(double size) {
  static std::map<double, mesh::TetMesh> cache;
  auto it = cache.find(size);
  if (it == cache.end()) it = cache.emplace(size, mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", size)).first;
  return it->second;
}

const std::vector<Vec3> kDirections{{0.62402, 0.52802, 0.57602}, {-0.48, 0.6, -0.64}, {1, 0, 0}, {0, -1, 0},
                                    {0.2672612419124244, -0.5345224838248488, 0.8017837257372732}};

std::vector<double> flat(const std::vector<Vec3>& dirs) {
  std::vector<double> out;
  for (const auto& s : dirs) out.insert(out.end(), s.begin(), s.end());
  return out;
}

// sigma_t = 0.5 + 0.3 x^2 + 0.2 y, at the property points: every element carries its Galerkin block
// (the kernels' block path), except where the field is constant on it (none here).
transport::ReactionTerm sigma_of(const transport::Discretization& disc) {
  auto f = [](const transport::Vec3& x) { return 0.5 + 0.3 * x[0] * x[0] + 0.2 * x[1]; };
  std::vector<double> nodal(disc.num_dofs()), points;
  for (std::size_t i = 0; i < nodal.size(); ++i) nodal[i] = f(disc.node_position[i]);
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (const auto& x : disc.property_points(e)) points.push_back(f(x));
  return transport::ReactionTerm::from_points(disc, points, std::move(nodal));
}

// A smooth field per column, different for each column.
std::vector<double> smooth_columns(const transport::Discretization& disc, std::size_t cols) {
  const std::size_t n = disc.num_dofs();
  std::vector<double> u(n * cols);
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t i = 0; i < n; ++i) {
      const auto& x = disc.node_position[i];
      u[c * n + i] = std::sin(x[0] + 2 * x[1] + static_cast<double>(c)) + std::cos(3 * x[2]) + 0.1 * static_cast<double>(i % 5);
    }
  return u;
}

// max |a - b| / max |b| over one column.
double column_error(std::span<const double> a, std::span<const double> b) {
  double d = 0, m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i])), m = std::max(m, std::abs(b[i]));
  return d / m;
}

// Sweep plans of kDirections with one face of every plan lagged by hand, so that the lagged path
// (passes until the lagged traces stop changing) is exercised on any mesh.
std::vector<transport::SweepPlan> plans_with_lagged_faces(const transport::Discretization& disc) {
  std::vector<transport::SweepPlan> plans;
  for (const auto& s : kDirections) plans.push_back(transport::plan_sweep(disc, s));
  for (auto& p : plans) {
    const int e = p.order[p.order.size() / 2];
    for (int f = 0; f < 4; ++f)
      if (disc.mesh->neighbour[e][f] >= 0 && transport::inflow_coefficient(disc.geometry[e], f, p.direction) != 0.0) {
        p.lagged_faces[e] |= static_cast<std::uint8_t>(1u << f);
        ++p.lagged;
        break;
      }
  }
  return plans;
}

device::DeviceOptions test_options() {
  device::DeviceOptions o;
  o.cache_dir = "none";
  return o;
}

class DeviceParity : public ::testing::TestWithParam<int> {};

TEST_P(DeviceParity, ApplyMatchesCpuTransport) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  backend::OpenclTransport dev(disc, sigma, test_options());
  transport::CpuTransport cpu(disc, 0);
  const std::size_t n = disc.num_dofs(), M = kDirections.size();
  const auto u = smooth_columns(disc, M);
  std::vector<double> y(n * M), y_cpu(n);
  dev.device().apply(flat(kDirections), u, y);
  for (std::size_t c = 0; c < M; ++c) {
    cpu.set_direction(kDirections[c], sigma, transport::BlockKind::none);
    cpu.apply(std::span(u).subspan(c * n, n), y_cpu);
    EXPECT_LT(column_error(std::span(y).subspan(c * n, n), y_cpu), 1e-12) << "direction " << c;
  }
  // The host twin computes the same.
  std::vector<double> y_host(n * M);
  device::host_apply(dev.data(), flat(kDirections), std::vector<int>(M, 1), u, y_host);
  for (std::size_t c = 0; c < M; ++c)
    EXPECT_LT(column_error(std::span(y).subspan(c * n, n), std::span(y_host).subspan(c * n, n)), 1e-12);
}

// The volume term as one CLBlast Gemm over all elements and columns (VolumeKernel::clblast): the
// same operator as the own kernel, and the same batched Bi-CGSTAB solve.
TEST_P(DeviceParity, ClblastVolumeGemmMatchesOwnKernel) {
  REQUIRE_OPENCL();
  if (!device::clblast_available()) {
    if (const char* req = std::getenv("DGRTE_REQUIRE_OPENCL"); req && std::string(req) == "1")
      FAIL() << "DGRTE_REQUIRE_OPENCL=1 but this build has no CLBlast: install libclblast-dev";
    GTEST_SKIP() << "built without CLBlast: the CLBlast volume GEMM is not tested";
  }
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  auto gemm_options = test_options();
  gemm_options.volume = device::VolumeKernel::clblast;
  gemm_options.gemm_slice_bytes = 64 << 10;  // several Gemm calls per apply on these small meshes
  backend::OpenclTransport own(disc, sigma, test_options()), gemm(disc, sigma, gemm_options);
  const std::size_t n = disc.num_dofs(), M = kDirections.size();
  const auto u = smooth_columns(disc, M);
  std::vector<double> y_own(n * M), y_gemm(n * M);
  own.device().apply(flat(kDirections), u, y_own);
  gemm.device().apply(flat(kDirections), u, y_gemm);
  for (std::size_t c = 0; c < M; ++c)
    EXPECT_LT(column_error(std::span(y_gemm).subspan(c * n, n), std::span(y_own).subspan(c * n, n)), 1e-12) << "direction " << c;
  std::vector<double> x_own(n * M, 0.0), x_gemm(n * M, 0.0);
  const std::vector<int> plans(M, 0);
  const auto r_own = own.device().solve_bicgstab(flat(kDirections), device::DevicePreconditioner::partial_block_jacobi, plans, y_own, x_own, 1e-12, 500);
  const auto r_gemm = gemm.device().solve_bicgstab(flat(kDirections), device::DevicePreconditioner::partial_block_jacobi, plans, y_own, x_gemm, 1e-12, 500);
  for (std::size_t c = 0; c < M; ++c) {
    EXPECT_EQ(r_gemm.status[c], device::BicgStatus::converged);
    EXPECT_NEAR(r_gemm.iterations[c], r_own.iterations[c], 1) << "direction " << c;
    EXPECT_LT(column_error(std::span(x_gemm).subspan(c * n, n), std::span(x_own).subspan(c * n, n)), 1e-9) << "direction " << c;
    EXPECT_LT(column_error(std::span(x_gemm).subspan(c * n, n), std::span(u).subspan(c * n, n)), 1e-9) << "direction " << c;
  }
}

TEST_P(DeviceParity, BlockJacobiMatchesCpuTransport) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  backend::OpenclTransport dev(disc, sigma, test_options());
  transport::CpuTransport cpu(disc, std::size_t{1} << 30);
  const std::size_t n = disc.num_dofs(), M = kDirections.size();
  const auto r = smooth_columns(disc, M);
  for (const auto solve : {device::ElementSolve::stored_inverses, device::ElementSolve::refactorised}) {
    dev.device().set_element_solve(solve);
    for (const auto kind : {transport::BlockKind::partial, transport::BlockKind::full}) {
      std::vector<double> z(n * M), z_cpu(n);
      dev.device().block_jacobi(flat(kDirections), kind == transport::BlockKind::full, r, z);
      if (kind == transport::BlockKind::full) {
        EXPECT_EQ(dev.device().element_solve_used(), solve);
      }
      for (std::size_t c = 0; c < M; ++c) {
        cpu.set_direction(kDirections[c], sigma, kind);
        cpu.precondition(std::span(r).subspan(c * n, n), z_cpu);
        EXPECT_LT(column_error(std::span(z).subspan(c * n, n), z_cpu), 1e-10) << "direction " << c << " " << device::to_string(solve);
      }
    }
  }
}

TEST_P(DeviceParity, SweepMatchesCpuSweep) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  const std::size_t n = disc.num_dofs(), M = kDirections.size();
  const auto plans = plans_with_lagged_faces(disc);
  auto data = backend::device_data(disc, sigma);
  backend::add_directions(data, kDirections, {}, plans);
  device::DeviceTransport dev(data, test_options());
  const auto rhs = smooth_columns(disc, M), lagged = smooth_columns(disc, M);
  std::vector<int> plan_of_column(M);
  for (std::size_t c = 0; c < M; ++c) plan_of_column[c] = static_cast<int>(c);
  using device::ElementSolve, device::SweepKernel;
  for (const auto& [solve, kernel] : {std::pair{ElementSolve::stored_inverses, SweepKernel::levels},
                                     std::pair{ElementSolve::stored_inverses, SweepKernel::columns},
                                     std::pair{ElementSolve::refactorised, SweepKernel::levels}}) {
    dev.set_element_solve(solve);
    dev.set_sweep_kernel(kernel);
    for (const bool with_lagged : {true, false}) {  // the larger reservation first: the inverses then stay
      std::vector<double> u(n * M, 0.0), u_cpu(n);
      dev.sweep(flat(kDirections), plan_of_column, rhs, u, with_lagged ? std::span<const double>(lagged) : std::span<const double>());
      EXPECT_EQ(dev.element_solve_used(), solve);
      EXPECT_EQ(dev.sweep_kernel_used(), kernel);
      for (std::size_t c = 0; c < M; ++c) {
        std::fill(u_cpu.begin(), u_cpu.end(), 0.0);
        transport::sweep_pass(disc, plans[c], sigma, std::span(rhs).subspan(c * n, n), u_cpu,
                              with_lagged ? std::span(lagged).subspan(c * n, n) : std::span<const double>());
        EXPECT_LT(column_error(std::span(u).subspan(c * n, n), u_cpu), 1e-10)
            << "direction " << c << " lagged " << with_lagged << " " << device::to_string(solve) << " " << device::to_string(kernel);
      }
    }
  }
  EXPECT_EQ(dev.inversions(), 1);  // every stored-inverse sweep of the same batch used one inversion
}

// The stored inverses against their host twin (host_block_inverses + the product sweep), and
// recomputed when sigma_t changes: a sweep after set_sigma_t matches the host twin with the new
// sigma_t (stale inverses would give the old medium's answer).
TEST_P(DeviceParity, StoredInversesMatchHostTwinAndFollowSigma) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  const std::size_t n = disc.num_dofs(), M = kDirections.size();
  const auto plans = plans_with_lagged_faces(disc);
  auto data = backend::device_data(disc, sigma);
  backend::add_directions(data, kDirections, {}, plans);
  auto options = test_options();
  options.element_solve = device::ElementSolve::stored_inverses;
  options.sweep_elements_per_group = 3;  // levels wider than a chunk: the column sweep's passes over a level
  device::DeviceTransport dev(data, options);
  const auto rhs = smooth_columns(disc, M);
  std::vector<int> plan_of_column(M);
  for (std::size_t c = 0; c < M; ++c) plan_of_column[c] = static_cast<int>(c);
  const std::vector<int> active(M, 1);
  for (const double scale : {1.0, 3.0}) {
    dev.set_sweep_kernel(scale == 1.0 ? device::SweepKernel::levels : device::SweepKernel::columns);
    if (scale != 1.0) {
      for (auto& v : data.sigma_t) v *= scale;
      for (auto& v : data.sigma_blocks) v *= scale;
      dev.set_sigma_t(data.sigma_t, data.sigma_block_of, data.sigma_blocks);
    }
    std::vector<double> u(n * M, 0.0), u_host(n * M, 0.0);
    dev.sweep(flat(kDirections), plan_of_column, rhs, u);
    const auto inverses = device::host_block_inverses(data, flat(kDirections));
    device::host_sweep(data, plan_of_column, {}, flat(kDirections), active, rhs, u_host, inverses);
    for (std::size_t c = 0; c < M; ++c)
      EXPECT_LT(column_error(std::span(u).subspan(c * n, n), std::span(u_host).subspan(c * n, n)), 1e-12)
          << "direction " << c << " sigma x" << scale;
  }
  EXPECT_EQ(dev.inversions(), 2);
}

// The outer iteration's kernels (outer_iteration.cl) against their host twins, composed as a run
// uses them: base = fixed + in-scattering of the moments (two scattering operators, rank 3, one
// element in three not scattering), rhs = base - lift of the wall inflow, sweeps to convergence of
// the lagged faces, boundary traces, moments and G, q of the batch.
TEST_P(DeviceParity, OuterIterationKernelsMatchHostTwins) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  const std::size_t n = disc.num_dofs(), M = kDirections.size(), K = disc.num_elements(), R = 3;
  const auto nfp = static_cast<std::size_t>(disc.ref.num_face_nodes);
  const auto plans = plans_with_lagged_faces(disc);
  auto data = backend::device_data(disc, sigma);
  backend::add_directions(data, kDirections, {}, plans);
  device::ScatteringTables t;
  t.rank = static_cast<int>(R);
  for (std::size_t k = 0; k < n; ++k) t.sigma_s.push_back(0.2 + 0.1 * std::cos(disc.node_position[k][0]));
  // Every other element's sigma_s varies on it: its Galerkin block (a stand-in block: any np x np
  // matrix exercises the kernel's block path against the host twin).
  const auto np2 = static_cast<std::size_t>(disc.num_nodes() * disc.num_nodes());
  for (std::size_t e = 0; e < K; ++e) {
    t.sigma_s_block_of.push_back(e % 2 == 0 ? static_cast<int>(e / 2) : -1);
    if (e % 2 == 0)
      for (std::size_t k = 0; k < np2; ++k) t.sigma_s_blocks.push_back(0.01 * std::sin(0.37 * static_cast<double>(k + e)));
  }
  for (std::size_t e = 0; e < K; ++e) t.operator_of_element.push_back(e % 3 == 0 ? -1 : static_cast<int>(e % 2));
  for (std::size_t i = 0; i < 2 * M * R; ++i) {
    t.to_direction.push_back(0.3 + 0.1 * std::sin(static_cast<double>(i)));
    t.to_moment.push_back(0.05 * std::cos(0.7 * static_cast<double>(i)));
  }
  for (std::size_t m = 0; m < M; ++m) {
    t.weights.push_back(0.1 * static_cast<double>(m + 1));
    for (double x : kDirections[m]) t.s_bar.push_back(x * t.weights.back());
  }
  std::vector<int> element_face;
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f)
      if (disc.mesh->neighbour[e][static_cast<std::size_t>(f)] < 0) element_face.push_back(static_cast<int>(4 * e) + f);
  const std::size_t faces = element_face.size();
  ASSERT_GT(faces, 0u);
  std::vector<double> phi(n * R), inflow(faces * nfp * M);
  for (std::size_t i = 0; i < phi.size(); ++i) phi[i] = 1.0 + 0.5 * std::sin(0.01 * static_cast<double>(i));
  for (std::size_t i = 0; i < inflow.size(); ++i) inflow[i] = 2.0 + std::cos(0.03 * static_cast<double>(i));
  const auto fixed = smooth_columns(disc, M);
  std::vector<int> ordinate(M);
  for (std::size_t c = 0; c < M; ++c) ordinate[c] = static_cast<int>(c);
  const double tol = 1e-13;

  device::DeviceTransport dev(data, test_options());
  dev.set_scattering(t);
  dev.set_boundary_faces(element_face);
  dev.begin_transport_sweep(phi, true);
  device::BatchMethod method;
  method.rtol = tol;
  dev.load_batch(flat(kDirections), ordinate, ordinate, fixed, method);
  std::vector<double> traces(faces * nfp * M), u(n * M), moments(n * R), fluxes(4 * n);
  const auto res = dev.solve_batch(inflow, traces);
  EXPECT_GT(res.iterations[0], 1);  // the lagged faces took passes
  dev.read_batch_solution(u);
  dev.accumulate_batch();
  dev.finish_transport_sweep(moments, std::span(fluxes).subspan(0, n), std::span(fluxes).subspan(n, n),
                             std::span(fluxes).subspan(2 * n, n), std::span(fluxes).subspan(3 * n, n));

  // The host twins, in the same order.
  auto rhs = fixed;
  device::host_scatter_source(data, t, ordinate, true, phi, rhs);
  device::host_lift_inflow(data, element_face, flat(kDirections), inflow, rhs);
  const std::vector<int> active(M, 1);
  std::vector<double> u_host(n * M, 0.0), previous(n * M, 0.0), change(M), size(M);
  int passes = 0;
  for (double worst = 1; worst > tol && passes < 200; ++passes) {
    device::host_sweep(data, ordinate, previous, flat(kDirections), active, rhs, u_host);
    device::host_max_change(n, u_host, previous, change, size);
    worst = 0;
    for (std::size_t c = 0; c < M; ++c) worst = std::max(worst, change[c] / size[c]);
    previous = u_host;
  }
  EXPECT_EQ(res.iterations[0], passes);
  std::vector<double> traces_host(traces.size()), moments_host(n * R, 0.0), fluxes_host(4 * n, 0.0);
  device::host_gather_traces(data, element_face, u_host, traces_host);
  device::host_accumulate_moments(data, t, ordinate, true, u_host, moments_host, fluxes_host);
  for (std::size_t c = 0; c < M; ++c)
    EXPECT_LT(column_error(std::span(u).subspan(c * n, n), std::span(u_host).subspan(c * n, n)), 1e-10) << "direction " << c;
  EXPECT_LT(column_error(traces, traces_host), 1e-10);
  EXPECT_LT(column_error(moments, moments_host), 1e-10);
  EXPECT_LT(column_error(fluxes, fluxes_host), 1e-10);
}

// The manufactured case: b = A u_exact for a smooth u_exact; the batched device Bi-CGSTAB and
// PETSc's KSPBCGS on the CPU operator reach the same solution in the same number of iterations (+-1).
TEST_P(DeviceParity, BatchedBicgstabMatchesPetsc) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), GetParam());
  const auto sigma = sigma_of(disc);
  auto data = backend::device_data(disc, sigma);
  std::vector<transport::SweepPlan> plans;
  for (const auto& s : kDirections) plans.push_back(transport::plan_sweep(disc, s));
  backend::add_directions(data, kDirections, {}, plans);
  device::DeviceTransport dev(data, test_options());
  transport::CpuTransport cpu(disc, std::size_t{1} << 30);
  const std::size_t n = disc.num_dofs(), M = kDirections.size();
  const auto exact = smooth_columns(disc, M);
  std::vector<double> b(n * M);
  for (std::size_t c = 0; c < M; ++c) {
    cpu.set_direction(kDirections[c], sigma, transport::BlockKind::none);
    cpu.apply(std::span(exact).subspan(c * n, n), std::span(b).subspan(c * n, n));
  }
  std::vector<int> plan_of_column(M);
  for (std::size_t c = 0; c < M; ++c) plan_of_column[c] = static_cast<int>(c);
  for (const auto pc : {device::DevicePreconditioner::partial_block_jacobi, device::DevicePreconditioner::block_jacobi,
                        device::DevicePreconditioner::sweep}) {
    std::vector<double> x(n * M, 0.0);
    const long applications = dev.preconditioner_applications();
    const auto res = dev.solve_bicgstab(flat(kDirections), pc, plan_of_column, b, x, 1e-12, 500);
    // Without lagged faces the sweep is the exact inverse: the first half step meets the test and
    // the batch stops there (bicg_half), one sweep in all.
    if (pc == device::DevicePreconditioner::sweep) {
      EXPECT_EQ(dev.preconditioner_applications() - applications, 1);
    }
    for (std::size_t c = 0; c < M; ++c) {
      ASSERT_EQ(res.status[c], device::BicgStatus::converged) << "direction " << c;
      std::vector<double> x_cpu(n, 0.0);
      transport::KrylovOptions ko;
      ko.rtol = 1e-12;
      int cpu_iterations;
      if (pc == device::DevicePreconditioner::sweep) {
        transport::SweepPreconditioned op(cpu, disc, plans[c], sigma);
        op.set_direction(kDirections[c], sigma, transport::BlockKind::none);
        cpu_iterations = transport::solve_bicgstab(op, std::span(b).subspan(c * n, n), x_cpu, ko).iterations;
      } else {
        cpu.set_direction(kDirections[c], sigma,
                          pc == device::DevicePreconditioner::block_jacobi ? transport::BlockKind::full : transport::BlockKind::partial);
        cpu_iterations = transport::solve_bicgstab(cpu, std::span(b).subspan(c * n, n), x_cpu, ko).iterations;
      }
      EXPECT_NEAR(res.iterations[c], cpu_iterations, 1) << "direction " << c << " preconditioner " << static_cast<int>(pc);
      EXPECT_LT(column_error(std::span(x).subspan(c * n, n), x_cpu), 1e-10) << "direction " << c;
      EXPECT_LT(column_error(std::span(x).subspan(c * n, n), std::span(exact).subspan(c * n, n)), 1e-9);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, DeviceParity, ::testing::Values(1, 2, 3, 4));

// Single precision: the operator and the solution of the manufactured case against double.
TEST(DeviceSingle, ErrorAgainstDoubleIsAtSinglePrecisionLevel) {
  REQUIRE_OPENCL();
  for (const int p : {1, 2, 3, 4}) {
    const auto disc = transport::make_discretization(cube(0.6), p);
    const auto sigma = sigma_of(disc);
    const auto data = backend::device_data(disc, sigma);
    auto opt = test_options();
    device::DeviceTransport dbl(data, opt);
    opt.single_precision = true;
    device::DeviceTransport sgl(data, opt);
    const std::size_t n = disc.num_dofs(), M = kDirections.size();
    const auto exact = smooth_columns(disc, M);
    std::vector<double> b(n * M), y(n * M);
    dbl.apply(flat(kDirections), exact, b);
    sgl.apply(flat(kDirections), exact, y);
    for (std::size_t c = 0; c < M; ++c) EXPECT_LT(column_error(std::span(y).subspan(c * n, n), std::span(b).subspan(c * n, n)), 1e-5);
    std::vector<double> x(n * M, 0.0);
    const auto res = sgl.solve_bicgstab(flat(kDirections), device::DevicePreconditioner::partial_block_jacobi, {}, b, x, 1e-6, 500);
    for (std::size_t c = 0; c < M; ++c) {
      EXPECT_EQ(res.status[c], device::BicgStatus::converged);
      const double err = column_error(std::span(x).subspan(c * n, n), std::span(exact).subspan(c * n, n));
      std::printf("single precision P%d direction %zu: %d iterations, max error / max |u| = %.2e\n", p, c, res.iterations[c], err);
      EXPECT_LT(err, 1e-4) << "P" << p;
    }
  }
}

TEST(DeviceErrors, BudgetTooSmallNamesDeviceRequestAndBudget) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.6), 2);
  const auto data = backend::device_data(disc, sigma_of(disc));
  auto opt = test_options();
  opt.memory_budget_bytes = 4 << 20;  // the problem fits, a batch of many columns does not
  device::DeviceTransport dev(data, opt);
  const std::size_t n = disc.num_dofs(), cols = dev.max_columns(device::DeviceTransport::kKrylovVectors) + 1;
  std::vector<double> dirs(3 * cols, 0.0), b(n * cols, 1.0), x(n * cols, 0.0);
  for (std::size_t c = 0; c < cols; ++c) dirs[3 * c] = 1;
  try {
    dev.solve_bicgstab(dirs, device::DevicePreconditioner::none, {}, b, x, 1e-8, 10);
    FAIL() << "expected a DeviceError";
  } catch (const device::DeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("budget"), std::string::npos) << what;
    EXPECT_NE(what.find(dev.device().name), std::string::npos) << what;
    EXPECT_NE(what.find("at most"), std::string::npos) << what;
  }
}

TEST(DeviceCache, SecondBuildLoadsTheBinary) {
  REQUIRE_OPENCL();
  const auto disc = transport::make_discretization(cube(0.9), 1);
  const auto data = backend::device_data(disc, sigma_of(disc));
  const auto folder = std::filesystem::temp_directory_path() / ("dgrte-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  auto opt = test_options();
  opt.cache_dir = folder.string();
  {
    device::DeviceTransport first(data, opt);
    EXPECT_FALSE(first.cache_hit());
  }
  device::DeviceTransport second(data, opt);
  EXPECT_TRUE(second.cache_hit());
  // The cached program computes the same as a fresh build.
  std::vector<double> dirs{0.6, 0.0, 0.8}, u(disc.num_dofs(), 1.0), y1(u.size()), y2(u.size());
  second.apply(dirs, u, y1);
  device::DeviceTransport fresh(data, test_options());
  fresh.apply(dirs, u, y2);
  EXPECT_EQ(y1, y2);
  std::filesystem::remove_all(folder);
}

TEST(DeviceSelection, UnknownDeviceListsTheDevices) {
  REQUIRE_OPENCL();
  try {
    device::select_device("no-such-device-xyz");
    FAIL() << "expected a DeviceError";
  } catch (const device::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find(device::list_devices().front().name), std::string::npos) << e.what();
  }
  EXPECT_EQ(device::select_device("0:0").name, device::list_devices().front().name);
}

}  // namespace
}  // namespace dgrte
