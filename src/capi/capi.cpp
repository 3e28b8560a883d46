// The C API (dgrte.h) over the public C++ API (dgrte/dgrte.hpp): exceptions become status codes and
// a per-thread message; nothing is printed.
#include "capi/dgrte.h"

#include "common/error.hpp"
#include "dgrte/dgrte.hpp"
#include "transport/krylov_solver.hpp"

#include <fmt/format.h>

#include <array>
#include <exception>
#include <optional>
#include <string>

struct dgrte_solver {
  dgrte::Solver solver;
  std::optional<dgrte::Results> results;  // the last solve's
  std::string summary_text;
};

namespace {

thread_local std::string last_error;

// Runs body; an exception becomes its status and last_error.
template <class Body>
int guarded(Body&& body) {
  last_error.clear();
  try {
    body();
    return DGRTE_OK;
  } catch (const dgrte::InputError& e) {
    last_error = e.what();
    return DGRTE_INPUT_ERROR;
  } catch (const dgrte::SolverError& e) {
    last_error = e.what();
    return DGRTE_SOLVER_ERROR;
  } catch (const std::exception& e) {
    last_error = e.what();
    return DGRTE_INTERNAL_ERROR;
  } catch (...) {
    last_error = "unknown exception";
    return DGRTE_INTERNAL_ERROR;
  }
}

void require(bool ok, const char* what) {
  if (!ok) throw dgrte::InputError(what);
}

const dgrte::Results& results_of(const dgrte_solver* s) {
  if (!s->results) throw dgrte::InputError("no solution yet: call dgrte_solver_solve first");
  return *s->results;
}

const std::vector<double>& field_of(const dgrte_solver* s, const char* name) {
  require(name != nullptr, "field name is NULL");
  const auto& f = results_of(s).fields;
  const auto it = f.find(name);
  if (it == f.end()) {
    std::string names;
    for (const auto& [n, v] : f) names += (names.empty() ? "" : ", ") + n;
    throw dgrte::InputError(fmt::format("no field '{}' in the solution; it has {}", name, names));
  }
  return it->second;
}

std::vector<std::array<double, 3>> points_of(const double* xyz, size_t count) {
  require(xyz != nullptr || count == 0, "xyz is NULL");
  std::vector<std::array<double, 3>> p(count);
  for (size_t i = 0; i < count; ++i) p[i] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
  return p;
}

}  // namespace

extern "C" {

const char* dgrte_last_error(void) { return last_error.c_str(); }

int dgrte_solver_create(const char* case_file, MPI_Comm comm, const char* output_directory, dgrte_solver** solver) {
  return guarded([&] {
    require(case_file != nullptr && solver != nullptr, "dgrte_solver_create: case_file and solver must not be NULL");
    *solver = nullptr;
    dgrte::transport::ensure_petsc(&comm);
    dgrte::RunOptions options;
    options.case_file = case_file;
    options.quiet = true;
    options.write_files = output_directory != nullptr;
    if (output_directory) options.output_directory = output_directory;
    *solver = new dgrte_solver{dgrte::Solver(std::move(options)), std::nullopt, {}};
  });
}

int dgrte_solver_free(dgrte_solver* solver) {
  return guarded([&] { delete solver; });
}

int dgrte_finalize(void) {
  return guarded([] { dgrte::transport::finalize_petsc(); });
}

int dgrte_solver_num_nodes(const dgrte_solver* solver, size_t* count) {
  return guarded([&] {
    require(solver && count, "dgrte_solver_num_nodes: NULL argument");
    *count = solver->solver.num_nodes();
  });
}

int dgrte_solver_node_positions(const dgrte_solver* solver, double* xyz) {
  return guarded([&] {
    require(solver && xyz, "dgrte_solver_node_positions: NULL argument");
    const auto p = solver->solver.node_positions();
    for (size_t i = 0; i < p.size(); ++i)
      for (int d = 0; d < 3; ++d) xyz[3 * i + static_cast<size_t>(d)] = p[i][static_cast<size_t>(d)];
  });
}

int dgrte_solver_set_field(dgrte_solver* solver, const char* name, const double* values, size_t count) {
  return guarded([&] {
    require(solver && name && (values || count == 0), "dgrte_solver_set_field: NULL argument");
    solver->solver.set_field(name, {values, count});
  });
}

int dgrte_solver_set_field_at_points(dgrte_solver* solver, const char* name, const double* xyz, const double* values, size_t count) {
  return guarded([&] {
    require(solver && name && (values || count == 0), "dgrte_solver_set_field_at_points: NULL argument");
    const auto p = points_of(xyz, count);
    solver->solver.set_field_at_points(name, p, {values, count});
  });
}

int dgrte_solver_solve(dgrte_solver* solver) {
  return guarded([&] {
    require(solver != nullptr, "dgrte_solver_solve: solver is NULL");
    solver->results.reset();
    solver->results = solver->solver.solve();
    solver->summary_text = solver->results->summary.dump(2);
  });
}

int dgrte_solver_get_field(const dgrte_solver* solver, const char* name, double* values, size_t count) {
  return guarded([&] {
    require(solver && values, "dgrte_solver_get_field: NULL argument");
    const auto& f = field_of(solver, name);
    if (count != f.size())
      throw dgrte::InputError(fmt::format("dgrte_solver_get_field('{}'): room for {} values, the field has {} (num_nodes)", name, count, f.size()));
    std::copy(f.begin(), f.end(), values);
  });
}

int dgrte_solver_get_field_at_points(const dgrte_solver* solver, const char* name, const double* xyz, size_t count, double* values) {
  return guarded([&] {
    require(solver && (values || count == 0), "dgrte_solver_get_field_at_points: NULL argument");
    const auto p = points_of(xyz, count);
    const auto v = solver->solver.interpolate(field_of(solver, name), p);
    std::copy(v.begin(), v.end(), values);
  });
}

int dgrte_solver_get_probe(const dgrte_solver* solver, const char* probe, const char* column, double* values, size_t* count) {
  return guarded([&] {
    require(solver && probe && column && count, "dgrte_solver_get_probe: NULL argument");
    const auto& probes = results_of(solver).probes;
    const auto it = probes.find(probe);
    if (it == probes.end()) {
      std::string names;
      for (const auto& [n, v] : probes) names += (names.empty() ? "" : ", ") + n;
      throw dgrte::InputError(fmt::format("dgrte_solver_get_probe: no probe '{}'; the case's probes are: {}", probe, names.empty() ? "none" : names));
    }
    const auto col = it->second.find(column);
    if (col == it->second.end()) {
      std::string names;
      for (const auto& [n, v] : it->second) names += (names.empty() ? "" : ", ") + n;
      throw dgrte::InputError(fmt::format("dgrte_solver_get_probe('{}'): no column '{}'; it has {}", probe, column, names));
    }
    const auto& v = col->second;
    if (values) {
      if (*count < v.size())
        throw dgrte::InputError(fmt::format("dgrte_solver_get_probe('{}', '{}'): room for {} values, the probe has {} points", probe, column,
                                            *count, v.size()));
      std::copy(v.begin(), v.end(), values);
    }
    *count = v.size();
  });
}

int dgrte_solver_wall_group(const dgrte_solver* solver, const char* group, double* q_in_W, double* q_net_W) {
  return guarded([&] {
    require(solver && group, "dgrte_solver_wall_group: NULL argument");
    const auto& walls = results_of(solver).summary.at("walls");
    if (!walls.contains(group)) {
      std::string names;
      for (const auto& [n, v] : walls.items()) names += (names.empty() ? "" : ", ") + n;
      throw dgrte::InputError(fmt::format("dgrte_solver_wall_group: no wall group '{}'; the walls are {}", group, names));
    }
    if (q_in_W) *q_in_W = walls[group].at("q_in_W").get<double>();
    if (q_net_W) *q_net_W = walls[group].at("q_net_W").get<double>();
  });
}

int dgrte_solver_summary(const dgrte_solver* solver, const char** json) {
  return guarded([&] {
    require(solver && json, "dgrte_solver_summary: NULL argument");
    results_of(solver);
    *json = solver->summary_text.c_str();
  });
}

}  // extern "C"
