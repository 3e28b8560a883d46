#include "device/cl_session.hpp"

#include "device/cl_program.hpp"

namespace dgrte::device {

ClSession::ClSession(const std::string& device, std::string owner_name) : owner(std::move(owner_name)) {
  info = select_device(device);
  dev = cl::device_id(info);
  if (!info.fp64) throw DeviceError(info.label() + " has no double precision (cl_khr_fp64): " + owner + " kernels need it");
  cl_int err = CL_SUCCESS;
  context = cl::Context(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err));
  cl::check(err, "clCreateContext", info.label());
  queue = cl::Queue(clCreateCommandQueue(context.get(), dev, 0, &err));
  cl::check(err, "clCreateCommandQueue", info.label());
}

}  // namespace dgrte::device
