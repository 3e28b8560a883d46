#pragma once
// The final gather of an angular DG run (the ray integrator: src/mc/final_gather.hpp), orchestrated:
// its receivers (every wall face's quadrature points and the probe points), one gather per converged
// DG solution — the gray run's, or each spectral point's of a nongray run (its own kappa_j, a_j I_b
// and DG G_j, with its own scrambling of the directions) — summed, and written back into the run's
// wall fields, energy balance and probes.
#include "io/case_file.hpp"
#include "mc/final_gather.hpp"
#include "mc/monte_carlo.hpp"
#include "output/radiation_output.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"
#include "transport/field_evaluation.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

namespace dgrte::runner {

class FinalGatherRun {
 public:
  // medium, walls: the run's (for a nongray run the gray walls and the gas state); beams: the gray
  // run's collimated beams (none for nongray runs). Locates the probes.
  // tracer (optional): where the rays run (an OpenCL device, backend::device_gather_tracer), named
  // tracer_name in summary.json final_gather.traced_by; empty: the host loop.
  FinalGatherRun(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Medium& medium,
                 const problem::Walls& walls, const angular::Quadrature& quad, const solver::Collimated& beams,
                 mc::GatherTracer tracer = {}, std::string tracer_name = {});

  // Gathers one converged DG solution and adds it: medium and walls are those it was solved with
  // (a spectral point's), result its G, q_in (totals with the beams) and intensities.
  void add(const problem::Medium& medium, const problem::Walls& walls, const solver::GrayResult& result);

  // Replaces the run's wall fluxes (result q_in, q_out; fields q_net, q_emitted and the balance's)
  // by the gathered ones, fills the probes' values, and returns summary.json's final_gather block
  // (dg_walls, dg_energy_balance: the DG values it replaced).
  nlohmann::json finish(solver::GrayResult& result, output::RadiationFields& fields, output::GatheredProbes& probes);

  double seconds() const { return seconds_; }  // set-up, gathers and the wall recompute
  // Hands each gather's arrays (and why a device would not take them) to `out` (dgrte export).
  void set_arrays_out(std::function<void(const mc::GatherArrays&, const std::string&)> out) { control_.arrays_out = std::move(out); }

 private:
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();  // the set-up counts as the gather's
  const io::CaseSpec& cs_;
  const transport::Discretization& disc_;
  const problem::Medium& medium_;  // the run's: the tracer's properties are its until a spectral point's come
  const problem::Walls& walls_;  // the run's (gray) walls: emission, absorptivity for the recompute
  const angular::Quadrature& quad_;
  const solver::Collimated& beams_;
  mc::McModel tracer_;
  transport::PointLocator locator_;
  mc::GatherControl control_;
  std::vector<mc::ProbePoint> points_;
  std::vector<std::vector<long>> index_;  // per probe, per point: into points_ (-1: outside the mesh)
  // Per receiver point: a volume point's location and the walls it lies on (the DG value there).
  std::vector<std::optional<transport::PointLocator::Location>> location_;
  std::vector<std::vector<output::WallPoint>> on_walls_;
  std::vector<std::array<double, 4>> images_;  // beam images in mirrors at each point (the DG's F_c)
  std::vector<double> divq_shift_;  // per point: sum over the gathers of kappa (G_dg - G_gathered)
  std::vector<long> output_point_;  // per point: its index in problem::Medium::output_points (-1: a wall probe's)
  mc::GatherResult total_;
  nlohmann::json per_point_ = nlohmann::json::array();  // per gather: rays per point, segments per ray, seconds
  int gathers_ = 0;
  std::string traced_by_;
  double seconds_ = 0;
};

}  // namespace dgrte::runner
