#pragma once
// Helpers shared by the mesh tests: scratch files and expected-failure checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace dgrte::mesh::testing {

// A per-test scratch directory (unique per process and test), removed at destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    dir_ = std::filesystem::temp_directory_path() / ("dgrte_mesh_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path dir_;
};

// Runs f, expects an InputError whose message contains every one of `words`; returns the message.
inline std::string expect_input_error(const std::function<void()>& f, const std::vector<std::string>& words) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    if (std::getenv("DGRTE_SHOW_MESSAGES")) std::printf("  message: %s\n", msg.c_str());
    for (const auto& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "missing \"" << w << "\" in: " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected dgrte::InputError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected dgrte::InputError, nothing was thrown";
  return {};
}

}  // namespace dgrte::mesh::testing
