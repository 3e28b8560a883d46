#include "dgrte/device_backend.hpp"
#include "device/device_gather.hpp"
#include "device/device_line_sum.hpp"
#include "gas/lbl.hpp"
#include "gas/voigt.hpp"
#include "io/yaml_map.hpp"

#include "backend/device_data.hpp"
#include "common/error.hpp"
#include "mesh/tet_mesh.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"
#include "transport/sweep.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <filesystem>
#include <functional>
#include <unistd.h>

namespace dgrte::runner {

BackendChoice choose_backend(const io::SolverSpec& solver) {
  BackendChoice c;
  c.options.device = solver.device;
  c.options.single_precision = solver.single_precision;
  c.options.memory_budget_bytes = static_cast<std::size_t>(solver.device_memory_mb * 1024.0 * 1024.0);
  if (solver.backend == "cpu") {
    c.reason = "solver.backend: cpu";
    return c;
  }
  if (solver.backend == "auto") {
    const auto gpu = device::first_fp64_gpu();
    if (gpu.platform_index < 0) {
      c.reason = device::list_devices().empty() ? "auto: no OpenCL platform, CPU path" : "auto: no OpenCL GPU with fp64, CPU path";
      return c;
    }
    c.opencl = true;
    c.options.device = fmt::format("{}:{}", gpu.platform_index, gpu.device_index);
    c.reason = "auto: OpenCL GPU with fp64 found";
    return c;
  }
  c.opencl = true;
  c.reason = "solver.backend: opencl";
  try {
    device::select_device(solver.device);  // fail before the setup, naming the case entry
  } catch (const device::DeviceError& e) {
    throw InputError(fmt::format("{}: {}", solver.backend_where.empty() ? std::string("--backend opencl") : solver.backend_where, e.what()));
  }
  return c;
}

std::string move_line_sums_to_device(gas::LoadedModel& model, const BackendChoice& choice, std::string* why_not) {
  if (!model.lbl || !choice.opencl) return {};
  const auto w = gas::weideman_coefficients();
  std::shared_ptr<device::DeviceLineSum> sum;
  try {
    sum = std::make_shared<device::DeviceLineSum>(choice.options.device, device::VoigtConstants{w.L, gas::kVoigtAsymptoticS, w.a},
                                                  choice.options.cache_dir);
  } catch (const device::DeviceError& e) {  // e.g. no fp64: the sums stay on the host, the run goes on
    if (why_not) *why_not = e.what();
    return {};
  }
  model.lbl->set_line_sum(
      [sum](const gas::LblLineArrays& a, std::span<const double> grid, double cutoff, std::span<double> kappa) {
        sum->accumulate({a.key, a.center, a.strength, a.gamma_d, a.gamma_l, a.center_margin, grid, cutoff}, kappa);
      },
      "opencl");
  return sum->info().label();
}

std::string property_backend(const gas::LoadedModel& model) { return model.lbl ? model.lbl->property_backend() : "cpu"; }

nlohmann::json backend_summary(const BackendChoice& choice, const device::DeviceTransport* dev) {
  nlohmann::json j = {{"type", choice.opencl ? "opencl" : "cpu"}, {"reason", choice.reason}};
  if (dev) {
    const auto& d = dev->device();
    j.update({{"platform", d.platform}, {"device", d.name}, {"driver", d.driver_version}, {"fp64", d.fp64},
              {"precision", dev->single_precision() ? "single" : "double"}, {"launch", dev->launch_config()},
              {"kernel_cache_hit", dev->cache_hit()}, {"kernel_build_seconds", dev->build_seconds()},
              {"memory_budget_mb", static_cast<double>(dev->budget_bytes()) / 1048576.0},
              {"resident_mb", static_cast<double>(dev->resident_bytes()) / 1048576.0},
              {"bytes_to_device", dev->bytes_to_device()}, {"bytes_from_device", dev->bytes_from_device()}});
  }
  return j;
}

}  // namespace dgrte::runner
