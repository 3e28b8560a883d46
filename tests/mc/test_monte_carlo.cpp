// Monte Carlo runs through the case file against exact answers: the isothermal cube (exact
// solid-angle integrals), radiative equilibrium, the 1/sqrt(N) fall of the standard error, and
// results that do not depend on the thread count.
#include "../common/case_runner.hpp"
#include "common/error.hpp"
#include "gas/gas_common.hpp"
#include "gas/model_factory.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <numbers>
#include <fstream>
#include <sstream>

namespace dgrte::mc {
namespace {

using test_support::read_csv;
using test_support::Run;

Run run(const std::string& name, const std::string& body) { return test_support::run_yaml("dgrte_mc_tests", name, body); }

std::string cube_case(double kappa, const std::string& solver) {
  return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
         "media: {\"*\": {kappa: \"" + std::to_string(kappa) + "\", Ib: \"1\"}}\n"
         "boundaries: {\"*\": {type: black, temperature: 0}}\n"
         "solver: " + solver + "\n"
         "output:\n  vtk: false\n  probes:\n"
         "    - {name: axis, from: [0, 0.5, 0.5], to: [0.5, 0.5, 0.5], points: 6}\n"
         "    - {name: wall, from: [0, 0.5, 0], to: [0, 0.5, 0.5], points: 6, wall: xmin}\n";
}

// Exact values (validation/isothermal_cube/reference.md, Gauss-Legendre over the face areas):
// G at x = 0, 0.1, 0.5 on the axis and q_in at z = 0, 0.1, 0.5 on the wall x = 0.
struct Exact {
  double kappa;
  double G[3], q_in[3];
};
constexpr Exact kExact[] = {{0.1, {0.4412462864, 0.6007361044, 0.7441037467}, {0.1473477754, 0.1996431426, 0.2486672498}},
                            {1.0, {3.2007022578, 4.6000097187, 5.7233681774}, {0.9687091491, 1.3981680233, 1.7395871533}},
                            {10.0, {6.2709275456, 11.6169136088, 12.5304526816}, {1.5699388495, 2.9595526224, 3.1382609366}}};

TEST(MonteCarlo, IsothermalCubeMatchesTheExactSolidAngleIntegrals) {
  for (const auto& ex : kExact) {
    const auto r = run("cube", cube_case(ex.kappa, "{method: montecarlo, paths: 2e5, batches: 20, seed: 5, probe_rays: 40000}"));
    auto axis = read_csv(r.out / "probes" / "axis.csv"), wall = read_csv(r.out / "probes" / "wall.csv");
    const std::size_t at[3] = {0, 1, 5};
    for (int i = 0; i < 3; ++i) {
      const auto k = at[i];
      // Within 4 standard errors, and the error itself small (the estimator resolves the value).
      EXPECT_LT(std::abs(axis["G"][k] - ex.G[i]), 4 * axis["G_stderr"][k]) << "kappa " << ex.kappa << " point " << k;
      EXPECT_LT(axis["G_stderr"][k], 0.01 * ex.G[i]);
      EXPECT_LT(std::abs(wall["q_in"][k] - ex.q_in[i]), 4 * wall["q_in_stderr"][k]) << "kappa " << ex.kappa << " point " << k;
      EXPECT_LT(wall["q_in_stderr"][k], 0.01 * ex.q_in[i]);
    }
    // Forward estimator: the six walls are alike; energy is conserved bundle by bundle.
    const auto& mc = r.summary["montecarlo"];
    EXPECT_EQ(mc["lost_rays"].get<long>(), 0);
    EXPECT_EQ(mc["probe_lost_rays"].get<long>(), 0);
    double total = 0;
    for (const auto& [name, w] : r.summary["walls"].items()) total += w["q_net_W"].get<double>();
    for (const auto& [name, w] : r.summary["walls"].items())
      EXPECT_LT(std::abs(w["q_net_W"].get<double>() - total / 6), 4 * w["q_net_W_stderr"].get<double>()) << name;
    EXPECT_LT(r.summary["energy_balance"]["relative_imbalance"].get<double>(), 1e-9) << "no roulette in a black enclosure";
  }
}

TEST(MonteCarlo, StandardErrorFallsAsOneOverRootPaths) {
  const std::string fmt_solver = "{method: montecarlo, batches: 20, seed: 9, probe_rays: 4000, paths: ";
  const auto a = run("sqrt_a", cube_case(1.0, fmt_solver + "1e5}"));
  const auto b = run("sqrt_b", cube_case(1.0, fmt_solver + "4e5}"));
  double ratio = 0;
  int n = 0;
  for (const auto& [name, w] : a.summary["walls"].items()) {
    ratio += b.summary["walls"][name]["q_in_W_stderr"].get<double>() / w["q_in_W_stderr"].get<double>();
    ++n;
  }
  ratio /= n;  // expected 1/2 (each ratio scatters ~23 % with 20 batches; the mean of six ~10 %)
  EXPECT_GT(ratio, 0.38);
  EXPECT_LT(ratio, 0.65);
}

// Runs `body` on 1 and on 2 threads: walls, volume power and the named probe files must be identical.
void expect_thread_independent(const std::string& name, const std::string& body, const std::vector<std::string>& probes) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = run(name + "_threads1", body);
  omp_set_num_threads(std::max(2, threads));
  const auto two = run(name + "_threads2", body);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.summary["walls"].dump(), two.summary["walls"].dump());
  EXPECT_EQ(one.summary["energy_balance"]["volume_W"].get<double>(), two.summary["energy_balance"]["volume_W"].get<double>());
  for (const auto& probe : probes) {
    std::ifstream f1(one.out / "probes" / probe), f2(two.out / "probes" / probe);
    std::stringstream s1, s2;
    s1 << f1.rdbuf(), s2 << f2.rdbuf();
    EXPECT_EQ(s1.str(), s2.str()) << probe;
  }
}

TEST(MonteCarlo, ResultsDoNotDependOnTheThreadCount) {
  expect_thread_independent("cube", cube_case(1.0, "{method: montecarlo, paths: 50000, batches: 4, seed: 3, probe_rays: 2000}"),
                            {"axis.csv", "wall.csv"});
}

// An isothermal enclosure whose walls are at the medium's temperature is in equilibrium whatever
// the absorption, scattering and wall reflection: G = 4 sigma T^4, q = 0, div q = 0.
// The tracer's element means are those of the medium the DG solve integrates (the property points),
// not of the nodal interpolant: kappa = x^2 on P1 elements emits exactly 4 pi Ib integral of x^2 =
// 4 pi / 3 over the unit cube (the P1 interpolant's means would emit more).
TEST(MonteCarlo, EmitsThePowerOfTheFieldAsGiven) {
  const auto r = run("emitted_power",
                     "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.5}\norder: 1\n"
                     "media: {\"*\": {kappa: \"x*x\", Ib: \"1\"}}\n"
                     "boundaries: {\"*\": {type: black, temperature: 0}}\n"
                     "solver: {method: montecarlo, paths: 2e4, batches: 10}\noutput: {vtk: false}\n");
  EXPECT_NEAR(r.summary["montecarlo"]["source_power_W"].get<double>(), 4 * std::numbers::pi / 3, 1e-12);
}

TEST(MonteCarlo, IsothermalEnclosureIsInEquilibrium) {
  const auto r = run("equilibrium",
                     "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.25}\n"
                     "media: {\"*\": {kappa: \"0.7\", scattering: \"1.3\", phase_function: {type: henyey-greenstein, g: 0.6}, temperature: \"1000\"}}\n"
                     "boundaries:\n  left: {type: gray, emissivity: 0.4, temperature: 1000}\n"
                     "  right: {type: gray, emissivity: 0.7, specular_fraction: 0.5, temperature: 1000}\n"
                     "  sides: {type: symmetry}\n"
                     "solver: {method: montecarlo, paths: 2e5, batches: 20, probe_rays: 20000}\n"
                     "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 5},\n"
                     "  {name: left, from: [0, 0.05, 0.05], to: [0, 0.2, 0.2], points: 3, wall: left}]}\n");
  const double G_exact = 4 * 5.670374419e-8 * std::pow(1000.0, 4);
  auto p = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < p["G"].size(); ++i) {
    EXPECT_LT(std::abs(p["G"][i] - G_exact), 4 * p["G_stderr"][i] + 1e-12 * G_exact);
    EXPECT_LT(std::abs(p["qx"][i]), 4 * p["qx_stderr"][i] + 1e-12 * G_exact);
    EXPECT_LT(p["G_stderr"][i], 0.01 * G_exact);
  }
  auto w = read_csv(r.out / "probes" / "left.csv");
  for (std::size_t i = 0; i < w["q_in"].size(); ++i) EXPECT_LT(std::abs(w["q_net"][i]), 4 * w["q_net_stderr"][i] + 1e-12 * G_exact);
  for (const auto& [name, wall] : r.summary["walls"].items())
    EXPECT_LT(std::abs(wall["q_net_W"].get<double>()), 4 * wall["q_net_W_stderr"].get<double>() + 1e-9 * G_exact) << name;
  const auto& eb = r.summary["energy_balance"];
  EXPECT_LT(std::abs(eb["volume_W"].get<double>()), 4 * eb["volume_W_stderr"].get<double>() + 1e-9 * G_exact);
  EXPECT_GT(r.summary["montecarlo"]["scattering_events"].get<long>(), 0);
  EXPECT_GT(r.summary["montecarlo"]["wall_reflections"].get<long>(), 0);
}

// The nongray path (one spectral point per gray gas, paths shared by emitted power) with a gray
// gas model must reproduce the exact isothermal cube, scaled by I_b = sigma T^4 / pi.
TEST(MonteCarlo, GrayGasModelThroughTheSpectralLoopMatchesTheExactCube) {
  const auto r = run("gas_cube", "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
                                 "model: {type: gray, kappa: 1.0}\n"
                                 "media: {\"*\": {temperature: \"1000\", x_h2o: \"0.1\"}}\n"
                                 "boundaries: {\"*\": {type: black, temperature: 0}}\n"
                                 "solver: {method: montecarlo, paths: 2e5, batches: 20, seed: 2, probe_rays: 40000}\n"
                                 "output:\n  vtk: false\n  probes:\n"
                                 "    - {name: axis, from: [0, 0.5, 0.5], to: [0.5, 0.5, 0.5], points: 6}\n"
                                 "    - {name: wall, from: [0, 0.5, 0], to: [0, 0.5, 0.5], points: 6, wall: xmin}\n");
  const double Ib = 5.670374419e-8 * 1e12 / 3.14159265358979323846;
  auto axis = read_csv(r.out / "probes" / "axis.csv"), wall = read_csv(r.out / "probes" / "wall.csv");
  const std::size_t at[3] = {0, 1, 5};
  for (int i = 0; i < 3; ++i) {
    EXPECT_LT(std::abs(axis["G"][at[i]] - kExact[1].G[i] * Ib), 4 * axis["G_stderr"][at[i]]) << i;
    EXPECT_LT(std::abs(wall["q_in"][at[i]] - kExact[1].q_in[i] * Ib), 4 * wall["q_in_stderr"][at[i]]) << i;
  }
  EXPECT_EQ(r.summary["spectral"]["spectral_points"].get<int>(), 1);
  EXPECT_EQ(r.summary["montecarlo"]["spectral_points_traced"].get<int>(), 1);
}

// An enclosure in equilibrium at temperature T: G = 4 sigma T^4 on the probe line "axis" (and its
// standard error below max_error of it), no net power into the volume or any wall.
void expect_equilibrium(const Run& r, double T, double max_error) {
  const double G = 4 * 5.670374419e-8 * std::pow(T, 4);
  auto p = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < p["G"].size(); ++i) {
    EXPECT_LT(std::abs(p["G"][i] - G), 4 * p["G_stderr"][i] + 1e-9 * G) << i;
    EXPECT_LT(p["G_stderr"][i], max_error * G);
  }
  const auto& eb = r.summary["energy_balance"];
  EXPECT_LT(std::abs(eb["volume_W"].get<double>()), 4 * eb["volume_W_stderr"].get<double>() + 1e-9 * G);
  for (const auto& [name, wall] : r.summary["walls"].items())
    EXPECT_LT(std::abs(wall["q_net_W"].get<double>()), 4 * wall["q_net_W_stderr"].get<double>() + 1e-9 * G) << name;
}

// Several spectral points (WSGG: 4 gray gases + the clear gas) through the nongray loop: an
// isothermal enclosure with gray walls at the gas temperature is in equilibrium point by point, so
// the sum is G = 4 sigma T^4 (the weights sum to 1) whatever the paths each point receives.
TEST(MonteCarlo, NongrayEquilibriumSumsOverTheSpectralPoints) {
  const auto r = run("gas_equilibrium", "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.25}\n"
                                        "model: {type: wsgg}\n"
                                        "media: {\"*\": {temperature: \"1200\", x_h2o: \"0.2\", x_co2: \"0.1\"}}\n"
                                        "boundaries:\n  left: {type: gray, emissivity: 0.6, temperature: 1200}\n"
                                        "  right: {type: black, temperature: 1200}\n  sides: {type: symmetry}\n"
                                        "solver: {method: montecarlo, paths: 1e5, batches: 10, probe_rays: 4000}\n"
                                        "output: {vtk: false, probes: [{name: axis, from: [0.1, 0.1, 0.1], to: [0.9, 0.1, 0.1], points: 3}]}\n");
  expect_equilibrium(r, 1200.0, 0.01);
  EXPECT_EQ(r.summary["spectral"]["spectral_points"].get<int>(), 5);
  EXPECT_EQ(r.summary["montecarlo"]["spectral_points_traced"].get<int>(), 5);
}

// Spectral sampling by path (the default) and per point are two estimators of the same sum over
// spectral points: on a hot layer next to a cold one (WSGG, 5 points) they agree within their errors,
// and sampling by path gives the same bits on any number of threads.
std::string layered_wsgg(const std::string& solver) {
  return "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.25}\n"
         "model: {type: wsgg}\n"
         "media: {\"*\": {temperature: \"x < 0.5 ? 1800 : 500\", x_h2o: \"0.2\", x_co2: \"0.1\"}}\n"
         "boundaries:\n  left: {type: black, temperature: 0}\n  right: {type: gray, emissivity: 0.5, temperature: 800}\n"
         "  sides: {type: symmetry}\n"
         "solver: " + solver + "\n"
         "output: {vtk: false, probes: [{name: axis, from: [0.1, 0.1, 0.1], to: [0.9, 0.1, 0.1], points: 3}]}\n";
}

TEST(MonteCarlo, SpectralSamplingByPathAgreesWithSamplingPerPoint) {
  const auto by_path = run("per_path", layered_wsgg("{method: montecarlo, paths: 2e5, batches: 10, probe_rays: 8000, seed: 4}"));
  const auto per_point =
      run("per_point", layered_wsgg("{method: montecarlo, paths: 2e5, batches: 10, probe_rays: 8000, seed: 5, spectral_sampling: per_point}"));
  EXPECT_EQ(by_path.summary["spectral"]["sampling"], "per_path");
  EXPECT_EQ(per_point.summary["spectral"]["sampling"], "per_point");
  for (const char* wall : {"left", "right"}) {
    const auto& a = by_path.summary["walls"][wall];
    const auto& b = per_point.summary["walls"][wall];
    const double diff = a["q_net_W"].get<double>() - b["q_net_W"].get<double>();
    const double sigma = std::hypot(a["q_net_W_stderr"].get<double>(), b["q_net_W_stderr"].get<double>());
    EXPECT_LT(std::abs(diff), 4.5 * sigma) << wall;
    EXPECT_LT(a["q_net_W_stderr"].get<double>(), 0.02 * std::abs(a["q_net_W"].get<double>())) << wall;
  }
  auto pa = read_csv(by_path.out / "probes" / "axis.csv"), pb = read_csv(per_point.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < pa["G"].size(); ++i) {
    EXPECT_LT(std::abs(pa["G"][i] - pb["G"][i]), 4.5 * std::hypot(pa["G_stderr"][i], pb["G_stderr"][i])) << i;
    EXPECT_LT(std::abs(pa["divq"][i] - pb["divq"][i]), 4.5 * std::hypot(pa["divq_stderr"][i], pb["divq_stderr"][i])) << i;
  }
  const auto& ea = by_path.summary["energy_balance"];
  EXPECT_LT(std::abs(ea["imbalance_W"].get<double>()), 4.5 * ea["imbalance_W_stderr"].get<double>() + 1e-9 * ea["scale_W"].get<double>());
}

TEST(MonteCarlo, SpectralSamplingByPathDoesNotDependOnTheThreadCount) {
  expect_thread_independent("by_path", layered_wsgg("{method: montecarlo, paths: 30000, batches: 4, seed: 3, probe_rays: 1000}"),
                            {"axis.csv"});
}

// Line by line (CO, 2025-2275 cm^-1 every 0.05 cm^-1: 5,002 spectral points) with sampled
// wavenumbers: few paths per grid point, most points untraced, and the equilibrium of an
// isothermal enclosure (walls at the gas temperature) holds on the sum: G = 4 sigma T^4, q_net = 0.
TEST(MonteCarlo, LineByLineEquilibriumWithSampledWavenumbers) {
  const auto r = run("lbl_equilibrium",
                     "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.25}\n"
                     "model: {type: lbl, par_files: ['" DGRTE_SOURCE_DIR "/gasdata/lbl/hitran_fragments/hitran_co_3iso_2000_2300cm.par'], "
                     "nu_min: 2025, nu_max: 2275, dnu: 0.05}\n"
                     "media: {\"*\": {temperature: \"1500\", x_co: \"0.2\"}}\n"
                     "boundaries:\n  left: {type: gray, emissivity: 0.6, temperature: 1500}\n"
                     "  right: {type: black, temperature: 1500}\n  sides: {type: symmetry}\n"
                     "solver: {method: montecarlo, paths: 20000, batches: 10, probe_rays: 2000}\n"
                     "output: {vtk: false, probes: [{name: axis, from: [0.1, 0.1, 0.1], to: [0.9, 0.1, 0.1], points: 3}]}\n");
  expect_equilibrium(r, 1500.0, 0.02);
  const int points = r.summary["spectral"]["spectral_points"].get<int>(), traced = r.summary["montecarlo"]["spectral_points_traced"].get<int>();
  EXPECT_EQ(points, 5002);
  EXPECT_LT(traced, points);  // 20,000 paths and 2,000 rays per probe in 10 batches cannot reach every point
  EXPECT_GT(traced, 100);
  std::printf("[ note ] LBL equilibrium: %d of %d spectral points traced, %.3g paths/s\n", traced, points,
              r.summary["montecarlo"]["paths_per_second"].get<double>());
}

// Final gather: a coarse DG set (T2, 32 ordinates) leaves ray effects of several per cent in the
// wall flux of the isothermal cube; rays through the DG source give the exact values.
TEST(FinalGather, RemovesTheRayEffectsOfTheIsothermalCube) {
  auto dg_case = [](const std::string& gather) {
    return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
           "order: 2\nangular: {quadrature: tn, order: 2}\n"
           "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\n"
           "boundaries: {\"*\": {type: black, temperature: 0}}\n"
           "output:\n  vtk: false\n" + gather + "  probes:\n"
           "    - {name: axis, from: [0, 0.5, 0.5], to: [0.5, 0.5, 0.5], points: 6}\n"
           "    - {name: wall, from: [0, 0.5, 0], to: [0, 0.5, 0.5], points: 6, wall: xmin}\n"
           "    - {name: edge, from: [0, 0, 0], to: [0, 0.5, 0], points: 3, wall: xmin}\n";
  };
  const auto dg = run("gather_off", dg_case(""));
  const auto fg = run("gather_on", dg_case("  final_gather: {}\n"));  // the defaults: adaptive rays
  auto wd = read_csv(dg.out / "probes" / "wall.csv"), wg = read_csv(fg.out / "probes" / "wall.csv");
  auto ad = read_csv(dg.out / "probes" / "axis.csv"), ag = read_csv(fg.out / "probes" / "axis.csv");
  const std::size_t at[3] = {0, 1, 5};
  double dg_err = 0, gather_err = 0;
  for (int i = 0; i < 3; ++i) {
    const auto k = at[i];
    dg_err = std::max(dg_err, std::abs(wd["q_in"][k] / kExact[1].q_in[i] - 1));
    gather_err = std::max(gather_err, std::abs(wg["q_in"][k] / kExact[1].q_in[i] - 1));
    EXPECT_NEAR(ag["G"][k] / kExact[1].G[i], 1.0, 2e-3) << k;
    EXPECT_NEAR(ag["G_dg"][k], ad["G"][k], 1e-9 * ad["G"][k]) << "the DG values kept beside the gathered ones";
  }
  EXPECT_LT(gather_err, 0.005);
  EXPECT_GT(dg_err, 3 * gather_err) << "DG T2 error " << dg_err << ", gathered " << gather_err;
  // On the edge z = 0 of the wall and at the corner: exact q_in (isothermal_cube.exact_qin, kappa 1).
  auto edge = read_csv(fg.out / "probes" / "edge.csv");
  const double edge_exact[3] = {0.55416441, 0.90713298, 0.96870915};
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(edge["q_in"][i] / edge_exact[i], 1.0, 0.005) << i;
  // Each point stops when its own estimate meets the tolerance: on average well before max_rays.
  const auto& rays = fg.summary["final_gather"]["rays_per_point"];
  EXPECT_EQ(rays["min"].get<int>(), 128);
  EXPECT_EQ(rays["max"].get<int>(), 4096);
  EXPECT_LT(rays["mean"].get<double>(), 1024.0);
  EXPECT_GE(rays["mean"].get<double>(), 128.0);
  EXPECT_EQ(fg.summary["final_gather"]["points_at_max_rays"].get<int>(), 0);
  EXPECT_GT(fg.summary["timing"]["gather_seconds"].get<double>(), 0.0);
  // Its own error estimate (half the rays) is small but not zero here, and far below the ray effect
  // it removed from the DG's wall-flux points.
  const auto& est = fg.summary["final_gather"]["error_estimate"];
  const double wall_line = est["probes"]["wall"]["relative"].get<double>();
  EXPECT_GT(wall_line, 0.0);
  EXPECT_LT(wall_line, 0.005);
  EXPECT_LT(3 * wall_line, dg_err);
  for (const auto& [group, e] : est["walls"].items()) {
    EXPECT_GT(e["relative"].get<double>(), 0.0) << group;
    EXPECT_LT(e["relative"].get<double>(), 0.005) << group;
  }
  // The ray effect per group: DG minus gathered, consistent with the two wall summaries.
  const auto& dg_walls = fg.summary["final_gather"]["dg_walls"];
  for (const auto& [group, effect] : fg.summary["final_gather"]["ray_effect"].items())
    EXPECT_NEAR(effect["q_in_W"].get<double>(),
                dg_walls[group]["q_in_W"].get<double>() - fg.summary["walls"][group]["q_in_W"].get<double>(), 1e-12)
        << group;
}

// On a wall edge half of the hemisphere leaves through the other wall at once: sampled apart from
// the open half, 128 rays give the edge's q_in to a few 0.1 % (as one set they gave 0.9 %).
TEST(FinalGather, EdgePointsSampleTheDirectionsIntoTheOtherWallApart) {
  const auto r = run("gather_edge", "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
                                    "order: 2\nangular: {quadrature: tn, order: 2}\n"
                                    "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\nboundaries: {\"*\": {type: black, temperature: 0}}\n"
                                    "output:\n  vtk: false\n  final_gather: {rays: 128}\n"
                                    "  probes: [{name: edge, from: [0, 0, 0], to: [0, 1, 0], points: 11, wall: xmin}]\n");
  // isothermal_cube.exact_qin at y = 0, 0.1, .., 0.5 on the edge x = z = 0 (kappa 1), symmetric in y.
  const double exact[6] = {0.55416441, 0.77836347, 0.87573145, 0.93071458, 0.95963878, 0.96870915};
  auto edge = read_csv(r.out / "probes" / "edge.csv");
  double worst = 0;
  for (std::size_t i = 0; i < 11; ++i) worst = std::max(worst, std::abs(edge["q_in"][i] / exact[std::min(i, 10 - i)] - 1));
  EXPECT_LT(worst, 0.004);
}

// A direction-dependent user source S = 1 + s_x in a cold absorbing cube (kappa 1, black walls):
// I(s) = (1 + s_x)(1 - exp(-L(s))). At the centre, by the cube's symmetry, G is that of the isothermal
// cube (the s_x part cancels), q_x = G / 3 (the mean of s_x^2 is 1/3 of the mean of 1) and q_y = q_z = 0.
TEST(FinalGather, IntegratesDirectionDependentUserSources) {
  const auto r = run("gather_user_source", "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
                                           "order: 2\nangular: {quadrature: tn, order: 2}\n"
                                           "media: {\"*\": {kappa: \"1\", Ib: \"0\", source: \"1 + sx\"}}\n"
                                           "boundaries: {\"*\": {type: black, temperature: 0}}\n"
                                           "output:\n  vtk: false\n  final_gather: {tolerance: 0.002}\n"
                                           "  probes: [{name: centre, from: [0.5, 0.5, 0.5], to: [0.5, 0.5, 0.5], points: 1}]\n");
  auto c = read_csv(r.out / "probes" / "centre.csv");
  const double G = kExact[1].G[2];
  EXPECT_NEAR(c["G"][0] / G, 1.0, 0.003);
  EXPECT_NEAR(c["qx"][0] / G, 1.0 / 3.0, 0.003);
  EXPECT_NEAR(c["qy"][0] / G, 0.0, 0.003);
  EXPECT_NEAR(c["qz"][0] / G, 0.0, 0.003);
}

// A beam along x into a cold, purely absorbing slab (kappa 1, black walls): there is no diffuse
// radiation, and the gather's beam comes from shadow rays, so G = G_collimated = F exp(-x) and
// q_x = F exp(-x) to round-off, and the right wall receives F exp(-1), whatever the DG mesh makes
// of its own sweep of the beam.
TEST(FinalGather, AttenuatesTheCasesBeamsExactly) {
  const auto r = run("gather_beam_exact", "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.5}\n"
                                          "order: 1\nangular: {quadrature: sn, order: 2}\n"
                                          "media: {\"*\": {kappa: \"1\", Ib: \"0\"}}\nboundaries: {\"*\": {type: black, temperature: 0}}\n"
                                          "collimated: [{boundary: left, direction: [1, 0, 0], flux: 1000}]\n"
                                          "output:\n  vtk: false\n  final_gather: {rays: 16}\n"
                                          "  probes: [{name: axis, from: [0.05, 0.1, 0.1], to: [0.95, 0.1, 0.1], points: 7},\n"
                                          "           {name: right, from: [1, 0.05, 0.1], to: [1, 0.15, 0.1], points: 3, wall: right}]\n");
  auto a = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < a["x"].size(); ++i) {
    const double exact = 1000 * std::exp(-a["x"][i]);
    EXPECT_NEAR(a["G"][i], exact, 1e-9 * exact) << i;
    EXPECT_NEAR(a["G_collimated"][i], exact, 1e-9 * exact) << i;
    EXPECT_NEAR(a["qx"][i], exact, 1e-9 * exact) << i;
  }
  auto w = read_csv(r.out / "probes" / "right.csv");
  for (std::size_t i = 0; i < w["q_in"].size(); ++i) EXPECT_NEAR(w["q_in"][i], 1000 * std::exp(-1.0), 1e-9 * 1000) << i;
  EXPECT_NEAR(r.summary["walls"]["right"]["q_in_W"].get<double>() / r.summary["walls"]["right"]["area"].get<double>(), 1000 * std::exp(-1.0),
              1e-9 * 1000);
}

// At radiative equilibrium the DG source is I_b everywhere and the walls leave I_b: the gather
// must return G = 4 sigma T^4 and q_net = 0 exactly, with anisotropic scattering (the source from
// the DG intensities) and diffuse + specular walls.
TEST(FinalGather, IsExactAtEquilibrium) {
  const auto r = run("gather_equilibrium",
                     "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.25}\n"
                     "order: 2\nangular: {quadrature: tn, order: 2}\n"
                     "media: {\"*\": {kappa: \"0.7\", scattering: \"1.3\", phase_function: {type: henyey-greenstein, g: 0.6}, temperature: \"1000\"}}\n"
                     "boundaries:\n  left: {type: gray, emissivity: 0.4, temperature: 1000}\n"
                     "  right: {type: gray, emissivity: 0.7, specular_fraction: 0.5, temperature: 1000}\n"
                     "  sides: {type: symmetry}\n"
                     "solver: {outer_tolerance: 1.0e-13}\n"
                     "output: {vtk: false, final_gather: {rays: 64}, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 5},\n"
                     "  {name: left, from: [0, 0.05, 0.05], to: [0, 0.2, 0.2], points: 3, wall: left}]}\n");
  const double E = 5.670374419e-8 * 1e12;
  auto p = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < p["G"].size(); ++i) {
    EXPECT_NEAR(p["G"][i] / (4 * E), 1.0, 1e-7) << i;
    EXPECT_NEAR(p["qx"][i] / E, 0.0, 1e-7) << i;
  }
  auto w = read_csv(r.out / "probes" / "left.csv");
  for (std::size_t i = 0; i < w["q_net"].size(); ++i) EXPECT_NEAR(w["q_net"][i] / E, 0.0, 1e-7) << i;
  for (const auto& [name, wall] : r.summary["walls"].items()) EXPECT_NEAR(wall["q_net_mean"].get<double>() / E, 0.0, 1e-7) << name;
  // A uniform field has no quadrature error: the half-ray estimate vanishes.
  for (const auto& [name, e] : r.summary["final_gather"]["error_estimate"]["walls"].items())
    EXPECT_LT(e["relative"].get<double>(), 1e-7) << name;
  EXPECT_LT(r.summary["final_gather"]["error_estimate"]["probes"]["axis"]["relative"].get<double>(), 1e-7);
}

// Where sigma_t varies inside the elements, the chord integral of kappa I_b exp(-tau) is no longer
// exact for a polynomial source (kappa I_b exp(-delta), see RayIntegrator::segment): at equilibrium
// (I = I_b for any kappa) the gathered G and q_in show that error alone. kappa spans 0.5 to 60 /m
// (optically thick elements, many sub-intervals) and is a polynomial the DG field holds exactly.
TEST(FinalGather, NonUniformAttenuationAtEquilibrium) {
  // P2 with a quadratic kappa, and P1 with a linear one (where the sub-interval's exp(-delta) is
  // quadratic though source and kappa are linear: the fit needs three points).
  for (const auto& [order, kappa] : {std::pair<int, std::string>{2, "0.5 + 40*x*x + 20*y*z"}, {1, "0.5 + 40*x + 20*y"}}) {
    const auto r = run("gather_equilibrium_kappa_p" + std::to_string(order),
                       "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
                       "order: " + std::to_string(order) + "\nangular: {quadrature: tn, order: 2}\n"
                       "media: {\"*\": {kappa: \"" + kappa + "\", temperature: \"1000\"}}\n"
                       "boundaries: {\"*\": {type: black, temperature: 1000}}\n"
                       "output: {vtk: false, final_gather: {rays: 64}, probes: [{name: axis, from: [0.02, 0.5, 0.5], to: [0.98, 0.5, 0.5], points: 7},\n"
                       "  {name: wall, from: [1, 0.1, 0.1], to: [1, 0.9, 0.9], points: 5, wall: xmax}]}\n");
    const double E = 5.670374419e-8 * 1e12;
    double worst = 0;
    auto p = read_csv(r.out / "probes" / "axis.csv");
    for (const double G : p["G"]) worst = std::max(worst, std::abs(G / (4 * E) - 1));
    auto w = read_csv(r.out / "probes" / "wall.csv");
    for (const double q : w["q_in"]) worst = std::max(worst, std::abs(q / E - 1));
    for (const auto& [name, wall] : r.summary["walls"].items()) worst = std::max(worst, std::abs(wall["q_net_mean"].get<double>() / E));
    std::printf("[ note ] P%d, non-uniform kappa at equilibrium: largest relative error %.3g\n", order, worst);
    EXPECT_LT(worst, 1e-4) << "P" << order;
  }
}

TEST(FinalGather, RefusesWhatItDoesNotIntegrate) {
  const std::string slab = "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.5}\nangular: {quadrature: sn, order: 2}\n";
  try {
    run("gather_refused", slab + "media: {\"*\": {kappa: \"1\", Ib: \"0\"}}\n"
                                 "boundaries: {left: {type: inflow, intensity: \"1\"}, \"*\": {type: black}}\noutput: {vtk: false, final_gather: {}}\n");
    ADD_FAILURE() << "final gather with inflow accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("output.final_gather"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("inflow"), std::string::npos) << e.what();
  }
}

// (1 / pi) integral over the hemisphere of (1 - exp(-kappa L)) cos(theta) from the centre (0, 0.5, 0.5)
// of the wall x = 0 of the unit cube, L the chord to the other walls: the incident flux of an
// isothermal gray gas of unit emissive power, as an integral over the five other walls' area,
// dOmega cos(theta) = cos(theta) cos(theta') dA / d^2, with Gauss-Legendre on each (smooth there).
// volume = true: (1 / pi) integral over the sphere of (1 - exp(-kappa L)) from the centre, G / E.
double cube_view_integral(double kappa, bool volume) {
  std::vector<double> x, w;
  gas::gauss_legendre_01(48, x, w);
  double sum = 0;
  const std::array<double, 3> p = volume ? std::array<double, 3>{0.5, 0.5, 0.5} : std::array<double, 3>{0, 0.5, 0.5};
  for (int axis = 0; axis < 3; ++axis)
    for (const double side : {0.0, 1.0}) {
      if (!volume && axis == 0 && side == 0.0) continue;  // the point's own wall
      for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = 0; j < x.size(); ++j) {
          std::array<double, 3> q{};
          q[static_cast<std::size_t>(axis)] = side, q[static_cast<std::size_t>((axis + 1) % 3)] = x[i], q[static_cast<std::size_t>((axis + 2) % 3)] = x[j];
          const double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2], d = std::sqrt(dx * dx + dy * dy + dz * dz);
          const double cos_wall = std::abs(q[static_cast<std::size_t>(axis)] - p[static_cast<std::size_t>(axis)]) / d;
          const double cos_point = volume ? 1.0 : dx / d;
          sum += w[i] * w[j] * (1 - std::exp(-kappa * d)) * cos_point * cos_wall / (d * d);
        }
    }
  return sum / std::numbers::pi;
}

// A nongray gas (WSGG, five spectral points with the clear gas): each point's DG solution is gathered
// with its own kappa_j, a_j I_b and wall emission, and the sum is compared with the exact incident
// flux of the isothermal cube (cold black walls), sum_j a_j sigma T^4 F(kappa_j) (cube_view_integral),
// and the centre's G and div q; then the same gas at the walls' temperature gathers equilibrium exactly.
TEST(FinalGather, GathersEachSpectralPointOfANongrayModel) {
  auto gas_case = [](double wall_T, const std::string& gather) {
    return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n"
           "order: 2\nangular: {quadrature: tn, order: 2}\nmodel: {type: wsgg}\n"
           "media: {\"*\": {temperature: \"1000\", x_h2o: \"0.2\", x_co2: \"0.1\"}}\n"
           "boundaries: {\"*\": {type: black, temperature: " + std::to_string(wall_T) + "}}\n"
           "output:\n  vtk: false\n" + gather + "  probes:\n"
           "    - {name: centre, from: [0.5, 0.5, 0.5], to: [0.5, 0.5, 0.5], points: 1}\n"
           "    - {name: wall, from: [0, 0.5, 0.5], to: [0, 0.5, 0.5], points: 1, wall: xmin}\n";
  };
  const auto loaded = gas::make_model("wsgg", {});
  const gas::GasState state{1000, 1, 0.2, 0.1, 0};
  const double E = 5.670374419e-8 * 1e12;  // sigma T^4
  double q_exact = 0, G_exact = 0, divq_exact = 0;
  for (int j = 0; j < loaded.spectral->num_spectral_points(); ++j) {
    double kappa = 0, a = 0, T = 1000;
    loaded.spectral->absorption(j, {&state, 1}, {&kappa, 1});
    loaded.spectral->emission_weight(j, {&state, 1}, {&T, 1}, {&a, 1});
    const double G_j = a * E * cube_view_integral(kappa, true);
    q_exact += a * E * cube_view_integral(kappa, false);
    G_exact += G_j;
    divq_exact += kappa * (4 * a * E - G_j);
  }
  const auto dg = run("gather_wsgg_off", gas_case(0, ""));
  const auto fg = run("gather_wsgg", gas_case(0, "  final_gather: {}\n"));
  const double q_dg = read_csv(dg.out / "probes" / "wall.csv")["q_in"][0], q_fg = read_csv(fg.out / "probes" / "wall.csv")["q_in"][0];
  auto centre = read_csv(fg.out / "probes" / "centre.csv");
  std::printf("[ note ] WSGG cube: q_in exact %.6g, DG T2 %.4f %%, gathered %.4f %%; centre G %.4f %%, div q %.4f %%\n", q_exact,
              100 * (q_dg / q_exact - 1), 100 * (q_fg / q_exact - 1), 100 * (centre["G"][0] / G_exact - 1),
              100 * (centre["divq"][0] / divq_exact - 1));
  EXPECT_NEAR(q_fg / q_exact, 1.0, 0.005);
  EXPECT_GT(std::abs(q_dg / q_exact - 1), 3 * std::abs(q_fg / q_exact - 1));
  EXPECT_NEAR(centre["G"][0] / G_exact, 1.0, 0.005);
  EXPECT_NEAR(centre["divq"][0] / divq_exact, 1.0, 0.005);
  EXPECT_EQ(fg.summary["final_gather"]["spectral_points_gathered"].get<int>(), fg.summary["spectral"]["spectral_points"].get<int>());
  EXPECT_EQ(fg.summary["final_gather"]["per_spectral_point"].size(), fg.summary["spectral"]["spectral_points"].get<std::size_t>());
  // The wall totals are the gathered ones; the DG's are kept.
  EXPECT_NE(fg.summary["walls"]["xmin"]["q_in_W"].get<double>(), fg.summary["final_gather"]["dg_walls"]["xmin"]["q_in_W"].get<double>());
  const auto eq = run("gather_wsgg_equilibrium", gas_case(1000, "  final_gather: {rays: 64}\n"));
  EXPECT_NEAR(read_csv(eq.out / "probes" / "wall.csv")["q_net"][0] / E, 0.0, 1e-7);
  EXPECT_NEAR(read_csv(eq.out / "probes" / "centre.csv")["G"][0] / (4 * E), 1.0, 1e-7);
  for (const auto& [name, wall] : eq.summary["walls"].items()) EXPECT_NEAR(wall["q_net_mean"].get<double>() / E, 0.0, 1e-7) << name;
}

TEST(MonteCarlo, InputErrorsNameTheEntry) {
  const std::string mesh = "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.5}\n";
  const std::string medium = "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\n";
  try {
    run("bad_inflow", mesh + medium + "boundaries: {\"*\": {type: inflow, intensity: \"1\"}}\nsolver: {method: montecarlo, paths: 100}\n");
    FAIL() << "inflow accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("boundaries.*"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("montecarlo"), std::string::npos) << e.what();
  }
  try {
    run("bad_paths", mesh + medium + "angular: {quadrature: sn, order: 2}\nboundaries: {\"*\": {type: black}}\nsolver: {paths: 100}\n");
    FAIL() << "paths without montecarlo accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("solver.paths"), std::string::npos) << e.what();
  }
  try {
    run("bad_count", mesh + medium + "boundaries: {\"*\": {type: black}}\nsolver: {method: montecarlo, paths: 1.5e3, batches: 1}\n");
    FAIL() << "batches: 1 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("solver.batches"), std::string::npos) << e.what();
  }
  auto message = [&](const std::string& name, const std::string& solver) {
    try {
      run(name, mesh + medium + "angular: {quadrature: sn, order: 2}\nboundaries: {\"*\": {type: black}}\nsolver: " + solver + "\n");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto sampling = message("bad_sampling", "{method: montecarlo, paths: 100, spectral_sampling: per_band}");
  EXPECT_NE(sampling.find("solver.spectral_sampling"), std::string::npos) << sampling;
  EXPECT_NE(sampling.find("per_path"), std::string::npos) << sampling;
  EXPECT_NE(message("sampling_dg", "{spectral_sampling: per_path}").find("montecarlo only"), std::string::npos);
  const auto single = message("single_mc", "{method: montecarlo, paths: 100, backend: opencl, precision: single}");
  EXPECT_NE(single.find("double precision"), std::string::npos) << single;
}

}  // namespace
}  // namespace dgrte::mc
