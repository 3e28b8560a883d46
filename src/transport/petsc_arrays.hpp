#pragma once
// y = f(x) on the local arrays of two PETSc vectors: the body of every MATSHELL/PCSHELL callback.
#include <petscvec.h>

#include <span>

namespace dgrte::transport {

template <typename F>
PetscErrorCode apply_on_arrays(Vec x, Vec y, F&& f) {
  const PetscScalar* xa;
  PetscScalar* ya;
  PetscInt n;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  f(std::span<const double>(xa, static_cast<std::size_t>(n)), std::span<double>(ya, static_cast<std::size_t>(n)));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArray(y, &ya));
  return 0;
}

}  // namespace dgrte::transport
