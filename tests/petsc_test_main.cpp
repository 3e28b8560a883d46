// GoogleTest main that owns the PETSc session for the solver tests.
#include "transport/krylov_solver.hpp"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int pargc = 1;
  char** pargv = argv;
  dgrte::transport::PetscSession petsc(&pargc, &pargv);
  return RUN_ALL_TESTS();
}
