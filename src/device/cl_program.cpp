#include "device/cl_program.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace dgrte::device::cl {
namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_folder(const std::string& option) {
  if (option == "none") return {};
  if (!option.empty()) return option;
  if (const char* v = std::getenv("DGRTE_KERNEL_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return std::string(v) + "/dgrte/kernels";
  if (const char* v = std::getenv("HOME"); v && *v) return std::string(v) + "/.cache/dgrte/kernels";
  return {};
}

std::string build_log(cl_program program, cl_device_id dev) {
  std::size_t size = 0;
  clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

bool load_cached(const std::string& file, cl_context context, cl_device_id dev, const std::string& options, Program& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  const std::vector<unsigned char> binary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (binary.empty()) return false;
  const unsigned char* ptr = binary.data();
  const std::size_t size = binary.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  Program p(clCreateProgramWithBinary(context, 1, &dev, &size, &ptr, &status, &err));
  if (err != CL_SUCCESS || status != CL_SUCCESS) return false;  // stale or foreign binary: rebuild
  if (clBuildProgram(p.get(), 1, &dev, options.c_str(), nullptr, nullptr) != CL_SUCCESS) return false;
  out = std::move(p);
  return true;
}

// Best effort: a cache that cannot be written only costs the next run a rebuild.
void store_cached(const std::string& file, cl_program program) {
  std::size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) return;
  std::vector<unsigned char> binary(size);
  unsigned char* ptr = binary.data();
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
  if (ec) return;
  const std::string tmp = file + ".tmp" + std::to_string(reinterpret_cast<std::uintptr_t>(program));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(size));
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

BuiltProgram build_program(cl_context context, cl_device_id dev, const DeviceInfo& info, const std::string& source,
                           const std::string& options, const std::string& cache_option) {
  const auto t0 = std::chrono::steady_clock::now();
  BuiltProgram out;
  const std::string folder = cache_folder(cache_option);
  std::string cache_file;
  if (!folder.empty()) {
    char key[17];
    std::snprintf(key, sizeof key, "%016llx",
                  static_cast<unsigned long long>(fnv1a(info.platform + '\n' + info.name + '\n' + info.driver_version + '\n' +
                                                        info.device_version + '\n' + options + '\n' + source)));
    cache_file = folder + "/" + key + ".bin";
  }
  if (!cache_file.empty() && load_cached(cache_file, context, dev, options, out.program)) {
    out.cache_hit = true;
  } else {
    const char* text = source.c_str();
    const std::size_t length = source.size();
    cl_int err = CL_SUCCESS;
    out.program = Program(clCreateProgramWithSource(context, 1, &text, &length, &err));
    check(err, "clCreateProgramWithSource");
    if (clBuildProgram(out.program.get(), 1, &dev, options.c_str(), nullptr, nullptr) != CL_SUCCESS)
      throw DeviceError("OpenCL kernels failed to build on " + info.label() + " with options \"" + options + "\"; build log:\n" +
                        build_log(out.program.get(), dev));
    if (!cache_file.empty()) store_cached(cache_file, out.program.get());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Kernel make_kernel(const Program& program, const char* name) {
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(program.get(), name, &err));
  check(err, "clCreateKernel", name);
  return k;
}

}  // namespace dgrte::device::cl
