#pragma once
// Shared pieces of the reader fuzz targets (tests/fuzz/README.md). Each target defines
// LLVMFuzzerTestOneInput: built with clang's libFuzzer for fuzzing campaigns (scripts/fuzz.sh), and with
// replay_main.cpp as a plain program that CTest runs over the committed corpus (fuzz_<reader>).
//
// The contract under test: whatever the bytes, a reader returns or throws dgrte::InputError (the
// "bad input" error that names the file and says what to do). Any other exception escapes the
// target and aborts, as do crashes, sanitizer reports and hangs.
#include "common/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unistd.h>

namespace dgrte::fuzz {

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input as a file with the given extension (readers that take a path, and pick the format by it),
// in a folder of this process; overwritten by the next input.
inline std::filesystem::path as_file(const std::uint8_t* data, std::size_t size, const std::string& extension) {
  static const auto dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("dgrte_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {  // the folder goes when the process ends normally (a crash leaves it for inspection)
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("dgrte_fuzz_" + std::to_string(::getpid())), ec);
    });
    return d;
  }();
  const auto path = dir / ("input" + extension);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs a reader; dgrte's input error is the accepted way to refuse bad bytes.
template <class F>
void expect_result_or_input_error(F&& read) {
  try {
    read();
  } catch (const dgrte::InputError&) {
  }
}

}  // namespace dgrte::fuzz
