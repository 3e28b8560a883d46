#include "parallel/boundary_exchange.hpp"

#include "common/error.hpp"
#include "parallel/ghost_exchange.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>

namespace dgrte::parallel {
namespace {

void check(PetscErrorCode code, const char* call) {
  if (code != 0) throw SolverError(fmt::format("PETSc error {} in {} (boundary exchange)", static_cast<int>(code), call));
}

}  // namespace

BoundaryExchange::BoundaryExchange(MPI_Comm comm, const LocalMesh& local, std::size_t values_per_element)
    : values_(values_per_element), ghosts_(local.num_ghosts()) {
  if (values_ == 0 || values_ > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::logic_error("BoundaryExchange: values_per_element must lie in [1, INT_MAX]");
  // An owned element is a ghost elsewhere exactly when it has a neighbour in the ghost layer (the
  // layer is the elements across the partition faces).
  const auto& m = local.mesh;
  std::vector<double> slot(local.global_element.size(), -1.0);
  for (std::size_t e = 0; e < local.num_owned; ++e)
    for (int f = 0; f < 4; ++f)
      if (m.neighbour[e][static_cast<std::size_t>(f)] >= static_cast<int>(local.num_owned)) {
        slot[e] = static_cast<double>(sent_.size());
        sent_.push_back(e);
        break;
      }
  const GhostExchange slots(comm, local, 1);  // each ghost learns its slot on its owner
  slots.update(slot);
  std::vector<PetscSFNode> remote(ghosts_);
  for (std::size_t g = 0; g < ghosts_; ++g) {
    const double s = slot[local.num_owned + g];
    if (!(s >= 0)) throw std::logic_error(fmt::format("BoundaryExchange: ghost {} is not a boundary element of rank {}", g, local.ghost_owner[g]));
    remote[g] = {local.ghost_owner[g], static_cast<PetscInt>(std::lround(s))};
  }
  check(PetscSFCreate(comm, &sf_), "PetscSFCreate");
  try {
    check(PetscSFSetGraph(sf_, static_cast<PetscInt>(sent_.size()), static_cast<PetscInt>(ghosts_), nullptr, PETSC_COPY_VALUES,
                          remote.data(), PETSC_COPY_VALUES),
          "PetscSFSetGraph");
    check(PetscSFSetUp(sf_), "PetscSFSetUp");
    if (MPI_Type_contiguous(static_cast<int>(values_), MPI_DOUBLE, &unit_) != MPI_SUCCESS || MPI_Type_commit(&unit_) != MPI_SUCCESS)
      throw SolverError("MPI_Type_contiguous failed (boundary exchange)");
  } catch (...) {
    PetscSFDestroy(&sf_);
    if (unit_ != MPI_DATATYPE_NULL) MPI_Type_free(&unit_);
    throw;
  }
}

BoundaryExchange::~BoundaryExchange() {
  PetscSFDestroy(&sf_);
  if (unit_ != MPI_DATATYPE_NULL) MPI_Type_free(&unit_);
}

void BoundaryExchange::update(std::span<const double> sent, std::span<double> ghosts) const {
  if (sent.size() != sent_.size() * values_ || ghosts.size() != ghosts_ * values_)
    throw std::logic_error(fmt::format("BoundaryExchange::update: {} sent and {} ghost values, expected {} and {}", sent.size(),
                                       ghosts.size(), sent_.size() * values_, ghosts_ * values_));
  static_assert(std::is_same_v<PetscScalar, double>, "dgrte needs a real, double-precision PETSc");
  check(PetscSFBcastBegin(sf_, unit_, sent.data(), ghosts.data(), MPI_REPLACE), "PetscSFBcastBegin");
  check(PetscSFBcastEnd(sf_, unit_, sent.data(), ghosts.data(), MPI_REPLACE), "PetscSFBcastEnd");
}

}  // namespace dgrte::parallel
