#pragma once
// The Monte Carlo model (mc::McModel) as the device core's tracer sees it (device::TracerGeometry,
// device::TracerMedium), and a mc::BatchTracer that runs the forward paths on an OpenCL device.
#include "device/device_tracer.hpp"
#include "mc/monte_carlo.hpp"

#include <memory>
#include <string>

namespace dgrte::backend {

device::TracerGeometry tracer_geometry(const mc::McModel& model);
device::TracerMedium tracer_medium(const mc::McModel& model);

// A BatchTracer on `tracer` (shared: the caller keeps it for its summary). The medium is uploaded
// again whenever the model's properties changed (McModel::revision: each spectral point).
mc::BatchTracer device_batch_tracer(std::shared_ptr<device::DeviceTracer> tracer);

}  // namespace dgrte::backend
