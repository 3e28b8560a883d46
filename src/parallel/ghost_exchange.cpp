#include "parallel/ghost_exchange.hpp"

#include "common/error.hpp"

#include <string>
#include <type_traits>
#include <vector>

namespace dgrte::parallel {
namespace {

void check(PetscErrorCode code, const char* call) {
  if (code != 0) throw SolverError(std::string("PETSc error ") + std::to_string(static_cast<int>(code)) + " in " + call + " (ghost exchange)");
}

}  // namespace

GhostExchange::GhostExchange(MPI_Comm comm, const LocalMesh& local, int values_per_element) {
  const auto v = static_cast<std::size_t>(values_per_element);
  owned_values_ = local.num_owned * v;
  ghost_values_ = local.num_ghosts() * v;
  // Leaf i (ghost value i, contiguous after the owned values) <- root (owner rank, its index * v + k).
  std::vector<PetscSFNode> remote(ghost_values_);
  for (std::size_t g = 0; g < local.num_ghosts(); ++g)
    for (std::size_t k = 0; k < v; ++k)
      remote[g * v + k] = {local.ghost_owner[g], static_cast<PetscInt>(static_cast<std::size_t>(local.ghost_owner_index[g]) * v + k)};
  check(PetscSFCreate(comm, &sf_), "PetscSFCreate");
  try {
    check(PetscSFSetGraph(sf_, static_cast<PetscInt>(owned_values_), static_cast<PetscInt>(ghost_values_), nullptr, PETSC_COPY_VALUES,
                          remote.data(), PETSC_COPY_VALUES),
          "PetscSFSetGraph");
    check(PetscSFSetUp(sf_), "PetscSFSetUp");
  } catch (...) {
    PetscSFDestroy(&sf_);
    throw;
  }
}

GhostExchange::~GhostExchange() { PetscSFDestroy(&sf_); }

void GhostExchange::update(std::span<double> field) const {
  if (field.size() != owned_values_ + ghost_values_)
    throw SolverError("GhostExchange::update: the field has " + std::to_string(field.size()) + " values, the local mesh needs " +
                      std::to_string(owned_values_ + ghost_values_));
  static_assert(std::is_same_v<PetscScalar, double>, "dgrte needs a real, double-precision PETSc");
  check(PetscSFBcastBegin(sf_, MPIU_SCALAR, field.data(), field.data() + owned_values_, MPI_REPLACE), "PetscSFBcastBegin");
  check(PetscSFBcastEnd(sf_, MPIU_SCALAR, field.data(), field.data() + owned_values_, MPI_REPLACE), "PetscSFBcastEnd");
}

}  // namespace dgrte::parallel
