// Fuzz target: the mesh reader on Gmsh .msh files, text (2.2, 4.1) and binary, through the Gmsh SDK.
#include "fuzz_support.hpp"
#include "mesh/tet_mesh.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = dgrte::fuzz::as_file(data, size, ".msh");
  dgrte::fuzz::expect_result_or_input_error([&] { dgrte::mesh::read_mesh(file); });
  return 0;
}
