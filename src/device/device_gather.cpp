#include "device/device_gather.hpp"

#include "device/binary_io.hpp"
#include "device/cl_handles.hpp"
#include "device/cl_program.hpp"
#include "device/cl_session.hpp"

#include <algorithm>

namespace dgrte::device {

struct DeviceGather::Impl {
  explicit Impl(const std::string& device) : session(device, "the final gather's") {}
  ClSession session;
  cl::Program program;
  cl::Kernel kernel;
  bool cache_hit = false;
  double build_seconds = 0;
  cl::Memory planes, across, original;
  cl::Memory element, sigma_t, source, exponents, rules, faces;
  cl::Memory receivers, receiver_int;
  GatherFields scalars;  // order, terms, thin_points (its arrays live on the device only)
  std::size_t num_receivers = 0;
  std::size_t cells = 0, faces_count = 0;  // tracer cells (= mesh elements), boundary faces (from the geometry)
  bool has_fields = false;

  template <typename T>
  cl::Memory upload(const std::vector<T>& v, const char* what) {
    return session.upload(v, what);
  }
  template <typename T>
  void arg(cl_uint i, const T& value) {
    set_arg(kernel.get(), i, value, "final_gather");
  }
};

DeviceGather::DeviceGather(const GatherGeometry& geometry, const std::string& device, const std::string& cache_dir)
    : impl_(std::make_unique<Impl>(device)) {
  auto& m = *impl_;
  auto built = cl::build_program(m.session.context.get(), m.session.dev, m.session.info, gather_kernel_source(), "-cl-std=CL1.2", cache_dir);
  m.program = std::move(built.program);
  m.cache_hit = built.cache_hit;
  m.build_seconds = built.seconds;
  m.kernel = cl::make_kernel(m.program, "final_gather");
  if (geometry.planes.size() != 16 * geometry.original.size() || geometry.across.size() != 4 * geometry.original.size())
    throw DeviceError("DeviceGather: geometry array sizes do not match");
  // The walk trusts these: every neighbour a cell, every boundary a face, every cell an element.
  m.cells = geometry.original.size();
  for (const int o : geometry.original) {
    if (o < 0 || static_cast<std::size_t>(o) >= m.cells) throw DeviceError("DeviceGather: a cell maps to no mesh element");
  }
  long faces = 0;
  for (const int a : geometry.across) {
    if (a >= static_cast<long>(m.cells)) throw DeviceError("DeviceGather: a neighbour outside the mesh");
    if (a < 0) faces = std::max<long>(faces, -static_cast<long>(a));
  }
  m.faces_count = static_cast<std::size_t>(faces);
  m.planes = m.upload(geometry.planes, "face planes");
  m.across = m.upload(geometry.across, "neighbours");
  m.original = m.upload(geometry.original, "element map");
}

DeviceGather::~DeviceGather() = default;
DeviceGather::DeviceGather(DeviceGather&&) noexcept = default;
DeviceGather& DeviceGather::operator=(DeviceGather&&) noexcept = default;

void DeviceGather::set_fields(const GatherFields& f) {
  auto& m = *impl_;
  // The kernel trusts these: its private arrays hold 9 rule points and 165 monomials (P8).
  auto check = [](bool ok, const std::string& what) {
    if (!ok) throw DeviceError("DeviceGather::set_fields: " + what);
  };
  check(f.order >= 1 && f.order <= 8, "order outside 1..8");
  check(f.terms == (f.order + 1) * (f.order + 2) * (f.order + 3) / 6, "terms does not match the order");
  check(f.thin_points >= 1 && f.thin_points <= 9 && f.fit_points >= f.order + 1 && f.fit_points <= 9, "rule sizes outside 1..9");
  const auto n = static_cast<std::size_t>(f.order + 1), t = static_cast<std::size_t>(f.thin_points), q = static_cast<std::size_t>(f.fit_points);
  check(f.exponents.size() == 3 * static_cast<std::size_t>(f.terms), "exponents has the wrong size");
  for (const int e : f.exponents) check(e >= 0 && e <= f.order, "an exponent outside 0..order");
  check(f.rules.size() == 2 * n + n * n + 2 * t + t * t + 2 * q + q * q, "rules has the wrong size");
  check(f.element.size() == 6 * m.cells, "element data is not 6 values per mesh element");
  check(f.sigma_t.size() == m.cells * static_cast<std::size_t>(f.terms) && f.source.size() == f.sigma_t.size(),
        "sigma_t or source is not terms values per mesh element");
  check(f.faces.size() == 6 * m.faces_count, "faces is not 6 values per boundary face");
  m.element = m.upload(f.element, "element data");
  m.sigma_t = m.upload(f.sigma_t, "sigma_t coefficients");
  m.source = m.upload(f.source, "source coefficients");
  m.exponents = m.upload(f.exponents, "monomial exponents");
  m.rules = m.upload(f.rules, "Gauss rules");
  m.faces = m.upload(f.faces, "boundary faces");
  m.scalars.order = f.order, m.scalars.terms = f.terms, m.scalars.thin_points = f.thin_points, m.scalars.fit_points = f.fit_points;
  m.has_fields = true;
}

void DeviceGather::set_receivers(const GatherReceivers& r) {
  auto& m = *impl_;
  if (r.real.size() != 9 * (r.integer.size() / 2) || r.integer.size() % 2 != 0)
    throw DeviceError("DeviceGather::set_receivers: array sizes do not match");
  for (std::size_t i = 0; i < r.integer.size(); i += 2)
    if (r.integer[i] < 0 || static_cast<std::size_t>(r.integer[i]) >= m.cells)
      throw DeviceError("DeviceGather::set_receivers: receiver " + std::to_string(i / 2) + " names a cell outside the mesh");
  m.receivers = m.upload(r.real, "receivers");
  m.receiver_int = m.upload(r.integer, "receivers");
  m.num_receivers = r.integer.size() / 2;
}

std::vector<double> DeviceGather::trace(const std::vector<std::uint32_t>& tasks, std::uint32_t scramble, std::uint64_t* segments) {
  auto& m = *impl_;
  if (!m.has_fields) throw DeviceError("DeviceGather::trace: no fields (set_fields first)");
  const std::size_t count = tasks.size() / 3;
  std::vector<double> sums(4 * count, 0.0);
  if (count == 0) return sums;
  for (std::size_t i = 0; i < count; ++i)
    if (tasks[3 * i] >= m.num_receivers) throw DeviceError("DeviceGather::trace: a task names a receiver that was not set");
  const cl::Memory task_buffer = m.upload(tasks, "tasks");
  const cl::Memory sum_buffer = m.upload(std::vector<double>(4 * count, 0.0), "sums");
  const cl::Memory segment_buffer = m.upload(std::vector<cl_ulong>(count, 0), "segment counts");
  cl_uint a = 0;
  for (const cl::Memory* b : {&m.planes, &m.across, &m.original, &m.faces, &m.element, &m.sigma_t, &m.source, &m.exponents, &m.rules})
    m.arg(a++, *b);
  m.arg(a++, static_cast<cl_int>(m.scalars.order));
  m.arg(a++, static_cast<cl_int>(m.scalars.terms));
  m.arg(a++, static_cast<cl_int>(m.scalars.thin_points));
  m.arg(a++, static_cast<cl_int>(m.scalars.fit_points));
  m.arg(a++, m.receivers);
  m.arg(a++, m.receiver_int);
  m.arg(a++, task_buffer);
  m.arg(a++, static_cast<cl_uint>(count));
  m.arg(a++, static_cast<cl_uint>(scramble));
  m.arg(a++, sum_buffer);
  m.arg(a++, segment_buffer);
  const std::size_t local = 64, global = (count + local - 1) / local * local;
  cl::check(clEnqueueNDRangeKernel(m.session.queue.get(), m.kernel.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel",
            "final_gather");
  cl::check(clEnqueueReadBuffer(m.session.queue.get(), sum_buffer.get(), CL_TRUE, 0, sums.size() * sizeof(double), sums.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer", "sums");
  std::vector<cl_ulong> counts(count);
  cl::check(clEnqueueReadBuffer(m.session.queue.get(), segment_buffer.get(), CL_TRUE, 0, counts.size() * sizeof(cl_ulong), counts.data(), 0, nullptr,
                                nullptr),
            "clEnqueueReadBuffer", "segment counts");
  if (segments)
    for (const auto c : counts) *segments += c;
  return sums;
}

namespace {
constexpr char kGatherMagic[8] = {'D', 'G', 'R', 'T', 'E', 'G', 'T', 'H'};
constexpr std::uint32_t kGatherVersion = 2;  // 2: the fit rule
}  // namespace

bool is_gather_dump(const std::string& path) { return binary::magic_of(path) == std::string(kGatherMagic, 8); }

void write_gather_dump(const std::string& path, const GatherDump& d) {
  using binary::put, binary::put_array;
  binary::write_atomically(path, [&](std::ofstream& out) {
    out.write(kGatherMagic, sizeof kGatherMagic);
    put(out, kGatherVersion);
    put_array(out, d.geometry.planes), put_array(out, d.geometry.across), put_array(out, d.geometry.original);
    put<std::int32_t>(out, d.fields.order), put<std::int32_t>(out, d.fields.terms), put<std::int32_t>(out, d.fields.thin_points);
    put<std::int32_t>(out, d.fields.fit_points);
    put_array(out, d.fields.exponents);
    for (const auto* v : {&d.fields.element, &d.fields.sigma_t, &d.fields.source, &d.fields.rules, &d.fields.faces, &d.receivers.real})
      put_array(out, *v);
    put_array(out, d.receivers.integer);
    put_array(out, std::vector<char>(d.description.begin(), d.description.end()));
  });
}

GatherDump read_gather_dump(const std::string& path) {
  binary::Reader r(path);
  if (!r.in) throw DeviceError(path + ": cannot open (write one with: dgrte export case.yaml -o " + path + ", the case with output.final_gather)");
  if (binary::magic_of(path) != std::string(kGatherMagic, 8)) throw DeviceError(path + ": not a dgrte final-gather dump");
  r.in.seekg(8);
  const auto version = r.get<std::uint32_t>("version");
  if (version != kGatherVersion)
    throw DeviceError(path + ": gather dump version " + std::to_string(version) + ", this program reads version " +
                      std::to_string(kGatherVersion) + "; export it again with this dgrte");
  GatherDump d;
  d.geometry.planes = r.get_array<double>("planes");
  d.geometry.across = r.get_array<int>("across");
  d.geometry.original = r.get_array<int>("original");
  d.fields.order = r.get<std::int32_t>("order");
  d.fields.terms = r.get<std::int32_t>("terms");
  d.fields.thin_points = r.get<std::int32_t>("thin_points");
  d.fields.fit_points = r.get<std::int32_t>("fit_points");
  d.fields.exponents = r.get_array<int>("exponents");
  d.fields.element = r.get_array<double>("element");
  d.fields.sigma_t = r.get_array<double>("sigma_t");
  d.fields.source = r.get_array<double>("source");
  d.fields.rules = r.get_array<double>("rules");
  d.fields.faces = r.get_array<double>("faces");
  d.receivers.real = r.get_array<double>("receivers");
  d.receivers.integer = r.get_array<int>("receiver cells");
  const auto text = r.get_array<char>("description");
  d.description.assign(text.begin(), text.end());
  return d;
}

const DeviceInfo& DeviceGather::info() const { return impl_->session.info; }
double DeviceGather::build_seconds() const { return impl_->build_seconds; }
bool DeviceGather::cache_hit() const { return impl_->cache_hit; }

}  // namespace dgrte::device
