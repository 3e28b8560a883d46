#pragma once
// The line-by-line absorption coefficient on an OpenCL device (opencl/lbl_line_sum.cl): the Voigt
// line sum of gas::lbl_accumulate_voigt (its host twin) with the same flat arguments, for one gas
// state's line arrays at a time. Part of the device core (the C++ standard library and OpenCL only):
// the Weideman coefficients of the Voigt function come from the caller (gas::weideman_coefficients).
#include "device/opencl_runtime.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace dgrte::device {

// The Voigt function's constants: Weideman's L and a[0..N] (a[0] unused), the Humlicek split |x| + y >= s.
struct VoigtConstants {
  double L = 0, split = 8;
  std::vector<double> a;
};

// One state's line arrays (gas::LblLineArrays) and the grid, as gas::lbl_accumulate_voigt takes them.
struct LineSumInput {
  std::span<const double> key, center, strength, gamma_d, gamma_l;
  double center_margin = 0;
  std::span<const double> grid;
  double cutoff = 25;
};

class DeviceLineSum {
 public:
  // device: as select_device; needs double precision (DeviceError otherwise).
  DeviceLineSum(const std::string& device, const VoigtConstants& voigt, const std::string& cache_dir = {});
  ~DeviceLineSum();
  DeviceLineSum(DeviceLineSum&&) noexcept;
  DeviceLineSum& operator=(DeviceLineSum&&) noexcept;

  // kappa[p] += sum over lines within the cut-off of grid[p] (grid ascending, key ascending with
  // |center - key| <= center_margin); kappa.size() == grid.size().
  void accumulate(const LineSumInput& in, std::span<double> kappa);

  // Line x grid-point pairs within the cut-off of `in` (what the kernel evaluates beyond its tiles'
  // skipped pairs; the benchmark's count), by two binary searches per line.
  static std::uint64_t pairs_within_cutoff(const LineSumInput& in);

  const DeviceInfo& info() const;
  double build_seconds() const;
  bool cache_hit() const;
  double kernel_seconds() const;  // summed over accumulate() calls: the kernel alone (profiling events)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One state's line sum in a file (`dgrte export --line-sum` of an LBL case) for dgrte-bench-device.
struct LineSumDump {
  std::vector<double> key, center, strength, gamma_d, gamma_l, grid;
  double center_margin = 0, cutoff = 25;
  VoigtConstants voigt;
  std::string description;
  LineSumInput input() const { return {key, center, strength, gamma_d, gamma_l, center_margin, grid, cutoff}; }
};
void write_line_sum_dump(const std::string& path, const LineSumDump& dump);
LineSumDump read_line_sum_dump(const std::string& path);
bool is_line_sum_dump(const std::string& path);  // by the file's magic

// The OpenCL source (generated line_sum_sources.cpp from opencl/lbl_line_sum.cl).
const char* line_sum_kernel_source();

}  // namespace dgrte::device
