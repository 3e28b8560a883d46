#pragma once
// Sends the owned elements that other ranks hold as ghosts ("boundary elements") to those ranks'
// ghost blocks, many values per element at once: the angular solve's partition-face inflow of every
// ordinate (values_per_element = ordinates x nodes). Unlike GhostExchange, whose roots are all
// owned elements, the roots here are only the boundary elements, packed in sent_elements() order,
// so a rank keeps the per-ordinate values of its boundary layer, never of all its elements. One
// PetscSF over elements; each element's values travel as one contiguous MPI type.
#include "parallel/local_mesh.hpp"

#include <petscsf.h>

#include <span>
#include <vector>

namespace dgrte::parallel {

class BoundaryExchange {
 public:
  // Collective on comm (finds each ghost's slot on its owner by one GhostExchange).
  BoundaryExchange(MPI_Comm comm, const LocalMesh& local, std::size_t values_per_element);
  ~BoundaryExchange();
  BoundaryExchange(const BoundaryExchange&) = delete;
  BoundaryExchange& operator=(const BoundaryExchange&) = delete;

  // Local owned elements that some other rank holds as a ghost, ascending: slot i of `sent`.
  const std::vector<std::size_t>& sent_elements() const { return sent_; }
  std::size_t values_per_element() const { return values_; }
  // sent: sent_elements().size() x values_per_element values; ghosts: num_ghosts x values_per_element
  // values (the ghosts in LocalMesh order), overwritten with their owners' sent values. Collective.
  void update(std::span<const double> sent, std::span<double> ghosts) const;
  // Values a rank receives per update.
  std::size_t ghost_values() const { return ghosts_ * values_; }

 private:
  PetscSF sf_ = nullptr;
  MPI_Datatype unit_ = MPI_DATATYPE_NULL;
  std::vector<std::size_t> sent_;
  std::size_t values_ = 0, ghosts_ = 0;
};

}  // namespace dgrte::parallel
