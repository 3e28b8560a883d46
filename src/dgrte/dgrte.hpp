#pragma once
// dgrte's public C++ API (docs/library.md): a case file -> Solver -> solve() -> Results.
// The command line (src/app), the C API (src/capi, dgrte.h) and the Python module (src/python) are
// clients of this header; they do not reach into the layers below.
#include "mc/final_gather.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dgrte {

struct RunOptions {
  std::filesystem::path case_file;
  std::optional<std::filesystem::path> output_directory;  // overrides output.directory (-o)
  // false: nothing is written (no output directory, no summary.json); the summary and the fields
  // come back in Results only.
  bool write_files = true;
  std::optional<bool> linear_vtk;                         // --linear
  bool progress = false;                                  // progress line on a terminal
  bool quiet = false;                                     // no log lines on stdout (warnings still go to stderr)
  std::optional<std::string> backend;                     // --backend overrides solver.backend
  // The final gather's arrays, each gather's (dgrte export of a case with output.final_gather).
  std::function<void(const mc::GatherArrays&, const std::string& host_only)> gather_arrays = {};
};

// What one solve returns. Under mpirun only rank 0's Results are filled (the other ranks' are empty).
struct Results {
  nlohmann::json summary;  // what summary.json holds
  // At the DG nodes (index e * N_p + i of the run's last mesh and order): the point arrays that
  // solution.vtu holds (G, qx, qy, qz, divq, kappa or the gas state, ...) and the node positions
  // x, y, z; "temperature" where the case gives one (NaN at nodes whose medium gives Ib instead).
  std::map<std::string, std::vector<double>> fields;
  // At the nodes of every wall face (face b's node j at b * N_fp + j, the faces of walls.vtu):
  // x, y, z, q_in, q_net, q_out, q_emitted, G, temperature, and the surface group tag.
  std::map<std::string, std::vector<double>> wall_fields;
  // Per probe of output.probes (by name): the columns of probes/<name>.csv (x, y, z, distance, then
  // G, qx, ..., divq or q_in, q_net, ...; Monte Carlo adds *_stderr), NaN where a point is outside.
  std::map<std::string, std::map<std::string, std::vector<double>>> probes;
};

// Quantities Solver::set_field accepts: they replace the case's value (expression or field file) of
// that quantity in every medium entry, at the nodes and, interpolated, at the property points.
const std::vector<std::string>& settable_fields();

// A case kept between solves: the mesh and discretisation are built once; each solve() starts its
// outer iteration from the previous solve's intensities (a warm start), for gray and spectral runs.
class Solver {
 public:
  explicit Solver(RunOptions options);  // reads the case file and the mesh (InputError on bad input)
  ~Solver();
  Solver(Solver&&) noexcept;
  Solver& operator=(Solver&&) noexcept;

  Results solve();

  // The number of DG nodes (the length of every array in Results::fields and of set_field's values).
  std::size_t num_nodes() const;
  std::vector<std::array<double, 3>> node_positions() const;
  // values at the DG nodes (num_nodes()); name one of settable_fields(). InputError otherwise.
  void set_field(const std::string& name, std::span<const double> values);
  // The same from the caller's own points (a CFD code's cell centres or nodes): the values are
  // carried to the DG nodes as a CSV point cloud's are (inverse-distance weighting of the 8 nearest
  // points; a node farther than 2 x the cloud's largest point spacing from every point is an
  // InputError, docs/case-file.md "Field files").
  void set_field_at_points(const std::string& name, std::span<const std::array<double, 3>> points, std::span<const double> values);
  void clear_fields();
  // A nodal field (one of Results::fields) evaluated at points through the DG polynomials (NaN for a
  // point outside the mesh): e.g. div q at a CFD code's cell centres.
  std::vector<double> interpolate(std::span<const double> nodal, std::span<const std::array<double, 3>> points) const;
  // Forget the previous solution: the next solve starts from zero (a cold start).
  void reset_warm_start();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One solve of a case (Solver(options).solve()).
Results run(const RunOptions& options);

// `dgrte run`: run(options).summary.
nlohmann::json run_case(const RunOptions& options);

}  // namespace dgrte
