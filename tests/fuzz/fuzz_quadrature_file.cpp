// Fuzz target: angular quadrature files (`angular: {quadrature: file, ...}`: CSV sx,sy,sz,w).
#include "angular/quadrature.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = dgrte::fuzz::as_file(data, size, ".csv");
  dgrte::fuzz::expect_result_or_input_error([&] { dgrte::angular::from_file(file); });
  return 0;
}
