#pragma once
// The nongray solve: a spectral gas model (gas::SpectralModel: gray, WSGG, SNBCK, SLW, RCSLW, LBL)
// turns the RTE into a sum of gray problems, one per spectral point j,
//   s.grad I_j = kappa_j (a_j I_b(T) - I_j) + scattering (gray sigma_s),
// with walls emitting eps a_j(T_w) I_b(T_w) (Modest 2013, ch. 20). Each point is one gray solve of
// all ordinates (solver::solve_gray); G, q, div q and the wall fluxes are summed over the points and
// the point's fields dropped, so memory does not grow with the number of points (beyond one block
// of properties, SpectralOptions::block_bytes). What does not depend on kappa (geometry, sweep
// plans) is built once.
#include "angular/quadrature.hpp"
#include "gas/spectral_model.hpp"
#include "output/radiation_output.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"

#include <functional>
#include <string>
#include <vector>

namespace dgrte::spectral {

// One gray problem: a spectral point's medium and walls.
struct PointProblem {
  const problem::Medium* medium = nullptr;
  const problem::Walls* walls = nullptr;
};

// The same case discretised a second time (the order p + 1 problem of the error indicator,
// src/adapt): its medium carries the gas states at its own nodes and property points.
struct SpectralCompanion {
  const transport::Discretization* disc = nullptr;
  const problem::Medium* medium = nullptr;
  const problem::Walls* walls = nullptr;
};

struct SpectralOptions {
  // Memory for one block of spectral points' properties (kappa_j and a_j at every node, 16 bytes
  // per node and point): points are evaluated a block at a time so the per-state work the model
  // shares between points is done once per block (gas::SpectralModel::evaluate_block).
  std::size_t block_bytes = std::size_t{256} << 20;
  // A distributed mesh (solve_spectral takes it from GrayOptions::local_mesh): the model's averages
  // are taken over all ranks' owned nodes (SpectralModel::prepare_distributed), so they do not
  // depend on the partition, and the range checks and point totals count each rank's owned nodes
  // and walls once.
  const parallel::LocalMesh* local_mesh = nullptr;
  // A companion discretisation: each point's gray problem is built for it too, from the same block
  // of properties (its states are evaluated with the run's), and handed to the visitor beside the
  // run's.
  const SpectralCompanion* companion = nullptr;
  // Called after each point's solve with its gray problem and converged solution (the final gather
  // integrates every point's DG source along rays; the error indicator sweeps the companion from
  // it), before the point's fields are dropped. companion: null without SpectralOptions::companion.
  std::function<void(int, const problem::Medium&, const problem::Walls&, const solver::GrayResult&, const PointProblem* companion)>
      point_solved;
  // A start for point j's solve (adaptive refinement: that point's solution of the last cycle on
  // this discretisation), called just before it: one field per ordinate on this rank's elements
  // (owned and ghosts), or empty to start from zero. Distributed: called on every rank in turn.
  std::function<std::vector<std::vector<double>>(int j)> point_start;
};

// What one spectral point contributed (the per-band or per-gray-gas breakdown of the totals).
struct PointTotals {
  int point = 0;
  double nu_lo = 0, nu_hi = 0;  // its wavenumber interval [cm^-1], NaN where it has none
  double volume_W = 0;          // integral of its div q over the volume
  std::vector<double> wall_q_in_W, wall_q_net_W;  // per wall group, in SpectralResult::wall_groups order
};

struct SpectralResult {
  solver::GrayResult total;        // G, q, q_in, q_out, source_total: sums over the points; counts summed
  output::RadiationFields fields;  // div q (both forms), q_net, q_emitted: sums over the points
  std::vector<double> kappa_planck;  // sum_j a_j(T) kappa_j at the nodes [1/m]: the Planck-mean absorption
  int spectral_points = 0;
  std::vector<std::string> wall_groups;  // surface groups of the walls (sorted)
  std::vector<PointTotals> points;       // one per spectral point
  double property_seconds = 0;   // kappa_j and a_j at the nodes and walls
  double transport_seconds = 0;  // the gray solves
  int max_outer_iterations = 0;  // over the points
  int property_blocks = 0, max_block_points = 0;  // how the points were grouped for evaluation
  std::size_t block_bytes = 0;                      // the largest block's kappa_j, a_j arrays
  std::size_t wall_nodes_emitting = 0;
  // Where the properties were evaluated: nodes + property points + output points, and how many
  // distinct gas states they hold (each evaluated once per spectral point).
  std::size_t evaluated_points = 0, distinct_states = 0;  // boundary face nodes with T_w > 0 (the weights a_j(T_w) evaluated there)
  // Checked once before the loop: the model's temperature range, and how many gas nodes and
  // emitting wall nodes lie outside it (their properties are those of the nearest end).
  std::pair<double, double> temperature_range{0, 0};
  std::size_t gas_nodes_clamped = 0, wall_nodes_clamped = 0;
  double gas_temperature_min = 0, gas_temperature_max = 0;
};

// The volume each DG node stands for: J_e (M 1)_i, summing to the mesh volume (the weights of
// averages over the medium, e.g. the SLW reference state).
std::vector<double> node_volumes(const transport::Discretization& disc);

// The properties of every spectral point in turn: prepares the model (weighted by node_volumes),
// evaluates kappa_j and a_j a block at a time, and calls visit(j, point, point_walls) with the gray
// problem of point j (kappa_j, sigma_t, a_j I_b at the nodes; walls emitting eps a_j(T_w) I_b(T_w)).
// Fills the property fields of `report` (times, blocks, range checks, kappa_planck). The solvers
// (DG: solve_spectral; Monte Carlo: app) are the visitors. wanted (optional): points for which it
// returns false are not visited, and a block with no wanted point is not evaluated (Monte Carlo's
// spectral sampling by path traces few of a line-by-line grid's points).
// companion: the point's problem on SpectralOptions::companion (null without one).
using SpectralVisitor = std::function<void(int, const problem::Medium&, const problem::Walls&, const PointProblem* companion)>;
void for_each_spectral_point(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                             gas::SpectralModel& model, const SpectralOptions& spectral_options, SpectralResult& report,
                             const SpectralVisitor& visit,
                             const std::function<bool(int)>& wanted = {});

// medium must carry the gas state (problem::Medium::gas); walls are the gray walls (eps I_b(T_w)).
// The model is prepared here for the medium's states, weighted by node_volumes.
// progress (optional) is told "spectral point j / N" lines.
SpectralResult solve_spectral(const transport::Discretization& disc, const angular::Quadrature& quad,
                              const problem::Medium& medium, const problem::Walls& walls, gas::SpectralModel& model,
                              const solver::GrayOptions& options, const SpectralOptions& spectral_options = {},
                              const std::function<void(const std::string&)>& progress = {});

}  // namespace dgrte::spectral
