#include "parallel/global_order.hpp"

#include "common/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace dgrte::parallel {

std::vector<std::byte> gather_in_global_order(MPI_Comm comm, const LocalMesh& local, std::span<const std::byte> owned,
                                              std::size_t bytes_per_element) {
  const auto ranks = static_cast<std::size_t>(local.ranks);
  const int n_owned = static_cast<int>(local.num_owned);
  if (owned.size() != local.num_owned * bytes_per_element)
    throw std::logic_error(fmt::format("gather_in_global_order: {} bytes for {} owned elements of {} bytes", owned.size(), n_owned,
                                       bytes_per_element));
  if (local.global_elements * bytes_per_element > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw SolverError(fmt::format("gathering {} elements x {} bytes on rank 0 exceeds one MPI message (2 GiB): the mesh is too large "
                                  "for rank 0's single-file outputs",
                                  local.global_elements, bytes_per_element));
  std::vector<int> counts(ranks), offsets(ranks, 0);
  MPI_Gather(&n_owned, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (std::size_t r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  const bool root = local.rank == 0;
  std::vector<long> ids(root ? local.global_elements : 0);
  std::vector<std::byte> values(root ? local.global_elements * bytes_per_element : 0);
  std::vector<int> byte_counts(counts), byte_offsets(offsets);
  for (std::size_t r = 0; r < ranks; ++r) byte_counts[r] *= static_cast<int>(bytes_per_element), byte_offsets[r] *= static_cast<int>(bytes_per_element);
  MPI_Gatherv(local.global_element.data(), n_owned, MPI_LONG, ids.data(), counts.data(), offsets.data(), MPI_LONG, 0, comm);
  MPI_Gatherv(owned.data(), n_owned * static_cast<int>(bytes_per_element), MPI_BYTE, values.data(), byte_counts.data(), byte_offsets.data(),
              MPI_BYTE, 0, comm);
  std::vector<std::byte> global(values.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    std::copy_n(values.begin() + static_cast<long>(i * bytes_per_element), bytes_per_element,
                global.begin() + static_cast<long>(static_cast<std::size_t>(ids[i]) * bytes_per_element));
  return global;
}

std::vector<std::byte> scatter_from_global_order(MPI_Comm comm, const LocalMesh& local, std::span<const std::byte> global_on_root,
                                                 std::size_t bytes_per_element) {
  const auto ranks = static_cast<std::size_t>(local.ranks);
  const int n_local = static_cast<int>(local.global_element.size());
  if (local.rank == 0 && global_on_root.size() != local.global_elements * bytes_per_element)
    throw std::logic_error(fmt::format("scatter_from_global_order: {} bytes for {} elements of {} bytes", global_on_root.size(),
                                       local.global_elements, bytes_per_element));
  std::vector<int> counts(ranks), offsets(ranks, 0);
  MPI_Gather(&n_local, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (std::size_t r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  const std::size_t total = local.rank == 0 ? static_cast<std::size_t>(offsets.back() + counts.back()) : 0;
  if (total * bytes_per_element > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw SolverError(fmt::format("scattering {} elements x {} bytes exceeds one MPI message (2 GiB)", total, bytes_per_element));
  std::vector<long> ids(total);
  MPI_Gatherv(local.global_element.data(), n_local, MPI_LONG, ids.data(), counts.data(), offsets.data(), MPI_LONG, 0, comm);
  std::vector<std::byte> packed(total * bytes_per_element);
  for (std::size_t i = 0; i < ids.size(); ++i)
    std::copy_n(global_on_root.begin() + static_cast<long>(static_cast<std::size_t>(ids[i]) * bytes_per_element), bytes_per_element,
                packed.begin() + static_cast<long>(i * bytes_per_element));
  for (std::size_t r = 0; r < ranks; ++r) counts[r] *= static_cast<int>(bytes_per_element), offsets[r] *= static_cast<int>(bytes_per_element);
  std::vector<std::byte> mine(static_cast<std::size_t>(n_local) * bytes_per_element);
  MPI_Scatterv(packed.data(), counts.data(), offsets.data(), MPI_BYTE, mine.data(), static_cast<int>(mine.size()), MPI_BYTE, 0, comm);
  return mine;
}

}  // namespace dgrte::parallel
