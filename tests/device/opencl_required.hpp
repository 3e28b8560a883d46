#pragma once
// Device tests skip without an OpenCL platform, unless DGRTE_REQUIRE_OPENCL=1 (CI, with PoCL) makes
// a missing platform a failure.
#include "device/opencl_runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace dgrte::test_support {

inline bool opencl_missing() {
  if (!device::list_devices().empty()) return false;
  if (const char* req = std::getenv("DGRTE_REQUIRE_OPENCL"); req && std::string(req) == "1")
    ADD_FAILURE() << "DGRTE_REQUIRE_OPENCL=1 but no OpenCL platform: install pocl-opencl-icd";
  return true;
}

}  // namespace dgrte::test_support
