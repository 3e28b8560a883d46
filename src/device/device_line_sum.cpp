#include "device/device_line_sum.hpp"

#include "device/binary_io.hpp"
#include "device/cl_handles.hpp"
#include "device/cl_program.hpp"
#include "device/cl_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace dgrte::device {
namespace {

constexpr int kPointsPerGroup = 256;  // LS_WG
constexpr double kSqrtLn2 = 0.83255461115769775635;
constexpr double kInvSqrtPi = 0.56418958354775628695;

}  // namespace

struct DeviceLineSum::Impl {
  Impl(const std::string& device, const VoigtConstants& v) : session(device, "the line sum's"), voigt(v) {}
  ClSession session;
  VoigtConstants voigt;
  cl::Program program;
  cl::Kernel kernel;
  cl::Memory weideman;
  bool cache_hit = false;
  double build_seconds = 0, kernel_seconds = 0;
};

DeviceLineSum::DeviceLineSum(const std::string& device, const VoigtConstants& voigt, const std::string& cache_dir)
    : impl_(std::make_unique<Impl>(device, voigt)) {
  auto& m = *impl_;
  if (voigt.a.size() < 2 || !(voigt.L > 0)) throw DeviceError("DeviceLineSum: no Weideman coefficients");
  char split[64];
  std::snprintf(split, sizeof split, "%.17g", voigt.split);
  const std::string options = "-cl-std=CL1.2 -DLS_WG=" + std::to_string(kPointsPerGroup) + " -DWEIDEMAN_N=" +
                              std::to_string(voigt.a.size() - 1) + " -DVOIGT_S=" + split;
  auto built = cl::build_program(m.session.context.get(), m.session.dev, m.session.info, line_sum_kernel_source(), options, cache_dir);
  m.program = std::move(built.program);
  m.cache_hit = built.cache_hit;
  m.build_seconds = built.seconds;
  m.kernel = cl::make_kernel(m.program, "lbl_line_sum");
  m.weideman = m.session.upload(voigt.a, "Weideman coefficients");
}

DeviceLineSum::~DeviceLineSum() = default;
DeviceLineSum::DeviceLineSum(DeviceLineSum&&) noexcept = default;
DeviceLineSum& DeviceLineSum::operator=(DeviceLineSum&&) noexcept = default;

void DeviceLineSum::accumulate(const LineSumInput& in, std::span<double> kappa) {
  auto& m = *impl_;
  const std::size_t nl = in.key.size(), np = in.grid.size();
  if (in.center.size() != nl || in.strength.size() != nl || in.gamma_d.size() != nl || in.gamma_l.size() != nl)
    throw DeviceError("DeviceLineSum::accumulate: the line arrays differ in length");
  if (kappa.size() != np) throw DeviceError("DeviceLineSum::accumulate: kappa must hold one value per grid point");
  if (nl == 0 || np == 0) return;
  // The groups' line ranges, as lbl_accumulate_voigt's blocks find them.
  const std::size_t groups = (np + kPointsPerGroup - 1) / kPointsPerGroup;
  std::vector<cl_long> range(2 * groups);
  for (std::size_t b = 0; b < groups; ++b) {
    const std::size_t p0 = b * kPointsPerGroup, p1 = std::min(np, p0 + kPointsPerGroup);
    const double lo = in.grid[p0] - in.cutoff - in.center_margin, hi = in.grid[p1 - 1] + in.cutoff + in.center_margin;
    range[2 * b] = std::lower_bound(in.key.begin(), in.key.end(), lo) - in.key.begin();
    range[2 * b + 1] = std::upper_bound(in.key.begin(), in.key.end(), hi) - in.key.begin();
  }
  // Per line: the profile's scale and amplitude, in lbl_accumulate_voigt's arithmetic.
  std::vector<double> amp(nl), xs(nl), y(nl);
  for (std::size_t l = 0; l < nl; ++l) {
    const double inv_gd = 1.0 / in.gamma_d[l];
    xs[l] = kSqrtLn2 * inv_gd;
    y[l] = kSqrtLn2 * in.gamma_l[l] * inv_gd;
    amp[l] = in.strength[l] * kSqrtLn2 * kInvSqrtPi * inv_gd;
  }
  auto& s = m.session;
  const auto grid = s.upload(std::vector<double>(in.grid.begin(), in.grid.end()), "grid");
  const auto ranges = s.upload(range, "line ranges");
  const auto center = s.upload(std::vector<double>(in.center.begin(), in.center.end()), "line centres");
  const auto amps = s.upload(amp, "line amplitudes");
  const auto scales = s.upload(xs, "line widths");
  const auto ys = s.upload(y, "line shapes");
  const auto out = s.upload(std::vector<double>(kappa.begin(), kappa.end()), "kappa");
  cl_kernel k = m.kernel.get();
  cl_uint a = 0;
  set_arg(k, a++, static_cast<cl_long>(np), "lbl_line_sum");
  for (const cl::Memory* b : {&grid, &ranges, &center, &amps, &scales, &ys}) set_arg(k, a++, *b, "lbl_line_sum");
  set_arg(k, a++, in.cutoff, "lbl_line_sum");
  set_arg(k, a++, m.weideman, "lbl_line_sum");
  set_arg(k, a++, m.voigt.L, "lbl_line_sum");
  set_arg(k, a++, out, "lbl_line_sum");
  const std::size_t global = groups * kPointsPerGroup, local = kPointsPerGroup;
  const auto t0 = std::chrono::steady_clock::now();
  cl::check(clEnqueueNDRangeKernel(s.queue.get(), k, 1, nullptr, &global, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel",
            "lbl_line_sum");
  cl::check(clFinish(s.queue.get()), "clFinish", "lbl_line_sum");
  m.kernel_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  cl::check(clEnqueueReadBuffer(s.queue.get(), out.get(), CL_TRUE, 0, np * sizeof(double), kappa.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer", "kappa");
}

std::uint64_t DeviceLineSum::pairs_within_cutoff(const LineSumInput& in) {
  std::uint64_t pairs = 0;
  for (const double c : in.center) {
    const auto lo = std::lower_bound(in.grid.begin(), in.grid.end(), c - in.cutoff);
    const auto hi = std::upper_bound(in.grid.begin(), in.grid.end(), c + in.cutoff);
    pairs += static_cast<std::uint64_t>(hi - lo);
  }
  return pairs;
}

const DeviceInfo& DeviceLineSum::info() const { return impl_->session.info; }
double DeviceLineSum::build_seconds() const { return impl_->build_seconds; }
bool DeviceLineSum::cache_hit() const { return impl_->cache_hit; }
double DeviceLineSum::kernel_seconds() const { return impl_->kernel_seconds; }

namespace {
constexpr char kLineSumMagic[8] = {'D', 'G', 'R', 'T', 'E', 'L', 'B', 'L'};
constexpr std::uint32_t kLineSumVersion = 1;
}  // namespace

bool is_line_sum_dump(const std::string& path) { return binary::magic_of(path) == std::string(kLineSumMagic, 8); }

void write_line_sum_dump(const std::string& path, const LineSumDump& d) {
  using binary::put, binary::put_array;
  binary::write_atomically(path, [&](std::ofstream& out) {
    out.write(kLineSumMagic, sizeof kLineSumMagic);
    put(out, kLineSumVersion);
    for (const auto* v : {&d.key, &d.center, &d.strength, &d.gamma_d, &d.gamma_l, &d.grid, &d.voigt.a}) put_array(out, *v);
    put(out, d.center_margin), put(out, d.cutoff), put(out, d.voigt.L), put(out, d.voigt.split);
    put_array(out, std::vector<char>(d.description.begin(), d.description.end()));
  });
}

LineSumDump read_line_sum_dump(const std::string& path) {
  binary::Reader r(path);
  if (!r.in) throw DeviceError(path + ": cannot open (write one with: dgrte export --line-sum case.yaml -o " + path + ")");
  if (binary::magic_of(path) != std::string(kLineSumMagic, 8)) throw DeviceError(path + ": not a dgrte line-sum dump");
  r.in.seekg(8);
  const auto version = r.get<std::uint32_t>("version");
  if (version != kLineSumVersion)
    throw DeviceError(path + ": line-sum dump version " + std::to_string(version) + ", this program reads version " +
                      std::to_string(kLineSumVersion) + "; export it again with this dgrte");
  LineSumDump d;
  for (auto* v : {&d.key, &d.center, &d.strength, &d.gamma_d, &d.gamma_l, &d.grid, &d.voigt.a}) *v = r.get_array<double>("line arrays");
  d.center_margin = r.get<double>("center margin");
  d.cutoff = r.get<double>("cutoff");
  d.voigt.L = r.get<double>("Weideman L");
  d.voigt.split = r.get<double>("Voigt split");
  const auto text = r.get_array<char>("description");
  d.description.assign(text.begin(), text.end());
  const std::size_t n = d.key.size();
  if (d.center.size() != n || d.strength.size() != n || d.gamma_d.size() != n || d.gamma_l.size() != n)
    throw DeviceError(path + ": corrupt line-sum dump (line arrays of different lengths)");
  return d;
}

}  // namespace dgrte::device
