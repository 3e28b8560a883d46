// GoogleTest main that owns the PETSc session for the solver tests.
// Under mpiexec a test registered for N ranks sets DGRTE_TEST_RANKS=N: if the job started with another
// size (singletons from an mpiexec of a different MPI, say), every multi-rank check would be skipped
// and the test pass trivially, so that is a failure here.
#include "transport/krylov_solver.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int pargc = 1;
  char** pargv = argv;
  dgrte::transport::PetscSession petsc(&pargc, &pargv);
  if (const char* expected = std::getenv("DGRTE_TEST_RANKS"); expected && *expected) {
    int ranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (std::to_string(ranks) != expected) {
      std::fprintf(stderr, "DGRTE_TEST_RANKS=%s but this job has %d rank(s): mpiexec did not start the ranks the test "
                   "was registered for (is mpiexec from the MPI that PETSc was built with?)\n", expected, ranks);
      return 1;
    }
  }
  return RUN_ALL_TESTS();
}
