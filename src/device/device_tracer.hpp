#pragma once
// The Monte Carlo forward tracer on an OpenCL device (opencl/mc_forward.cl): one work-item per
// energy bundle, integer-atomic tallies. Part of the device core (the C++ standard library and
// OpenCL only): the tracer's view of the problem comes as plain arrays (TracerData), built from
// mc::McModel by mc/device_forward.hpp. Its host twin is mc::solve_forward's path loop.
#include "device/opencl_runtime.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dgrte::device {

// What a bundle reads. Elements in the tracer's order; boundary faces in wall order.
struct TracerGeometry {
  std::vector<double> planes;    // per element 4 x (n_x, n_y, n_z, offset), outward
  std::vector<int> across;       // per element 4: neighbour, or -(1 + boundary face)
  std::vector<int> tets;         // per element 4 vertex indices
  std::vector<double> vertices;  // 3 per vertex
  std::vector<int> face_int;     // per boundary face: element, its 3 vertices (dgrte::kFaceVertices order)
  std::vector<double> face_real; // per boundary face: inward unit normal (3), absorptivity, specular share
  std::vector<double> beam_direction;  // 3 per collimated beam
  // Phase functions: per function type (0 isotropic, 1 Henyey-Greenstein, 2 Legendre), offset and
  // count of its coefficients, offset of its CDF table; g; the coefficients; the tables.
  std::vector<int> phase_int;
  std::vector<double> phase_g, coefficients, tables;
  int table_size = 0;            // values per CDF table
  double diameter = 0;           // bounding-box diagonal [m]
  // Russian roulette and lost-ray limits of the host twin.
  double roulette_below = 1e-3, roulette_weight = 1e-2;
  long max_segments = 10'000'000;
  int max_zero_steps = 64;
  std::size_t num_elements() const { return across.size() / 4; }
  std::size_t num_faces() const { return face_int.size() / 4; }
};
// What changes with the spectral point: per element kappa, sigma_s, phase function (-1: none);
// the sources (kind 0 element, 1 wall, 2 beam; index; beam) and their cumulative power.
struct TracerMedium {
  std::vector<double> properties;  // 2 per element
  std::vector<int> phase_of_element;
  std::vector<int> source_int;     // 3 per source
  std::vector<double> source_cdf;
};

// One launch's tallies in weight units (as the host twin's): per element absorbed weight and
// track, track x, y, z [m] (5 each); per boundary face incident and absorbed weight (2 each).
struct TracerTallies {
  std::vector<double> element, face;
  std::uint64_t segments = 0, scatters = 0, reflections = 0, lost = 0;
};

class DeviceTracer {
 public:
  // Paths per launch: keeps every 64-bit fixed-point sum far from overflow (mc_forward.cl).
  static constexpr std::uint64_t kMaxPathsPerLaunch = std::uint64_t{1} << 20;
  // device: as select_device; needs double precision and 64-bit integer atomics (DeviceError otherwise).
  DeviceTracer(const TracerGeometry& geometry, const std::string& device, const std::string& cache_dir = {});
  ~DeviceTracer();
  DeviceTracer(DeviceTracer&&) noexcept;
  DeviceTracer& operator=(DeviceTracer&&) noexcept;

  void set_medium(const TracerMedium& medium);
  // Paths first_id .. last_id - 1 of stream (seed, stream), in launches of at most kMaxPathsPerLaunch.
  TracerTallies trace(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_id, std::uint64_t last_id);
  // n uniforms of the path stream (seed, stream, path) as the kernel draws them (the parity test).
  std::vector<double> uniforms(std::uint64_t seed, std::uint64_t stream, std::uint64_t path, int n);

  const DeviceInfo& info() const;
  double build_seconds() const;
  bool cache_hit() const;
  std::size_t bytes_to_device() const;
  std::size_t bytes_from_device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The OpenCL source of the tracer (generated tracer_sources.cpp).
const char* tracer_kernel_source();

}  // namespace dgrte::device
