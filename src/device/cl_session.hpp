#pragma once
// An OpenCL device opened for one of the device core's programs (the Monte Carlo tracer, the final
// gather): its context and in-order queue, and the uploads and kernel arguments they share.
#include "device/cl_handles.hpp"
#include "device/opencl_runtime.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace dgrte::device {

struct ClSession {
  DeviceInfo info;
  cl_device_id dev = nullptr;
  cl::Context context;
  cl::Queue queue;
  std::size_t to_device = 0;  // bytes uploaded
  std::string owner;          // whose buffers, in out-of-memory errors ("the tracer's")

  // device: as select_device. Needs double precision: a device without it is a DeviceError saying
  // that `owner` needs it.
  ClSession(const std::string& device, std::string owner_name);

  // A device buffer holding v (at least 16 bytes); out of memory is a DeviceError naming `what`.
  template <typename T>
  cl::Memory upload(const std::vector<T>& v, const char* what) {
    const std::size_t bytes = std::max<std::size_t>(v.size() * sizeof(T), 16);
    cl_int err = CL_SUCCESS;
    cl::Memory m(clCreateBuffer(context.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY)
      throw DeviceError(info.label() + ": out of device memory for " + owner + " " + what + " (" + std::to_string(bytes) + " bytes)");
    cl::check(err, "clCreateBuffer", what);
    if (!v.empty()) {
      cl::check(clEnqueueWriteBuffer(queue.get(), m.get(), CL_TRUE, 0, v.size() * sizeof(T), v.data(), 0, nullptr, nullptr),
                "clEnqueueWriteBuffer", what);
      to_device += v.size() * sizeof(T);
    }
    return m;
  }
};

template <typename T>
void set_arg(cl_kernel k, cl_uint i, const T& value, const char* kernel) {
  cl::check(clSetKernelArg(k, i, sizeof(T), &value), "clSetKernelArg", kernel);
}
inline void set_arg(cl_kernel k, cl_uint i, const cl::Memory& m, const char* kernel) {
  const cl_mem h = m.get();
  cl::check(clSetKernelArg(k, i, sizeof(cl_mem), &h), "clSetKernelArg", kernel);
}

}  // namespace dgrte::device
