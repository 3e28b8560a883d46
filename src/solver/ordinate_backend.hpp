#pragma once
// The hardware behind a gray transport sweep (shared/TARGET-DESIGN.md §2): an OrdinateBackend
// solves batches of ordinates (columns) of one gray problem for their sources and wall inflow and
// adds up their moments. The gray solver's outer iteration (solve_gray) talks only to this: the CPU
// implementation (CpuOrdinates: OpenMP sweeps or PETSc Bi-CGSTAB per ordinate, distributed under
// mpirun) and the OpenCL one (backend::OpenclOrdinates: every column of a batch at once on a
// device, the fields resident there) are held equal by the gray parity tests.
//
// A transport sweep is  begin_sweep → (solve_batch → [solution, inflow per column] → accumulate)
// per batch → end_sweep.
#include "angular/quadrature.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"
#include "transport/discretization.hpp"
#include "transport/sweep.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace dgrte::solver {

struct GrayOptions;
class DistributedSetup;

// The gray problem a backend is bound to for one solve.
struct GrayProblem {
  const transport::Discretization& disc;
  const angular::Quadrature& quad;
  const problem::Medium& medium;
  const problem::Walls& walls;
  const Collimated* beams = nullptr;                              // null: none
  const std::vector<transport::SweepPlan>* plans = nullptr;       // one per ordinate, when the options sweep
  std::size_t solved = 0;                                         // elements solved: all, or a rank's owned ones
  const DistributedSetup* distributed = nullptr;                  // null: one process
  std::size_t rank() const { return static_cast<std::size_t>(medium.scattering_rank); }
};

// Ordinates solved together: whole reflection groups, group g is members[group_begin[g],
// group_begin[g + 1]).
struct OrdinateBatch {
  std::vector<int> members;
  std::vector<std::size_t> group_begin{0};
};

// G and q of the DG solution at the nodes (a transport sweep's outputs).
struct NodalMoments {
  std::vector<double> G, qx, qy, qz;
};

// Work counted by a batch solve.
struct BatchCounts {
  long inner = 0;      // sweep passes or Bi-CGSTAB iterations, all columns
  long passes = 0;     // passes over the reflection groups (specular coupling)
  long limited = 0;    // element solves changed by the positivity limiter
  long exchanges = 0;  // ghost exchanges (distributed Bi-CGSTAB)
};

class OrdinateBackend {
 public:
  virtual ~OrdinateBackend() = default;
  virtual std::string name() const = 0;

  // Binds a gray problem (once per solve_gray; the references stay valid until the next bind).
  // Returns about how many ordinates a batch should hold (at least 1); InputError when the options
  // ask for something this backend cannot do.
  virtual std::size_t bind(const GrayProblem& problem, const GrayOptions& options) = 0;
  // Unknowns of the partition faces' inflow in the outer vector (distributed sweeps), else 0.
  virtual std::size_t ghost_size() const { return 0; }

  // A transport sweep starts. It reads the scattering moments phi (rank r per solved node), the
  // walls' reflection state and, distributed, the partition faces' inflow (ghosts_in); the spans
  // stay valid until end_sweep. with_sources: emission, user sources and scattered beams; moments:
  // G and q are wanted at the end.
  virtual void begin_sweep(std::span<const double> phi, std::span<const double> wall_state, std::span<const double> ghosts_in,
                           bool with_sources, bool moments) = 0;
  // Solves the ordinates of a batch, each with the walls' inflow (problem::Walls::inflow), the
  // specular coupling within each group converged (`specular`: the traces kept between sweeps).
  // keep_fields: solution() must give whole fields; need_traces: the wall face nodes are read.
  virtual BatchCounts solve_batch(const OrdinateBatch& batch, std::vector<double>& specular, bool keep_fields, bool need_traces) = 0;
  // Column k of the batch solved last: a field on the discretisation whose wall face nodes hold the
  // solution (the whole field with keep_fields), valid until the next call; and its wall inflow.
  virtual std::span<const double> solution(std::size_t k) = 0;
  virtual std::span<const double> inflow(std::size_t k) const = 0;
  // Adds the scattering moments (phi_out) and, when given, G and q of the batch solved last.
  virtual void accumulate(const OrdinateBatch& batch, std::span<double> phi_out, NodalMoments* moments) = 0;
  // The sweep ends: phi_out and moments complete (a device's sums come back); distributed, the
  // partition faces' inflow for the next sweep (ghosts_out). Returns the exchanges made.
  virtual long end_sweep(std::span<double> phi_out, NodalMoments* moments, std::span<double> ghosts_out) = 0;
};

// Sources shared by the backends (solver/ordinate_sources.cpp).
// The sources of ordinate m that do not depend on the iterate: emission, user source, scattered beams.
void fixed_sources(const GrayProblem& p, int m, std::span<double> rhs);
// rhs = fixed sources (with_sources) + scattering of the moments phi, on the solved elements.
void scattering_sources(const GrayProblem& p, int m, std::span<const double> phi, bool with_sources, std::span<double> rhs);
// Adds the scattering moments (phi_out) and, when given, G and q of the fields u[b] of ordinates
// members[b] on the solved elements.
void accumulate_moments(const GrayProblem& p, std::span<const int> members, std::span<const double* const> u, std::span<double> phi_out,
                        NodalMoments* moments);
// The error of a specular coupling that did not converge in `passes` passes.
[[noreturn]] void throw_specular_divergence(int first_ordinate, int passes);
constexpr int kMaxSpecularPasses = 20000;

}  // namespace dgrte::solver
