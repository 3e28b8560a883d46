// dgrte-read-check READER FILE [ARGS]: parses FILE the way dgrte does, in its own process, and exits
// 0 when it could (isolated_read.hpp). READER is
//   msh  FILE required|optional   a Gmsh mesh (mesh::read_mesh_in_process, boundary labels as given)
//   vtk  FILE CONTEXT             a VTK field file (fields::read_vtk_in_process; CONTEXT prefixes messages)
// The reader's InputError goes to stdout with exit code 2; memory beyond the limit, exit code 3.
#include "common/error.hpp"
#include "fields/field_import.hpp"
#include "isolation/isolated_read.hpp"
#include "mesh/tet_mesh.hpp"

#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include <sys/resource.h>

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// Caps the heap so that a declared count of billions fails as bad_alloc here instead of swapping the
// machine (ASan reserves terabytes of shadow memory: no cap under it; it has its own allocation limit).
void limit_memory(const std::filesystem::path& file) {
  if (kAddressSanitizer) return;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(file, ec);
  const rlim_t limit = dgrte::isolation::child_memory_limit(ec ? 0 : bytes);
  rlimit current{};
  if (getrlimit(RLIMIT_DATA, &current) == 0 && (current.rlim_max == RLIM_INFINITY || limit < current.rlim_max)) {
    current.rlim_cur = limit;
    setrlimit(RLIMIT_DATA, &current);
  }
}

int usage() {
  std::cout << "usage: dgrte-read-check msh FILE required|optional | vtk FILE CONTEXT\n";
  return dgrte::isolation::kReadInternal;
}

}  // namespace

int main(int argc, char** argv) {
  namespace iso = dgrte::isolation;
  if (argc != 4) return usage();
  const std::string reader = argv[1];
  const std::filesystem::path file = argv[2];
  const std::string argument = argv[3];
  limit_memory(file);
  try {
    if (reader == "msh") {
      dgrte::mesh::read_mesh_in_process(file, argument == "optional" ? dgrte::mesh::BoundaryLabels::optional
                                                                      : dgrte::mesh::BoundaryLabels::required);
    } else if (reader == "vtk") {
      dgrte::fields::FieldRequest request;
      request.file = file;
      request.where = argument;
      dgrte::fields::read_vtk_in_process(request);
    } else {
      return usage();
    }
    return iso::kReadOk;
  } catch (const dgrte::InputError& e) {
    std::cout << e.what() << std::endl;
    return iso::kReadInputError;
  } catch (const std::bad_alloc&) {
    return iso::kReadOutOfMemory;
  } catch (const std::exception& e) {
    std::cout << e.what() << std::endl;
    return iso::kReadInternal;
  }
}
