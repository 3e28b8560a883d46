// Atomic writing: a failed write leaves the old file and no temporary behind.
#include "io/atomic_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

namespace dgrte::io {
namespace {

TEST(AtomicFile, FailedWriteLeavesTheOldFile) {
  const auto f = std::filesystem::temp_directory_path() / "dgrte_atomic.txt";
  write_text_atomically(f, "old");
  EXPECT_THROW(write_atomically(f, [](const std::filesystem::path& tmp) {
                 std::ofstream(tmp) << "half";
                 throw std::runtime_error("disk full");
               }),
               std::runtime_error);
  std::ifstream in(f);
  std::string s;
  in >> s;
  EXPECT_EQ(s, "old");
  for (const auto& e : std::filesystem::directory_iterator(f.parent_path()))
    EXPECT_EQ(e.path().filename().string().find(".dgrte_atomic.txt.tmp"), std::string::npos);
  std::filesystem::remove(f);
}

}  // namespace
}  // namespace dgrte::io
