#pragma once
// What a run under mpirun shares between its kinds (docs/parallel.md): this rank's piece of the
// mesh, the gathers that bring the owned results to rank 0 (which writes every output, as a
// one-process run does), and the "parallel" record of summary.json.
#include "parallel/local_mesh.hpp"
#include "gas/spectral_model.hpp"
#include "problem/problem.hpp"
#include "solver/collimated.hpp"
#include "spectral/spectral_solver.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace dgrte::runner {

struct Distributed {
  parallel::LocalMesh local;
  std::string partitioner;
  int rank = 0, ranks = 1;
};

// The owned values of every rank (elements x np each) in the global element order, on rank 0
// (empty elsewhere). Collective.
std::vector<double> gather_to_root(const Distributed& d, std::size_t np, std::span<const double> owned);

// Per-face-node wall values of every rank (its walls: those of its owned elements, in its Walls
// order) in the order of the global walls `global` (rank 0; null elsewhere), on rank 0. Collective.
std::vector<double> gather_wall_values(const Distributed& d, const problem::Walls& local_walls, std::span<const double> values,
                                       const problem::Walls* global);

// The inverse: rank 0's values in the global walls' order sent to every rank for its walls. Collective.
std::vector<double> scatter_wall_values(const Distributed& d, const problem::Walls& local_walls, std::span<const double> global_values,
                                        const problem::Walls* global);

// What rank 0 holds of the whole problem (null elsewhere): the medium, walls and collimated beams of
// the global mesh, and the gas model it loaded. A nongray run's error indicator: the order p + 1
// companion of the global mesh (its problem is built for each spectral point beside rank 0's piece),
// and what rank 0 does with each point's solution gathered from every rank (the whole mesh's
// intensities, G and walls' G; coupling_unknowns: the point's) together with the point's companion
// problem.
struct RootProblem {
  const problem::Medium* medium = nullptr;
  const problem::Walls* walls = nullptr;
  const solver::Collimated* beams = nullptr;
  gas::SpectralModel* model = nullptr;
  const spectral::SpectralCompanion* companion = nullptr;
  std::function<void(const solver::GrayResult& gathered, const spectral::PointProblem* companion)> point_gathered;
  // Adaptive refinement of a nongray run: each point's start on the whole mesh (empty: from zero),
  // sent to the ranks as the point comes up (spectral::SpectralOptions::point_start).
  std::function<std::vector<std::vector<double>>(int j)> point_start;
};

// Rank 0's collimated beams (solved on the whole mesh) as every rank's solve needs them: the beams'
// flux densities, G and q on its local elements (owned and ghosts), the beam fluxes and diffuse
// irradiation on its walls, and the scattering weights renumbered to the rank's own operators (a
// rank has operators only for the media that scatter in its piece). Collective.
solver::Collimated distribute_beams(const Distributed& d, const RootProblem* root, std::size_t np, const problem::Medium& local_medium,
                                    const problem::Walls& local_walls);

// "parallel" of summary.json: `record` plus the ranks, the partitioner, per rank its owned and ghost
// elements, setup and solve seconds, and the element and solve-time imbalance (max / mean). Collective;
// meaningful on rank 0.
nlohmann::json parallel_record(const Distributed& d, double setup_seconds, double solve_seconds, nlohmann::json record);

}  // namespace dgrte::runner
