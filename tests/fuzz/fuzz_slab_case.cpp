// Fuzz target: the `dgrte slab` case reader (YAML with the gas state as expressions).
#include "fuzz_support.hpp"
#include "gas/slab.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = dgrte::fuzz::as_file(data, size, ".yaml");
  dgrte::fuzz::expect_result_or_input_error([&] { dgrte::gas::read_slab_case(file); });
  return 0;
}
