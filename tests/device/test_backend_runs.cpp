// The OpenCL backend through `dgrte run`: a scattering case with diffusely and specularly reflecting
// walls gives the CPU path's wall fluxes and G (sweeps and Bi-CGSTAB inner solvers), and a directions
// run the same iterations and error. Skipped without OpenCL unless DGRTE_REQUIRE_OPENCL=1.
#include "../common/case_runner.hpp"
#include "common/error.hpp"
#include "device/opencl_runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace dgrte {
namespace {

bool opencl_missing() {
  if (!device::list_devices().empty()) return false;
  if (const char* req = std::getenv("DGRTE_REQUIRE_OPENCL"); req && std::string(req) == "1")
    ADD_FAILURE() << "DGRTE_REQUIRE_OPENCL=1 but no OpenCL platform: install pocl-opencl-icd";
  return true;
}

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
  if (!device::list_devices().empty()) {
    EXPECT_NE(message("solver: {backend: opencl, device: no-such-device}\n").find("no OpenCL device matches"), std::string::npos);
  }
}

}  // namespace
}  // namespace dgrte
