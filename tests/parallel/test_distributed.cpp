// Run under mpiexec with 2 and 3 processes (CTest parallel_mpi_2, parallel_mpi_3): rank 0 meshes the
// box and distributes it; every element is owned by exactly one rank, the pieces hold what
// build_local_mesh gives, and one ghost exchange fills every ghost with its owner's values.
#include "common/error.hpp"
#include "mesh/tet_mesh.hpp"
#include "parallel/ghost_exchange.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>

namespace dgrte::parallel {
namespace {

int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}

LocalMesh distributed_box(std::string* partitioner = nullptr) {
  mesh::TetMesh global;
  const bool root = rank_of(PETSC_COMM_WORLD) == 0;
  if (root) global = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.35);
  return distribute_mesh(PETSC_COMM_WORLD, root ? &global : nullptr, "auto", partitioner);
}

TEST(Distributed, EveryElementHasExactlyOneOwner) {
  std::string partitioner;
  const auto l = distributed_box(&partitioner);
  int ranks = 1;
  MPI_Comm_size(PETSC_COMM_WORLD, &ranks);
  EXPECT_EQ(l.ranks, ranks);
  EXPECT_EQ(l.rank, rank_of(PETSC_COMM_WORLD));
  std::vector<int> owned(l.global_elements, 0);
  for (std::size_t i = 0; i < l.num_owned; ++i) owned[static_cast<std::size_t>(l.global_element[i])] = 1;
  MPI_Allreduce(MPI_IN_PLACE, owned.data(), static_cast<int>(owned.size()), MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  for (std::size_t e = 0; e < owned.size(); ++e) ASSERT_EQ(owned[e], 1) << "element " << e;
  if (ranks > 1) {
    EXPECT_GT(l.num_ghosts(), 0u);
  }
  if (l.rank == 0)
    std::printf("[ note ] %d ranks, partitioner %s, rank 0: %zu owned + %zu ghosts of %zu\n", ranks, partitioner.c_str(), l.num_owned,
                l.num_ghosts(), l.global_elements);
}

TEST(Distributed, GhostExchangeFillsGhostsFromTheirOwners) {
  const auto l = distributed_box();
  constexpr int kValues = 10;  // e.g. P2 nodes per element
  const GhostExchange exchange(PETSC_COMM_WORLD, l, kValues);
  auto value = [](long e, int k) { return 1000.0 * static_cast<double>(e) + k + 0.25; };
  std::vector<double> field(l.global_element.size() * kValues, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < l.num_owned; ++i)
    for (int k = 0; k < kValues; ++k) field[i * kValues + static_cast<std::size_t>(k)] = value(l.global_element[i], k);
  exchange.update(field);
  EXPECT_EQ(exchange.ghost_values(), l.num_ghosts() * kValues);
  for (std::size_t i = 0; i < l.global_element.size(); ++i)
    for (int k = 0; k < kValues; ++k)
      ASSERT_EQ(field[i * kValues + static_cast<std::size_t>(k)], value(l.global_element[i], k)) << "local element " << i << " value " << k;
}

TEST(Distributed, AFailureOnRankZeroStopsEveryRank) {
  // Rank 0 has no mesh to partition: every rank must throw the same message, none may hang.
  try {
    distribute_mesh(PETSC_COMM_WORLD, nullptr);
    FAIL() << "no error";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 has no mesh"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dgrte::parallel
