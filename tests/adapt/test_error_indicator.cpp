// The error indicator (src/adapt/error_indicator.hpp) against the true error of G on manufactured
// solutions: effectivity (estimate / true L2 error of G) within [0.5, 2] over P1-P4 and two meshes
// (issue 32, item 1), with and without scattering; its outputs and its bad inputs.
#include "../common/case_runner.hpp"
#include "adapt/error_indicator.hpp"
#include "common/error.hpp"
#include "dg/reference_tet.hpp"
#include "io/case_file.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace dgrte {
namespace {

namespace fs = std::filesystem;

// I(x, s) = a(x) (1 + 0.3 sx + 0.2 sy), a = (1 + sin(pi x/2))(1 + sin(pi y/2))(1 + sin(pi z/2)) on
// [-1, 1]^3, entering through `inflow` walls. With kappa and isotropic sigma_s the source is
//   s.grad I + (kappa + sigma_s) I - sigma_s a   (the set's sum of w (1 + 0.3 sx + 0.2 sy) is 4 pi),
// so the discrete-ordinates solution is I(x, s_m) exactly and the DG error is the space error alone.
std::string manufactured_case(int order, double size, double kappa, double sigma_s) {
  const std::string a = "(1+sin(pi*x/2))*(1+sin(pi*y/2))*(1+sin(pi*z/2))";
  const std::string angle = "(1+0.3*sx+0.2*sy)";
  const std::string grad = "pi/2*(sx*cos(pi*x/2)*(1+sin(pi*y/2))*(1+sin(pi*z/2)) + sy*(1+sin(pi*x/2))*cos(pi*y/2)*(1+sin(pi*z/2))"
                           " + sz*(1+sin(pi*x/2))*(1+sin(pi*y/2))*cos(pi*z/2))";
  const std::string exact = a + "*" + angle;
  return fmt::format(
      "mesh: {{geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: {}}}\norder: {}\nangular: {{quadrature: sn, order: 4}}\n"
      "media:\n  \"*\": {{kappa: \"{}\", scattering: \"{}\", Ib: \"0\", source: \"{}*{} + {}*{} - {}*{}\"}}\n"
      "boundaries:\n  \"*\": {{type: inflow, intensity: \"{}\"}}\n"
      "exact: \"{}\"\nsolver: {{outer_tolerance: 1.0e-12}}\noutput: {{error_indicator: true, vtk: {}}}\n",
      size, order, kappa, sigma_s, angle, grad, kappa + sigma_s, exact, sigma_s, a, exact, exact, order == 1 ? "true" : "false");
}

test_support::Run run(const std::string& name, const std::string& body) {
  return test_support::run_yaml("dgrte_adapt_tests", name, body);
}

void expect_effective(double kappa, double sigma_s, const std::string& label) {
  for (const double size : {0.5, 0.35})
    for (int p = 1; p <= 4; ++p) {
      const auto r = run(fmt::format("{}_p{}_h{}", label, p, size), manufactured_case(p, size, kappa, sigma_s));
      const auto& ind = r.summary["error_indicator"];
      const double eta = ind["G_l2"].get<double>(), err = r.summary["error"]["G_l2"].get<double>();
      const double eff = ind["effectivity_G"].get<double>();
      EXPECT_NEAR(eff, eta / err, 1e-12 * eff);
      EXPECT_GE(eff, 0.5) << label << " P" << p << " h " << size << ": estimate " << eta << ", true error " << err;
      EXPECT_LE(eff, 2.0) << label << " P" << p << " h " << size << ": estimate " << eta << ", true error " << err;
      EXPECT_EQ(ind["order"].get<int>(), p + 1);
      if (sigma_s == 0) EXPECT_EQ(ind["sweeps"].get<int>(), 1);  // nothing couples the ordinates: one sweep is exact
      else EXPECT_GE(ind["sweeps"].get<int>(), 2);
      std::printf("%s P%d h %.2f: true %.3e, estimate %.3e, effectivity %.3f, %d sweeps\n", label.c_str(), p, size, err, eta, eff,
                  ind["sweeps"].get<int>());
    }
}

TEST(ErrorIndicator, TracksTheTrueErrorWithoutScattering) { expect_effective(1.0, 0.0, "absorbing"); }

// Scattering couples the ordinates: the order p + 1 sweeps iterate from the p solution's moments.
TEST(ErrorIndicator, TracksTheTrueErrorWithScattering) { expect_effective(0.5, 1.5, "scattering"); }

// The per-element arrays reach solution.vtu; the estimate of the wall flux is positive where the
// walls see the medium.
TEST(ErrorIndicator, WritesCellArrays) {
  const auto r = run("arrays_p1_h0.5", manufactured_case(1, 0.5, 1.0, 0.0));
  std::ifstream in(r.out / "solution.vtu");
  std::stringstream text;
  text << in.rdbuf();
  for (const char* name : {"\"error_indicator\"", "\"error_indicator_wall_flux\"", "\"error_G\""})
    EXPECT_NE(text.str().find(name), std::string::npos) << name;
  EXPECT_GT(r.summary["error_indicator"]["wall_flux_l2"].get<double>(), 0.0);
  EXPECT_LT(r.summary["error_indicator"]["wall_flux_relative"].get<double>(), 1.0);
}

// Prolongation is exact on polynomials of the lower order, and element_l2 integrates exactly.
TEST(ErrorIndicator, ProlongationKeepsThePolynomial) {
  const auto lo = dg::ReferenceTet::build(2), hi = dg::ReferenceTet::build(3);
  std::vector<double> u(static_cast<std::size_t>(lo.num_nodes));
  auto f = [](double r, double s, double t) { return 1 + 2 * r - s * t + 0.5 * r * r; };
  for (int i = 0; i < lo.num_nodes; ++i) u[static_cast<std::size_t>(i)] = f(lo.nodes(i, 0), lo.nodes(i, 1), lo.nodes(i, 2));
  const auto v = adapt::prolong(lo, hi, u);
  ASSERT_EQ(v.size(), static_cast<std::size_t>(hi.num_nodes));
  for (int i = 0; i < hi.num_nodes; ++i) EXPECT_NEAR(v[static_cast<std::size_t>(i)], f(hi.nodes(i, 0), hi.nodes(i, 1), hi.nodes(i, 2)), 1e-13);
}

using test_support::parse_error;

TEST(ErrorIndicator, BadInputNamesTheKey) {
  const std::string mesh = "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.5}\n";
  const std::string medium = "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\nboundaries: {\"*\": {type: black}}\n";
  auto msg = parse_error(mesh + "order: 2\ndirections: [[1, 0, 0]]\n" + medium + "output: {error_indicator: true}\n");
  EXPECT_NE(msg.find("output.error_indicator"), std::string::npos) << msg;
  EXPECT_NE(msg.find("angular"), std::string::npos) << msg;
  msg = parse_error(mesh + "order: 8\nangular: {quadrature: sn, order: 2}\n" + medium + "output: {error_indicator: true}\n");
  EXPECT_NE(msg.find("order <= 7"), std::string::npos) << msg;
  msg = parse_error(mesh + "order: 2\nangular: {quadrature: sn, order: 2}\n" + medium + "output: {error_indicator: 3}\n");
  EXPECT_NE(msg.find("output.error_indicator"), std::string::npos) << msg;
  msg = parse_error(mesh + "order: 2\nangular: {quadrature: sn, order: 2}\n" + medium +
                    "solver: {method: montecarlo}\noutput: {error_indicator: true}\n");
  EXPECT_NE(msg.find("output.error_indicator"), std::string::npos) << msg;
}

}  // namespace
}  // namespace dgrte
