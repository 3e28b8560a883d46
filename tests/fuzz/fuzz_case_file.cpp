// Fuzz target: the case-file reader (YAML, then every expression compiled by muparser).
#include "fuzz_support.hpp"
#include "io/case_file.hpp"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dgrte::fuzz::expect_result_or_input_error([&] { dgrte::io::parse_case(std::string(dgrte::fuzz::bytes(data, size)), "fuzz.yaml"); });
  return 0;
}
