// The medium at the property points (transport/reaction.hpp): the reaction blocks and projections
// against exact integrals and polynomial reproduction.
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"

#include "mesh/tet_mesh.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dgrte::transport {
namespace {

const mesh::TetMesh& cube_mesh() {
  static const auto m = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.6);
  return m;
}

template <typename F>
std::vector<double> at_points(const Discretization& disc, F f) {
  std::vector<double> v;
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (const auto& x : disc.property_points(e)) v.push_back(f(x));
  return v;
}

template <typename F>
std::vector<double> at_nodes(const Discretization& disc, F f) {
  std::vector<double> v;
  for (const auto& x : disc.node_position) v.push_back(f(x));
  return v;
}

class Reaction : public ::testing::TestWithParam<int> {};

TEST_P(Reaction, ConstantFieldsKeepTheDiagonalForm) {
  const auto disc = make_discretization(cube_mesh(), GetParam());
  auto constant = [](const Vec3&) { return 2.5; };
  const auto r = ReactionTerm::from_points(disc, at_points(disc, constant), at_nodes(disc, constant));
  EXPECT_EQ(r.num_blocks(), 0u);
  for (std::size_t e = 0; e < disc.num_elements(); ++e) EXPECT_EQ(r.block(e), nullptr);
  for (double v : r.nodal()) EXPECT_EQ(v, 2.5);
}

// K_e 1 is the L2 projection of sigma: exact (the nodal values) for sigma of degree <= p; and
// 1^T M K_e u is the integral of sigma u for polynomials sigma, u with deg(sigma) + deg(u) <= 2p + 1.
TEST_P(Reaction, BlocksAreTheGalerkinMassOfSigma) {
  const int p = GetParam();
  const auto disc = make_discretization(cube_mesh(), p);
  auto sigma = [](const Vec3& x) { return 1.0 + 0.5 * x[0] - 0.3 * x[1] + 0.2 * x[2]; };
  const auto r = ReactionTerm::from_points(disc, at_points(disc, sigma), at_nodes(disc, sigma));
  ASSERT_EQ(r.num_blocks(), disc.num_elements());
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  auto u = [p](const Vec3& x) { return std::pow(x[0] + 2 * x[1] - x[2] + 0.3, p); };
  const auto un = at_nodes(disc, u);
  const auto sn = at_nodes(disc, sigma);
  const auto fine = dg::tet_quadrature(2 * p + 4);
  double worst_projection = 0, worst_integral = 0;
  for (std::size_t e = 0; e < disc.num_elements(); ++e) {
    std::vector<double> ones(np, 1.0), y(np, 0.0);
    r.apply_add(e, ones.data(), y.data());
    for (std::size_t i = 0; i < np; ++i) worst_projection = std::max(worst_projection, std::abs(y[i] - sn[e * np + i]));
    const auto v = disc.element_vertices(e);
    double exact = 0;
    for (Eigen::Index q = 0; q < fine.weights.size(); ++q) {
      const auto x = dg::map_to_physical(v, fine.points(q, 0), fine.points(q, 1), fine.points(q, 2));
      exact += fine.weights[q] * sigma(x) * u(x);
    }
    worst_integral = std::max(worst_integral, std::abs(r.element_integral(disc, e, un.data() + e * np) - exact) / std::abs(exact));
  }
  EXPECT_LT(worst_projection, 1e-12);
  EXPECT_LT(worst_integral, 1e-11);
}

TEST_P(Reaction, ProjectionReproducesPolynomialsOfTheOrder) {
  const int p = GetParam();
  const auto disc = make_discretization(cube_mesh(), p);
  auto f = [p](const Vec3& x) { return std::pow(0.4 * x[0] - x[1] + 0.7 * x[2] + 1.1, p) + x[1]; };
  const auto projected = project_points(disc, at_points(disc, f));
  const auto exact = at_nodes(disc, f);
  for (std::size_t k = 0; k < exact.size(); ++k) EXPECT_NEAR(projected[k], exact[k], 1e-11 * (1 + std::abs(exact[k])));
}

// ReactionTerm::projection (what Monte Carlo and the final gather read): K_e 1 equals the L2
// projection of the point values, and keeps each element's exact mean of a field of degree p + 1,
// which the nodal values do not.
TEST_P(Reaction, ProjectionIsTheL2ProjectionAndKeepsTheMean) {
  const int p = GetParam();
  const auto disc = make_discretization(cube_mesh(), p);
  auto sigma = [p](const Vec3& x) { return 2.0 + std::pow(0.6 * x[0] - 0.8 * x[1] + 0.5 * x[2], p + 1); };
  const auto r = ReactionTerm::from_points(disc, at_points(disc, sigma), at_nodes(disc, sigma));
  const auto projected = r.projection();
  const auto reference = project_points(disc, at_points(disc, sigma));
  const auto sn = at_nodes(disc, sigma);
  const Eigen::VectorXd w = disc.ref.mass.colwise().sum().transpose();
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  const auto fine = dg::tet_quadrature(2 * p + 4);
  double worst_projection = 0, worst_mean = 0, nodal_mean_error = 0;
  for (std::size_t e = 0; e < disc.num_elements(); ++e) {
    const auto v = disc.element_vertices(e);
    double exact = 0;
    for (Eigen::Index q = 0; q < fine.weights.size(); ++q)
      exact += fine.weights[q] * sigma(dg::map_to_physical(v, fine.points(q, 0), fine.points(q, 1), fine.points(q, 2)));
    exact /= fine.weights.sum();
    double mean = 0, nodal = 0;
    for (std::size_t i = 0; i < np; ++i) {
      worst_projection = std::max(worst_projection, std::abs(projected[e * np + i] - reference[e * np + i]));
      mean += w[static_cast<Eigen::Index>(i)] * projected[e * np + i] / w.sum();
      nodal += w[static_cast<Eigen::Index>(i)] * sn[e * np + i] / w.sum();
    }
    worst_mean = std::max(worst_mean, std::abs(mean - exact));
    nodal_mean_error = std::max(nodal_mean_error, std::abs(nodal - exact));
  }
  EXPECT_LT(worst_projection, 1e-12);
  EXPECT_LT(worst_mean, 1e-12);
  EXPECT_GT(nodal_mean_error, 1e-6);  // the case tells the two apart
}

// A kinked field: the element integrals of the projection converge to the exact integral of the
// field itself (the nodal interpolant would not: it misses the kink inside the element).
TEST(ReactionKink, ProjectionIntegratesAKinkedFieldBetterThanTheNodes) {
  const auto disc = make_discretization(cube_mesh(), 2);
  const double c = 0.137;
  auto f = [c](const Vec3& x) { return std::abs(x[0] - c); };
  const auto projected = project_points(disc, at_points(disc, f));
  const auto nodal = at_nodes(disc, f);
  const Eigen::VectorXd w = disc.ref.mass.colwise().sum().transpose();
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  double total_projected = 0, total_nodal = 0;
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (std::size_t i = 0; i < np; ++i) {
      total_projected += disc.geometry[e].jacobian * w[static_cast<Eigen::Index>(i)] * projected[e * np + i];
      total_nodal += disc.geometry[e].jacobian * w[static_cast<Eigen::Index>(i)] * nodal[e * np + i];
    }
  // The cube [-1, 1]^3: integral of |x - c| = 4 ((1 - c)^2 + (1 + c)^2) / 2.
  const double exact = 2 * ((1 - c) * (1 - c) + (1 + c) * (1 + c));
  EXPECT_LT(std::abs(total_projected - exact) / exact, 0.5 * std::abs(total_nodal - exact) / exact);
}

INSTANTIATE_TEST_SUITE_P(Orders, Reaction, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace dgrte::transport
