#include "transport/krylov_solver.hpp"

#include "common/error.hpp"
#include "transport/petsc_arrays.hpp"

#include <fmt/format.h>
#include <petscksp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace dgrte::transport {
namespace {

void check(PetscErrorCode ierr, const char* what) {
  if (ierr) throw SolverError(fmt::format("PETSc error {} in {}", static_cast<int>(ierr), what));
}

struct ShellContext {
  transport::TransportBackend* op;
};

PetscErrorCode shell_mult(Mat A, Vec x, Vec y) {
  ShellContext* ctx = nullptr;
  PetscCall(MatShellGetContext(A, &ctx));
  return apply_on_arrays(x, y, [ctx](auto in, auto out) { ctx->op->apply(in, out); });
}

PetscErrorCode shell_precondition(PC pc, Vec x, Vec y) {
  ShellContext* ctx = nullptr;
  PetscCall(PCShellGetContext(pc, &ctx));
  return apply_on_arrays(x, y, [ctx](auto in, auto out) { ctx->op->precondition(in, out); });
}

struct MonitorContext {
  std::chrono::steady_clock::time_point start;
  double rtol;
  double r0 = 0;
  bool progress;
  const std::string* label;
};

// Progress line: iteration, relative residual, elapsed, ETA from the mean log-residual decrease.
PetscErrorCode progress_monitor(KSP, PetscInt it, PetscReal rnorm, void* vctx) {
  auto* m = static_cast<MonitorContext*>(vctx);
  if (it == 0) m->r0 = rnorm;
  if (!m->progress || it == 0) return 0;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m->start).count();
  const double rel = m->r0 > 0 ? rnorm / m->r0 : 0;
  std::string eta = "?";
  if (rel > 0 && rel < 1) {
    const double rate = std::log(rel) / static_cast<double>(it);  // per iteration, < 0
    const double remaining = (std::log(m->rtol) - std::log(rel)) / rate;
    if (remaining >= 0) eta = fmt::format("{:.1f} s", remaining * elapsed / static_cast<double>(it));
  }
  std::fprintf(stderr, "\r  %s: it %4d  residual %.3e  elapsed %.1f s  ETA %s   ", m->label->c_str(),
               static_cast<int>(it), rel, elapsed, eta.c_str());
  std::fflush(stderr);
  return 0;
}

// RAII for the PETSc objects of one solve.
struct PetscObjects {
  Vec b = nullptr, x = nullptr, r = nullptr;
  Mat A = nullptr;
  KSP ksp = nullptr;
  ~PetscObjects() {
    if (ksp) KSPDestroy(&ksp);
    if (A) MatDestroy(&A);
    for (Vec* v : {&b, &x, &r})
      if (*v) VecDestroy(v);
  }
};

}  // namespace

PetscSession::PetscSession(int* argc, char*** argv) {
  check(PetscInitialize(argc, argv, nullptr, nullptr), "PetscInitialize");
}
PetscSession::~PetscSession() { PetscFinalize(); }

void finalize_petsc() {
  PetscBool running = PETSC_FALSE;
  PetscInitialized(&running);
  int mpi_finalized = 0;
  MPI_Finalized(&mpi_finalized);
  if (running && !mpi_finalized) PetscFinalize();
}

void ensure_petsc(const void* comm) {
  PetscBool initialised = PETSC_FALSE;
  PetscInitialized(&initialised);
  if (initialised) return;
  if (comm) PETSC_COMM_WORLD = *static_cast<const MPI_Comm*>(comm);
  // A library leaves the caller's signals alone (PETSc's handler would abort a Python process).
  check(PetscOptionsSetValue(nullptr, "-no_signal_handler", nullptr), "PetscOptionsSetValue");
  check(PetscInitializeNoArguments(), "PetscInitialize");
  // Finalised once, at exit, after every Solver of the process is gone (static destruction order).
  static const struct Finaliser {
    ~Finaliser() { finalize_petsc(); }
  } finaliser;
}

std::vector<std::string> unused_petsc_options() {
  std::vector<std::string> out;
  PetscBool initialised = PETSC_FALSE;
  if (PetscInitialized(&initialised) || !initialised) return out;
  PetscInt n = 0;
  char** names = nullptr;
  char** values = nullptr;
  if (PetscOptionsLeftGet(nullptr, &n, &names, &values)) return out;
  for (PetscInt i = 0; i < n; ++i) {
    std::string option = "-";
    option.append(names[i]);
    if (values[i]) option.append(" ").append(values[i]);
    out.push_back(std::move(option));
  }
  PetscOptionsLeftRestore(nullptr, &n, &names, &values);
  return out;
}

KrylovResult solve_bicgstab(transport::TransportBackend& op, std::span<const double> b, std::span<double> x,
                            const KrylovOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  const auto n = static_cast<PetscInt>(op.size());
  ShellContext ctx{&op};
  PetscObjects p;
  check(VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, n, PETSC_DECIDE, b.data(), &p.b), "VecCreate(b)");
  check(VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, n, PETSC_DECIDE, x.data(), &p.x), "VecCreate(x)");
  check(VecDuplicate(p.x, &p.r), "VecDuplicate");
  check(MatCreateShell(PETSC_COMM_WORLD, n, n, PETSC_DETERMINE, PETSC_DETERMINE, &ctx, &p.A), "MatCreateShell");
  check(MatShellSetOperation(p.A, MATOP_MULT, reinterpret_cast<void (*)(void)>(shell_mult)), "MatShellSetOperation");
  check(KSPCreate(PETSC_COMM_WORLD, &p.ksp), "KSPCreate");
  check(KSPSetOperators(p.ksp, p.A, p.A), "KSPSetOperators");
  check(KSPSetType(p.ksp, KSPBCGS), "KSPSetType");
  check(KSPSetTolerances(p.ksp, opt.rtol, 0.0, 1e12, opt.max_iterations), "KSPSetTolerances");
  check(KSPSetInitialGuessNonzero(p.ksp, PETSC_TRUE), "KSPSetInitialGuessNonzero");
  PC pc;
  check(KSPGetPC(p.ksp, &pc), "KSPGetPC");
  if (opt.precondition) {
    check(PCSetType(pc, PCSHELL), "PCSetType");
    check(PCShellSetContext(pc, &ctx), "PCShellSetContext");
    check(PCShellSetApply(pc, shell_precondition), "PCShellSetApply");
    check(PCShellSetName(pc, "dgrte element block Jacobi"), "PCShellSetName");
  } else {
    check(PCSetType(pc, PCNONE), "PCSetType");
  }
  check(KSPSetPCSide(p.ksp, PC_RIGHT), "KSPSetPCSide");
  check(KSPSetNormType(p.ksp, KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
  MonitorContext mon{start, opt.rtol, 0, opt.progress, &opt.label};
  check(KSPMonitorSet(p.ksp, progress_monitor, &mon, nullptr), "KSPMonitorSet");
  check(KSPSetFromOptions(p.ksp), "KSPSetFromOptions");
  check(KSPSolve(p.ksp, p.b, p.x), "KSPSolve");
  if (opt.progress) std::fprintf(stderr, "\r%*s\r", 100, "");

  KrylovResult res;
  PetscInt its;
  KSPConvergedReason reason;
  check(KSPGetIterationNumber(p.ksp, &its), "KSPGetIterationNumber");
  check(KSPGetConvergedReason(p.ksp, &reason), "KSPGetConvergedReason");
  res.iterations = static_cast<int>(its);
  res.reason = KSPConvergedReasons[reason];
  // True relative residual, independent of what the Krylov method tracked.
  PetscReal bnorm, rnorm;
  check(MatMult(p.A, p.x, p.r), "MatMult");
  check(VecAYPX(p.r, -1.0, p.b), "VecAYPX");
  check(VecNorm(p.r, NORM_2, &rnorm), "VecNorm");
  check(VecNorm(p.b, NORM_2, &bnorm), "VecNorm");
  res.relative_residual = bnorm > 0 ? rnorm / bnorm : rnorm;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  res.converged = reason > 0 && std::isfinite(res.relative_residual);
  if (!res.converged) {
    throw SolverError(fmt::format(
        "{}: Bi-CGSTAB did not converge ({}) at iteration {} with relative residual {:.3e} (rtol {:.1e}). "
        "Try more iterations (solver.max_iterations), the block-jacobi preconditioner, or a finer mesh",
        opt.label, res.reason, res.iterations, res.relative_residual, opt.rtol));
  }
  return res;
}

}  // namespace dgrte::transport
