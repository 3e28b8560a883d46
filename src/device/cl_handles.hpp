#pragma once
// Internal to the device core: RAII handles over the OpenCL C API (1.2 entry points, which every
// driver has: NVIDIA, AMD, Intel, PoCL) and the error check that names the failing call.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "device/opencl_runtime.hpp"

#include <string>
#include <utility>

namespace dgrte::device::cl {

const char* error_name(cl_int code);

inline void check(cl_int code, const char* call, const std::string& context = {}) {
  if (code != CL_SUCCESS)
    throw DeviceError(std::string("OpenCL error ") + error_name(code) + " (" + std::to_string(code) + ") in " + call +
                      (context.empty() ? "" : " (" + context + ")"));
}

template <typename T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (h_) Release(h_);
    h_ = nullptr;
  }
  T get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }

 private:
  T h_ = nullptr;
};

using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Memory = Handle<cl_mem, clReleaseMemObject>;

// The cl_device_id of a DeviceInfo (platform and device indices as list_devices() numbers them).
cl_device_id device_id(const DeviceInfo& info);

}  // namespace dgrte::device::cl
