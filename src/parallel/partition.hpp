#pragma once
// Distributed memory, first layer (docs/parallel.md): the elements of a tet mesh split among MPI
// ranks with PETSc's graph partitioner, each rank's local mesh (its owned elements, then one layer
// of ghost elements across its partition faces), and the exchange that fills the ghost layer from
// the owners (one PetscSF). The solver does not use it yet (issue 14): this layer is tested alone
// on 1, 2 and 3 ranks.
#include "mesh/tet_mesh.hpp"

#include <mpi.h>

#include <string>
#include <vector>

namespace dgrte::parallel {

// Which rank owns each element, and which partitioner decided it.
struct Partition {
  std::vector<int> owner;  // per global element
  int parts = 1;
  std::string partitioner;  // "ptscotch", "simple" (PETSc's contiguous split), or "single" (one part)
};

// Splits the elements (vertices of the dual graph: elements sharing a face) into `parts` with
// PETSc's PetscPartitioner on one process: PT-Scotch where PETSc has it (type "auto" or
// "ptscotch"), else PETSc's simple partitioner ("simple"). Deterministic for a given mesh. Needs an
// initialised PETSc and the mesh's connectivity. Throws SolverError when PETSc fails, naming the call.
Partition partition_elements(const mesh::TetMesh& mesh, int parts, const std::string& type = "auto");

// Elements per part: min, max and the imbalance max / mean.
struct PartitionBalance {
  std::size_t min = 0, max = 0;
  double imbalance = 1;
  std::size_t cut_faces = 0;  // interior faces whose two elements lie in different parts
};
PartitionBalance balance(const mesh::TetMesh& mesh, const Partition& p);

}  // namespace dgrte::parallel
