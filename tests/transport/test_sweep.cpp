// Sweeps: one ordered pass solves the upwind DG system exactly when the plan has no cycles;
// cycles (injected by hand) are lagged and converged by repeated passes.
#include "transport/cpu_transport.hpp"
#include "transport/discretization.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/element_solve.hpp"
#include "transport/sweep.hpp"
#include "transport/upwind_operator.hpp"

#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <map>
#include <memory>

namespace dgrte::transport {
namespace {

const mesh::TetMesh& cube(double size) {
  static std::map<double, mesh::TetMesh> cache;
  auto it = cache.find(size);
  if (it == cache.end()) it = cache.emplace(size, mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", size)).first;
  return it->second;
}

struct System {
  // sigma_t varies on the elements: the sweeps and the operator use its Galerkin blocks. On the heap:
  // the backend holds it by reference after the system is returned.
  std::shared_ptr<const ReactionTerm> sigma_t;
  std::vector<double> rhs;
};

// A smooth right-hand side with a boundary inflow, for direction s.
System make_system(const Discretization& disc, transport::CpuTransport& op, const Vec3& s) {
  const std::size_t n = disc.num_dofs(), nfp = disc.ref.num_face_nodes, K = disc.num_elements();
  System sys{nullptr, std::vector<double>(n)};
  std::vector<double> nodal(n), points;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& x = disc.node_position[i];
    nodal[i] = 0.5 + 0.3 * x[0] * x[0];
    sys.rhs[i] = std::sin(x[0] + 2 * x[1]) + std::cos(3 * x[2]);
  }
  for (std::size_t e = 0; e < K; ++e)
    for (const auto& x : disc.property_points(e)) points.push_back(0.5 + 0.3 * x[0] * x[0]);
  sys.sigma_t = std::make_shared<const ReactionTerm>(ReactionTerm::from_points(disc, points, nodal));
  op.set_direction(s, *sys.sigma_t, transport::BlockKind::none);
  std::vector<double> g(K * 4 * nfp);
  for (std::size_t k = 0; k < g.size(); ++k) g[k] = 1.0 + 0.1 * static_cast<double>(k % 7);
  add_boundary_inflow(disc, op.coefficients(), g, sys.rhs);
  return sys;
}

double relative_residual(transport::CpuTransport& op, const std::vector<double>& u, const std::vector<double>& rhs) {
  std::vector<double> y(u.size());
  op.apply(u, y);
  double r = 0, b = 0;
  for (std::size_t i = 0; i < u.size(); ++i) r += (y[i] - rhs[i]) * (y[i] - rhs[i]), b += rhs[i] * rhs[i];
  return std::sqrt(r / b);
}

class SweepExact : public ::testing::TestWithParam<int> {};

TEST_P(SweepExact, OnePassSolvesToRoundOff) {
  const int p = GetParam();
  const auto disc = make_discretization(cube(0.6), p);
  transport::CpuTransport op(disc, 0);
  for (Vec3 s : {Vec3{0.62402, 0.52802, 0.57602}, Vec3{-0.48, 0.6, -0.64}, Vec3{1, 0, 0}, Vec3{0, -1, 0}}) {
    const auto plan = plan_sweep(disc, s);
    ASSERT_EQ(plan.order.size(), disc.num_elements());
    const auto sys = make_system(disc, op, s);
    std::vector<double> u(disc.num_dofs(), 0.0);
    const auto res = sweep_solve(disc, plan, *sys.sigma_t, sys.rhs, u);
    if (plan.lagged == 0) {
      EXPECT_EQ(res.passes, 1);
      EXPECT_LT(relative_residual(op, u, sys.rhs), 1e-12) << "order " << p;
    } else {
      EXPECT_LT(relative_residual(op, u, sys.rhs), 1e-10) << "order " << p;
    }
  }
}
// P1-P8: every kernel sized at compile time.
INSTANTIATE_TEST_SUITE_P(Orders, SweepExact, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8));

TEST(Sweep, ThreadsGiveTheSameBits) {
  // One direction with several threads (dataflow over the order, each element waiting for its
  // upwind neighbours) must do exactly the serial arithmetic, whatever the interleaving.
  const auto disc = make_discretization(cube(0.3), 2);
  transport::CpuTransport op(disc, 0);
  const Vec3 s{-0.48, 0.6, -0.64};
  const auto plan = plan_sweep(disc, s);
  const auto sys = make_system(disc, op, s);
  const int saved = omp_get_max_threads();
  std::vector<double> serial(disc.num_dofs(), 0.0);
  omp_set_num_threads(1);
  sweep_pass(disc, plan, *sys.sigma_t, sys.rhs, serial, {});
  for (int threads : {2, 3, 4}) {
    omp_set_num_threads(threads);
    for (int repeat = 0; repeat < 3; ++repeat) {
      std::vector<double> u(disc.num_dofs(), 0.0);
      sweep_pass(disc, plan, *sys.sigma_t, sys.rhs, u, {});
      EXPECT_EQ(u, serial) << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
  EXPECT_LT(relative_residual(op, serial, sys.rhs), 1e-12);
}

TEST(Sweep, LevelsRespectUpwindOrder) {
  const auto disc = make_discretization(cube(0.5), 1);
  const Vec3 s{0.3, -0.5, 0.812403840463596};
  const auto plan = plan_sweep(disc, s);
  std::vector<int> level(disc.num_elements(), -1);
  for (std::size_t l = 0; l < plan.num_levels(); ++l)
    for (int k = plan.level_begin[l]; k < plan.level_begin[l + 1]; ++k) level[static_cast<std::size_t>(plan.order[static_cast<std::size_t>(k)])] = static_cast<int>(l);
  const auto& mesh = *disc.mesh;
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      const int nb = mesh.neighbour[e][f];
      if (nb < 0 || inflow_coefficient(disc.geometry[e], f, s) == 0.0 || ((plan.lagged_faces[e] >> f) & 1)) continue;
      EXPECT_LT(level[static_cast<std::size_t>(nb)], level[e]);
    }
}

TEST(Sweep, AgreesWithBicgstab) {
  const auto disc = make_discretization(cube(0.6), 3);
  transport::CpuTransport op(disc, std::size_t{1} << 30);
  const Vec3 s{0.62402, 0.52802, 0.57602};
  const auto sys = make_system(disc, op, s);
  std::vector<double> u_sweep(disc.num_dofs(), 0.0), u_krylov(disc.num_dofs(), 0.0);
  sweep_solve(disc, plan_sweep(disc, s), *sys.sigma_t, sys.rhs, u_sweep);
  op.set_direction(s, *sys.sigma_t, transport::BlockKind::full);
  KrylovOptions ko;
  ko.rtol = 1e-13;
  solve_bicgstab(op, sys.rhs, u_krylov, ko);
  double d = 0, m = 0;
  for (std::size_t i = 0; i < u_sweep.size(); ++i) d = std::max(d, std::abs(u_sweep[i] - u_krylov[i])), m = std::max(m, std::abs(u_krylov[i]));
  EXPECT_LT(d / m, 1e-10);
}

TEST(Sweep, InjectedLaggedFacesConverge) {
  // Lag every inflow face of every tenth element by hand: one pass is no longer exact, repeated
  // passes converge to the same solution.
  const auto disc = make_discretization(cube(0.6), 2);
  transport::CpuTransport op(disc, 0);
  const Vec3 s{0.62402, 0.52802, 0.57602};
  auto plan = plan_sweep(disc, s);
  for (std::size_t e = 0; e < disc.num_elements(); e += 10)
    for (int f = 0; f < 4; ++f)
      if (disc.mesh->neighbour[e][f] >= 0 && inflow_coefficient(disc.geometry[e], f, s) != 0.0) {
        plan.lagged_faces[e] |= static_cast<std::uint8_t>(1u << f);
        ++plan.lagged;
      }
  ASSERT_GT(plan.lagged, 0u);
  const auto sys = make_system(disc, op, s);
  std::vector<double> u(disc.num_dofs(), 0.0);
  sweep_pass(disc, plan, *sys.sigma_t, sys.rhs, u, {});
  EXPECT_GT(relative_residual(op, u, sys.rhs), 1e-6);
  std::fill(u.begin(), u.end(), 0.0);
  const auto res = sweep_solve(disc, plan, *sys.sigma_t, sys.rhs, u, 1e-13);
  EXPECT_GT(res.passes, 1);
  EXPECT_LT(relative_residual(op, u, sys.rhs), 1e-10);
}

// The interleaved element solves (a level's elements in SIMD lanes, transport/element_solve.hpp)
// against the one-by-one kernel, P1-P8: varying sigma_t (Galerkin blocks) on half the elements and
// diagonal on the others (lanes of both kinds in one group), lagged faces reading a separate
// array, the positivity limiter, one thread and several. Same answers to round-off, same limited
// elements.
TEST(Sweep, InterleavedElementSolvesMatchOneByOne) {
  const int saved = omp_get_max_threads();
  for (int p = 1; p <= 8; ++p) {
    const auto disc = make_discretization(cube(p <= 4 ? 0.4 : 0.8), p);
    transport::CpuTransport op(disc, 0);
    const Vec3 s{-0.48, 0.6, -0.64};
    auto sys = make_system(disc, op, s);
    // Diagonal sigma_t on every other element: ReactionTerm::from_points keeps the constant ones diagonal.
    std::vector<double> nodal(disc.num_dofs()), points;
    const auto np = static_cast<std::size_t>(disc.ref.num_nodes);
    for (std::size_t e = 0; e < disc.num_elements(); ++e)
      for (const auto& x : disc.property_points(e)) points.push_back(e % 2 ? 0.7 : 0.5 + 0.3 * x[0] * x[0]);
    for (std::size_t i = 0; i < nodal.size(); ++i) nodal[i] = (i / np) % 2 ? 0.7 : 0.5 + 0.3 * std::pow(disc.node_position[i][0], 2);
    const auto sigma = ReactionTerm::from_points(disc, points, nodal);
    ASSERT_GT(sigma.num_blocks(), 0u);
    ASSERT_LT(sigma.num_blocks(), disc.num_elements());
    auto plan = plan_sweep(disc, s);
    for (std::size_t e = 0; e < disc.num_elements(); e += 7)  // lagged faces, reading `lagged`
      for (int f = 0; f < 4; ++f)
        if (disc.mesh->neighbour[e][f] >= 0 && inflow_coefficient(disc.geometry[e], f, s) != 0.0) plan.lagged_faces[e] |= static_cast<std::uint8_t>(1u << f);
    std::vector<double> lagged(disc.num_dofs());
    for (std::size_t i = 0; i < lagged.size(); ++i) lagged[i] = 1.0 + 0.5 * std::cos(static_cast<double>(i));
    std::size_t widest = 0;
    for (std::size_t l = 0; l < plan.num_levels(); ++l)
      widest = std::max(widest, static_cast<std::size_t>(plan.level_begin[l + 1] - plan.level_begin[l]));
    ASSERT_GE(widest, 8u) << "levels too narrow to fill the lanes";
    for (bool positivity : {false, true})
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        std::vector<double> one(disc.num_dofs(), 0.0), interleaved(disc.num_dofs(), 0.0);
        const long limited_one = sweep_pass(disc, plan, sigma, sys.rhs, one, lagged, positivity, ElementSolves::one_by_one);
        const long limited = sweep_pass(disc, plan, sigma, sys.rhs, interleaved, lagged, positivity, ElementSolves::interleaved);
        double d = 0, m = 0;
        for (std::size_t i = 0; i < one.size(); ++i) d = std::max(d, std::abs(one[i] - interleaved[i])), m = std::max(m, std::abs(one[i]));
        EXPECT_LT(d / m, 1e-12) << "P" << p << (positivity ? " positivity" : "") << ", " << threads << " threads";
        EXPECT_EQ(limited, limited_one) << "P" << p;
        if (positivity) {
          EXPECT_GT(limited, 0) << "P" << p << ": the limiter was not exercised";
        }
      }
  }
  omp_set_num_threads(saved);
}

// Both lane widths of the interleaved kernel (4: AVX2, 8: AVX-512; sweep_pass takes the one the CPU
// has) against the one-element kernel on every group of a level, lanes partly filled included.
TEST(Sweep, BothLaneWidthsMatchTheOneElementKernel) {
  const auto disc = make_discretization(cube(0.4), 3);
  transport::CpuTransport op(disc, 0);
  const Vec3 s{0.62402, 0.52802, 0.57602};
  const auto sys = make_system(disc, op, s);
  const auto plan = plan_sweep(disc, s);
  const element_solve::LocalMatrices lm(disc.ref);
  const std::size_t np = 20;
  std::vector<double> u(disc.num_dofs(), 1.0);  // upwind values: any fixed field will do
  for (std::size_t i = 0; i < u.size(); ++i) u[i] += 0.1 * std::sin(static_cast<double>(i));
  auto check = [&]<int W>() {
    std::vector<double> one = u, lanes = u;
    element_solve::SolveWorkspace work(lm, W);
    double* B = work.B.data();
    double* r = work.r.data();
    const element_solve::PassInputs in{disc, lm, s, plan.lagged_faces.data(), nullptr, false, *sys.sigma_t, sys.rhs.data(), lanes.data()};
    std::size_t groups = 0;
    for (std::size_t l = 0; l < plan.num_levels(); ++l)
      for (int k = plan.level_begin[l]; k < plan.level_begin[l + 1]; k += W) {
        const int count = std::min(W, plan.level_begin[l + 1] - k);
        element_solve::solve_group<20, W>(in, plan.order.data() + k, count, B, r);
        ++groups;
        for (int m = 0; m < count; ++m) {
          const auto e = static_cast<std::size_t>(plan.order[static_cast<std::size_t>(k + m)]);
          element_solve::solve_element<20>(disc, lm, s, plan.lagged_faces[e], nullptr, false, e, sys.sigma_t->nodal().data() + e * np,
                                           sys.sigma_t->block(e), sys.rhs.data() + e * np, one.data(), B, r, nullptr);
        }
      }
    ASSERT_LT(groups, disc.num_elements());
    double d = 0, m = 0;
    for (std::size_t i = 0; i < u.size(); ++i) d = std::max(d, std::abs(one[i] - lanes[i])), m = std::max(m, std::abs(one[i]));
    EXPECT_LT(d / m, 1e-12) << W << " lanes";
  };
  check.template operator()<4>();
  check.template operator()<8>();
}

// The residual a sweep measures from its own element blocks is the operator's residual: tiny for
// the exact pass, and the same (to round-off) where the positivity limiter moved the solution off the
// discrete solution.
TEST(Sweep, MeasuredResidualIsTheOperatorResidual) {
  for (int p : {1, 3}) {
    const auto disc = make_discretization(cube(0.4), p);
    transport::CpuTransport op(disc, 0);
    const Vec3 s{-0.48, 0.6, -0.64};
    const auto sys = make_system(disc, op, s);
    const auto plan = plan_sweep(disc, s);
    ASSERT_EQ(plan.lagged, 0u);
    for (bool positivity : {false, true}) {
      std::vector<double> u(disc.num_dofs(), 0.0);
      const auto res = sweep_solve(disc, plan, *sys.sigma_t, sys.rhs, u, 1e-12, 200, positivity, nullptr, true);
      const double operator_residual = relative_residual(op, u, sys.rhs);
      ASSERT_GE(res.relative_residual, 0.0);
      if (positivity) {
        ASSERT_GT(res.limited, 0);
        EXPECT_GT(operator_residual, 1e-6) << "P" << p << ": the limiter should move u off the discrete solution";
        EXPECT_NEAR(res.relative_residual, operator_residual, 1e-9 * operator_residual) << "P" << p;
      } else {
        EXPECT_LT(res.relative_residual, 1e-13) << "P" << p;
        EXPECT_LT(operator_residual, 1e-12) << "P" << p;
      }
    }
    std::vector<double> u(disc.num_dofs(), 0.0);
    EXPECT_EQ(sweep_solve(disc, plan, *sys.sigma_t, sys.rhs, u).relative_residual, -1.0);  // not asked
  }
}

// Bi-CGSTAB preconditioned by the sweep: one iteration when the plan is cycle-free; with lagged
// faces a few, to the passes' solution.
TEST(Sweep, SweepPreconditionedBicgstab) {
  const auto disc = make_discretization(cube(0.6), 2);
  transport::CpuTransport op(disc, 0);
  const Vec3 s{0.62402, 0.52802, 0.57602};
  const auto sys = make_system(disc, op, s);
  auto plan = plan_sweep(disc, s);
  ASSERT_EQ(plan.lagged, 0u);
  KrylovOptions ko;
  ko.rtol = 1e-12;
  {
    SweepPreconditioned pc(op, disc, plan, *sys.sigma_t);
    pc.set_direction(s, *sys.sigma_t, transport::BlockKind::full);
    std::vector<double> u(disc.num_dofs(), 0.0);
    const auto r = solve_bicgstab(pc, sys.rhs, u, ko);
    EXPECT_EQ(r.iterations, 1);
    EXPECT_LT(relative_residual(op, u, sys.rhs), 1e-12);
    EXPECT_THROW(pc.set_direction({1, 0, 0}, *sys.sigma_t, transport::BlockKind::none), std::logic_error);
    pc.set_direction(s, *sys.sigma_t, transport::BlockKind::none);
  }
  for (std::size_t e = 0; e < disc.num_elements(); e += 10)
    for (int f = 0; f < 4; ++f)
      if (disc.mesh->neighbour[e][f] >= 0 && inflow_coefficient(disc.geometry[e], f, s) != 0.0) {
        plan.lagged_faces[e] |= static_cast<std::uint8_t>(1u << f);
        ++plan.lagged;
      }
  SweepPreconditioned pc(op, disc, plan, *sys.sigma_t);
  pc.set_direction(s, *sys.sigma_t, transport::BlockKind::none);
  std::vector<double> u(disc.num_dofs(), 0.0), u_passes(disc.num_dofs(), 0.0);
  const auto r = solve_bicgstab(pc, sys.rhs, u, ko);
  EXPECT_GT(r.iterations, 1);
  EXPECT_LT(r.iterations, 20);
  EXPECT_LT(relative_residual(op, u, sys.rhs), 1e-11);
  sweep_solve(disc, plan, *sys.sigma_t, sys.rhs, u_passes, 1e-14);
  double d = 0, m = 0;
  for (std::size_t i = 0; i < u.size(); ++i) d = std::max(d, std::abs(u[i] - u_passes[i])), m = std::max(m, std::abs(u[i]));
  EXPECT_LT(d / m, 1e-10);
}

}  // namespace
}  // namespace dgrte::transport
