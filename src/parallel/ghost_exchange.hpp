#pragma once
// Fills the ghost block of a per-element field from the owners: one PetscSF whose roots are the
// owned elements' values and whose leaves are the ghosts' (values_per_element contiguous values per
// element, owned elements first, as LocalMesh numbers them). One exchange per apply or sweep.
#include "parallel/local_mesh.hpp"

#include <petscsf.h>

#include <span>

namespace dgrte::parallel {

class GhostExchange {
 public:
  GhostExchange(MPI_Comm comm, const LocalMesh& local, int values_per_element);
  ~GhostExchange();
  GhostExchange(const GhostExchange&) = delete;
  GhostExchange& operator=(const GhostExchange&) = delete;

  // field: (num_owned + num_ghosts) * values_per_element values; the ghost part is overwritten with
  // the owners' values. Collective.
  void update(std::span<double> field) const;
  // Values a rank receives per update (the exchange volume).
  std::size_t ghost_values() const { return ghost_values_; }

 private:
  PetscSF sf_ = nullptr;
  std::size_t owned_values_ = 0, ghost_values_ = 0;
};

}  // namespace dgrte::parallel
