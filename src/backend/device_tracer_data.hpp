#pragma once
// The Monte Carlo model (mc::McModel) as the device core's tracer sees it (device::TracerGeometry,
// device::TracerMedium), and a mc::BatchTracer that runs the forward paths on an OpenCL device.
#include "device/device_gather.hpp"
#include "device/device_tracer.hpp"
#include "mc/final_gather.hpp"
#include "mc/monte_carlo.hpp"

#include <memory>
#include <string>

namespace dgrte::backend {

device::TracerGeometry tracer_geometry(const mc::McModel& model);
device::TracerMedium tracer_medium(const mc::McModel& model);

// A BatchTracer on `tracer` (shared: the caller keeps it for its summary). The medium is uploaded
// again whenever the model's properties changed (McModel::revision: each spectral point).
mc::BatchTracer device_batch_tracer(std::shared_ptr<device::DeviceTracer> tracer);

// A GatherTracer on an OpenCL device (opencl/final_gather.cl): the device (device::DeviceGather on
// `device`, as select_device) is opened at the first gather, the fields and receivers uploaded at
// each new one. *opened (optional) receives it, for the caller's log and summary.
mc::GatherTracer device_gather_tracer(const std::string& device, const std::string& cache_dir,
                                      std::shared_ptr<std::shared_ptr<device::DeviceGather>> opened = nullptr);

}  // namespace dgrte::backend
