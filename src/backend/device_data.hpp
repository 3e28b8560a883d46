#pragma once
// From dgrte's discretisation to the device core's plain arrays (device::TransportData): what the
// OpenCL backend uploads and what `dgrte export` writes for dgrte-bench-device.
#include "device/transport_data.hpp"
#include "transport/discretization.hpp"
#include "transport/sweep.hpp"

#include <span>
#include <vector>

namespace dgrte::backend {

// Reference matrices, geometry, neighbour map and the extinction term (nodal, and its element blocks).
device::TransportData device_data(const transport::Discretization& disc, const transport::ReactionTerm& sigma_t);

// Adds directions, optional right-hand sides (one field per direction, or empty) and optional sweep
// plans (one per direction, or empty).
void add_directions(device::TransportData& data, std::span<const transport::Vec3> directions,
                    std::span<const std::vector<double>> rhs, std::span<const transport::SweepPlan> plans);

}  // namespace dgrte::backend
