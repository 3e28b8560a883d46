// Case-file parsing: the documented shape is accepted; every kind of mistake is an error that
// names the file, the key path and the line.
#include "common/error.hpp"
#include "io/case_file.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace dgrte::io {
namespace {

const char* kGood = R"(mesh:
  file: cube.msh
order: 3
directions:
  - [0.62402, 0.52802, 0.57602]
  - [0, 0, 2]
media:
  "*":
    kappa: "0.1"
    Ib: "1 + x"
    source: "sx * y"
  core:
    kappa: "0.5*z"
    temperature: "1000"
boundaries:
  "*":
    type: black
    temperature: 300
  inlet:
    type: inflow
    intensity: "sz * 2"
solver:
  method: bicgstab
  preconditioner: block-jacobi
  rtol: 1.0e-8
  max_iterations: 100
exact: "x + sx"
output:
  directory: results
  vtk: false
  probes:
    - {name: centreline, from: [-1, 0, 0], to: [1, 0, 0], points: 11}
)";

TEST(CaseFile, ParsesTheDocumentedShape) {
  const auto c = parse_case(kGood, "dir/case.yaml");
  EXPECT_EQ(c.mesh.file, std::filesystem::path("dir/cube.msh"));
  EXPECT_EQ(c.order, 3);
  ASSERT_EQ(c.directions.size(), 2u);
  EXPECT_DOUBLE_EQ(c.directions[1][2], 1.0);  // normalised
  EXPECT_EQ(c.warnings.size(), 2u);          // both directions were off by more than 1e-6
  ASSERT_EQ(c.media.size(), 2u);
  EXPECT_DOUBLE_EQ((*c.media[0].kappa)(std::array<double, 3>{0, 0, 0}), 0.1);
  EXPECT_DOUBLE_EQ((*c.media[0].blackbody_intensity)(std::array<double, 3>{2, 0, 0}), 3.0);
  EXPECT_DOUBLE_EQ(c.media[0].source(std::array<double, 3>{0, 4, 0}, std::array<double, 3>{0.5, 0, 0}), 2.0);
  EXPECT_TRUE(c.media[1].temperature.has_value());
  EXPECT_EQ(c.boundaries[1].type, BoundaryType::inflow);
  EXPECT_DOUBLE_EQ(c.boundaries[0].temperature(Vec3{0, 0, 0}), 300);
  EXPECT_EQ(c.solver.preconditioner, Preconditioner::block_jacobi);
  EXPECT_DOUBLE_EQ(c.solver.rtol, 1e-8);
  EXPECT_EQ(c.output.probes.at(0).points, 11);
  EXPECT_FALSE(c.output.vtk);
  EXPECT_DOUBLE_EQ((*c.exact)(std::array<double, 3>{1, 0, 0}, std::array<double, 3>{0.25, 0, 0}), 1.25);
}

TEST(CaseFile, DirectionsAcceptExpressionsAndRoundedUnitVectors) {
  // 9-digit unit vectors and constant expressions are normalised silently; [1, 1, 0] is not a unit
  // vector and gets a warning naming its line.
  const auto c = parse_case("mesh: {file: cube.msh}\ndirections:\n  - [0.577350269, 0.577350269, 0.577350269]\n"
                            "  - [\"1/sqrt(3)\", \"1/sqrt(3)\", \"-1/sqrt(3)\"]\n  - [1, 1, 0]\n"
                            "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\nboundaries: {\"*\": {type: black}}\n",
                            "case.yaml");
  ASSERT_EQ(c.directions.size(), 3u);
  EXPECT_NEAR(c.directions[1][2], -1 / std::sqrt(3.0), 1e-15);
  for (const auto& d : c.directions) EXPECT_NEAR(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], 1.0, 1e-15);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("line 5"), std::string::npos) << c.warnings[0];
  // A bad expression where a number is expected names the key, the line and both forms.
  try {
    parse_case("mesh: {file: cube.msh}\ndirections:\n  - [1, \"one\", 0]\nmedia: {\"*\": {kappa: \"1\", Ib: \"1\"}}\n"
               "boundaries: {\"*\": {type: black}}\n",
               "case.yaml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("directions[0][1]"), std::string::npos) << m;
    EXPECT_NE(m.find("line 3"), std::string::npos) << m;
    EXPECT_NE(m.find("constant expression"), std::string::npos) << m;
  }
}

TEST(CaseFile, EmptyDirectionsNameTheirOwnLine) {
  try {
    parse_case("mesh: {file: cube.msh}\ndirections:\nmedia: {\"*\": {kappa: \"1\", Ib: \"1\"}}\nboundaries: {\"*\": {type: black}}\n",
               "case.yaml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("directions (line 2)"), std::string::npos) << e.what();
  }
}

TEST(CaseFile, PiAndSigmaAreDefined) {
  Expression e("pi + sigma*1e8", kSpaceVars, "test");
  EXPECT_NEAR(e(std::array<double, 3>{0, 0, 0}), 3.14159265358979 + 5.670374419, 1e-9);
}

std::string error_of(const std::string& yaml) {
  try {
    parse_case(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

struct BadCase {
  std::string from, to;
  std::vector<std::string> expect;  // substrings of the message
};

// readable test names in ctest output: the replacement text
void PrintTo(const BadCase& b, std::ostream* os) { *os << "'" << b.to << "'"; }

class CaseFileErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(CaseFileErrors, NameTheKeyAndLine) {
  const auto& b = GetParam();
  const auto msg = error_of(replace(kGood, b.from, b.to));
  ASSERT_FALSE(msg.empty()) << "no error for " << b.to;
  EXPECT_NE(msg.find("bad.yaml"), std::string::npos) << msg;
  for (const auto& e : b.expect) EXPECT_NE(msg.find(e), std::string::npos) << "'" << e << "' not in: " << msg;
}

INSTANTIATE_TEST_SUITE_P(
    All, CaseFileErrors,
    ::testing::Values(BadCase{"order: 3", "order: 3\nsolverr: {}", {"unknown key 'solverr'", "line 4"}},
                      BadCase{"kappa: \"0.1\"", "kapa: \"0.1\"", {"media.*.kapa", "unknown key", "line 9"}},
                      BadCase{"order: 3", "order: three", {"order", "an integer"}},
                      BadCase{"order: 3", "order: 9", {"order", "1..8"}},
                      BadCase{"Ib: \"1 + x\"", "Ib: \"1 + \"", {"media.*.Ib", "line 10", "cannot use expression"}},
                      BadCase{"Ib: \"1 + x\"", "Ib: \"1 + sx\"", {"media.*.Ib", "variables allowed here: x, y, z"}},
                      BadCase{"[0, 0, 2]", "[0, 0]", {"directions[1]", "three numbers"}},
                      BadCase{"[0, 0, 2]", "[0, 0, 0]", {"directions[1]", "zero length"}},
                      BadCase{"type: black", "type: grey", {"boundaries.*.type", "unknown boundary type 'grey'"}},
                      BadCase{"    intensity: \"sz * 2\"", "", {"boundaries.inlet", "needs 'intensity'"}},
                      BadCase{"preconditioner: block-jacobi", "preconditioner: ilu", {"solver.preconditioner", "ilu"}},
                      BadCase{"rtol: 1.0e-8", "rtol: 2", {"solver.rtol", "(0, 1)"}},
                      BadCase{"    Ib: \"1 + x\"\n", "", {"media.*", "missing 'Ib'"}},
                      BadCase{"points: 11", "points: 0", {"output.probes[0].points"}},
                      BadCase{"vtk: false", "vtk: maybe", {"output.vtk", "true or false"}},
                      BadCase{"  file: cube.msh", "  file: cube.msh\n  size: 1", {"mesh.size", "'geo' only"}},
                      BadCase{"directions:", "directions: [", {"not valid YAML", "line"}}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return "case" + std::to_string(info.index); });

// A spectral gas model (`model:`): the gas state replaces kappa and Ib; what would need a spectrum
// that the case cannot give is an error naming the key.
const char* kGas = R"(mesh: {file: cube.msh}
order: 2
angular: {quadrature: sn, order: 4}
model: {type: wsgg}
media:
  "*": {temperature: "1500 - 500*z", pressure: 1.0, x_h2o: "0.2", x_co2: "0.1"}
boundaries:
  "*": {type: gray, emissivity: 0.8, temperature: 600}
)";

TEST(CaseFile, GasModelCaseParses) {
  const auto cs = parse_case(kGas, "gas.yaml");
  ASSERT_TRUE(cs.model);
  EXPECT_EQ((*cs.model)["type"].as<std::string>(), "wsgg");
  ASSERT_EQ(cs.media.size(), 1u);
  EXPECT_FALSE(cs.media[0].kappa);
  ASSERT_TRUE(cs.media[0].x_h2o && cs.media[0].pressure && cs.media[0].temperature);
  EXPECT_DOUBLE_EQ((*cs.media[0].temperature)(Vec3{0, 0, 1}), 1000.0);
  EXPECT_FALSE(cs.media[0].x_co);  // defaults to 0 in the medium
}

TEST(CaseFile, GrayModelWithMediaKappaIsTheGrayRun) {
  auto text = replace(kGas, "model: {type: wsgg}", "model: {type: gray}");
  text = replace(text, "temperature: \"1500 - 500*z\", pressure: 1.0, x_h2o: \"0.2\", x_co2: \"0.1\"",
                 "kappa: \"0.5\", temperature: \"1500\"");
  const auto cs = parse_case(text, "gas.yaml");
  EXPECT_FALSE(cs.model);
  ASSERT_TRUE(cs.media[0].kappa);
  const auto both = error_of(replace(text, "model: {type: gray}", "model: {type: gray, kappa: 1}"));
  EXPECT_NE(both.find("model.kappa"), std::string::npos) << both;
}

class GasCaseErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(GasCaseErrors, NameTheKey) {
  const auto& b = GetParam();
  const auto msg = error_of(replace(kGas, b.from, b.to));
  ASSERT_FALSE(msg.empty()) << "no error for " << b.to;
  for (const auto& e : b.expect) EXPECT_NE(msg.find(e), std::string::npos) << "'" << e << "' not in: " << msg;
}

INSTANTIATE_TEST_SUITE_P(
    All, GasCaseErrors,
    ::testing::Values(
        BadCase{"pressure: 1.0,", "kappa: \"1\", pressure: 1.0,", {"media.*.kappa", "comes from the model"}},
        BadCase{"temperature: \"1500 - 500*z\",", "Ib: \"1\",", {"media.*.Ib", "temperature"}},
        BadCase{"temperature: \"1500 - 500*z\",", "", {"media.*", "missing 'temperature'"}},
        BadCase{"model: {type: wsgg}", "model: wsgg", {"model", "mapping"}},
        BadCase{"model: {type: wsgg}", "model: {type: wsgg}\ncollimated: [{boundary: xmin, direction: [1, 0, 0], flux: 1}]",
                {"collimated", "spectral distribution"}},
        BadCase{"\"*\": {type: gray", "xmin: {type: irradiation, flux: 100}\n  \"*\": {type: gray",
                {"boundaries.xmin", "'irradiation' boundary"}},
        BadCase{"x_co2: \"0.1\"}", "x_co2: \"0.1\", source: \"1\"}", {"media.*.source", "volume source"}},
        BadCase{"angular: {quadrature: sn, order: 4}", "directions: [[1, 0, 0]]", {"model", "angular"}}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return "case" + std::to_string(info.index); });

TEST(CaseFile, GasKeysWithoutAModelAreAnError) {
  const auto msg = error_of(replace(kGood, "    kappa: \"0.5*z\"", "    kappa: \"0.5*z\"\n    x_h2o: \"0.1\""));
  EXPECT_NE(msg.find("media.core.x_h2o"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model:"), std::string::npos) << msg;
}

// soot_fv: an expression in a gas case; in a gray run it needs the temperature (its Planck mean
// joins kappa), so soot with Ib is an error naming the key.
TEST(CaseFile, SootVolumeFraction) {
  const auto cs = parse_case(replace(kGas, "x_co2: \"0.1\"}", "x_co2: \"0.1\", soot_fv: \"1e-6*z\"}"), "gas.yaml");
  ASSERT_TRUE(cs.media[0].soot_fv);
  EXPECT_DOUBLE_EQ((*cs.media[0].soot_fv)(Vec3{0, 0, 0.5}), 5e-7);
  const auto gray = parse_case(replace(kGood, "    temperature: \"1000\"", "    temperature: \"1000\"\n    soot_fv: \"1e-7\""), "g.yaml");
  EXPECT_TRUE(gray.media[1].soot_fv);
  const auto msg = error_of(replace(kGood, "    Ib: \"1 + x\"", "    Ib: \"1 + x\"\n    soot_fv: \"1e-7\""));
  EXPECT_NE(msg.find("media.*.soot_fv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("temperature"), std::string::npos) << msg;
}

// output.final_gather: on/off, the adaptive keys, or a fixed count that excludes them.
TEST(CaseFile, FinalGatherKeys) {
  const std::string base = "mesh: {file: cube.msh}\nangular: {quadrature: sn, order: 4}\n"
                           "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\nboundaries: {\"*\": {type: black}}\n";
  const auto adaptive = parse_case(base + "output: {final_gather: {tolerance: 0.01, min_rays: 64, max_rays: 512}}\n", "g.yaml").output;
  EXPECT_TRUE(adaptive.final_gather);
  EXPECT_EQ(adaptive.final_gather_min_rays, 64);
  EXPECT_EQ(adaptive.final_gather_max_rays, 512);
  EXPECT_DOUBLE_EQ(adaptive.final_gather_tolerance, 0.01);
  const auto fixed = parse_case(base + "output: {final_gather: {rays: 300}}\n", "g.yaml").output;
  EXPECT_EQ(fixed.final_gather_min_rays, 300);
  EXPECT_EQ(fixed.final_gather_max_rays, 300);
  EXPECT_EQ(fixed.final_gather_tolerance, 0.0);
  EXPECT_FALSE(parse_case(base + "output: {final_gather: false}\n", "g.yaml").output.final_gather);
  EXPECT_TRUE(parse_case(base + "output: {final_gather: true}\n", "g.yaml").output.final_gather);
  const std::vector<std::pair<std::string, std::string>> wrong = {
      {"output.final_gather.tolerance", "output: {final_gather: {tolerance: 1.5}}\n"},
      {"output.final_gather.tolerance", "output: {final_gather: {rays: 64, tolerance: 0.01}}\n"},
      {"output.final_gather.max_rays", "output: {final_gather: {min_rays: 256, max_rays: 128}}\n"},
      {"output.final_gather.rays", "output: {final_gather: {rays: 0.5}}\n"},
      {"output.final_gather", "output: {final_gather: maybe}\n"}};
  for (const auto& [key, text] : wrong) {
    std::string msg;
    try {
      parse_case(base + text, "g.yaml");
    } catch (const InputError& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("g.yaml"), std::string::npos) << key << ": " << msg;
    EXPECT_NE(msg.find(key), std::string::npos) << key << ": " << msg;
  }
}

// solver.method: montecarlo reads none of the discrete-ordinates keys: each is an error naming the key
// and the method, as an unknown key would be; `angular:` stays (one file switches between methods).
TEST(CaseFile, MonteCarloRejectsTheKeysItWouldIgnore) {
  const std::string base = "mesh: {file: cube.msh}\nangular: {quadrature: sn, order: 4}\n"
                           "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\nboundaries: {\"*\": {type: black}}\n";
  EXPECT_NO_THROW(parse_case(base + "solver: {method: montecarlo, paths: 1000}\noutput: {vtk: false}\n", "mc.yaml"));
  const std::vector<std::pair<std::string, std::string>> ignored = {
      {"solver.rtol", "solver: {method: montecarlo, rtol: 1.0e-8}\n"},
      {"solver.preconditioner", "solver: {method: montecarlo, preconditioner: sweep}\n"},
      {"solver.inner", "solver: {method: montecarlo, inner: sweep}\n"},
      {"solver.outer", "solver: {method: montecarlo, outer: gmres}\n"},
      {"solver.outer_tolerance", "solver: {method: montecarlo, outer_tolerance: 1.0e-6}\n"},
      {"solver.positivity", "solver: {method: montecarlo, positivity: true}\n"},
      {"solver.threads", "solver: {method: montecarlo, threads: levels}\n"},
      {"solver.max_iterations", "solver: {max_iterations: 10, method: montecarlo}\n"},
      {"output.final_gather", "solver: {method: montecarlo}\noutput: {final_gather: {rays: 64}}\n"},
      {"output.intensities", "solver: {method: montecarlo}\noutput: {intensities: true}\n"},
      {"exact", "solver: {method: montecarlo}\nexact: \"1\"\n"}};
  for (const auto& [key, text] : ignored) {
    std::string msg;
    try {
      parse_case(base + text, "mc.yaml");
    } catch (const InputError& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("mc.yaml"), std::string::npos) << key << ": " << msg;
    EXPECT_NE(msg.find(key), std::string::npos) << key << ": " << msg;
    EXPECT_NE(msg.find("montecarlo"), std::string::npos) << key << ": " << msg;
  }
}

// Found by fuzzing (tests/fuzz/corpus/case_file/crash_tagged_key.yaml): a key that is not a plain name,
// or a value yaml-cpp cannot convert, is an input error naming the file and line, never an internal one.
TEST(CaseFile, KeysThatAreNotNamesAreInputErrors) {
  const auto complex_key = error_of(replace(kGood, "order: 3", "order: 3\n[a, b]: 1"));
  EXPECT_NE(complex_key.find("bad.yaml"), std::string::npos) << complex_key;
  EXPECT_NE(complex_key.find("a key must be a plain name"), std::string::npos) << complex_key;
  std::ifstream in(DGRTE_SOURCE_DIR "/tests/fuzz/corpus/case_file/crash_tagged_key.yaml");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  const auto tagged = error_of(text.str());
  EXPECT_NE(tagged.find("bad.yaml"), std::string::npos) << tagged;
  EXPECT_NE(tagged.find("line 18"), std::string::npos) << tagged;
}

TEST(CaseFile, MissingFileIsAClearError) {
  try {
    read_case("/nonexistent/case.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/case.yaml"), std::string::npos);
  }
}

}  // namespace
}  // namespace dgrte::io
