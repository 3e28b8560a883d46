// The gray solver against exact answers: radiative equilibrium, the discrete-ordinates slab
// solution, energy conservation, and agreement of the outer methods.
#include "dgrte/dgrte.hpp"
#include "../common/case_runner.hpp"
#include "common/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace dgrte::app {
namespace {

namespace fs = std::filesystem;

using test_support::read_csv;
using test_support::Run;

Run run(const std::string& name, const std::string& body) { return test_support::run_yaml("dgrte_solver_tests", name, body); }

const std::string kSlab = "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/slab.geo, size: 0.25}\n";

// An isothermal enclosure with walls at the medium's temperature is in equilibrium: I = Ib in
// every direction, whatever kappa, scattering, emissivity and set (discrete Kirchhoff law).
TEST(GraySolver, IsothermalEnclosureStaysInEquilibrium) {
  for (const std::string angular : {"{quadrature: sn, order: 4}", "{quadrature: tn, order: 2}", "{quadrature: product, polar: 4, azimuthal: 8, axis: x}"}) {
    const auto r = run("equilibrium", kSlab + "order: 2\nangular: " + angular +
                                          "\nmedia: {\"*\": {kappa: \"0.7\", scattering: \"1.3\", phase_function: {type: henyey-greenstein, g: 0.6}, temperature: \"1000\"}}\n"
                                          "boundaries:\n  left: {type: gray, emissivity: 0.4, temperature: 1000}\n"
                                          "  right: {type: gray, emissivity: 0.7, specular_fraction: 0.5, temperature: 1000}\n"
                                          "  sides: {type: symmetry}\n"
                                          "solver: {outer_tolerance: 1.0e-13}\n"
                                          "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 7}]}\n");
    auto p = read_csv(r.out / "probes" / "axis.csv");
    const double G_exact = 4 * 5.670374419e-8 * std::pow(1000.0, 4);
    for (std::size_t i = 0; i < p["G"].size(); ++i) {
      EXPECT_NEAR(p["G"][i] / G_exact, 1.0, 1e-9) << angular;
      EXPECT_NEAR(p["qx"][i] / G_exact, 0.0, 1e-9) << angular;
      EXPECT_NEAR(p["divq"][i] / G_exact, 0.0, 1e-9) << angular;
    }
    EXPECT_LT(std::abs(r.summary["energy_balance"]["imbalance_W"].get<double>()), 1e-6 * G_exact);
    // The relative imbalance is measured against the power in play (here the incident wall power), not
    // against div q and q_net, which vanish at equilibrium.
    EXPECT_GT(r.summary["energy_balance"]["scale_W"].get<double>(), 0.2 * G_exact / 4);
    EXPECT_LT(std::abs(r.summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-9);
  }
}

// The same with kappa and sigma_s varying inside the elements (a kink at x = 0.43 and a slope):
// the Galerkin extinction and scattering blocks and the projected emission keep the discrete
// Kirchhoff law exactly, and the probes' div q with the point's own kappa vanishes.
TEST(GraySolver, EquilibriumHoldsWithPropertiesVaryingInsideElements) {
  const auto r = run("equilibrium_kinked", kSlab + "order: 3\nangular: {quadrature: sn, order: 4}\n"
                                                   "media: {\"*\": {kappa: \"0.7 + 2*abs(x - 0.43)\", scattering: \"1.3 + 0.4*x\", "
                                                   "phase_function: {type: henyey-greenstein, g: 0.6}, temperature: \"1000\"}}\n"
                                                   "boundaries:\n  left: {type: gray, emissivity: 0.4, temperature: 1000}\n"
                                                   "  right: {type: black, temperature: 1000}\n  sides: {type: symmetry}\n"
                                                   "solver: {outer_tolerance: 1.0e-13}\n"
                                                   "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 13}]}\n");
  auto p = read_csv(r.out / "probes" / "axis.csv");
  const double G_exact = 4 * 5.670374419e-8 * std::pow(1000.0, 4);
  for (std::size_t i = 0; i < p["G"].size(); ++i) {
    EXPECT_NEAR(p["G"][i] / G_exact, 1.0, 1e-9);
    EXPECT_NEAR(p["divq"][i] / G_exact, 0.0, 1e-9);
  }
  EXPECT_LT(std::abs(r.summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-9);
}

// Cold black walls, isothermal absorbing medium, product set about x (its directions see the
// side walls as mirrors): the discrete-ordinates answer is G = sum_m w_m Ib (1 - exp(-kappa d_m / |mu_m|)),
// d_m the distance to the upstream wall. High-order DG reaches it to the discretisation error.
TEST(GraySolver, AbsorbingSlabMatchesDiscreteOrdinates) {
  const double kappa = 1.0, Ib = 1.0;
  const auto r = run("slab", kSlab + "order: 4\nangular: {quadrature: product, polar: 8, azimuthal: 4, axis: x}\n"
                                     "media: {\"*\": {kappa: \"1.0\", Ib: \"1.0\"}}\n"
                                     "boundaries: {left: {type: black}, right: {type: black}, sides: {type: symmetry}}\n"
                                     "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.13], to: [1, 0.1, 0.13], points: 11},"
                                     " {name: wall, from: [1, 0.0, 0.1], to: [1, 0.25, 0.1], points: 5, wall: right}]}\n");
  std::ifstream qf(r.out / "quadrature.csv");
  std::string line;
  std::vector<std::array<double, 4>> set;
  while (std::getline(qf, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 's') continue;
    std::array<double, 4> v{};
    std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3]);
    set.push_back(v);
  }
  ASSERT_EQ(set.size(), 32u);
  auto p = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < p["x"].size(); ++i) {
    const double x = p["x"][i];
    double G = 0, q = 0;
    for (const auto& s : set) {
      const double d = s[0] > 0 ? x : 1 - x;
      const double I = Ib * (1 - std::exp(-kappa * d / std::abs(s[0])));
      G += s[3] * I;
      q += s[3] * s[0] * I;
    }
    EXPECT_NEAR(p["G"][i], G, 2e-4 * G) << "x = " << x;
    EXPECT_NEAR(p["qx"][i], q, 2e-4 * G) << "x = " << x;
  }
  // Wall flux on the right wall: q_net = q_in = sum_{mu>0} w mu Ib (1 - exp(-kappa/mu)).
  double q_wall = 0;
  for (const auto& s : set)
    if (s[0] > 0) q_wall += s[3] * s[0] * Ib * (1 - std::exp(-kappa / s[0]));
  auto w = read_csv(r.out / "probes" / "wall.csv");
  for (double v : w["q_net"]) EXPECT_NEAR(v, q_wall, 2e-4 * q_wall);
  EXPECT_NEAR(r.summary["walls"]["right"]["q_net_mean"].get<double>(), q_wall, 2e-4 * q_wall);
  EXPECT_LT(std::abs(r.summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-10);
}

// Scattering and reflecting walls: source iteration and GMRES reach the same answer, GMRES in
// fewer transport sweeps, and energy is conserved to the solver tolerance.
TEST(GraySolver, OuterMethodsAgreeAndConserveEnergy) {
  auto body = [&](const std::string& outer) {
    return kSlab + "order: 2\nangular: {quadrature: sn, order: 4}\n"
                   "media: {\"*\": {kappa: \"0.1\", scattering: \"1.9\", phase_function: {type: linear, a1: 0.5}, temperature: \"1500\"}}\n"
                   "boundaries:\n  left: {type: gray, emissivity: 0.5, temperature: 500}\n  right: {type: black, temperature: 300}\n"
                   "  sides: {type: symmetry}\n"
                   "solver: {outer: " + outer + ", outer_tolerance: 1.0e-10}\n"
                   "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 9}]}\n";
  };
  const auto si = run("si", body("source-iteration"));
  const auto gm = run("gmres", body("gmres"));
  auto a = read_csv(si.out / "probes" / "axis.csv"); auto b = read_csv(gm.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < a["G"].size(); ++i) {
    EXPECT_NEAR(a["G"][i], b["G"][i], 1e-7 * b["G"][i]);
    EXPECT_NEAR(a["qx"][i], b["qx"][i], 1e-7 * b["G"][i]);
  }
  EXPECT_LT(gm.summary["solver"]["transport_sweeps"].get<int>(), si.summary["solver"]["transport_sweeps"].get<int>());
  for (const auto* r : {&si, &gm}) EXPECT_LT(std::abs(r->summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-8);
}

// Threads over the elements of each sweep level give the same answer as threads over ordinates
// (the same operations per element, in another order between independent elements).
TEST(GraySolver, ThreadsOverLevelsAgreeWithThreadsOverDirections) {
  auto body = [&](const std::string& threads) {
    return kSlab + "order: 2\nangular: {quadrature: sn, order: 4}\n"
                   "media: {\"*\": {kappa: \"0.5\", scattering: \"1.5\", temperature: \"1500\"}}\n"
                   "boundaries:\n  left: {type: gray, emissivity: 0.5, temperature: 500}\n  right: {type: black, temperature: 300}\n"
                   "  sides: {type: symmetry}\n"
                   "solver: {outer_tolerance: 1.0e-10, threads: " + threads + "}\n"
                   "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 9}]}\n";
  };
  const auto d = run("threads_d", body("directions"));
  const auto l = run("threads_l", body("levels"));
  EXPECT_EQ(l.summary["solver"]["threads_over"], "levels");
  auto a = read_csv(d.out / "probes" / "axis.csv");
  auto b = read_csv(l.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < a["G"].size(); ++i) EXPECT_NEAR(a["G"][i], b["G"][i], 1e-10 * b["G"][i]);
}

// The Bi-CGSTAB inner solver gives the sweep's answer.
TEST(GraySolver, InnerSolversAgree) {
  auto body = [&](const std::string& inner) {
    return kSlab + "order: 2\nangular: {quadrature: tn, order: 1}\n"
                   "media: {\"*\": {kappa: \"2\", scattering: \"1\", temperature: \"1000\"}}\n"
                   "boundaries: {left: {type: black}, right: {type: black}, sides: {type: symmetry}}\n"
                   "solver: {inner: " + inner + ", outer_tolerance: 1.0e-10, rtol: 1.0e-13}\n"
                   "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 5}]}\n";
  };
  const auto sweep_run = run("sweep", body("sweep"));
  auto a = read_csv(sweep_run.out / "probes" / "axis.csv");
  auto b = read_csv(run("bicg", body("bicgstab")).out / "probes" / "axis.csv");
  const auto sweep_pc = run("bicg_sweep", body("bicgstab, preconditioner: sweep"));
  EXPECT_EQ(sweep_pc.summary["solver"]["inner"], "bicgstab (sweep preconditioner)");
  auto c = read_csv(sweep_pc.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < a["G"].size(); ++i) {
    EXPECT_NEAR(a["G"][i], b["G"][i], 1e-8 * b["G"][i]);
    EXPECT_NEAR(a["G"][i], c["G"][i], 1e-8 * c["G"][i]);
  }
  // Without dependency cycles the sweep is the exact inverse: one Bi-CGSTAB iteration per
  // one-direction solve, as many as the sweep run's passes (the mirrors repeat solves in both).
  EXPECT_EQ(sweep_pc.summary["solver"]["inner_iterations"].get<long>(), sweep_run.summary["solver"]["inner_iterations"].get<long>());
}

// A collimated beam through a scattering slab: the collimated part is attenuated exactly,
// F exp(-beta x); the scattered part is conserved (energy balance), and the transmitted beam
// reaches the far wall.
TEST(GraySolver, CollimatedBeamIsAttenuatedExactlyAndConserved) {
  const auto r = run("beam", kSlab + "order: 4\nangular: {quadrature: product, polar: 8, azimuthal: 4, axis: x}\n"
                                     "media: {\"*\": {kappa: \"0.5\", scattering: \"0.5\", phase_function: {type: henyey-greenstein, g: 0.6}, Ib: \"0\"}}\n"
                                     "boundaries: {left: {type: black}, right: {type: gray, emissivity: 0.5}, sides: {type: black}}\n"
                                     "collimated: [{boundary: left, direction: [1, 0, 0], flux: 1000}]\n"
                                     "solver: {outer_tolerance: 1.0e-11}\n"
                                     "output: {vtk: false, probes: [{name: axis, from: [0, 0.1, 0.1], to: [1, 0.1, 0.1], points: 9}]}\n");
  auto p = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < p["x"].size(); ++i) {
    EXPECT_NEAR(p["G_collimated"][i], 1000 * std::exp(-p["x"][i]), 1e-5 * 1000) << p["x"][i];
    EXPECT_NEAR(p["qx_collimated"][i], 1000 * std::exp(-p["x"][i]), 1e-5 * 1000);
    EXPECT_GT(p["G"][i], p["G_collimated"][i]);  // plus the scattered light
  }
  EXPECT_LT(std::abs(r.summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-9);
  // The beam enters through 'left' (q_net there is minus what enters, plus what comes back).
  EXPECT_LT(r.summary["walls"]["left"]["q_net_W"].get<double>(), -0.8 * 1000 * 0.0625);
}

TEST(GraySolver, BeamFacingAwayIsAnError) {
  try {
    run("beam_away", kSlab + "order: 1\nangular: {quadrature: sn, order: 2}\nmedia: {\"*\": {kappa: \"1\", Ib: \"0\"}}\n"
                             "boundaries: {\"*\": {type: black}}\ncollimated: [{boundary: left, direction: [-1, 0, 0], flux: 10}]\n");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("faces away from the beam"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("collimated[0]"), std::string::npos) << e.what();
  }
}

// A hot zone with a temperature jump, oblique ordinates: high-order DG overshoots and
// undershoots across the jump (negative nodal intensities); the positivity limiter removes them
// and keeps the energy balance.
TEST(GraySolver, PositivityLimiterRemovesNegativeIntensities) {
  auto body = [&](bool limit) {
    return std::string("mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/flame.geo, size: 0.5}\norder: 4\n"
                       "angular: {quadrature: tn, order: 1}\n"
                       "media: {flame: {kappa: \"5\", Ib: \"1000\"}, gas: {kappa: \"0.05\", Ib: \"0\"}}\n"
                       "boundaries: {\"*\": {type: black}}\n"
                       "solver: {positivity: ") + (limit ? "true" : "false") + "}\noutput: {vtk: false, intensities: true}\n";
  };
  const auto plain = run("nolimit", body(false));
  const auto limited = run("limit", body(true));
  EXPECT_EQ(plain.summary["solver"]["limited_elements"].get<long>(), 0);
  EXPECT_GT(limited.summary["solver"]["limited_elements"].get<long>(), 0);
  for (const auto* r : {&plain, &limited})
    EXPECT_LT(std::abs(r->summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-10);
  // The wall fluxes barely move (the limiter keeps each element's mean).
  const double a = plain.summary["walls"]["walls"]["q_net_W"].get<double>(), b = limited.summary["walls"]["walls"]["q_net_W"].get<double>();
  EXPECT_NEAR(a, b, 0.02 * std::abs(a));
}

TEST(GraySolver, PositivityWithKrylovOuterIsAnError) {
  try {
    run("limit_gmres", kSlab + "order: 1\nangular: {quadrature: sn, order: 2}\n"
                               "media: {\"*\": {kappa: \"1\", scattering: \"1\", Ib: \"1\"}}\n"
                               "boundaries: {\"*\": {type: black}}\nsolver: {positivity: true}\n");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("solver.positivity (line"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("source-iteration"), std::string::npos) << e.what();
  }
}

// Symmetry walls not aligned with the set (the slab rotated by 30 degrees): mirrored ordinates are
// interpolated, conserving the reflected energy; G stays within a few per cent of the aligned slab.
TEST(GraySolver, RotatedSymmetryWallsStayCloseToAligned) {
  auto body = [](const std::string& geo, const std::string& from, const std::string& to) {
    return "mesh: {geo: " DGRTE_SOURCE_DIR "/tests/solver/" + geo + ", size: 0.25}\norder: 2\nangular: {quadrature: sn, order: 6}\n"
           "media: {\"*\": {kappa: \"1.0\", Ib: \"1\"}}\n"
           "boundaries: {left: {type: black}, right: {type: black}, sides: {type: symmetry}}\n"
           "output: {vtk: false, probes: [{name: axis, from: " + from + ", to: " + to + ", points: 5}]}\n";
  };
  const auto a = run("aligned", body("slab.geo", "[0.1, 0.125, 0.125]", "[0.9, 0.125, 0.125]"));
  const double c = std::cos(std::acos(-1.0) / 6), s = std::sin(std::acos(-1.0) / 6);
  auto rotated = [&](double x) { return fmt::format("[{:.9f}, {:.9f}, 0.125]", c * x - s * 0.125, s * x + c * 0.125); };
  const auto r = run("rotated", body("slab_rotated.geo", rotated(0.1), rotated(0.9)));
  EXPECT_NE(r.summary["warnings"].dump().find("mirror directions are not in the quadrature"), std::string::npos)
      << r.summary["warnings"].dump();
  auto pa = read_csv(a.out / "probes" / "axis.csv");
  auto pr = read_csv(r.out / "probes" / "axis.csv");
  for (std::size_t i = 0; i < pa["G"].size(); ++i) EXPECT_NEAR(pr["G"][i], pa["G"][i], 0.03 * pa["G"][i]) << i;
  EXPECT_LT(std::abs(r.summary["energy_balance"]["relative_imbalance"].get<double>()), 1e-9);
}

TEST(GraySolver, WallProbeOffTheWallIsAnErrorBeforeTheSolve) {
  try {
    run("badprobe", kSlab + "order: 1\nangular: {quadrature: sn, order: 2}\nmedia: {\"*\": {kappa: \"1\", Ib: \"1\"}}\n"
                            "boundaries: {\"*\": {type: black}}\n"
                            "output: {probes: [{name: w, from: [0.5, 0.1, 0.1], to: [1, 0.1, 0.1], points: 3, wall: right}]}\n");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not on the wall 'right'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dgrte::app
