#include "device/device_tracer.hpp"

#include "device/cl_handles.hpp"
#include "device/cl_program.hpp"
#include "device/cl_session.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

namespace dgrte::device {

struct DeviceTracer::Impl {
  explicit Impl(const std::string& device) : session(device, "the Monte Carlo tracer's") {}
  ClSession session;
  cl::Program program;
  cl::Kernel forward, random;
  bool cache_hit = false;
  double build_seconds = 0;
  std::size_t K = 0, F = 0, from_device = 0;
  // The scalars of the geometry (its arrays live on the device only).
  double diameter = 0, roulette_below = 0, roulette_weight = 0;
  long max_segments = 0;
  int max_zero_steps = 0, table_size = 0;
  cl::Memory planes, across, tets, vertices, face_int, face_real, beams, phase_int, phase_g, coefficients, tables;
  cl::Memory properties, phase_of_element, source_int, source_cdf;
  cl::Memory element_tally, face_tally, counters;
  int num_sources = 0;

  template <typename T>
  cl::Memory upload(const std::vector<T>& v, const char* what) {
    return session.upload(v, what);
  }
  template <typename T>
  void arg(cl_kernel k, cl_uint i, const T& value) {
    set_arg(k, i, value, "mc_forward");
  }
};

DeviceTracer::DeviceTracer(const TracerGeometry& geometry, const std::string& device, const std::string& cache_dir)
    : impl_(std::make_unique<Impl>(device)) {
  auto& m = *impl_;
  auto& session = m.session;
  std::size_t size = 0;
  clGetDeviceInfo(session.dev, CL_DEVICE_EXTENSIONS, 0, nullptr, &size);
  std::string extensions(size, '\0');
  clGetDeviceInfo(session.dev, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr);
  if (extensions.find("cl_khr_int64_base_atomics") == std::string::npos)
    throw DeviceError(session.info.label() + " has no 64-bit integer atomics (cl_khr_int64_base_atomics): the Monte Carlo tracer's tallies "
                      "need them; use solver.backend: cpu");
  auto built = cl::build_program(session.context.get(), session.dev, session.info, tracer_kernel_source(), "-cl-std=CL1.2", cache_dir);
  m.program = std::move(built.program);
  m.cache_hit = built.cache_hit;
  m.build_seconds = built.seconds;
  m.forward = cl::make_kernel(m.program, "mc_forward");
  m.random = cl::make_kernel(m.program, "random_uniforms");

  m.K = geometry.num_elements(), m.F = geometry.num_faces();
  m.planes = m.upload(geometry.planes, "face planes");
  m.across = m.upload(geometry.across, "neighbours");
  m.tets = m.upload(geometry.tets, "elements");
  m.vertices = m.upload(geometry.vertices, "vertices");
  m.face_int = m.upload(geometry.face_int, "boundary faces");
  m.face_real = m.upload(geometry.face_real, "boundary faces");
  m.beams = m.upload(geometry.beam_direction, "beams");
  m.phase_int = m.upload(geometry.phase_int, "phase functions");
  m.phase_g = m.upload(geometry.phase_g, "phase functions");
  m.coefficients = m.upload(geometry.coefficients, "phase functions");
  m.tables = m.upload(geometry.tables, "phase function tables");
  m.element_tally = m.upload(std::vector<cl_long>(5 * m.K, 0), "element tallies");
  m.face_tally = m.upload(std::vector<cl_long>(2 * m.F, 0), "face tallies");
  m.counters = m.upload(std::vector<cl_ulong>(4, 0), "counters");
  m.diameter = geometry.diameter, m.roulette_below = geometry.roulette_below, m.roulette_weight = geometry.roulette_weight;
  m.max_segments = geometry.max_segments, m.max_zero_steps = geometry.max_zero_steps, m.table_size = geometry.table_size;
}

DeviceTracer::~DeviceTracer() = default;
DeviceTracer::DeviceTracer(DeviceTracer&&) noexcept = default;
DeviceTracer& DeviceTracer::operator=(DeviceTracer&&) noexcept = default;

void DeviceTracer::set_medium(const TracerMedium& medium) {
  auto& m = *impl_;
  if (medium.properties.size() != 2 * m.K || medium.phase_of_element.size() != m.K || medium.source_int.size() != 3 * medium.source_cdf.size())
    throw DeviceError("DeviceTracer::set_medium: array sizes do not match the mesh");
  m.properties = m.upload(medium.properties, "element properties");
  m.phase_of_element = m.upload(medium.phase_of_element, "phase of element");
  m.source_int = m.upload(medium.source_int, "sources");
  m.source_cdf = m.upload(medium.source_cdf, "source powers");
  m.num_sources = static_cast<int>(medium.source_cdf.size());
}

TracerTallies DeviceTracer::trace(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_id, std::uint64_t last_id) {
  auto& m = *impl_;
  TracerTallies out;
  out.element.assign(5 * m.K, 0.0), out.face.assign(2 * m.F, 0.0);
  if (m.num_sources == 0 || last_id <= first_id) return out;
  auto clear = [&] {
    const cl_long zero = 0;
    for (auto [buffer, values, what] : {std::tuple{&m.element_tally, 5 * m.K, "element tallies"}, {&m.face_tally, 2 * m.F, "face tallies"},
                                        {&m.counters, std::size_t{4}, "counters"}})
      if (values > 0)
        cl::check(clEnqueueFillBuffer(m.session.queue.get(), buffer->get(), &zero, sizeof zero, 0, values * sizeof(cl_long), 0, nullptr, nullptr),
                  "clEnqueueFillBuffer", what);
  };
  clear();
  const double lscale = std::ldexp(1.0, 32) / std::max(m.diameter, 1e-300);
  std::vector<cl_long> element(5 * m.K), face(2 * m.F);
  std::vector<cl_ulong> counters(4);
  auto read_back = [&] {
    cl::check(clEnqueueReadBuffer(m.session.queue.get(), m.element_tally.get(), CL_TRUE, 0, element.size() * sizeof(cl_long), element.data(), 0, nullptr,
                                  nullptr),
              "clEnqueueReadBuffer", "element tallies");
    if (!face.empty())
      cl::check(clEnqueueReadBuffer(m.session.queue.get(), m.face_tally.get(), CL_TRUE, 0, face.size() * sizeof(cl_long), face.data(), 0, nullptr, nullptr),
                "clEnqueueReadBuffer", "face tallies");
    cl::check(clEnqueueReadBuffer(m.session.queue.get(), m.counters.get(), CL_TRUE, 0, 4 * sizeof(cl_ulong), counters.data(), 0, nullptr, nullptr),
              "clEnqueueReadBuffer", "counters");
    m.from_device += (element.size() + face.size()) * sizeof(cl_long) + 4 * sizeof(cl_ulong);
    for (std::size_t i = 0; i < element.size(); ++i) out.element[i] += static_cast<double>(element[i]) / (i % 5 == 0 ? std::ldexp(1.0, 40) : lscale);
    for (std::size_t i = 0; i < face.size(); ++i) out.face[i] += static_cast<double>(face[i]) / std::ldexp(1.0, 40);
    out.segments += counters[0], out.scatters += counters[1], out.reflections += counters[2], out.lost += counters[3];
  };
  cl_kernel k = m.forward.get();
  cl_uint a = 0;
  m.arg(k, a++, static_cast<cl_ulong>(seed));
  m.arg(k, a++, static_cast<cl_ulong>(stream));
  const cl_uint first_arg = a++, count_arg = a++;
  m.arg(k, a++, lscale);
  m.arg(k, a++, m.roulette_below);
  m.arg(k, a++, m.roulette_weight);
  m.arg(k, a++, static_cast<cl_long>(m.max_segments));
  m.arg(k, a++, static_cast<cl_int>(m.max_zero_steps));
  for (const cl::Memory* b : {&m.planes, &m.across, &m.properties, &m.phase_of_element, &m.tets, &m.vertices, &m.face_int, &m.face_real})
    m.arg(k, a++, *b);
  m.arg(k, a++, static_cast<cl_int>(m.num_sources));
  for (const cl::Memory* b : {&m.source_int, &m.source_cdf, &m.beams, &m.phase_int, &m.phase_g, &m.coefficients, &m.tables}) m.arg(k, a++, *b);
  m.arg(k, a++, static_cast<cl_int>(m.table_size));
  for (const cl::Memory* b : {&m.element_tally, &m.face_tally, &m.counters}) m.arg(k, a++, *b);
  for (std::uint64_t first = first_id; first < last_id; first += kMaxPathsPerLaunch) {
    const auto count = static_cast<cl_uint>(std::min<std::uint64_t>(kMaxPathsPerLaunch, last_id - first));
    m.arg(k, first_arg, static_cast<cl_ulong>(first));
    m.arg(k, count_arg, count);
    const std::size_t local = 64, global = (count + local - 1) / local * local;
    cl::check(clEnqueueNDRangeKernel(m.session.queue.get(), k, 1, nullptr, &global, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel",
              "mc_forward");
    // Each launch's integer sums are read back and cleared: a 64-bit sum never holds more than one
    // launch's paths.
    read_back();
    if (first + kMaxPathsPerLaunch < last_id) clear();
  }
  return out;
}

std::vector<double> DeviceTracer::uniforms(std::uint64_t seed, std::uint64_t stream, std::uint64_t path, int n) {
  auto& m = *impl_;
  cl::Memory buffer = m.upload(std::vector<double>(static_cast<std::size_t>(std::max(n, 1)), 0.0), "uniforms");
  cl_kernel k = m.random.get();
  m.arg(k, 0, static_cast<cl_ulong>(seed));
  m.arg(k, 1, static_cast<cl_ulong>(stream));
  m.arg(k, 2, static_cast<cl_ulong>(path));
  m.arg(k, 3, static_cast<cl_int>(n));
  m.arg(k, 4, buffer);
  const std::size_t one = 1;
  cl::check(clEnqueueNDRangeKernel(m.session.queue.get(), k, 1, nullptr, &one, &one, 0, nullptr, nullptr), "clEnqueueNDRangeKernel", "random_uniforms");
  std::vector<double> out(static_cast<std::size_t>(std::max(n, 0)));
  if (n > 0)
    cl::check(clEnqueueReadBuffer(m.session.queue.get(), buffer.get(), CL_TRUE, 0, out.size() * sizeof(double), out.data(), 0, nullptr, nullptr),
              "clEnqueueReadBuffer", "uniforms");
  return out;
}

const DeviceInfo& DeviceTracer::info() const { return impl_->session.info; }
double DeviceTracer::build_seconds() const { return impl_->build_seconds; }
bool DeviceTracer::cache_hit() const { return impl_->cache_hit; }
std::size_t DeviceTracer::bytes_to_device() const { return impl_->session.to_device; }
std::size_t DeviceTracer::bytes_from_device() const { return impl_->from_device; }

}  // namespace dgrte::device
