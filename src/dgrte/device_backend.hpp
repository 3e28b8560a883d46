#pragma once
// Choosing where a run's transport solves go (solver.backend, --backend).
#include "device/device_transport.hpp"
#include "gas/model_factory.hpp"
#include "io/case_file.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace dgrte::runner {

struct BackendChoice {
  bool opencl = false;
  device::DeviceOptions options;  // when opencl
  std::string reason;             // why this backend (auto: what was found)
};

// cpu: the CPU path. opencl: the device solve.device names (InputError naming the case entry when
// there is none). auto: a GPU with fp64 if one is present, else the CPU path.
BackendChoice choose_backend(const io::SolverSpec& solver);

// summary.json "backend": {type, platform, device, fp64, precision, ...}.
nlohmann::json backend_summary(const BackendChoice& choice, const device::DeviceTransport* dev);

// A line-by-line model's line sums (LblModel::prepare, spectrum) on the OpenCL device of `choice`
// (opencl/lbl_line_sum.cl); nothing for other models or the CPU backend. Returns the device's label,
// or "" when the sums stay on the host (*why_not then says why, if the device could not take them:
// it needs double precision). summary.json spectral.property_backend says which.
std::string move_line_sums_to_device(gas::LoadedModel& model, const BackendChoice& choice, std::string* why_not = nullptr);
std::string property_backend(const gas::LoadedModel& model);  // "opencl" or "cpu"

}  // namespace dgrte::runner
