#pragma once
// One rank's part of a distributed tet mesh: the elements it owns, in global order, then the ghost
// layer (elements of other ranks across its partition faces), as a mesh::TetMesh of its own (local
// vertex numbers, the global physical groups). Connectivity is local: an owned element's neighbour
// across a partition face is a ghost; a ghost's faces toward elements that are not local carry
// neighbour -1 and boundary_group kPartitionFace (they are not walls: a face is a wall only when
// the global mesh says so).
#include "parallel/partition.hpp"

#include <cstddef>
#include <vector>

namespace dgrte::parallel {

using mesh::kPartitionFace;  // boundary_group of a ghost's face toward another rank

struct LocalMesh {
  mesh::TetMesh mesh;                   // owned elements [0, num_owned), then the ghosts
  std::size_t num_owned = 0;
  std::vector<long> global_element;     // local element -> global element
  std::vector<int> ghost_owner;         // per ghost (local element - num_owned): its rank
  std::vector<long> ghost_owner_index;  // per ghost: its local index on that rank
  int rank = 0, ranks = 1;
  std::size_t global_elements = 0;
  std::size_t num_ghosts() const { return global_element.size() - num_owned; }
};

// The local mesh of `rank` (no communication: every rank's piece can be built from the global mesh
// and the partition, which is what the tests check).
LocalMesh build_local_mesh(const mesh::TetMesh& global, const Partition& partition, int rank);

// The local mesh as a solver that solves only the owned elements needs it: the ghosts' wall faces
// become partition faces, so that every wall face (its reflection state, its fluxes) belongs to
// exactly one rank, the owner of its element.
mesh::TetMesh without_ghost_walls(const LocalMesh& local);

// Reads once, distributes: rank 0 passes the global mesh (the others pass nullptr), partitions it
// and sends every rank its local mesh; each rank returns its own. Collective on comm.
LocalMesh distribute_mesh(MPI_Comm comm, const mesh::TetMesh* global_on_root, const std::string& partitioner = "auto",
                          std::string* partitioner_used = nullptr);

}  // namespace dgrte::parallel
