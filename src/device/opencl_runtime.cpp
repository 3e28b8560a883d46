#include "device/opencl_runtime.hpp"

#include "device/cl_handles.hpp"

#include <algorithm>
#include <cctype>

namespace dgrte::device {
namespace cl {

const char* error_name(cl_int code) {
  switch (code) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "OpenCL error";
  }
}

namespace {
std::vector<cl_platform_id> platforms() {
  cl_uint n = 0;
  // No ICD loader configuration or no platform: an empty list, not an error.
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_platform_id> ids(n);
  check(clGetPlatformIDs(n, ids.data(), nullptr), "clGetPlatformIDs");
  return ids;
}

std::vector<cl_device_id> devices(cl_platform_id p) {
  cl_uint n = 0;
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_device_id> ids(n);
  check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs");
  return ids;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  std::size_t size = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  check(clGetPlatformInfo(p, what, size, s.data(), nullptr), "clGetPlatformInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  std::size_t size = 0;
  check(clGetDeviceInfo(d, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  check(clGetDeviceInfo(d, what, size, s.data(), nullptr), "clGetDeviceInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  check(clGetDeviceInfo(d, what, sizeof(T), &v, nullptr), "clGetDeviceInfo");
  return v;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

cl_device_id device_id(const DeviceInfo& info) {
  const auto ps = platforms();
  if (info.platform_index < 0 || static_cast<std::size_t>(info.platform_index) >= ps.size())
    throw DeviceError("OpenCL platform " + std::to_string(info.platform_index) + " is not present");
  const auto ds = devices(ps[static_cast<std::size_t>(info.platform_index)]);
  if (info.device_index < 0 || static_cast<std::size_t>(info.device_index) >= ds.size())
    throw DeviceError("OpenCL device " + std::to_string(info.device_index) + " of platform " +
                      std::to_string(info.platform_index) + " is not present");
  return ds[static_cast<std::size_t>(info.device_index)];
}

}  // namespace cl

std::string DeviceInfo::label() const {
  return "platform " + std::to_string(platform_index) + " device " + std::to_string(device_index) + ": " + name + " (" +
         platform + ")";
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  const auto ps = cl::platforms();
  for (std::size_t pi = 0; pi < ps.size(); ++pi) {
    const auto ds = cl::devices(ps[pi]);
    for (std::size_t di = 0; di < ds.size(); ++di) {
      const cl_device_id d = ds[di];
      DeviceInfo info;
      info.platform_index = static_cast<int>(pi);
      info.device_index = static_cast<int>(di);
      info.platform = cl::platform_string(ps[pi], CL_PLATFORM_NAME);
      info.name = cl::device_string(d, CL_DEVICE_NAME);
      info.vendor = cl::device_string(d, CL_DEVICE_VENDOR);
      info.driver_version = cl::device_string(d, CL_DRIVER_VERSION);
      info.device_version = cl::device_string(d, CL_DEVICE_VERSION);
      const auto type = cl::device_value<cl_device_type>(d, CL_DEVICE_TYPE);
      info.is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      info.is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
      info.global_memory = cl::device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.local_memory = cl::device_value<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
      info.max_allocation = cl::device_value<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.max_work_group = cl::device_value<std::size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.compute_units = cl::device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
      info.fp64 = cl::device_value<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
      out.push_back(std::move(info));
    }
  }
  return out;
}

DeviceInfo first_fp64_gpu() {
  for (const auto& d : list_devices())
    if (d.is_gpu && d.fp64) return d;
  return {};
}

DeviceInfo select_device(const std::string& spec) {
  const auto all = list_devices();
  if (all.empty())
    throw DeviceError("no OpenCL platform found: install a driver (on Debian: apt install pocl-opencl-icd for the CPU) "
                      "or use solver.backend: cpu");
  auto listing = [&] {
    std::string s;
    for (const auto& d : all) s += "\n  " + d.label() + (d.fp64 ? "" : " [no fp64]");
    return s;
  };
  if (spec.empty() || spec == "auto") {
    for (const auto& d : all)
      if (d.is_gpu && d.fp64) return d;
    for (const auto& d : all)
      if (d.fp64) return d;
    return all.front();
  }
  if (const auto colon = spec.find(':'); colon != std::string::npos) {
    try {
      const int p = std::stoi(spec.substr(0, colon)), d = std::stoi(spec.substr(colon + 1));
      for (const auto& info : all)
        if (info.platform_index == p && info.device_index == d) return info;
    } catch (const std::logic_error&) {
    }
  } else if (!spec.empty() && std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto i = std::stoul(spec);
    if (i < all.size()) return all[i];
  } else {
    const auto want = cl::lower(spec);
    for (const auto& d : all)
      if (cl::lower(d.name).find(want) != std::string::npos || cl::lower(d.platform).find(want) != std::string::npos) return d;
  }
  throw DeviceError("no OpenCL device matches \"" + spec + "\"; devices present:" + listing());
}

}  // namespace dgrte::device
