#pragma once
// The final gather on an OpenCL device (opencl/final_gather.cl, built after tracer_common.cl):
// one work-item per task (a receiver's samples [first, last)), the sums of its
// samples' radiance. Part of the device core (the C++ standard library and OpenCL only): the
// gather's view of the problem comes as plain arrays, built by src/mc/final_gather.cpp
// (mc::GatherArrays); its host twin is that file's sample_receiver.
#include "device/opencl_runtime.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dgrte::device {

// The tracer's mesh: per tracer cell 4 x (n_x, n_y, n_z, offset) outward face planes, 4 neighbours
// (or -(1 + boundary face)), and the mesh element it is.
struct GatherGeometry {
  std::vector<double> planes;
  std::vector<int> across, original;
};

// What the rays integrate (one DG solution): per mesh element centre (3), 1 / size, max sigma_t,
// uniform flag (6 each), the monomial coefficients of sigma_t and of the source (terms each), the
// monomials' exponents (3 per term), the Gauss rules (p + 1 points, weights, (p + 1)^2 map to
// monomials; the same for thin_points and for fit_points), and per boundary face the radiance it
// leaves with / pi, absorptivity, specular share, inward normal (6 each).
struct GatherFields {
  int order = 1, terms = 0, thin_points = 2, fit_points = 3;
  std::vector<int> exponents;
  std::vector<double> element, sigma_t, source, rules, faces;
};

// Receivers: x (3), inward normal or sphere axis (3), adjacent wall's inward normal (3); tracer
// cell and sphere flag (2 each).
struct GatherReceivers {
  std::vector<double> real;
  std::vector<int> integer;
};

// One gather's arrays in a file (`dgrte export` of a case with output.final_gather) for
// dgrte-bench-device on a GPU node.
struct GatherDump {
  GatherGeometry geometry;
  GatherFields fields;
  GatherReceivers receivers;
  std::string description;
};
void write_gather_dump(const std::string& path, const GatherDump& dump);
GatherDump read_gather_dump(const std::string& path);
bool is_gather_dump(const std::string& path);  // by the file's magic

class DeviceGather {
 public:
  // device: as select_device; needs double precision (DeviceError otherwise).
  DeviceGather(const GatherGeometry& geometry, const std::string& device, const std::string& cache_dir = {});
  ~DeviceGather();
  DeviceGather(DeviceGather&&) noexcept;
  DeviceGather& operator=(DeviceGather&&) noexcept;

  void set_fields(const GatherFields& fields);
  void set_receivers(const GatherReceivers& receivers);
  // tasks: 3 per task (receiver, first, last sample); returns 4 sums per task and adds the segments
  // walked to *segments.
  std::vector<double> trace(const std::vector<std::uint32_t>& tasks, std::uint32_t scramble, std::uint64_t* segments);

  const DeviceInfo& info() const;
  double build_seconds() const;
  bool cache_hit() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The OpenCL source of the gather (generated gather_sources.cpp: tracer_common.cl + final_gather.cl).
const char* gather_kernel_source();

}  // namespace dgrte::device
