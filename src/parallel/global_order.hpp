#pragma once
// Per-element data of a distributed mesh in the global element order: the owned elements' values of
// every rank gathered on rank 0 (the outputs), and rank 0's global data sent to the ranks' local
// elements (what rank 0 solved on the whole mesh, e.g. collimated beams). Collective on comm.
#include "parallel/local_mesh.hpp"

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace dgrte::parallel {

// owned: local.num_owned x bytes_per_element bytes. Returns global_elements x bytes_per_element bytes
// on rank 0; empty elsewhere.
std::vector<std::byte> gather_in_global_order(MPI_Comm comm, const LocalMesh& local, std::span<const std::byte> owned,
                                              std::size_t bytes_per_element);

template <class T>
std::vector<T> gather_in_global_order(MPI_Comm comm, const LocalMesh& local, std::span<const T> owned, std::size_t per_element) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto bytes = gather_in_global_order(comm, local, std::as_bytes(owned.first(local.num_owned * per_element)),
                                            per_element * sizeof(T));
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// The inverse: rank 0's global per-element data (global_elements x bytes_per_element bytes; ignored
// elsewhere) sent to every rank for its local elements, owned and ghosts, in LocalMesh order.
std::vector<std::byte> scatter_from_global_order(MPI_Comm comm, const LocalMesh& local, std::span<const std::byte> global_on_root,
                                                 std::size_t bytes_per_element);

template <class T>
std::vector<T> scatter_from_global_order(MPI_Comm comm, const LocalMesh& local, std::span<const T> global_on_root,
                                         std::size_t per_element) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto bytes = scatter_from_global_order(comm, local, std::as_bytes(global_on_root), per_element * sizeof(T));
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace dgrte::parallel
