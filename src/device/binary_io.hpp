#pragma once
// The device core's binary dumps (dgrte export → dgrte-bench-device): little helpers to write
// scalars and arrays (length, then values) and to read them back with errors naming the file and
// the field; files are written to a temporary name and renamed, so a failed write leaves nothing.
#include "device/opencl_runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace dgrte::device::binary {

template <typename T>
void put(std::ofstream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
void put_array(std::ofstream& out, const std::vector<T>& v) {
  put<std::uint64_t>(out, v.size());
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

// Writes through body(out) to path + ".tmp", then renames it to path.
inline void write_atomically(const std::string& path, const std::function<void(std::ofstream&)>& body) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw DeviceError(path + ": cannot open " + tmp + " for writing");
    body(out);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw DeviceError(path + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw DeviceError(path + ": cannot rename " + tmp + " to it");
  }
}

struct Reader {
  std::ifstream in;
  std::string path;
  std::uint64_t file_size = 0;
  explicit Reader(const std::string& file) : in(file, std::ios::binary | std::ios::ate), path(file) {
    if (in) {
      file_size = static_cast<std::uint64_t>(in.tellg());
      in.seekg(0);
    }
  }
  template <typename T>
  T get(const char* what) {
    T v{};
    if (!in.read(reinterpret_cast<char*>(&v), sizeof(T))) throw DeviceError(path + ": truncated at " + what);
    return v;
  }
  template <typename T>
  std::vector<T> get_array(const char* what) {
    const auto n = get<std::uint64_t>(what);
    if (n > file_size / sizeof(T)) throw DeviceError(path + ": truncated or corrupt: " + what + " claims " + std::to_string(n) + " values, more than the file holds");
    std::vector<T> v(n);
    if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T))))
      throw DeviceError(path + ": truncated in " + what);
    return v;
  }
};

// The 8-byte magic at the start of a file (empty string: unreadable or shorter).
inline std::string magic_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char m[8];
  if (!in.read(m, sizeof m)) return {};
  return std::string(m, sizeof m);
}

}  // namespace dgrte::device::binary
