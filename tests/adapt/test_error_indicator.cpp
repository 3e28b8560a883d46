// The error indicator (src/adapt/error_indicator.hpp) against the true error of G on manufactured
// solutions: effectivity (estimate / true L2 error of G) within [0.5, 2] over P1-P4 and two meshes
// (issue 32, item 1), with and without scattering; its outputs and its bad inputs.
#include "../common/case_runner.hpp"
#include "adapt/error_indicator.hpp"
#include "common/error.hpp"
#include "dg/reference_tet.hpp"
#include "wsgg_cube.hpp"
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

// A nongray run (src/spectral) estimates each spectral point's error from a companion problem of
// order p + 1 built from the same properties. With a one-point gray model it is the gray run: the
// same estimate to round-off (hot walls and a nonuniform temperature exercise the emission terms).
TEST(ErrorIndicator, NongrayRunOfAGrayModelIsTheGrayRun) {
  const std::string common = "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.5}\norder: 2\n"
                             "angular: {quadrature: sn, order: 4}\nboundaries: {\"*\": {type: black, temperature: 600}}\n"
                             "output: {error_indicator: true, vtk: false}\n";
  const std::string T = "1200 + 300*x*y - 200*z";
  const auto gray = run("gray_model_gray", common + fmt::format("media: {{\"*\": {{kappa: \"2\", temperature: \"{}\"}}}}\n", T));
  const auto nongray = run("gray_model_nongray", common + "model: {type: gray, kappa: 2}\n" +
                                                  fmt::format("media: {{\"*\": {{temperature: \"{}\", pressure: 1, x_h2o: 0.1, x_co2: 0.1}}}}\n", T));
  const auto& a = gray.summary["error_indicator"];
  const auto& b = nongray.summary["error_indicator"];
  EXPECT_EQ(b["problems"].get<int>(), 1);
  for (const char* key : {"G_l2", "G_norm_l2", "divq_l2", "divq_norm_l2", "wall_flux_l2", "wall_flux_norm_l2", "max_element_G"})
    EXPECT_NEAR(b[key].get<double>(), a[key].get<double>(), 1e-9 * std::abs(a[key].get<double>())) << key;
  EXPECT_GT(a["divq_relative"].get<double>(), 1e-4);  // not trivially zero
}

// The summed estimate against the true error of the summed G: a weighted sum of gray gases (Smith
// et al. 1982) in an isothermal cube [-1, 1]^3 with cold black walls has the exact discrete-ordinates
// intensity sum_j a_j I_b (1 - exp(-kappa_j d(x, s))), d the distance to the wall upstream; kappa_j
// and a_j are the model's own (gas library). Effectivity within [0.5, 2] over P1-P3.
TEST(ErrorIndicator, NongrayTracksTheTrueErrorOfTheSummedG) {
  const auto [exact, points] = test_support::wsgg_cube_exact();
  for (int p = 1; p <= 3; ++p) {
    const auto r = run(fmt::format("wsgg_p{}", p), test_support::wsgg_cube_case(p, exact, "output: {error_indicator: true, vtk: false}\n"));
    const auto& ind = r.summary["error_indicator"];
    const double eta = ind["G_l2"].get<double>(), err = r.summary["error"]["G_l2"].get<double>();
    EXPECT_EQ(ind["problems"].get<int>(), points);
    EXPECT_GE(eta / err, 0.5) << "P" << p << ": estimate " << eta << ", true error " << err;
    EXPECT_LE(eta / err, 2.0) << "P" << p << ": estimate " << eta << ", true error " << err;
    std::printf("wsgg P%d: true %.3e (relative %.3e), estimate %.3e, effectivity %.3f\n", p, err,
                r.summary["error"]["G_relative_l2"].get<double>(), eta, eta / err);
  }
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
