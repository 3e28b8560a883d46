#pragma once
// Matrix-free preconditioned Bi-CGSTAB through PETSc (KSPBCGS with MATSHELL and PCSHELL, right
// preconditioning so the monitored residual is the true one). PETSc options (-ksp_monitor,
// -ksp_rtol, -log_view, ...) given on the command line override the case file.
#include "transport/transport_backend.hpp"

#include <span>
#include <string>
#include <vector>

namespace dgrte::transport {

// Owns PetscInitialize/PetscFinalize for one program run (no global state elsewhere).
class PetscSession {
 public:
  PetscSession(int* argc, char*** argv);
  ~PetscSession();
  PetscSession(const PetscSession&) = delete;
  PetscSession& operator=(const PetscSession&) = delete;
};

// For library callers (dgrte::Solver, the C API, Python): initialises PETSc (and MPI, if it is not
// running) on first use, with communicator comm as PETSC_COMM_WORLD (MPI_COMM_WORLD if null); it is
// finalised at process exit. Nothing if PETSc already runs (a PetscSession, or the caller's own).
void ensure_petsc(const void* comm = nullptr);
// Finalises PETSc now if it runs and MPI does (a caller that finalises MPI itself calls this first).
void finalize_petsc();

// Command-line PETSc options that no PETSc object has queried so far ("-ksp_rtoll 1e-6": a typo runs
// silently otherwise), as "-name value" strings. Empty before PetscInitialize.
std::vector<std::string> unused_petsc_options();

struct KrylovOptions {
  double rtol = 1e-10;
  int max_iterations = 5000;
  bool precondition = true;
  bool progress = false;  // one-line progress with ETA on a terminal
  std::string label;      // e.g. "direction 3 (0.62, 0.53, 0.58)": used in messages
};

struct KrylovResult {
  int iterations = 0;
  double relative_residual = 0;  // ||b - A x|| / ||b||, recomputed after the solve
  bool converged = false;
  double seconds = 0;
  std::string reason;  // PETSc's converged reason
};

// Solves A x = b for the backend's current direction; x holds the initial guess on entry.
// Throws SolverError naming the label and the iteration on divergence, breakdown or NaN.
KrylovResult solve_bicgstab(transport::TransportBackend& op, std::span<const double> b, std::span<double> x,
                            const KrylovOptions& options);

}  // namespace dgrte::transport
