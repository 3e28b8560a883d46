#pragma once
// OpenCL platforms and devices as plain values (no OpenCL types in this header), so that the
// command line can list and choose devices without the OpenCL headers. Part of the device core:
// the C++ standard library and OpenCL only.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace dgrte::device {

// Anything the OpenCL path cannot do: no platform, unknown device, build failure (with the build
// log), out of device memory (with the request and the budget), a failed call (with its name).
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  int platform_index = -1, device_index = -1;  // position in list_devices() order
  std::string platform, name, vendor, driver_version, device_version;
  bool is_gpu = false, is_cpu = false;
  std::size_t global_memory = 0, local_memory = 0, max_allocation = 0, max_work_group = 0;
  unsigned compute_units = 0;
  bool fp64 = false;
  std::string label() const;  // "platform 0 device 0: NVIDIA H100 (NVIDIA CUDA)"
};

// Every device of every platform; empty (no throw) when no OpenCL platform is installed.
std::vector<DeviceInfo> list_devices();

// Chooses a device: "auto" (the first GPU with fp64, else the first device with fp64, else the
// first device), "P:D" (platform P, device D), a bare index into list_devices(), or a
// case-insensitive substring of the device or platform name. Throws DeviceError listing the devices.
DeviceInfo select_device(const std::string& spec);

// The first GPU with fp64, or nullptr-equivalent (platform_index -1) when there is none.
DeviceInfo first_fp64_gpu();

}  // namespace dgrte::device
