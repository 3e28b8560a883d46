#pragma once
// Inside the public API (not installed, not for clients): what the run kinds share. A run is
// prepare (case, mesh, discretisation: a Setup) then one of run_directions (directions_run.cpp),
// run_angular and run_refined (run_case.cpp), run_montecarlo (montecarlo_run.cpp); each ends in
// finish, which writes summary.json when the run writes files and keeps it in Setup::results.
#include "dgrte/dgrte.hpp"
#include "dgrte/distributed_run.hpp"

#include "adapt/error_indicator.hpp"
#include "gas/model_factory.hpp"
#include "io/case_file.hpp"
#include "mesh/tet_mesh.hpp"
#include "output/vtk_output.hpp"
#include "problem/problem.hpp"
#include "spectral/spectral_solver.hpp"
#include "transport/discretization.hpp"
#include "transport/sweep.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace dgrte::runner {

using dgrte::Results;
using dgrte::RunOptions;
using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Everything a run shares before it solves: case, mesh, discretisation.
struct Setup {
  io::CaseSpec cs;
  mesh::TetMesh mesh;
  transport::Discretization disc;
  std::vector<std::string> warnings;
  std::function<void(const std::string&)> log;
  Clock::time_point start;
  std::size_t printed = 0;  // warnings already shown on the terminal
  nlohmann::json fields = nlohmann::json::array();  // field files read (summary "fields")
  // Adaptive refinement (run_refined): a cycle's initial guess in (one field per ordinate on disc),
  // its solution's intensities and error indicator out.
  const std::vector<std::vector<double>>* initial_intensities = nullptr;
  std::vector<std::vector<double>> intensities;
  std::optional<adapt::ErrorIndicator> indicator;
  // The same per spectral point of a nongray run (point j's fields; empty where its solve is one
  // sweep, with neither scattering nor diffusely reflecting walls: no start needed). On rank 0.
  const std::vector<std::vector<std::vector<double>>>* initial_point_intensities = nullptr;
  std::vector<std::vector<std::vector<double>>> point_intensities;
  // Library runs (dgrte::Solver): whether outputs are written, whether each solve keeps its
  // intensities for the next one's warm start (keep_solution), and the fields handed back.
  bool write_files = true;
  bool keep_solution = false;
  Results results;
  // A library Solver's sweep plans, made in its first solve and reused by the later ones: a plan
  // orders the elements for one direction on this mesh, which set_field changes neither of.
  std::vector<transport::SweepPlan> kept_plans;
  double outer_rhs_norm = 0;  // the last gray solve's ||T(0)|| (GrayResult::rhs_norm)
};

// Per spectral point: spectral.csv (angular runs with a gas model).
void write_spectral_csv(const std::filesystem::path& path, const spectral::SpectralResult& r);
double peak_memory_mb();
// Results::fields: the node positions and the point arrays solution.vtu holds (with the medium's
// temperature where the case gives one).
void keep_fields(Setup& s, const transport::Discretization& disc, std::span<const output::PointField> pf, const problem::Medium& medium);
// A probe's CSV text: probes/<name>.csv when the run writes files, and its columns in Results::probes.
void keep_probe(Setup& s, const std::filesystem::path& dir, const std::string& name, const std::string& text);
// Results::wall_fields: the face-node positions, surface group and arrays of walls.vtu's faces.
void keep_wall_fields(Setup& s, const transport::Discretization& disc, const problem::Walls& walls,
                      std::span<const output::PointField> arrays);
void report_fields(Setup& s, const problem::Medium& m);  // field files read: the log and summary "fields"
std::vector<output::StringData> group_names(const mesh::TetMesh& mesh);
std::vector<output::CellField> element_fields(const mesh::TetMesh& mesh);
std::pair<int, int> mpi_rank_and_size();  // (0, 1) before MPI starts
nlohmann::json summary_header(const Setup& s);
// gather_seconds: the final gather's time, kept out of solve_seconds (negative: no gather).
void finish(Setup& s, nlohmann::json& summary, double setup_seconds, double solve_seconds, Clock::time_point t_out,
            double gather_seconds = -1);
// summary.json `spectral.soot` (a contract); null without soot.
nlohmann::json soot_summary(const gas::LoadedModel& model, const problem::Medium& medium);
// The case's spectral gas model. states: what the model will see.
gas::LoadedModel load_gas_model(Setup& s, std::span<const gas::GasState> states);

// The run kinds.
nlohmann::json run_directions(Setup& s, const RunOptions& opt, const Distributed* distributed = nullptr);  // `directions:`
nlohmann::json run_montecarlo(Setup& s, const RunOptions& opt);                                          // solver.method: montecarlo

}  // namespace dgrte::runner
