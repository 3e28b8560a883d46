// `dgrte run` end to end: outputs and summary.json contract, probes, and case/mesh mismatches.
#include "app/run_case.hpp"
#include "common/error.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace dgrte::app {
namespace {

namespace fs = std::filesystem;

fs::path write_case(const std::string& name, const std::string& body) {
  const auto dir = fs::temp_directory_path() / "dgrte_app_tests";
  fs::create_directories(dir);
  const auto f = dir / (name + ".yaml");
  std::ofstream(f) << body;
  return f;
}

std::string base_case(const std::string& media = "\"*\": {kappa: \"0.1\", Ib: \"(1+sin(pi*x/2))*(1+sin(pi*y/2))*(1+sin(pi*z/2))\","
                                                 " source: \"pi/2*(sx*cos(pi*x/2)*(1+sin(pi*y/2))*(1+sin(pi*z/2)) + sy*(1+sin(pi*x/2))*cos(pi*y/2)*(1+sin(pi*z/2)) + sz*(1+sin(pi*x/2))*(1+sin(pi*y/2))*cos(pi*z/2))\"}",
                      const std::string& bnd = "\"*\": {type: inflow, intensity: \"(1+sin(pi*x/2))*(1+sin(pi*y/2))*(1+sin(pi*z/2))\"}") {
  return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.8}\n"
         "order: 2\n"
         "directions: [[0.62402, 0.52802, 0.57602], [-0.6, 0.0, 0.8]]\n"
         "media:\n  " + media + "\n"
         "boundaries:\n  " + bnd + "\n"
         "exact: \"(1+sin(pi*x/2))*(1+sin(pi*y/2))*(1+sin(pi*z/2))\"\n"
         "output:\n  probes:\n    - {name: line, from: [-1, 0, 0], to: [1.5, 0, 0], points: 6}\n";
}

TEST(RunCase, WritesOutputsAndSummary) {
  const auto out = fs::temp_directory_path() / "dgrte_app_tests" / "out";
  fs::remove_all(out);
  RunOptions opt;
  opt.case_file = write_case("good", base_case());
  opt.output_directory = out;
  opt.quiet = true;
  const auto s = run_case(opt);
  EXPECT_TRUE(fs::exists(out / "solution.vtu"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_EQ(s["order"], 2);
  EXPECT_EQ(s["nodes_per_element"], 10);
  EXPECT_EQ(s["dofs"].get<std::size_t>(), s["mesh"]["elements"].get<std::size_t>() * 10);
  ASSERT_EQ(s["solves"].size(), 2u);
  for (const auto& solve : s["solves"]) {
    EXPECT_TRUE(solve["converged"].get<bool>());
    EXPECT_LT(solve["relative_residual"].get<double>(), 1e-9);
    EXPECT_GT(solve["iterations"].get<int>(), 0);
  }
  for (const char* k : {"setup_seconds", "solve_seconds", "total_seconds"}) EXPECT_TRUE(s["timing"].contains(k)) << k;
  EXPECT_GT(s["grind_ns_per_dof"].get<double>(), 0);
  EXPECT_LT(s["error"]["relative_l2"].get<double>(), 0.05);
  EXPECT_GT(s["error"]["l2"].get<double>(), 0);
  EXPECT_EQ(s["mesh"]["surface_groups"].size(), 6u);
  // Probe CSV: header, one row per point, the point outside the mesh as nan (with a warning).
  std::ifstream csv(out / "probes" / "line.csv");
  std::string comment, header, line;
  std::getline(csv, comment);
  EXPECT_EQ(comment.rfind("# x, y, z, distance along the line [m]; I_d: intensity [W/(m^2 sr)]", 0), 0u) << comment;
  EXPECT_NE(comment.find("I_1 = ("), std::string::npos) << comment;
  std::getline(csv, header);
  EXPECT_EQ(header, "x,y,z,distance,I_0,I_1");
  int rows = 0;
  std::string last;
  while (std::getline(csv, line)) ++rows, last = line;
  EXPECT_EQ(rows, 6);
  EXPECT_NE(last.find("nan"), std::string::npos);
  EXPECT_FALSE(s["warnings"].empty());
}

std::string error_of(const std::string& body) {
  RunOptions opt;
  opt.case_file = write_case("bad", body);
  opt.output_directory = fs::temp_directory_path() / "dgrte_app_tests" / "bad_out";
  opt.quiet = true;
  try {
    run_case(opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RunCase, GroupNotInMeshIsAnError) {
  const auto msg = error_of(base_case("\"*\": {kappa: \"1\", Ib: \"0\"}\n  fuel: {kappa: \"1\", Ib: \"0\"}"));
  EXPECT_NE(msg.find("media.fuel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no volume physical group 'fuel'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("medium"), std::string::npos) << msg;  // lists what the mesh has
  EXPECT_NE(msg.find("(line 6)"), std::string::npos) << msg;  // the line of the 'fuel' entry
}

TEST(RunCase, MeshGroupWithoutEntryIsAnError) {
  const auto msg = error_of(base_case("\"*\": {kappa: \"1\", Ib: \"0\"}", "xmin: {type: black}\n  xmax: {type: black}"));
  EXPECT_NE(msg.find("boundaries"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'ymin'"), std::string::npos) << msg;
}

TEST(RunCase, NegativeKappaIsAnError) {
  const auto msg = error_of(base_case("\"*\": {kappa: \"x\", Ib: \"0\"}"));
  EXPECT_NE(msg.find("media.*.kappa (line 5)"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" at ("), std::string::npos) << msg;  // where the value is negative
}

TEST(RunCase, NegativeTemperatureIsAnError) {
  // Media and walls: key, line and a location; a run must not go on with exit 0.
  const auto medium = error_of(base_case("\"*\": {kappa: \"1\", temperature: \"-5\"}"));
  EXPECT_NE(medium.find("media.*.temperature (line 5)"), std::string::npos) << medium;
  EXPECT_NE(medium.find(" at ("), std::string::npos) << medium;
  const auto wall = error_of("mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.8}\norder: 1\n"
                             "angular: {quadrature: sn, order: 2}\nmedia:\n  \"*\": {kappa: \"1\", Ib: \"1\"}\n"
                             "boundaries:\n  \"*\": {type: black, temperature: \"300 - 400*x\"}\noutput: {vtk: false}\n");
  EXPECT_NE(wall.find("boundaries.*.temperature (line 7)"), std::string::npos) << wall;
  EXPECT_NE(wall.find("at ("), std::string::npos) << wall;
}

}  // namespace
}  // namespace dgrte::app
