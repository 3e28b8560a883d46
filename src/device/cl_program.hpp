#pragma once
// Internal to the device core: building an OpenCL program from embedded source, with a binary
// cache on disk keyed by platform, device, driver, device version, options and source (FNV-1a),
// written through a temporary file and a rename. Used by DeviceTransport and DeviceTracer.
#include "device/cl_handles.hpp"

#include <string>

namespace dgrte::device::cl {

struct BuiltProgram {
  Program program;
  bool cache_hit = false;
  double seconds = 0;  // build or cache load
};

// cache_option: "" (DGRTE_KERNEL_CACHE, XDG_CACHE_HOME/dgrte/kernels or ~/.cache/dgrte/kernels),
// "none", or a folder. A failed build throws DeviceError with the device, the options and the log.
BuiltProgram build_program(cl_context context, cl_device_id device, const DeviceInfo& info, const std::string& source,
                           const std::string& options, const std::string& cache_option);

// A kernel of a built program (DeviceError naming it if absent).
Kernel make_kernel(const Program& program, const char* name);

}  // namespace dgrte::device::cl
