// `dgrte run` end to end: outputs and summary.json contract, probes, and case/mesh mismatches.
#include "dgrte/dgrte.hpp"
#include "common/error.hpp"
#include "../common/case_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
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

// Results::probes holds the columns of the CSV files the command line writes, for a directions run
// (with a point outside the mesh) and a Monte Carlo run (with the *_stderr columns), and dgrte::run
// without an output folder writes no probes.
TEST(RunCase, ResultsHoldTheProbeFiles) {
  const std::string mc = "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.8}\n"
                         "media: {\"*\": {kappa: \"0.5\", temperature: \"1000\"}}\n"
                         "boundaries: {\"*\": {type: black, temperature: 0}}\n"
                         "solver: {method: montecarlo, paths: 2e4, batches: 4, seed: 3, probe_rays: 50}\n"
                         "output:\n  vtk: false\n  probes:\n    - {name: axis, from: [0, 0, -0.5], to: [0, 0, 0.5], points: 3}\n"
                         "    - {name: wall, from: [-0.5, 0, -1], to: [0.5, 0, -1], points: 3, wall: zmin}\n";
  for (const auto& [name, body] : {std::pair<std::string, std::string>{"probes_directions", base_case()}, {"probes_mc", mc}}) {
    RunOptions opt;
    opt.case_file = write_case(name, body);
    opt.output_directory = fs::temp_directory_path() / "dgrte_app_tests" / (name + "_out");
    opt.quiet = true;
    fs::remove_all(*opt.output_directory);
    const auto written = run(opt);
    ASSERT_FALSE(written.probes.empty()) << name;
    for (const auto& [probe, columns] : written.probes) {
      const auto file = test_support::read_csv(*opt.output_directory / "probes" / (probe + ".csv"));
      ASSERT_EQ(file.size(), columns.size()) << name << " " << probe;
      for (const auto& [c, values] : file) {
        ASSERT_TRUE(columns.contains(c)) << name << " " << probe << " " << c;
        ASSERT_EQ(columns.at(c).size(), values.size()) << c;
        for (std::size_t i = 0; i < values.size(); ++i)
          if (std::isnan(values[i])) EXPECT_TRUE(std::isnan(columns.at(c)[i])) << c << " " << i;
          else EXPECT_EQ(columns.at(c)[i], values[i]) << c << " " << i;
      }
    }
    opt.output_directory.reset();
    opt.write_files = false;
    const auto kept = run(opt);
    EXPECT_EQ(kept.probes.size(), written.probes.size()) << name;
  }
  RunOptions opt;
  opt.case_file = write_case("probes_mc", mc);
  opt.quiet = true;
  opt.write_files = false;
  const auto r = run(opt);
  ASSERT_TRUE(r.probes.contains("axis") && r.probes.contains("wall"));
  EXPECT_TRUE(r.probes.at("axis").contains("divq_stderr"));
  EXPECT_TRUE(r.probes.at("wall").contains("q_net_stderr"));
  EXPECT_EQ(r.probes.at("wall").at("q_in").size(), 3u);
}

std::string error_of(const std::string& body) {
  RunOptions opt;
  // CTest runs each test as its own process, in parallel: one case file and folder per test.
  const std::string name = std::string("bad_") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  opt.case_file = write_case(name, body);
  opt.output_directory = fs::temp_directory_path() / "dgrte_app_tests" / (name + "_out");
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

// Spectral gas models through `dgrte run`: a cube of gas in an angular run.
std::string gas_case(const std::string& model, const std::string& medium, const std::string& walls) {
  return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.8}\norder: 2\n"
         "angular: {quadrature: sn, order: 4}\n" + model +
         "media:\n  \"*\": " + medium + "\nboundaries:\n  \"*\": " + walls + "\n"
         "solver: {outer_tolerance: 1.0e-12}\noutput: {vtk: false}\n";
}

nlohmann::json run_text(const std::string& name, const std::string& body) {
  RunOptions opt;
  opt.case_file = write_case(name, body);
  opt.output_directory = fs::temp_directory_path() / "dgrte_app_tests" / (name + "_out");
  opt.quiet = true;
  return run_case(opt);
}

TEST(RunCase, GrayGasModelGivesTheGrayRun) {
  // One spectral point of weight 1: the model's kappa(T) must reproduce the plain gray case exactly.
  const std::string walls = "{type: gray, emissivity: 0.7, temperature: \"500 + 100*x\"}";
  const auto gray = run_text("gray_plain", gas_case("", "{kappa: \"0.4\", temperature: \"1200 + 200*z\", scattering: \"0.3\"}", walls));
  const auto model = run_text("gray_model", gas_case("model: {type: gray, kappa: \"0.4\"}\n",
                                                     "{temperature: \"1200 + 200*z\", scattering: \"0.3\"}", walls));
  ASSERT_TRUE(model.contains("spectral"));
  EXPECT_EQ(model["spectral"]["spectral_points"], 1);
  EXPECT_EQ(model["spectral"]["model"], "gray");
  for (const char* g : {"xmin", "zmax"}) {
    const double a = gray["walls"][g]["q_net_W"].get<double>(), b = model["walls"][g]["q_net_W"].get<double>();
    EXPECT_NEAR(b, a, 1e-9 * std::abs(a)) << g;
  }
  EXPECT_NEAR(model["energy_balance"]["volume_W"].get<double>(), gray["energy_balance"]["volume_W"].get<double>(),
              1e-9 * std::abs(gray["energy_balance"]["volume_W"].get<double>()));
}

TEST(RunCase, WsggIsothermalEnclosureIsInEquilibrium) {
  // Gas and black walls at one temperature: every spectral point j is in equilibrium with weight
  // a_j(T) on both, and the weights sum to 1, so div q = 0, q_net = 0 and G = 4 sigma T^4 in total.
  const auto s = run_text("wsgg_eq", gas_case("model: {type: wsgg}\n", "{temperature: \"1400\", x_h2o: \"0.2\", x_co2: \"0.1\"}",
                                              "{type: black, temperature: 1400}"));
  EXPECT_EQ(s["spectral"]["spectral_points"], 5);
  EXPECT_GE(s["spectral"]["property_seconds"].get<double>(), 0.0);
  EXPECT_GT(s["spectral"]["transport_seconds"].get<double>(), 0.0);
  const double emitted = 5.670374419e-8 * std::pow(1400.0, 4);  // per unit wall area
  for (const auto& [g, w] : s["walls"].items()) {
    EXPECT_NEAR(w["q_net_mean"].get<double>(), 0.0, 1e-8 * emitted) << g;
    // Black walls emit I_b(T) H_n over the set (= sigma T^4 H_n / pi) and absorb what they emit.
    EXPECT_NEAR(w["q_out_W"].get<double>() / w["area"].get<double>(), emitted, 0.06 * emitted) << g;
    EXPECT_NEAR(w["q_out_W"].get<double>(), w["emitted_W"].get<double>(), 1e-8 * w["emitted_W"].get<double>()) << g;
    EXPECT_NEAR(w["q_in_W"].get<double>(), w["q_out_W"].get<double>(), 1e-8 * w["q_out_W"].get<double>()) << g;
  }
  EXPECT_NEAR(s["energy_balance"]["volume_W"].get<double>(), 0.0, 1e-8 * emitted);
  // The Planck-mean kappa of the mixture is positive and finite.
  EXPECT_GT(s["spectral"]["planck_mean_kappa_volume_average"].get<double>(), 0.0);
}

// Soot through `dgrte run`. A gray run adds the Planck-mean soot kappa to kappa; `model: {type: gray}`
// multiplies in one soot interval, which is the same Planck mean: the two runs agree to round-off.
// With a gas model, gas + soot + black walls at one temperature stay in equilibrium.
TEST(RunCase, SootInGrayAndGasRuns) {
  const std::string walls = "{type: gray, emissivity: 0.7, temperature: \"500 + 100*x\"}";
  const std::string soot = "soot_fv: \"1e-6 * (1 + 0.5 * x)\"";
  const auto gray = run_text("soot_gray_plain", gas_case("", "{kappa: \"0.4\", temperature: \"1200 + 200*z\", " + soot + "}", walls));
  const auto model = run_text("soot_gray_model", gas_case("model: {type: gray, kappa: \"0.4\"}\n",
                                                          "{temperature: \"1200 + 200*z\", " + soot + "}", walls));
  ASSERT_TRUE(gray.contains("spectral") && gray["spectral"].contains("soot"));
  EXPECT_EQ(gray["spectral"]["soot"]["model"], "chang-charalampopoulos-1990");
  EXPECT_EQ(model["spectral"]["soot"]["treatment"], "multiplication");
  EXPECT_EQ(model["spectral"]["soot"]["soot_intervals"], 1);
  EXPECT_DOUBLE_EQ(gray["spectral"]["soot"]["constant"].get<double>(), model["spectral"]["soot"]["constant"].get<double>());
  for (const char* g : {"xmin", "zmax"}) {
    const double a = gray["walls"][g]["q_net_W"].get<double>(), b = model["walls"][g]["q_net_W"].get<double>();
    EXPECT_NEAR(b, a, 1e-9 * std::abs(a)) << g;
  }
  const auto clean = run_text("soot_gray_none", gas_case("", "{kappa: \"0.4\", temperature: \"1200 + 200*z\"}", walls));
  EXPECT_FALSE(clean.contains("spectral"));
  EXPECT_GT(std::abs(gray["energy_balance"]["volume_W"].get<double>()), 1.5 * std::abs(clean["energy_balance"]["volume_W"].get<double>()));
  const auto eq = run_text("soot_wsgg_eq", gas_case("model: {type: wsgg}\n", "{temperature: \"1400\", x_h2o: \"0.2\", x_co2: \"0.1\", " + soot + "}",
                                                    "{type: black, temperature: 1400}"));
  EXPECT_EQ(eq["spectral"]["spectral_points"], 30);
  EXPECT_EQ(eq["spectral"]["soot"]["treatment"], "multiplication");
  const double emitted = 5.670374419e-8 * std::pow(1400.0, 4);
  EXPECT_NEAR(eq["energy_balance"]["volume_W"].get<double>(), 0.0, 1e-8 * emitted);
  const auto bad = error_of(gas_case("model: {type: wsgg}\n", "{temperature: \"1400\", x_h2o: \"0.2\", soot_fv: \"-1e-7\"}",
                                     "{type: black, temperature: 1400}"));
  EXPECT_NE(bad.find("media.*.soot_fv"), std::string::npos) << bad;
  EXPECT_NE(bad.find("[0, 1)"), std::string::npos) << bad;
}

TEST(RunCase, BadGasStateNamesTheEntryAndNode) {
  const auto msg = error_of(gas_case("model: {type: wsgg}\n", "{temperature: \"1400\", x_h2o: \"0.2 + x\", x_co2: \"0.1\"}",
                                     "{type: black, temperature: 1400}"));
  EXPECT_NE(msg.find("media.*"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at the node ("), std::string::npos) << msg;
}

TEST(RunCase, GasStateFromAFieldFile) {
  // A CSV cloud holding the same (uniform) state as the expressions gives the same run; the summary
  // reports the file's and the nodes' ranges.
  const auto csv = fs::temp_directory_path() / "dgrte_app_tests" / "cfd.csv";
  {
    std::ofstream out(csv);
    out << "x,y,z,T,XH2O\n";
    for (int k = -2; k <= 2; ++k)
      for (int j = -2; j <= 2; ++j)
        for (int i = -2; i <= 2; ++i) out << 0.5 * i << "," << 0.5 * j << "," << 0.5 * k << ",1400,0.2\n";
  }
  const std::string walls = "{type: black, temperature: 800}";
  const auto expr = run_text("field_expr", gas_case("model: {type: wsgg}\n", "{temperature: \"1400\", x_h2o: \"0.2\", x_co2: \"0.1\"}", walls));
  const auto file = run_text("field_file", gas_case("model: {type: wsgg}\n",
                                                    "{field: {file: " + csv.string() + ", temperature: T, x_h2o: XH2O}, x_co2: \"0.1\"}", walls));
  EXPECT_NEAR(file["walls"]["xmin"]["q_net_W"].get<double>(), expr["walls"]["xmin"]["q_net_W"].get<double>(),
              1e-9 * std::abs(expr["walls"]["xmin"]["q_net_W"].get<double>()));
  ASSERT_TRUE(file.contains("fields"));
  const auto& f = file["fields"][0];
  EXPECT_EQ(f["source"], "point cloud");
  EXPECT_EQ(f["source_points"], 125);
  EXPECT_EQ(f["outside_nodes"], 0);
  EXPECT_DOUBLE_EQ(f["quantities"]["temperature"]["node_min"].get<double>(), 1400.0);
  EXPECT_EQ(f["quantities"]["x_h2o"]["array"], "XH2O");
  // A gray run may read its temperature from a file too; a wrong array name is an error naming both.
  const auto gray = run_text("field_gray", gas_case("", "{kappa: \"0.5\", field: {file: " + csv.string() + ", temperature: T}}", walls));
  EXPECT_TRUE(gray.contains("fields"));
  const auto msg = error_of(gas_case("model: {type: wsgg}\n", "{field: {file: " + csv.string() + ", temperature: Temp}, x_h2o: \"0.1\"}", walls));
  EXPECT_NE(msg.find("cfd.csv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no column 'Temp'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("media.*.field"), std::string::npos) << msg;
}

TEST(RunCase, TemperaturesOutsideTheModelRangeAreCountedOnce) {
  // WSGG (Bordbar 2014) covers 300-2400 K: the hot half of this gas is clamped, one warning says how much.
  const auto s = run_text("wsgg_clamp", gas_case("model: {type: wsgg}\n", "{temperature: \"2000 + 600*x\", x_h2o: \"0.2\"}",
                                                 "{type: black, temperature: 2600}"));
  EXPECT_GT(s["spectral"]["gas_nodes_clamped"].get<std::size_t>(), 0u);
  EXPECT_EQ(s["spectral"]["wall_nodes_clamped"].get<std::size_t>(), s["spectral"]["wall_nodes_emitting"].get<std::size_t>());
  EXPECT_EQ(s["spectral"]["temperature_range_K"][1].get<double>(), 2400.0);
  int found = 0;
  for (const auto& w : s["warnings"]) found += w.get<std::string>().find("covers 300-2400 K") != std::string::npos;
  EXPECT_EQ(found, 1) << s["warnings"].dump();
}

TEST(RunCase, SpectralBlocksDoNotChangeTheResult) {
  // Properties evaluated a block of points at a time (the default budget holds every point of this
  // small case) or one point per block (spectral_block_mb: 0) give the same run.
  const std::string model = "model: {type: snbck, overlap: mixture, lumping: 64, gauss_points: 2}\n";
  const std::string medium = "{temperature: \"1000 + 500*z\", x_h2o: \"0.2\", x_co2: \"0.1\"}";
  const std::string walls = "{type: gray, emissivity: 0.8, temperature: 600}";
  std::string one_by_one = gas_case(model, medium, walls);
  const std::string solver = "solver: {outer_tolerance: 1.0e-12}";
  one_by_one.replace(one_by_one.find(solver), solver.size(), "solver: {outer_tolerance: 1.0e-12, spectral_block_mb: 0}");
  const auto blocked = run_text("snbck_blocked", gas_case(model, medium, walls));
  const auto single = run_text("snbck_single", one_by_one);
  const int points = blocked["spectral"]["spectral_points"].get<int>();
  EXPECT_EQ(blocked["spectral"]["property_blocks"].get<int>(), 1);
  EXPECT_EQ(blocked["spectral"]["max_block_points"].get<int>(), points);
  EXPECT_EQ(single["spectral"]["property_blocks"].get<int>(), points);
  EXPECT_EQ(single["spectral"]["max_block_points"].get<int>(), 1);
  for (const char* g : {"xmin", "zmax"}) {
    const double a = blocked["walls"][g]["q_net_W"].get<double>(), b = single["walls"][g]["q_net_W"].get<double>();
    EXPECT_NEAR(b, a, 1e-10 * std::abs(a)) << g;
  }
  EXPECT_NEAR(single["energy_balance"]["volume_W"].get<double>(), blocked["energy_balance"]["volume_W"].get<double>(),
              1e-10 * std::abs(blocked["energy_balance"]["volume_W"].get<double>()));
  // spectral.csv: one row per point (a band group: its wavenumber interval), summing to the totals.
  std::ifstream csv(fs::temp_directory_path() / "dgrte_app_tests" / "snbck_blocked_out" / "spectral.csv");
  ASSERT_TRUE(csv) << "no spectral.csv";
  std::string line;
  std::getline(csv, line);  // comment
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("point,nu_lo_cm,nu_hi_cm,volume_divq_W,xmax:q_in_W,xmax:q_net_W", 0), 0u) << line;
  int rows = 0;
  double volume = 0, nu_prev = 0;
  std::vector<double> xmax_net;
  while (std::getline(csv, line)) {
    std::vector<double> v;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 4u + 2u * 6u) << line;
    if (rows + 1 < points) {  // band groups in ascending wavenumber (Gauss points share one); last: the clear part
      EXPECT_LT(v[1], v[2]);
      EXPECT_GE(v[1], nu_prev);
      nu_prev = v[1];
    } else {
      EXPECT_TRUE(std::isnan(v[1]));
    }
    volume += v[3];
    xmax_net.push_back(v[5]);
    ++rows;
  }
  EXPECT_EQ(rows, points);
  const double total = blocked["energy_balance"]["volume_W"].get<double>();
  EXPECT_NEAR(volume, total, 1e-8 * std::abs(total));
  double xmax = 0;
  for (double q : xmax_net) xmax += q;
  EXPECT_NEAR(xmax, blocked["walls"]["xmax"]["q_net_W"].get<double>(), 1e-8 * std::abs(xmax));
}

TEST(RunCase, SnbTransmissivityModelIsRefusedIn3D) {
  const auto msg = error_of(gas_case("model: {type: snb}\n", "{temperature: \"1400\", x_h2o: \"0.2\"}", "{type: black}"));
  EXPECT_NE(msg.find("snbck"), std::string::npos) << msg;
}

}  // namespace
}  // namespace dgrte::app
