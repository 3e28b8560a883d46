#include "dgrte/distributed_run.hpp"

#include "common/error.hpp"
#include "parallel/global_order.hpp"

#include <fmt/format.h>
#include <petscsys.h>

#include <algorithm>
#include <unordered_map>

namespace dgrte::runner {
namespace {

// MPI_Gatherv of `count` items per rank (the items of rank r at offsets[r] on rank 0).
struct GatherLayout {
  std::vector<int> counts, offsets;
  int total = 0;
};

GatherLayout gather_layout(const Distributed& d, int count) {
  GatherLayout g;
  g.counts.resize(static_cast<std::size_t>(d.ranks));
  g.offsets.assign(static_cast<std::size_t>(d.ranks), 0);
  MPI_Gather(&count, 1, MPI_INT, g.counts.data(), 1, MPI_INT, 0, PETSC_COMM_WORLD);
  for (std::size_t r = 1; r < g.counts.size(); ++r) g.offsets[r] = g.offsets[r - 1] + g.counts[r - 1];
  g.total = d.rank == 0 ? g.offsets.back() + g.counts.back() : 0;
  return g;
}

GatherLayout scaled(GatherLayout g, std::size_t factor) {
  for (auto* v : {&g.counts, &g.offsets})
    for (auto& x : *v) x *= static_cast<int>(factor);
  g.total *= static_cast<int>(factor);
  return g;
}

}  // namespace

std::vector<double> gather_to_root(const Distributed& d, std::size_t np, std::span<const double> owned) {
  return parallel::gather_in_global_order(PETSC_COMM_WORLD, d.local, owned, np);
}

namespace {

// A wall face by its global element and local face number (the local mesh keeps every element's
// vertex order, so its face nodes come in the global order).
std::vector<long> wall_keys(const Distributed& d, const problem::Walls& walls) {
  std::vector<long> keys(walls.num_faces());
  for (std::size_t b = 0; b < keys.size(); ++b) {
    const auto [e, f] = walls.face(b);
    keys[b] = d.local.global_element[e] * 4 + f;  // ElementFace's packing, with the global element
  }
  return keys;
}

// Every rank's wall keys on rank 0 (layout per rank), and each key's face in the global walls.
struct WallLayout {
  GatherLayout layout, values;           // per face, and per face node
  std::vector<std::size_t> global_face;  // rank 0: per gathered key
};

WallLayout wall_layout(const Distributed& d, const std::vector<long>& keys, std::size_t nfp, const problem::Walls* global) {
  WallLayout w;
  w.layout = gather_layout(d, static_cast<int>(keys.size()));
  w.values = scaled(w.layout, nfp);
  std::vector<long> all(static_cast<std::size_t>(w.layout.total));
  MPI_Gatherv(keys.data(), static_cast<int>(keys.size()), MPI_LONG, all.data(), w.layout.counts.data(), w.layout.offsets.data(), MPI_LONG,
              0, PETSC_COMM_WORLD);
  if (d.rank != 0) return w;
  std::unordered_map<long, std::size_t> face_of;
  for (std::size_t b = 0; b < global->num_faces(); ++b) face_of[static_cast<long>(global->element_face(b))] = b;
  if (all.size() != global->num_faces())
    throw std::logic_error(fmt::format("distributed walls: the ranks hold {} wall faces, the mesh {}", all.size(), global->num_faces()));
  for (long key : all) {
    const auto it = face_of.find(key);
    if (it == face_of.end()) throw std::logic_error(fmt::format("distributed walls: face {} of a rank is no wall of the mesh", key));
    w.global_face.push_back(it->second);
  }
  return w;
}

}  // namespace

std::vector<double> gather_wall_values(const Distributed& d, const problem::Walls& local_walls, std::span<const double> values,
                                       const problem::Walls* global) {
  const std::size_t nfp = local_walls.face_nodes();
  const auto keys = wall_keys(d, local_walls);
  const auto w = wall_layout(d, keys, nfp, global);
  std::vector<double> all_values(static_cast<std::size_t>(w.values.total));
  MPI_Gatherv(values.data(), static_cast<int>(keys.size() * nfp), MPI_DOUBLE, all_values.data(), w.values.counts.data(),
              w.values.offsets.data(), MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  if (d.rank != 0) return {};
  std::vector<double> out(global->num_faces() * nfp, 0.0);
  for (std::size_t i = 0; i < w.global_face.size(); ++i)
    std::copy_n(all_values.begin() + static_cast<long>(i * nfp), nfp, out.begin() + static_cast<long>(w.global_face[i] * nfp));
  return out;
}

std::vector<double> scatter_wall_values(const Distributed& d, const problem::Walls& local_walls, std::span<const double> global_values,
                                        const problem::Walls* global) {
  const std::size_t nfp = local_walls.face_nodes();
  const auto keys = wall_keys(d, local_walls);
  const auto w = wall_layout(d, keys, nfp, global);
  std::vector<double> packed(static_cast<std::size_t>(w.values.total));
  for (std::size_t i = 0; i < w.global_face.size(); ++i)
    std::copy_n(global_values.begin() + static_cast<long>(w.global_face[i] * nfp), nfp, packed.begin() + static_cast<long>(i * nfp));
  std::vector<double> mine(keys.size() * nfp);
  MPI_Scatterv(packed.data(), w.values.counts.data(), w.values.offsets.data(), MPI_DOUBLE, mine.data(),
               static_cast<int>(mine.size()), MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  return mine;
}

solver::Collimated distribute_beams(const Distributed& d, const RootProblem* root, std::size_t np, const problem::Medium& local_medium,
                                    const problem::Walls& local_walls) {
  solver::Collimated out;
  const solver::Collimated* global = root ? root->beams : nullptr;
  const problem::Walls* global_walls = root ? root->walls : nullptr;
  int count = global ? static_cast<int>(global->beams.size()) : 0;
  MPI_Bcast(&count, 1, MPI_INT, 0, PETSC_COMM_WORLD);
  if (count == 0) return out;
  auto nodal = [&](const std::vector<double>* f) {
    return parallel::scatter_from_global_order(PETSC_COMM_WORLD, d.local, f ? std::span<const double>(*f) : std::span<const double>(), np);
  };
  auto walls = [&](const std::vector<double>* f) {
    return scatter_wall_values(d, local_walls, f ? std::span<const double>(*f) : std::span<const double>(), global_walls);
  };
  auto broadcast = [](auto& v, MPI_Datatype type) {
    int size = static_cast<int>(v.size());
    MPI_Bcast(&size, 1, MPI_INT, 0, PETSC_COMM_WORLD);
    v.resize(static_cast<std::size_t>(size));
    MPI_Bcast(v.data(), size, type, 0, PETSC_COMM_WORLD);
  };
  // The media entry of each of rank 0's operators, to renumber the weights [op * M + m].
  std::vector<int> global_entries = root ? root->medium->entry_of_operator : std::vector<int>();
  broadcast(global_entries, MPI_INT);
  for (int k = 0; k < count; ++k) {
    const solver::CollimatedBeam* g = global ? &global->beams[static_cast<std::size_t>(k)] : nullptr;
    solver::CollimatedBeam b;
    if (g) b.direction = g->direction, b.generation = g->generation;
    std::vector<double> weights = g ? g->scatter_weight : std::vector<double>();
    MPI_Bcast(b.direction.data(), 3, MPI_DOUBLE, 0, PETSC_COMM_WORLD);
    MPI_Bcast(&b.generation, 1, MPI_INT, 0, PETSC_COMM_WORLD);
    broadcast(weights, MPI_DOUBLE);
    const std::size_t M = global_entries.empty() ? 0 : weights.size() / global_entries.size();
    for (const int entry : local_medium.entry_of_operator) {
      const auto it = std::find(global_entries.begin(), global_entries.end(), entry);
      if (it == global_entries.end()) throw std::logic_error("distribute_beams: a medium scatters on a rank but not on the whole mesh");
      const auto op = static_cast<std::size_t>(it - global_entries.begin());
      b.scatter_weight.insert(b.scatter_weight.end(), weights.begin() + static_cast<long>(op * M), weights.begin() + static_cast<long>((op + 1) * M));
    }
    b.F = nodal(g ? &g->F : nullptr);
    out.beams.push_back(std::move(b));
  }
  out.G = nodal(global ? &global->G : nullptr);
  out.qx = nodal(global ? &global->qx : nullptr);
  out.qy = nodal(global ? &global->qy : nullptr);
  out.qz = nodal(global ? &global->qz : nullptr);
  out.q_in = walls(global ? &global->q_in : nullptr);
  out.q_out = walls(global ? &global->q_out : nullptr);
  out.diffuse_irradiation = walls(global ? &global->diffuse_irradiation : nullptr);
  return out;
}

nlohmann::json parallel_record(const Distributed& d, double setup_seconds, double solve_seconds, nlohmann::json record) {
  const double mine[4] = {static_cast<double>(d.local.num_owned), static_cast<double>(d.local.num_ghosts()), setup_seconds, solve_seconds};
  std::vector<double> all(4 * static_cast<std::size_t>(d.ranks));
  MPI_Gather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  nlohmann::json per_rank = nlohmann::json::array();
  double max_owned = 0, max_solve = 0, sum_solve = 0;
  for (int r = 0; r < d.ranks; ++r) {
    const double* a = &all[4 * static_cast<std::size_t>(r)];
    per_rank.push_back({{"rank", r}, {"owned_elements", a[0]}, {"ghost_elements", a[1]}, {"setup_seconds", a[2]}, {"solve_seconds", a[3]}});
    max_owned = std::max(max_owned, a[0]), max_solve = std::max(max_solve, a[3]), sum_solve += a[3];
  }
  const double mean_owned = static_cast<double>(d.local.global_elements) / d.ranks;
  record.update({{"ranks", d.ranks},
                 {"partitioner", d.partitioner},
                 {"element_imbalance", mean_owned > 0 ? max_owned / mean_owned : 1.0},
                 {"solve_time_imbalance", sum_solve > 0 ? max_solve / (sum_solve / d.ranks) : 1.0},
                 {"per_rank", per_rank}});
  return record;
}

}  // namespace dgrte::runner
