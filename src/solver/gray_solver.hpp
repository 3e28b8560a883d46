#pragma once
// The gray discrete-ordinates solve: all ordinates of a quadrature, coupled by scattering and by
// reflecting walls. The coupling unknowns x are the scattering moments at every node (the rank of
// the discrete phase operator; 1 for isotropic scattering) and the reflection state of the walls
// (q_in on diffuse faces, outgoing traces on specular faces). One "transport sweep" T solves every
// ordinate once for given x (inner solver: sweeps, or Bi-CGSTAB per ordinate) and returns new x.
//   source iteration:  x <- T(x) until G stops changing;
//   Krylov (GMRES or Bi-CGSTAB, PETSc): (I - T0) x = T(0), T0 = T without sources.
#include "io/case_file.hpp"
#include "parallel/local_mesh.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"
#include "transport/discretization.hpp"
#include "transport/sweep.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dgrte::parallel {
class BoundaryExchange;
class GhostExchange;
}  // namespace dgrte::parallel

namespace dgrte::solver {

class DistributedSetup;
class OrdinateBackend;

struct GrayOptions {
  io::OuterMethod outer = io::OuterMethod::gmres;
  double tolerance = 1e-8;  // outer: see GrayResult::stopping_rule
  int max_outer = 500;
  io::InnerMethod inner = io::InnerMethod::sweep;
  double inner_rtol = 1e-12;  // sweeps with lagged faces, or Bi-CGSTAB
  int inner_max_iterations = 5000;
  io::Preconditioner preconditioner = io::Preconditioner::partial_block_jacobi;  // inner Bi-CGSTAB
  std::size_t block_budget_bytes = std::size_t{1} << 31;
  bool keep_intensities = false;
  bool positivity = false;  // Zhang-Shu limiter in the sweeps (nonlinear: source iteration only)
  // Threads over the ordinates of a batch (default), or over the elements of each sweep level, one
  // ordinate at a time (issue 9: measured side by side in benchmarks/gray).
  bool threads_over_levels = false;
  bool progress = false;
  // Sweep plans made beforehand, one per ordinate (plan_sweeps): a spectral loop solves many gray
  // problems on the same mesh and set, and the plans depend on neither kappa nor the sources.
  const std::vector<transport::SweepPlan>* plans = nullptr;
  // Where the ordinates are solved (solver/ordinate_backend.hpp): e.g. backend::OpenclOrdinates,
  // the ordinates of a batch together on an OpenCL device. Null: the CPU path (CpuOrdinates).
  OrdinateBackend* backend = nullptr;
  // A distributed mesh (mpirun, docs/parallel.md): this rank's piece. The discretisation, medium
  // and walls are those of parallel::without_ghost_walls(*local_mesh); only the owned elements are
  // solved, and the outer iteration runs over PETSC_COMM_WORLD (every rank calls solve_gray).
  //   inner sweep: block Jacobi across ranks, converged by the outer iteration: the inflow through
  //     the partition faces (the ghosts' values, per ordinate) joins the coupling unknowns, and one
  //     exchange per transport sweep sends every rank's boundary elements to their ghost copies;
  //   inner Bi-CGSTAB: each ordinate is one global solve (one ghost exchange per operator apply).
  // Null: one process.
  const parallel::LocalMesh* local_mesh = nullptr;
  // Its exchanges and merged reflection groups made beforehand (a spectral loop solves many gray
  // problems on the same mesh, set and walls); null: made by solve_gray.
  const DistributedSetup* distributed_setup = nullptr;
  // An initial guess (adaptive refinement: the previous cycle's solution on this discretisation), one
  // field per ordinate: the outer iteration starts from its scattering moments and wall reflection
  // state instead of zero; distributed (local_mesh), the fields on the local elements, owned and
  // ghosts (the ghosts' give the partition faces' inflow); null: start from zero.
  const std::vector<std::vector<double>>* initial_intensities = nullptr;
  // ||T(0)||_2 of the outer Krylov system of a previous solve of this problem with slightly changed
  // data (a kept solver's warm start: GrayResult::rhs_norm; the same on every rank). With an initial
  // guess, the Krylov outer method then iterates on the correction from the guess and stops at
  // tolerance x this norm, which saves the sweep that T(0) would cost. 0: compute T(0).
  double rhs_norm_hint = 0;
};

struct GrayResult {
  // Nodal moments: G = sum w I, q = sum s_bar I; source_total = sum w (kappa Ib + user source).
  std::vector<double> G, qx, qy, qz, source_total;  // totals (diffuse + collimated)
  std::vector<double> G_collimated, qx_collimated, qy_collimated, qz_collimated;  // empty without beams
  // Per boundary face node (problem::Walls order): incident and leaving fluxes [W/m^2].
  std::vector<double> q_in, q_out;
  // Values on the walls, per boundary face node (docs/case-file.md, "Values on the walls"): each
  // direction entering the medium there counts with the wall's outgoing intensity (the upwind value
  // the DG flux imposes), not the DG trace; a face takes its own wall's value, and at a convex edge or
  // corner a direction entering through another wall takes that wall's
  // (problem::Walls::wall_intensity). q_in is such a value too, and q_out reflects it
  // (Walls::reflectance); wall_delta_q_in is what that changed in q_in (q_out changed by reflectance
  // times it). Subtracted, they give the DG solution's own fluxes, whose integrals close the energy
  // balance exactly: the wall totals (output::wall_summary, energy_balance). G, qx, qy, qz above are
  // the DG solution's.
  std::vector<double> wall_G, wall_qx, wall_qy, wall_qz, wall_delta_q_in;
  std::vector<std::vector<double>> intensities;  // per ordinate, when kept
  // Report.
  std::string outer_method, inner_method, stopping_rule;
  int outer_iterations = 0, transport_sweeps = 0;
  long inner_iterations = 0;  // sweep passes or Bi-CGSTAB iterations, all ordinates and sweeps (distributed: the most of a rank)
  long specular_passes = 0;
  long limited_elements = 0;  // element solves changed by the positivity limiter, all sweeps   // Gauss-Seidel passes over reflection groups (1 per group without mirrors)
  bool converged = true;
  double outer_residual = 0;
  double rhs_norm = 0;  // ||T(0)||_2 of the Krylov outer system (computed, or GrayOptions::rhs_norm_hint); 0 otherwise  // final: ||T(x) - x|| / ||T(x)|| (Krylov) or the G-change estimate (SI)
  std::vector<double> history;
  std::size_t coupling_unknowns = 0;
  double seconds = 0, plan_seconds = 0;
  std::size_t plan_bytes = 0, field_bytes = 0;
  int max_levels = 0, total_cycles = 0;
  std::vector<double> lagged_fraction;  // per ordinate (sweeps)
  // Distributed runs (summed over the ranks; 0 on one process): partition faces crossed by the
  // sweeps, over all ordinates, and the unknowns of the partition-face inflow in the outer vector.
  std::size_t partition_faces = 0, partition_unknowns = 0;
  long ghost_exchanges = 0;  // exchanges a rank made (one per transport sweep, or one per inner operator apply)
};

// What a distributed solve sets up per mesh, set and walls (collective): the exchange of the
// partition faces' inflow (inner sweeps) or of the ghost nodes (inner Bi-CGSTAB), and the reflection
// groups merged over the ranks.
class DistributedSetup {
 public:
  DistributedSetup(const parallel::LocalMesh& local, const transport::Discretization& disc, const angular::Quadrature& quad,
                   const problem::Walls& walls, const GrayOptions& options);
  ~DistributedSetup();
  DistributedSetup(const DistributedSetup&) = delete;
  DistributedSetup& operator=(const DistributedSetup&) = delete;

  std::unique_ptr<parallel::BoundaryExchange> boundary;  // inner sweeps
  std::unique_ptr<parallel::GhostExchange> nodes;        // inner Bi-CGSTAB
  std::vector<std::vector<int>> groups;
  bool any_specular = false;  // a specular wall on some rank
};

// The element blocks a Bi-CGSTAB preconditioner needs from the backend (none for none and sweep).
transport::BlockKind block_kind(io::Preconditioner p);

// Whether the solve sweeps (inner: sweep, or Bi-CGSTAB with the sweep preconditioner) and so needs
// a sweep plan per ordinate.
inline bool uses_sweep_plans(const GrayOptions& o) {
  return o.inner == io::InnerMethod::sweep || o.preconditioner == io::Preconditioner::sweep;
}

// The sweep plans of every ordinate of `quad` (walls.streaming(m)), made in parallel; solved: the
// elements [0, solved) a plan orders (a rank's owned elements), as transport::plan_sweep.
std::vector<transport::SweepPlan> plan_sweeps(const transport::Discretization& disc, const problem::Walls& walls,
                                             const angular::Quadrature& quad, std::size_t solved = static_cast<std::size_t>(-1));

GrayResult solve_gray(const transport::Discretization& disc, const angular::Quadrature& quad, const problem::Medium& medium,
                      const problem::Walls& walls, const GrayOptions& options, const Collimated* beams = nullptr);

// Transport sweeps of (disc, medium, walls) starting from given intensities (one field on disc per
// ordinate of quad): the first sweep's scattering moments and wall reflection state are those of
// the given fields, each later sweep's those of the sweep before (source iteration). Stops after one
// sweep where nothing couples the ordinates (that sweep is the solution), else when the estimated
// remaining change of G (max-norm, rho/(1 - rho) from successive changes) is below stop_fraction
// times max|G - G_start|, or after max_sweeps. The P+1 solve of the error indicator (src/adapt):
// what the given lower-order solution lacks, without solving the higher-order problem to the end.
// One process, CPU sweeps (options' backend and local_mesh must be null). The result keeps the
// intensities; outer_iterations counts the sweeps, outer_residual is the last remaining-change ratio.
GrayResult sweep_from(const transport::Discretization& disc, const angular::Quadrature& quad, const problem::Medium& medium,
                      const problem::Walls& walls, const GrayOptions& options, const std::vector<std::vector<double>>& intensities,
                      double stop_fraction, int max_sweeps, const Collimated* beams = nullptr);

}  // namespace dgrte::solver
