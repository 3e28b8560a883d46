// The upwind DG transport operator and its Krylov solve against exact answers.
#include "transport/cpu_transport.hpp"
#include "common/error.hpp"
#include "transport/discretization.hpp"
#include "transport/field_evaluation.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/upwind_operator.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <memory>

namespace dgrte::transport {
namespace {

const mesh::TetMesh& coarse_cube() {
  static const auto m = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.9);
  return m;
}

using Field = std::function<double(const Vec3&)>;

struct Problem {
  Vec3 s;
  double kappa;
  Field exact;
  std::function<Vec3(const Vec3&)> gradient;
};

// Builds kappa, rhs = s.grad I + kappa I at the nodes, boundary inflow = I, and solves.
struct Solved {
  std::vector<double> u, exact;
  transport::CpuTransport* op;
  KrylovResult result;
};

Solved solve(const Discretization& disc, transport::CpuTransport& op, const Problem& p, transport::BlockKind blocks,
             double rtol = 1e-12, int max_it = 2000) {
  const std::size_t n = disc.num_dofs(), np = disc.num_nodes(), nfp = disc.ref.num_face_nodes, K = disc.num_elements();
  const ReactionTerm kappa(std::vector<double>(n, p.kappa), static_cast<int>(np));
  std::vector<double> rhs(n), g(K * 4 * nfp, 0.0), ex(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& x = disc.node_position[i];
    const auto gr = p.gradient(x);
    ex[i] = p.exact(x);
    rhs[i] = p.s[0] * gr[0] + p.s[1] * gr[1] + p.s[2] * gr[2] + p.kappa * ex[i];
  }
  op.set_direction(p.s, kappa, blocks);
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f)
      for (std::size_t j = 0; j < nfp; ++j) g[(e * 4 + f) * nfp + j] = ex[e * np + disc.ref.face_nodes[f][j]];
  add_boundary_inflow(disc, op.coefficients(), g, rhs);
  Solved out{std::vector<double>(n, 0.0), ex, &op, {}};
  KrylovOptions ko;
  ko.rtol = rtol;
  ko.max_iterations = max_it;
  ko.precondition = blocks != transport::BlockKind::none;
  ko.label = "test direction";
  out.result = solve_bicgstab(op, rhs, out.u, ko);
  return out;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// A polynomial of total degree p and its gradient.
Problem polynomial_problem(int p, Vec3 s) {
  auto lin = [](const Vec3& x) { return 1.3 + 0.4 * x[0] - 0.7 * x[1] + 0.25 * x[2]; };
  Problem pr;
  pr.s = s;
  pr.kappa = 0.7;
  pr.exact = [=](const Vec3& x) { return std::pow(lin(x), p) + x[0] * x[1] * (p >= 2 ? 1.0 : 0.0); };
  pr.gradient = [=](const Vec3& x) {
    const double d = p * std::pow(lin(x), p - 1);
    const double q = p >= 2 ? 1.0 : 0.0;
    return Vec3{0.4 * d + q * x[1], -0.7 * d + q * x[0], 0.25 * d};
  };
  return pr;
}

class PolynomialExactness : public ::testing::TestWithParam<int> {};

// The DG solution reproduces any polynomial of degree <= p exactly (sources interpolate exactly).
TEST_P(PolynomialExactness, ReproducesDegreeP) {
  const int p = GetParam();
  const auto disc = make_discretization(coarse_cube(), p);
  transport::CpuTransport op(disc, std::size_t{1} << 30);
  for (Vec3 s : {Vec3{0.62402, 0.52802, 0.57602}, Vec3{-0.48, 0.6, -0.64}}) {
    const auto sol = solve(disc, op, polynomial_problem(p, s), transport::BlockKind::partial);
    EXPECT_LT(max_abs_diff(sol.u, sol.exact), 1e-8) << "order " << p;
  }
}
INSTANTIATE_TEST_SUITE_P(Orders, PolynomialExactness, ::testing::Values(1, 2, 3, 4, 5));

TEST(Transport, DegreePPlusOneIsNotReproduced) {
  // Guards against a test that cannot fail: one degree more is not exact.
  const auto disc = make_discretization(coarse_cube(), 2);
  transport::CpuTransport op(disc, std::size_t{1} << 30);
  const auto sol = solve(disc, op, polynomial_problem(3, {0.62402, 0.52802, 0.57602}), transport::BlockKind::partial);
  EXPECT_GT(max_abs_diff(sol.u, sol.exact), 1e-5);
}

TEST(Transport, PreconditionersAgreeAndReduceIterations) {
  const auto disc = make_discretization(coarse_cube(), 3);
  transport::CpuTransport op(disc, std::size_t{1} << 30);
  const auto pr = polynomial_problem(4, {0.3, -0.5, 0.812403840463596});
  const auto none = solve(disc, op, pr, transport::BlockKind::none);
  const auto partial = solve(disc, op, pr, transport::BlockKind::partial);
  const auto full = solve(disc, op, pr, transport::BlockKind::full);
  EXPECT_LT(max_abs_diff(none.u, partial.u), 1e-8);
  EXPECT_LT(max_abs_diff(full.u, partial.u), 1e-8);
  EXPECT_LT(partial.result.iterations, none.result.iterations);
  EXPECT_LE(full.result.iterations, partial.result.iterations + 1);
  EXPECT_LT(full.result.relative_residual, 1e-11);
}

TEST(Transport, OnTheFlyBlocksEqualCachedBlocks) {
  const auto disc = make_discretization(coarse_cube(), 2);
  transport::CpuTransport cached(disc, std::size_t{1} << 30), on_the_fly(disc, 0);
  const auto pr = polynomial_problem(3, {0.62402, 0.52802, 0.57602});
  const auto a = solve(disc, cached, pr, transport::BlockKind::full);
  const auto b = solve(disc, on_the_fly, pr, transport::BlockKind::full);
  EXPECT_GT(cached.preconditioner_bytes(), 0u);
  EXPECT_EQ(on_the_fly.preconditioner_bytes(), 0u);
  EXPECT_EQ(a.result.iterations, b.result.iterations);
  EXPECT_LT(max_abs_diff(a.u, b.u), 1e-12);
}

// Global balance of the upwind scheme (test function 1 in every element): interior fluxes cancel,
//   int kappa u dV + oint_out (s.n) u dA + oint_in (s.n) g dA = int S dV.
TEST(Transport, ConservesEnergyGlobally) {
  const int p = 3;
  const auto disc = make_discretization(coarse_cube(), p);
  transport::CpuTransport op(disc, std::size_t{1} << 30);
  Problem pr;
  pr.s = {0.62402, 0.52802, 0.57602};
  pr.kappa = 0.9;
  pr.exact = [](const Vec3& x) { return 2 + std::sin(2 * x[0]) * std::cos(x[1] + x[2]); };
  pr.gradient = [](const Vec3& x) {
    return Vec3{2 * std::cos(2 * x[0]) * std::cos(x[1] + x[2]), -std::sin(2 * x[0]) * std::sin(x[1] + x[2]),
                -std::sin(2 * x[0]) * std::sin(x[1] + x[2])};
  };
  const auto sol = solve(disc, op, pr, transport::BlockKind::partial, 1e-13);
  const auto& ref = disc.ref;
  const std::size_t np = ref.num_nodes, nfp = ref.num_face_nodes;
  const Eigen::VectorXd ones_m = ref.mass * Eigen::VectorXd::Ones(static_cast<Eigen::Index>(np));
  double volume_absorbed = 0, source = 0, boundary = 0;
  for (std::size_t e = 0; e < disc.num_elements(); ++e) {
    const double J = disc.geometry[e].jacobian;
    for (std::size_t i = 0; i < np; ++i) {
      const auto gr = pr.gradient(disc.node_position[e * np + i]);
      const double S = pr.s[0] * gr[0] + pr.s[1] * gr[1] + pr.s[2] * gr[2] + pr.kappa * sol.exact[e * np + i];
      volume_absorbed += J * ones_m[static_cast<Eigen::Index>(i)] * pr.kappa * sol.u[e * np + i];
      source += J * ones_m[static_cast<Eigen::Index>(i)] * S;
    }
    for (int f = 0; f < 4; ++f) {
      if (disc.mesh->neighbour[e][f] >= 0) continue;
      const auto& n = disc.geometry[e].normal[f];
      const double sn = pr.s[0] * n[0] + pr.s[1] * n[1] + pr.s[2] * n[2];
      const double sJ = disc.geometry[e].face_scale[f] * J;
      const Eigen::VectorXd w = ref.face_mass[f] * Eigen::VectorXd::Ones(static_cast<Eigen::Index>(nfp));
      for (std::size_t j = 0; j < nfp; ++j) {
        const std::size_t node = e * np + ref.face_nodes[f][j];
        boundary += sJ * w[static_cast<Eigen::Index>(j)] * sn * (sn < 0 ? sol.exact[node] : sol.u[node]);
      }
    }
  }
  EXPECT_NEAR(volume_absorbed + boundary, source, 1e-9 * std::abs(source));
}

TEST(Transport, NonConvergenceNamesDirectionAndIteration) {
  const auto disc = make_discretization(coarse_cube(), 3);
  transport::CpuTransport op(disc, std::size_t{1} << 30);
  try {
    solve(disc, op, polynomial_problem(4, {0.62402, 0.52802, 0.57602}), transport::BlockKind::none, 1e-14, 2);
    FAIL() << "expected SolverError";
  } catch (const SolverError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("test direction"), std::string::npos) << msg;
    EXPECT_NE(msg.find("iteration 2"), std::string::npos) << msg;
  }
}

TEST(Transport, ErrorNormsUseQuadratureNotNodes) {
  // A field exact at the nodes but wrong between them must show a non-zero L2 error.
  const auto disc = make_discretization(coarse_cube(), 1);
  std::vector<double> u(disc.num_dofs());
  auto f = [](const Vec3& x) { return x[0] * x[0]; };
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = f(disc.node_position[i]);
  const auto norms = error_norms(disc, u, f);
  EXPECT_GT(norms.l2, 1e-3);
  // And is zero for a field in the space.
  auto g = [](const Vec3& x) { return 1 + x[0] - 2 * x[2]; };
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = g(disc.node_position[i]);
  EXPECT_LT(error_norms(disc, u, g).l2, 1e-12);
}

TEST(Transport, PointLocatorEvaluatesThePolynomial) {
  const auto disc = make_discretization(coarse_cube(), 2);
  std::vector<double> u(disc.num_dofs());
  auto g = [](const Vec3& x) { return 1 + x[0] * x[1] - 2 * x[2] * x[2]; };
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = g(disc.node_position[i]);
  const PointLocator loc(disc);
  for (Vec3 x : {Vec3{0.1, -0.3, 0.77}, Vec3{-1, 0, 0}, Vec3{0.999, 0.999, -0.999}}) {
    const auto l = loc.locate(x);
    ASSERT_TRUE(l.has_value());
    EXPECT_NEAR(loc.evaluate(*l, u), g(x), 1e-12);
  }
  EXPECT_FALSE(loc.locate({1.5, 0, 0}).has_value());
}

}  // namespace
}  // namespace dgrte::transport

namespace dgrte::transport {
namespace {
// Gmsh sets the OpenMP thread count to 1 on initialise; reading a mesh must not slow the solve.
TEST(Transport, MeshingKeepsOpenMPThreads) {
  omp_set_num_threads(2);
  (void)mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.9);
  EXPECT_EQ(omp_get_max_threads(), 2);
}
}  // namespace
}  // namespace dgrte::transport
