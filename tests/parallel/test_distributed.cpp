// Run under mpiexec with 2 and 3 processes (CTest parallel_mpi_2, parallel_mpi_3): rank 0 meshes the
// box and distributes it; every element is owned by exactly one rank, the pieces hold what
// build_local_mesh gives, and one ghost exchange fills every ghost with its owner's values.
#include "angular/quadrature.hpp"
#include "common/error.hpp"
#include "io/case_file.hpp"
#include "mesh/tet_mesh.hpp"
#include "parallel/boundary_exchange.hpp"
#include "parallel/ghost_exchange.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"

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

TEST(Distributed, BoundaryExchangeSendsOnlyBoundaryElementsToTheirGhosts) {
  const auto l = distributed_box();
  constexpr std::size_t kValues = 3 * 10;  // e.g. 3 ordinates x P2 nodes
  const BoundaryExchange exchange(PETSC_COMM_WORLD, l, kValues);
  // The sent elements are exactly the owned ones with a ghost neighbour, ascending.
  std::vector<std::size_t> expected;
  for (std::size_t e = 0; e < l.num_owned; ++e)
    for (int f = 0; f < 4; ++f)
      if (l.mesh.neighbour[e][static_cast<std::size_t>(f)] >= static_cast<int>(l.num_owned)) {
        expected.push_back(e);
        break;
      }
  EXPECT_EQ(exchange.sent_elements(), expected);
  // Every element another rank holds as a ghost is sent by its owner: the sent counts over the
  // ranks cover the ghosts (an element may be a ghost on several ranks, so >=).
  long counts[2] = {static_cast<long>(expected.size()), static_cast<long>(l.num_ghosts())};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_LE(counts[0], counts[1]);
  if (l.ranks > 1) {
    EXPECT_GT(counts[0], 0);
  }
  auto value = [](long e, std::size_t k) { return 1000.0 * static_cast<double>(e) + static_cast<double>(k) + 0.5; };
  std::vector<double> sent(expected.size() * kValues);
  for (std::size_t i = 0; i < expected.size(); ++i)
    for (std::size_t k = 0; k < kValues; ++k) sent[i * kValues + k] = value(l.global_element[expected[i]], k);
  std::vector<double> ghosts(l.num_ghosts() * kValues, std::numeric_limits<double>::quiet_NaN());
  exchange.update(sent, ghosts);
  EXPECT_EQ(exchange.ghost_values(), ghosts.size());
  for (std::size_t g = 0; g < l.num_ghosts(); ++g)
    for (std::size_t k = 0; k < kValues; ++k)
      ASSERT_EQ(ghosts[g * kValues + k], value(l.global_element[l.num_owned + g], k)) << "ghost " << g << " value " << k;
  std::vector<double> too_many(ghosts.size() + 1);  // wrong on every rank: no rank enters the exchange
  EXPECT_THROW(exchange.update(sent, too_many), std::logic_error);
}

TEST(Distributed, GhostWallsBecomePartitionFacesSoEveryWallHasOneOwner) {
  const auto l = distributed_box();
  const auto m = without_ghost_walls(l);
  long walls = 0;
  for (std::size_t e = 0; e < m.tets.size(); ++e)
    for (std::size_t f = 0; f < 4; ++f) {
      if (e >= l.num_owned && m.neighbour[e][f] < 0) {
        ASSERT_EQ(m.boundary_group[e][f], kPartitionFace) << "ghost " << e << " face " << f;
      } else {
        ASSERT_EQ(m.boundary_group[e][f], l.mesh.boundary_group[e][f]);
      }
      walls += e < l.num_owned && m.neighbour[e][f] < 0 && m.boundary_group[e][f] >= 0;
    }
  MPI_Allreduce(MPI_IN_PLACE, &walls, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
  long global_walls = 0;
  if (l.rank == 0) {
    const auto g = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.35);
    for (std::size_t e = 0; e < g.tets.size(); ++e)
      for (std::size_t f = 0; f < 4; ++f) global_walls += g.neighbour[e][f] < 0;
  }
  MPI_Bcast(&global_walls, 1, MPI_LONG, 0, PETSC_COMM_WORLD);
  EXPECT_EQ(walls, global_walls);
}

// A distributed solve started from its own solution (GrayOptions::initial_intensities on the local
// elements: the moments, the wall state and the ghosts' inflow through the partition faces) is
// converged at once; from zero it takes several outer iterations. Scattering and reflecting walls,
// so that the outer unknowns hold more than the partition inflow.
TEST(Distributed, ASolveStartedFromItsOwnSolutionIsConverged) {
  const auto l = distributed_box();
  const auto cs = io::parse_case(
      "mesh: {geo: cube.geo, size: 0.35}\norder: 2\nangular: {quadrature: sn, order: 4}\n"
      "media: {\"*\": {kappa: \"0.5\", Ib: \"1 + x\", scattering: \"1.0\"}}\n"
      "boundaries: {\"*\": {type: gray, emissivity: 0.5, temperature: 0}}\nsolver: {outer_tolerance: 1.0e-10}\n",
      "warm_start.yaml");
  const mesh::TetMesh local = without_ghost_walls(l);
  const auto disc = transport::make_discretization(local, cs.order);
  const auto quad = problem::build_quadrature(*cs.angular);
  const problem::Medium medium = problem::build_medium(cs, disc, &quad);
  std::vector<std::string> warnings;
  const problem::Walls walls(cs, disc, &quad, warnings);
  solver::GrayOptions go;
  go.tolerance = 1e-10;
  go.inner_rtol = 1e-13;
  go.keep_intensities = true;
  go.local_mesh = &l;
  const auto cold = solver::solve_gray(disc, quad, medium, walls, go);
  go.initial_intensities = &cold.intensities;
  const auto warm = solver::solve_gray(disc, quad, medium, walls, go);
  if (l.rank == 0)
    std::printf("[ note ] outer iterations from zero %d, from the solution %d\n", cold.outer_iterations, warm.outer_iterations);
  EXPECT_GE(cold.outer_iterations, 5);
  EXPECT_LE(warm.outer_iterations, 1);
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < l.num_owned * static_cast<std::size_t>(disc.num_nodes()); ++k)
    diff = std::max(diff, std::abs(warm.G[k] - cold.G[k])), scale = std::max(scale, std::abs(cold.G[k]));
  EXPECT_LE(diff, 1e-8 * scale);
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
