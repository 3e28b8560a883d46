// Collapsed-coordinate Gauss-Jacobi quadrature on the reference tetrahedron.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dg/reference_tet.hpp"
#include "polynomial_helpers.hpp"

namespace dgrte::dg {
namespace {

using testing::evaluate_monomial;
using testing::exact_tet_integral;

double quadrature_error(const QuadratureRule& rule, const testing::Exponents& e) {
  return std::abs(rule.weights.dot(evaluate_monomial(rule.points, e)) - exact_tet_integral(e));
}

TEST(TetQuadrature, ExactUpToItsDegree) {
  for (int degree = 0; degree <= 18; ++degree) {
    const QuadratureRule rule = tet_quadrature(degree);
    for (const auto& e : testing::monomials_up_to(degree))
      EXPECT_LT(quadrature_error(rule, e), 1e-13)
          << "degree " << degree << " monomial " << e[0] << "," << e[1] << "," << e[2];
  }
}

TEST(TetQuadrature, NotExactOneDegreeAbove) {
  // Odd degrees are sharp (2n-1 = degree with n points per direction).
  for (int degree : {1, 3, 5, 9, 15}) {
    const QuadratureRule rule = tet_quadrature(degree);
    double worst = 0;
    for (const auto& e : testing::monomials_of_degree(degree + 1))
      worst = std::max(worst, quadrature_error(rule, e));
    EXPECT_GT(worst, 1e-6) << "degree " << degree;
  }
}

TEST(TetQuadrature, WeightsPositiveSumToVolumePointsInside) {
  for (int degree : {0, 1, 2, 7, 20, 25}) {
    const QuadratureRule rule = tet_quadrature(degree);
    ASSERT_EQ(rule.points.rows(), rule.weights.size());
    EXPECT_NEAR(rule.weights.sum(), 4.0 / 3.0, 1e-13);
    EXPECT_GT(rule.weights.minCoeff(), 0.0);
    for (Eigen::Index i = 0; i < rule.points.rows(); ++i) {
      EXPECT_GT(rule.points.row(i).minCoeff(), -1.0);
      EXPECT_LT(rule.points.row(i).sum(), -1.0);
    }
  }
}

TEST(TetQuadrature, HighDegreeStillExact) {
  const QuadratureRule rule = tet_quadrature(20);
  for (const auto& e : testing::monomials_of_degree(20))
    EXPECT_LT(quadrature_error(rule, e), 1e-12 * std::max(1.0, std::abs(exact_tet_integral(e))));
}

TEST(TetQuadrature, NegativeDegreeThrows) {
  EXPECT_THROW(tet_quadrature(-1), std::invalid_argument);
}

}  // namespace
}  // namespace dgrte::dg
