// Exact 1-D slab solver against closed forms (gray slabs: E2/E3 results), limits, energy balance,
// and case-file errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "common/error.hpp"
#include "gas/gas_common.hpp"
#include "gas/slab.hpp"
#include "gas_test_util.hpp"

using namespace dgrte::gas;
using gastest::expint;

namespace {
SlabCase gray_case(double kappa, double t, double L, SlabWall left, SlabWall right, int points = 101) {
  SlabCase c;
  c.file = "test";
  c.length = L;
  c.points = points;
  c.temperature = fmt::format("{}", t);
  c.left = left;
  c.right = right;
  c.model = YAML::Load(fmt::format("{{type: gray, kappa: {}}}", kappa));
  return c;
}

// isothermal gray slab (kappa, Eb) between gray walls: exact q and divq via E2/E3
void exact_isothermal(double kappa, double eb, double L, double eps0, double eb0, double eps1, double eb1, double x,
                      double& q, double& divq) {
  const double tl = kappa * L, t = kappa * x;
  const double tr = 2 * expint(3, tl), hmed = eb * (1 - tr);
  const double a0 = eps0 * eb0 + (1 - eps0) * hmed, a1 = eps1 * eb1 + (1 - eps1) * hmed;
  const double r0 = 1 - eps0, r1 = 1 - eps1;
  const double j0 = (a0 + r0 * tr * a1) / (1 - r0 * r1 * tr * tr), j1 = a1 + r1 * tr * j0;
  q = 2 * j0 * expint(3, t) - 2 * j1 * expint(3, tl - t) + eb * (2 * expint(3, tl - t) - 2 * expint(3, t));
  const double G = 2 * j0 * expint(2, t) + 2 * j1 * expint(2, tl - t) + 2 * eb * (2 - expint(2, t) - expint(2, tl - t));
  divq = kappa * (4 * eb - G);
}
}  // namespace

TEST(Slab, ExponentialIntegralHelper) {
  EXPECT_NEAR(expint(3, 1.0), 0.1096919672, 1e-9);
  EXPECT_NEAR(expint(2, 0.1), 0.7225450221, 1e-9);
}

TEST(Slab, IsothermalGrayBlackWalls) {
  for (double kappa : {0.1, 1.0, 5.0}) {
    auto c = gray_case(kappa, 1000, 1.0, {0, 1}, {0, 1});
    auto r = solve_slab(c);
    const double eb = kSigma * 1e12;
    for (std::size_t i = 0; i < r.x.size(); ++i) {
      double q, d;
      exact_isothermal(kappa, eb, 1.0, 1, 0, 1, 0, r.x[i], q, d);
      EXPECT_NEAR(r.q[i], q, 1e-6 * eb) << kappa << " x=" << r.x[i];
      EXPECT_NEAR(r.divq[i], d, 1e-6 * eb * std::max(1.0, kappa)) << kappa << " x=" << r.x[i];
    }
    EXPECT_NEAR(r.q_right, eb * (1 - 2 * expint(3, kappa)), 1e-7 * eb);
  }
}

TEST(Slab, IsothermalGrayReflectingWalls) {
  const double eb = kSigma * std::pow(1200.0, 4);
  auto c = gray_case(0.7, 1200, 2.0, {500, 0.4}, {900, 0.75});
  auto r = solve_slab(c);
  const double eb0 = kSigma * std::pow(500.0, 4), eb1 = kSigma * std::pow(900.0, 4);
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    double q, d;
    exact_isothermal(0.7, eb, 2.0, 0.4, eb0, 0.75, eb1, r.x[i], q, d);
    EXPECT_NEAR(r.q[i], q, 1e-6 * eb) << r.x[i];
    EXPECT_NEAR(r.divq[i], d, 1e-6 * eb) << r.x[i];
  }
}

TEST(Slab, TransparentLimit) {
  auto c = gray_case(0.0, 1500, 1.0, {1000, 0.6}, {400, 0.3});
  auto r = solve_slab(c);
  const double q = kSigma * (std::pow(1000.0, 4) - std::pow(400.0, 4)) / (1 / 0.6 + 1 / 0.3 - 1);
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    EXPECT_NEAR(r.q[i], q, 1e-9 * std::abs(q));
    EXPECT_NEAR(r.divq[i], 0.0, 1e-12);
  }
}

TEST(Slab, OpticallyThickDiffusionLimit) {
  // T^4 linear in x, black walls at the end temperatures: interior flux = -(4 sigma / 3 kappa) dT^4/dx
  const double kappa = 100, t0 = 1000, t1 = 1500, L = 1;
  SlabCase c = gray_case(kappa, 0, L, {t0, 1}, {t1, 1}, 201);
  c.temperature = fmt::format("({} + ({} - {}) * x / L)^0.25", std::pow(t0, 4), std::pow(t1, 4), std::pow(t0, 4));
  c.refine = 8;
  auto r = solve_slab(c);
  const double qd = -4 * kSigma / (3 * kappa) * (std::pow(t1, 4) - std::pow(t0, 4)) / L;
  const std::size_t mid = r.x.size() / 2;
  EXPECT_NEAR(r.q[mid], qd, 1e-4 * std::abs(qd));
  EXPECT_NEAR(r.divq[mid], 0.0, 1e-4 * std::abs(qd) * kappa);
}

TEST(Slab, EnergyBalanceNonuniformWsgg) {
  SlabCase c;
  c.file = "test";
  c.length = 1;
  c.points = 201;
  c.temperature = "800 + 4000*x*(L-x)/L^2";
  c.x_h2o = "0.12 + 0.8*x*(L-x)/L^2";
  c.x_co2 = "0.05";
  c.left = {600, 0.8};
  c.right = {1000, 0.5};
  c.gasdata = gastest::gasdata_dir();
  c.model = YAML::Load("{type: wsgg, correlation: bordbar2014}");
  auto r = solve_slab(c);
  double qmax = 0;
  for (double q : r.q) qmax = std::max(qmax, std::abs(q));
  EXPECT_NEAR(r.divq_integral, r.q_right - r.q_left, 2e-4 * qmax);
  EXPECT_EQ(r.spectral_points, 5);
}

TEST(Slab, CaseFileErrorsNameKeys) {
  auto expect_error = [](const std::string& yaml, const std::string& needle) {
    try {
      auto c = parse_slab_case(YAML::Load(yaml), "case.yaml");
      (void)solve_slab(c);
      ADD_FAILURE() << "no error for: " << yaml;
    } catch (const dgrte::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string base = "slab: {length: 1, points: 11, temperature: '1000', ";
  expect_error(base + "x_h2o: '0.1', colour: red}", "slab.colour");
  expect_error(base + "x_h2o: '0.1 +* 2'}", "slab.x_h2o");
  expect_error(base + "x_h2o: 'y'}", "slab.x_h2o");
  expect_error(base + "x_h2o: '0.8', x_co2: '0.3'}", "sum");
  expect_error("slab: {length: -1, temperature: 1000}", "slab.length");
  expect_error(base + "walls: {left: {temperature: 300, emissivity: 1.5}}}", "slab.walls.left.emissivity");
  expect_error(base + "walls: {left: {temperature: hot}}}", "slab.walls.left.temperature");
  expect_error(base + "x_h2o: '0.1'}\nmodel: {type: gray, kapa: 1}", "model.kapa");
  expect_error(base + "x_h2o: '0.1'}\nmodel: {type: wsgg, correlation: foo}", "model.correlation");
  expect_error(base + "x_h2o: '0.1'}\nfoo: 1", "foo");
}

TEST(Slab, WritesCsvAndSummary) {
  auto c = gray_case(1.0, 1000, 1.0, {0, 1}, {0, 1}, 11);
  auto r = solve_slab(c);
  const auto dir = std::filesystem::temp_directory_path() / "dgrte_slab_out";
  write_slab_output(c, r, dir);
  std::ifstream f(dir / "slab.csv");
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header, "x,q,divq");
  EXPECT_TRUE(std::filesystem::exists(dir / "summary.json"));
  std::filesystem::remove_all(dir);
}
