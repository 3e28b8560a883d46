#include "app/distributed_run.hpp"

#include "common/error.hpp"

#include <fmt/format.h>
#include <petscsys.h>

#include <algorithm>
#include <unordered_map>

namespace dgrte::app {
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
  const int n_owned = static_cast<int>(d.local.num_owned);
  const auto layout = gather_layout(d, n_owned);
  std::vector<long> ids(static_cast<std::size_t>(layout.total));
  MPI_Gatherv(d.local.global_element.data(), n_owned, MPI_LONG, ids.data(), layout.counts.data(), layout.offsets.data(), MPI_LONG, 0,
              PETSC_COMM_WORLD);
  const auto values_layout = scaled(layout, np);
  std::vector<double> values(static_cast<std::size_t>(values_layout.total));
  MPI_Gatherv(owned.data(), n_owned * static_cast<int>(np), MPI_DOUBLE, values.data(), values_layout.counts.data(),
              values_layout.offsets.data(), MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  std::vector<double> global;
  if (d.rank == 0) {
    global.assign(d.local.global_elements * np, 0.0);
    for (std::size_t i = 0; i < ids.size(); ++i)
      std::copy_n(values.begin() + static_cast<long>(i * np), np, global.begin() + static_cast<long>(static_cast<std::size_t>(ids[i]) * np));
  }
  return global;
}

std::vector<double> gather_wall_values(const Distributed& d, const problem::Walls& local_walls, std::span<const double> values,
                                       const problem::Walls* global) {
  const std::size_t nfp = local_walls.face_nodes(), faces = local_walls.num_faces();
  // A face is named by its global element and local face number (the local mesh keeps every
  // element's vertex order, so its face nodes come in the global order).
  std::vector<long> keys(faces);
  for (std::size_t b = 0; b < faces; ++b) {
    const std::size_t ef = local_walls.element_face(b);
    keys[b] = d.local.global_element[ef / 4] * 4 + static_cast<long>(ef % 4);
  }
  const auto layout = gather_layout(d, static_cast<int>(faces));
  std::vector<long> all_keys(static_cast<std::size_t>(layout.total));
  MPI_Gatherv(keys.data(), static_cast<int>(faces), MPI_LONG, all_keys.data(), layout.counts.data(), layout.offsets.data(), MPI_LONG, 0,
              PETSC_COMM_WORLD);
  const auto values_layout = scaled(layout, nfp);
  std::vector<double> all_values(static_cast<std::size_t>(values_layout.total));
  MPI_Gatherv(values.data(), static_cast<int>(faces * nfp), MPI_DOUBLE, all_values.data(), values_layout.counts.data(),
              values_layout.offsets.data(), MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  if (d.rank != 0) return {};
  std::unordered_map<long, std::size_t> face_of;
  for (std::size_t b = 0; b < global->num_faces(); ++b) face_of[static_cast<long>(global->element_face(b))] = b;
  if (all_keys.size() != global->num_faces())
    throw std::logic_error(fmt::format("gather_wall_values: the ranks hold {} wall faces, the mesh {}", all_keys.size(), global->num_faces()));
  std::vector<double> out(global->num_faces() * nfp, 0.0);
  for (std::size_t i = 0; i < all_keys.size(); ++i) {
    const auto it = face_of.find(all_keys[i]);
    if (it == face_of.end()) throw std::logic_error(fmt::format("gather_wall_values: face {} of a rank is no wall of the mesh", all_keys[i]));
    std::copy_n(all_values.begin() + static_cast<long>(i * nfp), nfp, out.begin() + static_cast<long>(it->second * nfp));
  }
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

}  // namespace dgrte::app
