// Reference tetrahedron (Hesthaven & Warburton ch. 6 and 10) against exact answers, N = 1..8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>

#include "dg/reference_tet.hpp"
#include "polynomial_helpers.hpp"

namespace dgrte::dg {
namespace {

using testing::evaluate_monomial;
using testing::exact_tet_integral;
using testing::exact_triangle_integral;
using testing::Exponents;
using testing::monomials_up_to;

// Barycentric coordinates (lambda_0..lambda_3) of the reference vertices v0..v3.
Eigen::Vector4d barycentric(const Eigen::RowVector3d& rst) {
  const double l1 = (1 + rst(0)) / 2, l2 = (1 + rst(1)) / 2, l3 = (1 + rst(2)) / 2;
  return {1 - l1 - l2 - l3, l1, l2, l3};
}

Eigen::RowVector3d from_barycentric(const Eigen::Vector4d& lambda) {
  return {2 * lambda(1) - 1, 2 * lambda(2) - 1, 2 * lambda(3) - 1};
}

double distance_to_nearest_node(const Points& nodes, const Eigen::RowVector3d& point) {
  return (nodes.rowwise() - point).rowwise().norm().minCoeff();
}

class ReferenceTetTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { tet_ = ReferenceTet::build(GetParam()); }
  ReferenceTet tet_;
};

TEST_P(ReferenceTetTest, NodeAndFaceCounts) {
  const int n = GetParam();
  EXPECT_EQ(tet_.order, n);
  EXPECT_EQ(tet_.num_nodes, (n + 1) * (n + 2) * (n + 3) / 6);
  EXPECT_EQ(tet_.num_face_nodes, (n + 1) * (n + 2) / 2);
  EXPECT_EQ(tet_.nodes.rows(), tet_.num_nodes);
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(static_cast<int>(tet_.face_nodes[f].size()), tet_.num_face_nodes) << "face " << f;
    EXPECT_TRUE(std::is_sorted(tet_.face_nodes[f].begin(), tet_.face_nodes[f].end()));
  }
}

TEST_P(ReferenceTetTest, FaceNodesLieOnTheirFaces) {
  // Face f is opposite the vertex whose barycentric coordinate vanishes on it.
  const std::array<int, 4> opposite_vertex = {3, 2, 0, 1};
  for (int f = 0; f < 4; ++f) {
    int on_face = 0;
    for (int i = 0; i < tet_.num_nodes; ++i) {
      const bool on = std::abs(barycentric(tet_.nodes.row(i))(opposite_vertex[f])) < 1e-12;
      on_face += on;
      const bool listed = std::find(tet_.face_nodes[f].begin(), tet_.face_nodes[f].end(), i) !=
                          tet_.face_nodes[f].end();
      EXPECT_EQ(on, listed) << "face " << f << " node " << i;
    }
    EXPECT_EQ(on_face, tet_.num_face_nodes);
  }
}

TEST_P(ReferenceTetTest, VerticesAreNodes) {
  const Points vertices = (Points(4, 3) << -1, -1, -1, 1, -1, -1, -1, 1, -1, -1, -1, 1).finished();
  for (int v = 0; v < 4; ++v)
    EXPECT_LT(distance_to_nearest_node(tet_.nodes, vertices.row(v)), 1e-12);
}

TEST_P(ReferenceTetTest, NodesInsideTet) {
  for (int i = 0; i < tet_.num_nodes; ++i)
    EXPECT_GE(barycentric(tet_.nodes.row(i)).minCoeff(), -1e-12);
}

TEST_P(ReferenceTetTest, NodesDistinct) {
  for (int i = 0; i < tet_.num_nodes; ++i)
    for (int j = i + 1; j < tet_.num_nodes; ++j)
      EXPECT_GT((tet_.nodes.row(i) - tet_.nodes.row(j)).norm(), 1e-3);
}

TEST_P(ReferenceTetTest, NodeSetInvariantUnderVertexPermutations) {
  std::array<int, 4> perm = {0, 1, 2, 3};
  do {
    for (int i = 0; i < tet_.num_nodes; ++i) {
      const Eigen::Vector4d lambda = barycentric(tet_.nodes.row(i));
      Eigen::Vector4d permuted;
      for (int k = 0; k < 4; ++k) permuted(perm[k]) = lambda(k);
      EXPECT_LT(distance_to_nearest_node(tet_.nodes, from_barycentric(permuted)), 1e-12);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST_P(ReferenceTetTest, VandermondeWellConditioned) {
  Eigen::JacobiSVD<Matrix> svd(tet_.vandermonde);
  const double cond = svd.singularValues()(0) / svd.singularValues().tail(1)(0);
  RecordProperty("vandermonde_condition", std::to_string(cond));
  std::printf("N=%d cond(V)=%.6g\n", GetParam(), cond);
  EXPECT_LT(cond, 100.0);
}

TEST_P(ReferenceTetTest, MassIntegratesProductsOfDegreeNPolynomials) {
  const auto monomials = monomials_up_to(GetParam());
  for (const auto& p : monomials) {
    const Eigen::VectorXd up = evaluate_monomial(tet_.nodes, p);
    for (const auto& q : monomials) {
      const Eigen::VectorXd uq = evaluate_monomial(tet_.nodes, q);
      const double exact = exact_tet_integral({p[0] + q[0], p[1] + q[1], p[2] + q[2]});
      EXPECT_NEAR(up.dot(tet_.mass * uq), exact, 1e-12 * std::max(1.0, std::abs(exact)));
    }
  }
}

TEST_P(ReferenceTetTest, MassSumsToVolume) {
  EXPECT_NEAR(tet_.mass.sum(), 4.0 / 3.0, 1e-13);
  EXPECT_NEAR((tet_.mass - tet_.mass.transpose()).norm(), 0.0, 1e-13);
  for (const auto& p : monomials_up_to(GetParam())) {
    const double exact = exact_tet_integral(p);
    EXPECT_NEAR(tet_.mass.colwise().sum().dot(evaluate_monomial(tet_.nodes, p)), exact, 1e-13);
  }
}

TEST_P(ReferenceTetTest, DifferentiationExactForDegreeN) {
  for (const auto& e : monomials_up_to(GetParam())) {
    const Eigen::VectorXd u = evaluate_monomial(tet_.nodes, e);
    const std::array<const Matrix*, 3> d = {&tet_.Dr, &tet_.Ds, &tet_.Dt};
    for (int dim = 0; dim < 3; ++dim) {
      Eigen::VectorXd exact = Eigen::VectorXd::Zero(tet_.num_nodes);
      if (e[dim] > 0) {
        Exponents lowered = e;
        --lowered[dim];
        exact = e[dim] * evaluate_monomial(tet_.nodes, lowered);
      }
      const double error = (*d[dim] * u - exact).lpNorm<Eigen::Infinity>();
      EXPECT_LT(error, 1e-10 * std::max(1.0, exact.lpNorm<Eigen::Infinity>()))
          << "dim " << dim << " monomial " << e[0] << e[1] << e[2];
    }
  }
}

TEST_P(ReferenceTetTest, FaceMassIntegratesFacePolynomials) {
  const std::array<std::array<int, 2>, 4> coords = {{{0, 1}, {0, 2}, {1, 2}, {1, 2}}};
  const int n = GetParam();
  for (int f = 0; f < 4; ++f) {
    const auto& ids = tet_.face_nodes[f];
    Eigen::VectorXd x(ids.size()), y(ids.size());
    for (std::size_t j = 0; j < ids.size(); ++j) {
      x(j) = tet_.nodes(ids[j], coords[f][0]);
      y(j) = tet_.nodes(ids[j], coords[f][1]);
    }
    for (int a = 0; a <= n; ++a)
      for (int b = 0; a + b <= n; ++b)
        for (int c = 0; c <= n; ++c)
          for (int d = 0; c + d <= n; ++d) {
            const Eigen::VectorXd p = x.array().pow(a) * y.array().pow(b);
            const Eigen::VectorXd q = x.array().pow(c) * y.array().pow(d);
            const double exact = exact_triangle_integral(a + c, b + d);
            EXPECT_NEAR(p.dot(tet_.face_mass[f] * q), exact, 1e-12 * std::max(1.0, std::abs(exact)))
                << "face " << f;
          }
  }
}

// Gathers the face traces of a nodal vector: column-major (face, face node) like lift's columns.
Eigen::VectorXd face_trace(const ReferenceTet& tet, const Eigen::VectorXd& u, int face) {
  Eigen::VectorXd trace(tet.num_face_nodes);
  for (int j = 0; j < tet.num_face_nodes; ++j) trace(j) = u(tet.face_nodes[face][j]);
  return trace;
}

TEST_P(ReferenceTetTest, LiftConsistentWithFaceMass) {
  const int nfp = tet_.num_face_nodes;
  ASSERT_EQ(tet_.lift.rows(), tet_.num_nodes);
  ASSERT_EQ(tet_.lift.cols(), 4 * nfp);
  std::srand(1234u + GetParam());
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd u_faces = Eigen::VectorXd::Random(4 * nfp);
    const Eigen::VectorXd v = Eigen::VectorXd::Random(tet_.num_nodes);
    double face_sum = 0;
    for (int f = 0; f < 4; ++f)
      face_sum += face_trace(tet_, v, f).dot(tet_.face_mass[f] * u_faces.segment(f * nfp, nfp));
    EXPECT_NEAR(v.dot(tet_.mass * (tet_.lift * u_faces)), face_sum,
                1e-11 * std::max(1.0, std::abs(face_sum)));
  }
}

// Integration by parts, int v du/dx_d + int u dv/dx_d = sum_f n_d sJ int_f u v, with the face
// integrals given by the lift: M D_d + (M D_d)^T = M LIFT diag(n_d sJ) Gather. On the reference tet
// n_d sJ is -1 on the coordinate face x_d = -1, +1 on face 2 (r+s+t=-1), 0 elsewhere.
TEST_P(ReferenceTetTest, SummationByPartsThroughLift) {
  const int nfp = tet_.num_face_nodes;
  const std::array<const Matrix*, 3> d = {&tet_.Dr, &tet_.Ds, &tet_.Dt};
  const std::array<int, 3> coordinate_face = {3, 1, 0};
  for (int dim = 0; dim < 3; ++dim) {
    Matrix gather_scaled = Matrix::Zero(4 * nfp, tet_.num_nodes);
    for (int j = 0; j < nfp; ++j) {
      gather_scaled(2 * nfp + j, tet_.face_nodes[2][j]) = 1.0;
      gather_scaled(coordinate_face[dim] * nfp + j, tet_.face_nodes[coordinate_face[dim]][j]) =
          -1.0;
    }
    const Matrix md = tet_.mass * *d[dim];
    const Matrix boundary = tet_.mass * tet_.lift * gather_scaled;
    EXPECT_LT((md + md.transpose() - boundary).norm(), 1e-10 * md.norm()) << "dim " << dim;
  }
}

TEST_P(ReferenceTetTest, InterpolationReproducesDegreeNPolynomials) {
  const Points points = testing::random_points_in_tet(50, 42u + GetParam());
  const Matrix interp = tet_.interpolation_matrix(points);
  ASSERT_EQ(interp.rows(), 50);
  ASSERT_EQ(interp.cols(), tet_.num_nodes);
  for (const auto& e : monomials_up_to(GetParam())) {
    const Eigen::VectorXd error =
        interp * evaluate_monomial(tet_.nodes, e) - evaluate_monomial(points, e);
    EXPECT_LT(error.lpNorm<Eigen::Infinity>(), 1e-12);
  }
}

TEST_P(ReferenceTetTest, InterpolationAtNodesIsIdentity) {
  const Matrix interp = tet_.interpolation_matrix(tet_.nodes);
  EXPECT_LT((interp - Matrix::Identity(tet_.num_nodes, tet_.num_nodes)).lpNorm<Eigen::Infinity>(),
            1e-12);
}

INSTANTIATE_TEST_SUITE_P(Orders1To8, ReferenceTetTest, ::testing::Range(kMinOrder, kMaxOrder + 1));

TEST(ReferenceTet, BadOrderThrows) {
  for (int order : {-1, 0, 9, 20}) {
    try {
      ReferenceTet::build(order);
      FAIL() << "order " << order << " accepted";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::to_string(order)), std::string::npos) << message;
      EXPECT_NE(message.find("[1, 8]"), std::string::npos) << message;
    }
  }
  EXPECT_THROW(warp_blend_nodes(0), std::invalid_argument);
}

TEST(ReferenceTet, OrthonormalBasisIsOrthonormal) {
  const QuadratureRule rule = tet_quadrature(2 * 6);
  const Matrix psi = orthonormal_basis(6, rule.points);
  const Matrix gram = psi.transpose() * rule.weights.asDiagonal() * psi;
  EXPECT_LT((gram - Matrix::Identity(gram.rows(), gram.cols())).norm(), 1e-12);
}

}  // namespace
}  // namespace dgrte::dg
