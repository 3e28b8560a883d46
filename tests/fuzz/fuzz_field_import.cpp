// Fuzz target: imported CFD fields, sampled at a few points. The first byte picks the format (CSV
// point cloud, VTK XML .vtu, legacy .vtk); the rest is the file. The arrays asked for are T and X.
#include "fields/field_import.hpp"
#include "fuzz_support.hpp"

#include <array>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::array<const char*, 3> extensions = {".csv", ".vtu", ".vtk"};
  dgrte::fields::FieldRequest request;
  request.file = dgrte::fuzz::as_file(data + 1, size - 1, extensions[data[0] % extensions.size()]);
  request.arrays = {"T", "X"};
  request.nearest_outside = (data[0] / 3) % 2 == 1;
  request.where = "fuzz.yaml: media.*.field";
  const std::array<dgrte::fields::Vec3, 3> points = {{{0.1, 0.2, 0.3}, {0.5, 0.5, 0.5}, {1.0, 0.0, 0.25}}};
  dgrte::fuzz::expect_result_or_input_error([&] { dgrte::fields::sample_fields(request, points); });
  return 0;
}
