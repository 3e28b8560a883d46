// The OpenCL backend through `dgrte run`: a scattering case with diffusely and specularly reflecting
// walls gives the CPU path's wall fluxes and G (sweeps and Bi-CGSTAB inner solvers), and a directions
// run the same iterations and error. Skipped without OpenCL unless DGRTE_REQUIRE_OPENCL=1.
#include "../common/case_runner.hpp"
#include "opencl_required.hpp"
#include "common/error.hpp"
#include "device/opencl_runtime.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace dgrte {
namespace {

using test_support::opencl_missing;

std::string scattering_case(const std::string& inner, const std::string& backend) {
  return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.7}\n"
         "order: 2\n"
         "angular: {quadrature: sn, order: 4}\n"
         "media:\n  \"*\": {kappa: \"0.5\", scattering: \"0.8\", phase_function: {type: henyey-greenstein, g: 0.6}, temperature: \"1000\"}\n"
         "boundaries:\n"
         "  xmin: {type: gray, emissivity: 0.4, temperature: 600}\n"
         "  xmax: {type: specular, reflectivity: 0.7}\n"
         "  ymin: {type: gray, emissivity: 0.5, specular_fraction: 0.5, temperature: 300}\n"
         "  \"*\": {type: black, temperature: 400}\n"
         "solver: {outer: gmres, outer_tolerance: 1.0e-10, inner: " + inner + ", rtol: 1.0e-12, backend: " + backend + "}\n"
         "output: {vtk: false}\n";
}

TEST(BackendRuns, ScatteringWithReflectingWallsMatchesCpu) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd): backend parity not tested";
  for (const std::string inner : {"sweep", "bicgstab"}) {
    const auto cpu = test_support::run_yaml("dgrte_backend_runs", "cpu_" + inner, scattering_case(inner, "cpu")).summary;
    const auto ocl = test_support::run_yaml("dgrte_backend_runs", "ocl_" + inner, scattering_case(inner, "opencl")).summary;
    EXPECT_EQ(cpu["backend"]["type"], "cpu");
    EXPECT_EQ(ocl["backend"]["type"], "opencl");
    EXPECT_EQ(ocl["backend"]["precision"], "double");
    EXPECT_TRUE(ocl["backend"]["fp64"].get<bool>());
    EXPECT_NEAR(ocl["solver"]["outer_iterations"].get<int>(), cpu["solver"]["outer_iterations"].get<int>(), 1) << inner;
    for (const auto& [name, wall] : cpu["walls"].items()) {
      if (!wall.is_object() || !wall.contains("q_in_W")) continue;
      const double a = wall["q_in_W"].get<double>(), b = ocl["walls"][name]["q_in_W"].get<double>();
      EXPECT_NEAR(b, a, 1e-9 * std::abs(a)) << inner << " wall " << name;
    }
    const auto& ba = cpu["energy_balance"];
    const auto& bb = ocl["energy_balance"];
    EXPECT_NEAR(bb["volume_W"].get<double>(), ba["volume_W"].get<double>(), 1e-9 * ba["scale_W"].get<double>()) << inner;
    EXPECT_LT(std::abs(bb["relative_imbalance"].get<double>()), 1e-8) << inner;  // energy conserved on the device too
  }
}

// A line-by-line gas (the HITRAN H2O fragment) with solver.backend: opencl: the line sums go to the
// device too (summary.json spectral.property_backend, the contract), and the wall fluxes are the CPU
// run's.
TEST(BackendRuns, LineByLineSumsOnTheDevice) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd): backend parity not tested";
  auto body = [](const std::string& backend) {
    return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 1.0}\norder: 1\n"
           "angular: {quadrature: sn, order: 2}\n"
           "model: {type: lbl, par_files: [" DGRTE_SOURCE_DIR "/gasdata/lbl/hitran_fragments/hitran_2016_H2O_2iso_2000_2100cm.par], "
           "nu_min: 2040, nu_max: 2060, dnu: 0.5}\n"
           "media:\n  \"*\": {temperature: \"1000 + 400*x\", pressure: \"1\", x_h2o: \"0.2\"}\n"
           "boundaries:\n  \"*\": {type: black, temperature: 300}\n"
           "solver: {backend: " + backend + "}\noutput: {vtk: false}\n";
  };
  const auto cpu = test_support::run_yaml("dgrte_backend_runs", "lbl_cpu", body("cpu")).summary;
  const auto ocl = test_support::run_yaml("dgrte_backend_runs", "lbl_ocl", body("opencl")).summary;
  EXPECT_EQ(cpu["spectral"]["property_backend"], "cpu");
  EXPECT_EQ(ocl["spectral"]["property_backend"], "opencl");
  for (const auto& [name, wall] : cpu["walls"].items()) {
    if (!wall.is_object() || !wall.contains("q_in_W")) continue;
    const double a = wall["q_in_W"].get<double>(), b = ocl["walls"][name]["q_in_W"].get<double>();
    EXPECT_NEAR(b, a, 1e-9 * std::abs(a)) << "wall " << name;
  }
}

TEST(BackendRuns, DirectionsRunMatchesCpu) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd): backend parity not tested";
  auto body = [](const std::string& backend, const std::string& pc) {
    return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.6}\norder: 3\n"
           "directions: [[0.62402, 0.52802, 0.57602], [-0.48, 0.6, -0.64]]\n"
           "media:\n  \"*\": {kappa: \"0.1\", Ib: \"(1+sin(pi*x/2))*(1+sin(pi*y/2))*(1+sin(pi*z/2))\",\n"
           "        source: \"pi/2*(sx*cos(pi*x/2)*(1+sin(pi*y/2))*(1+sin(pi*z/2)) + sy*(1+sin(pi*x/2))*cos(pi*y/2)*(1+sin(pi*z/2)) + "
           "sz*(1+sin(pi*x/2))*(1+sin(pi*y/2))*cos(pi*z/2))\"}\n"
           "boundaries:\n  \"*\": {type: black, temperature: 0}\n"
           "exact: \"(1+sin(pi*x/2))*(1+sin(pi*y/2))*(1+sin(pi*z/2))\"\n"
           "solver: {rtol: 1.0e-12, preconditioner: " + pc + ", backend: " + backend + "}\noutput: {vtk: false}\n";
  };
  for (const std::string pc : {"partial-block-jacobi", "sweep"}) {
    const auto cpu = test_support::run_yaml("dgrte_backend_runs", "dcpu", body("cpu", pc)).summary;
    const auto ocl = test_support::run_yaml("dgrte_backend_runs", "docl", body("opencl", pc)).summary;
    for (std::size_t d = 0; d < 2; ++d) {
      EXPECT_NEAR(ocl["solves"][d]["iterations"].get<int>(), cpu["solves"][d]["iterations"].get<int>(), 1) << pc;
      EXPECT_LT(ocl["solves"][d]["relative_residual"].get<double>(), 1e-11);
    }
    const double a = cpu["error"]["relative_l2"].get<double>(), b = ocl["error"]["relative_l2"].get<double>();
    EXPECT_NEAR(b, a, 1e-8 * a) << pc;
  }
}

// The outer iteration on the device reads back only moments: isotropic scattering (one moment per
// node), black walls, S4 (24 ordinates). Per transport sweep the host receives n moments, not the
// n x 24 intensities; the last sweep adds G, q and the wall traces for the outputs.
TEST(BackendRuns, OuterIterationReadsBackOnlyMoments) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd): backend parity not tested";
  auto body = [](const std::string& backend, const std::string& inner) {
    return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.5}\norder: 2\nangular: {quadrature: sn, order: 4}\n"
           "media: {\"*\": {kappa: \"0.3\", scattering: \"0.7\", temperature: \"1000\"}}\n"
           "boundaries: {\"*\": {type: black, temperature: 500}}\n"
           "solver: {outer: gmres, outer_tolerance: 1.0e-10, inner: " + inner + ", backend: " + backend + "}\noutput: {vtk: false}\n";
  };
  for (const std::string inner : {"sweep", "bicgstab"}) {
    const auto cpu = test_support::run_yaml("dgrte_backend_runs", "moments_cpu", body("cpu", inner)).summary;
    const auto ocl = test_support::run_yaml("dgrte_backend_runs", "moments_ocl", body("opencl", inner)).summary;
    const double n = ocl["dofs"].get<double>(), M = ocl["directions"].get<double>();
    const double sweeps = ocl["solver"]["transport_sweeps"].get<double>();
    ASSERT_EQ(ocl["scattering"]["moments_per_node"].get<int>(), 1);
    ASSERT_GE(sweeps, 4);
    const double read_back = ocl["backend"]["bytes_from_device"].get<double>();
    const double intensities = sweeps * n * M * 8;  // what reading every field once per sweep would move
    const double moments = sweeps * n * 8 + 4 * n * 8;  // moments per sweep, then G and q
    std::printf("%s: %.0f transport sweeps, %.2f MB read back (moments %.2f MB; all intensities would be %.2f MB)\n", inner.c_str(),
                sweeps, read_back / 1e6, moments / 1e6, intensities / 1e6);
    EXPECT_LT(read_back, 1.5 * moments + 2e5) << inner;  // + per-iteration column flags, boundary traces of the last sweep
    EXPECT_NEAR(ocl["solver"]["outer_iterations"].get<int>(), cpu["solver"]["outer_iterations"].get<int>(), 1) << inner;
    for (const auto& [name, wall] : cpu["walls"].items()) {
      const double a = wall["q_in_W"].get<double>(), b = ocl["walls"][name]["q_in_W"].get<double>();
      EXPECT_NEAR(b, a, 1e-9 * std::abs(a)) << inner << " wall " << name;
    }
  }
}

// Single precision on the isothermal cube with cold black walls (validation/isothermal_cube;
// kappa 0.1, 1, 10; T4, P2): G on the axis and q_in on the wall x = 0 against the double-precision
// device run, and against the exact values at the centre and the wall centre, so that the round-off
// of single precision is seen next to the discretisation and ray-effect error it must stay below.
TEST(BackendRuns, SinglePrecisionOnTheIsothermalCube) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd): single precision not tested";
  struct Exact {
    double kappa, G_centre, q_wall_centre;  // validation/isothermal_cube/README.md (I_b = 1)
  };
  for (const Exact ex : {Exact{0.1, 0.7441037467, 0.2486672498}, Exact{1, 5.7233681774, 1.7395871533}, Exact{10, 12.5304526816, 3.1382609366}}) {
    auto body = [&](const std::string& precision) {
      return "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\norder: 2\n"
             "angular: {quadrature: tn, order: 4}\n"
             "media: {\"*\": {kappa: \"" + std::to_string(ex.kappa) + "\", Ib: \"1\"}}\n"
             "boundaries: {\"*\": {type: black, temperature: 0}}\n"
             "solver: {inner: sweep, backend: opencl, precision: " + precision + "}\n"
             "output: {vtk: false, probes: [{name: axis, from: [0, 0.5, 0.5], to: [1, 0.5, 0.5], points: 21},"
             " {name: wall, from: [0, 0.5, 0], to: [0, 0.5, 1], points: 21, wall: xmin}]}\n";
    };
    const auto dbl = test_support::run_yaml("dgrte_backend_runs", "cube_double", body("double"));
    const auto sgl = test_support::run_yaml("dgrte_backend_runs", "cube_single", body("single"));
    EXPECT_EQ(sgl.summary["backend"]["precision"], "single");
    for (const auto& [probe, column, exact] : {std::tuple{"axis", "G", ex.G_centre}, std::tuple{"wall", "q_in", ex.q_wall_centre}}) {
      const auto a = test_support::read_csv(dbl.out / "probes" / (std::string(probe) + ".csv"))[column];
      const auto b = test_support::read_csv(sgl.out / "probes" / (std::string(probe) + ".csv"))[column];
      ASSERT_EQ(a.size(), b.size());
      ASSERT_EQ(a.size(), 21u);
      double diff = 0, scale = 0;
      for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i])), scale = std::max(scale, std::abs(a[i]));
      const double round_off = diff / scale, discretisation = std::abs(a[10] - exact) / exact;
      std::printf("kappa %-4g %-4s single vs double %.2e, DG (double) vs exact at the centre %.2e\n", ex.kappa, column, round_off, discretisation);
      EXPECT_LT(round_off, 1e-5) << "kappa " << ex.kappa << " " << column;
      EXPECT_LT(round_off, 1e-2 * discretisation) << "kappa " << ex.kappa << " " << column;
    }
  }
}

TEST(BackendRuns, BadBackendSettingsAreInputErrors) {
  const std::string base = "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.9}\norder: 1\ndirections: [[1, 0, 0]]\n"
                           "media:\n  \"*\": {kappa: \"1\", temperature: \"1000\"}\nboundaries:\n  \"*\": {type: black, temperature: 0}\noutput: {vtk: false}\n";
  auto message = [&](const std::string& solver) {
    try {
      test_support::run_yaml("dgrte_backend_runs", "bad", base + solver);
    } catch (const InputError& e) {
      return std::string(e.what());
    } catch (const std::exception& e) {
      return std::string("not an InputError: ") + e.what();
    }
    return std::string("no error");
  };
  EXPECT_NE(message("solver: {backend: gpu}\n").find("unknown backend 'gpu'; use cpu, opencl or auto"), std::string::npos)
      << message("solver: {backend: gpu}\n");
  EXPECT_NE(message("solver: {precision: single}\n").find("add backend: opencl"), std::string::npos);
  EXPECT_NE(message("solver: {backend: opencl, precision: half}\n").find("use double or single"), std::string::npos);
  EXPECT_NE(message("solver: {backend: opencl, precision: single, rtol: 1.0e-8}\n").find("use rtol >= 1e-06, or precision: double"), std::string::npos)
      << message("solver: {backend: opencl, precision: single, rtol: 1.0e-8}\n");
  EXPECT_NE(message("solver: {backend: opencl, precision: single, outer_tolerance: 1.0e-8}\n").find("use outer_tolerance >= 1e-05"), std::string::npos);
  if (!device::list_devices().empty()) {
    EXPECT_NE(message("solver: {backend: opencl, device: no-such-device}\n").find("no OpenCL device matches"), std::string::npos);
  }
}

}  // namespace
}  // namespace dgrte
