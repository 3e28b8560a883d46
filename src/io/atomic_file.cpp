#include "io/atomic_file.hpp"

#include "common/error.hpp"

#include <fmt/format.h>

#include <fstream>
#include <unistd.h>

namespace dgrte::io {

void write_atomically(const std::filesystem::path& target, const std::function<void(const std::filesystem::path&)>& write) {
  namespace fs = std::filesystem;
  const auto tmp = target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  try {
    write(tmp);
    fs::rename(tmp, target);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void write_text_atomically(const std::filesystem::path& target, const std::string& text) {
  write_atomically(target, [&](const std::filesystem::path& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError(fmt::format("{}: cannot write (check that the folder is writable)", tmp.string()));
    out << text;
    out.close();
    if (!out) throw InputError(fmt::format("{}: write failed (disk full?)", tmp.string()));
  });
}

}  // namespace dgrte::io
