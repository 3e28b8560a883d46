#include "dgrte/runner.hpp"

#include "dgrte/device_backend.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "io/atomic_file.hpp"
#include "output/radiation_output.hpp"
#include "transport/krylov_solver.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <petscsys.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

namespace dgrte::runner {
// Per spectral point (a band of SNBCK/LBL, a gray gas of WSGG/SLW): its wavenumber interval, the
// power it deposits in the volume and its flux into each wall group; the columns sum to the totals.
void write_spectral_csv(const std::filesystem::path& path, const spectral::SpectralResult& r) {
  std::string text = "# one row per spectral point: wavenumber interval [cm^-1] (nan: none), integral of div q [W], wall "
                     "group fluxes [W] (q_in incident, q_net absorbed - emitted)\npoint,nu_lo_cm,nu_hi_cm,volume_divq_W";
  for (const auto& g : r.wall_groups) text += fmt::format(",{0}:q_in_W,{0}:q_net_W", g);
  text += "\n";
  for (const auto& p : r.points) {
    text += fmt::format("{},{:.10g},{:.10g},{:.10g}", p.point, p.nu_lo, p.nu_hi, p.volume_W);
    for (std::size_t g = 0; g < p.wall_q_in_W.size(); ++g) text += fmt::format(",{:.10g},{:.10g}", p.wall_q_in_W[g], p.wall_q_net_W[g]);
    text += "\n";
  }
  io::write_text_atomically(path, text);
}


double peak_memory_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kB
}



// Results::fields: the node positions and the point arrays solution.vtu holds.
// With the medium's temperature where the case gives one (solution.vtu has it for gas models only).
void keep_fields(Setup& s, const transport::Discretization& disc, std::span<const output::PointField> pf, const problem::Medium& medium) {
  auto& f = s.results.fields;
  f.clear();
  const std::size_t n = disc.num_dofs();
  std::vector<double> x(n), y(n), z(n);
  for (std::size_t k = 0; k < n; ++k) x[k] = disc.node_position[k][0], y[k] = disc.node_position[k][1], z[k] = disc.node_position[k][2];
  f["x"] = std::move(x), f["y"] = std::move(y), f["z"] = std::move(z);
  for (const auto& a : pf) f[a.name].assign(a.nodal.begin(), a.nodal.end());
  const auto& T = medium.temperature;
  if (!f.contains("temperature") && std::any_of(T.begin(), T.end(), [](double v) { return std::isfinite(v); })) f["temperature"] = T;
}

// A probe's CSV text: probes/<name>.csv when the run writes files, and its columns in
// Results::probes ("nan" where a point lies outside the mesh).
void keep_probe(Setup& s, const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  if (s.write_files) {
    std::filesystem::create_directories(dir / "probes");
    io::write_text_atomically(dir / "probes" / (name + ".csv"), text);
  }
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    return cells;
  };
  auto& table = s.results.probes[name];
  table.clear();
  std::vector<std::string> header;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() == '#') continue;
    const auto cells = split(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    if (cells.size() != header.size())
      throw std::logic_error(fmt::format("keep_probe: probe '{}' has a row of {} values under {} columns", name, cells.size(), header.size()));
    for (std::size_t k = 0; k < cells.size(); ++k) table[header[k]].push_back(std::strtod(cells[k].c_str(), nullptr));
  }
}

// Results::wall_fields: the face-node positions, surface group and arrays of walls.vtu's faces.
void keep_wall_fields(Setup& s, const transport::Discretization& disc, const problem::Walls& walls,
                      std::span<const output::PointField> arrays) {
  auto& f = s.results.wall_fields;
  f.clear();
  const std::size_t nfp = walls.face_nodes(), np = static_cast<std::size_t>(disc.num_nodes());
  std::vector<double> x, y, z, group;
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const auto [e, face] = walls.face(b);
    const int g = disc.mesh->boundary_group[e][static_cast<std::size_t>(face)];
    for (std::size_t j = 0; j < nfp; ++j) {
      const auto& p = disc.node_position[e * np + static_cast<std::size_t>(disc.ref.face_nodes[face][j])];
      x.push_back(p[0]), y.push_back(p[1]), z.push_back(p[2]);
      group.push_back(g >= 0 ? disc.mesh->surface_groups[static_cast<std::size_t>(g)].tag : -1);
    }
  }
  f["x"] = std::move(x), f["y"] = std::move(y), f["z"] = std::move(z), f["surface_group"] = std::move(group);
  for (const auto& a : arrays) f[a.name].assign(a.nodal.begin(), a.nodal.end());
}

// Field files (media.X.field): a summary record per entry, a log line per quantity (source range vs
// the nodes' range), and a warning where nodes outside the source took the closest value.
void report_fields(Setup& s, const problem::Medium& m) {
  for (const auto& fi : m.field_imports) {
    nlohmann::json arrays = nlohmann::json::object();
    s.log(fmt::format("  {}: {} ({}, {} source {}), {} nodes by {}", fi.where, fi.file, fi.info.source_kind, fi.info.source_points,
                      fi.info.source_kind == "cell data" ? "cells" : "points", fi.nodes, fi.info.method));
    for (std::size_t a = 0; a < fi.quantities.size(); ++a) {
      const auto& r = fi.info.ranges[a];
      arrays[fi.quantities[a]] = {{"array", r.name}, {"source_min", r.source_min}, {"source_max", r.source_max},
                                  {"node_min", r.sampled_min}, {"node_max", r.sampled_max}};
      s.log(fmt::format("    {} <- '{}': file [{:.6g}, {:.6g}], nodes [{:.6g}, {:.6g}]", fi.quantities[a], r.name, r.source_min,
                        r.source_max, r.sampled_min, r.sampled_max));
    }
    if (fi.info.outside > 0) {
      const auto& x = fi.info.first_outside;
      s.warnings.push_back(fmt::format("{}: {} of {} nodes lie outside {} (the first at ({:.6g}, {:.6g}, {:.6g})); they took the value "
                                       "at the closest point of the source (outside: nearest)",
                                       fi.where, fi.info.outside, fi.nodes, fi.file, x[0], x[1], x[2]));
    }
    nlohmann::json rec = {{"entry", fi.where},        {"file", fi.file},
                          {"source", fi.info.source_kind}, {"source_points", fi.info.source_points},
                          {"method", fi.info.method},  {"nodes", fi.nodes},
                          {"outside_nodes", fi.info.outside}, {"quantities", arrays}};
    if (fi.info.max_distance > 0) rec["max_distance"] = fi.info.max_distance;
    s.fields.push_back(rec);
  }
}

std::vector<output::StringData> group_names(const mesh::TetMesh& mesh) {
  output::StringData vol{"volume_group_names", {}}, surf{"surface_group_names", {}};
  for (const auto& g : mesh.volume_groups) vol.values.push_back(fmt::format("{}={}", g.tag, problem::group_label(g)));
  for (const auto& g : mesh.surface_groups) surf.values.push_back(fmt::format("{}={}", g.tag, problem::group_label(g)));
  return {vol, surf};
}

std::vector<output::CellField> element_fields(const mesh::TetMesh& mesh) {
  output::CellField id{"element_id", {}}, group{"volume_group", {}};
  for (std::size_t e = 0; e < mesh.num_elements(); ++e) {
    id.values.push_back(static_cast<double>(e));
    const int gi = mesh.tet_group[e];
    group.values.push_back(gi >= 0 ? mesh.volume_groups[static_cast<std::size_t>(gi)].tag : -1);
  }
  return {std::move(id), std::move(group)};
}

// Whether MPI runs with several processes, and this process's rank.
std::pair<int, int> mpi_rank_and_size() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) return {0, 1};
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  return {rank, size};
}

nlohmann::json summary_header(const Setup& s) {
  nlohmann::json summary;
  summary["dgrte_version"] = kVersion;
  summary["case"] = s.cs.file.string();
  nlohmann::json vg = nlohmann::json::array(), sg = nlohmann::json::array();
  for (const auto& gr : s.mesh.volume_groups) vg.push_back(problem::group_label(gr));
  for (const auto& gr : s.mesh.surface_groups) sg.push_back(problem::group_label(gr));
  summary["mesh"] = {{"file", s.mesh.source}, {"elements", s.disc.num_elements()}, {"vertices", s.mesh.vertices.size()},
                     {"volume_groups", vg}, {"surface_groups", sg}};
  summary["order"] = s.cs.order;
  summary["nodes_per_element"] = s.disc.num_nodes();
  summary["dofs"] = s.disc.num_dofs();
  summary["threads"] = omp_get_max_threads();
  summary["ranks"] = mpi_rank_and_size().second;
  if (!s.fields.empty()) summary["fields"] = s.fields;
  return summary;
}

// gather_seconds: the final gather's time, kept out of solve_seconds (negative: no gather).
void finish(Setup& s, nlohmann::json& summary, double setup_seconds, double solve_seconds, Clock::time_point t_out,
            double gather_seconds) {
  const auto& dir = s.cs.output.directory;
  for (const auto& option : transport::unused_petsc_options())
    s.warnings.push_back(fmt::format("PETSc option {} was not used by any solver of this run (misspelled, or for a solver "
                                     "this case does not use; `dgrte run CASE -help` lists the options)",
                                     option));
  for (std::size_t i = s.printed; i < s.warnings.size(); ++i) std::cerr << "warning: " << s.warnings[i] << "\n";
  summary["timing"] = {{"setup_seconds", setup_seconds}, {"solve_seconds", solve_seconds},
                       {"output_seconds", seconds_since(t_out)}, {"total_seconds", seconds_since(s.start)}};
  if (gather_seconds >= 0) summary["timing"]["gather_seconds"] = gather_seconds;
  summary["peak_memory_mb"] = peak_memory_mb();
  summary["warnings"] = s.warnings;
  s.results.summary = summary;
  if (!s.write_files) return;
  io::write_text_atomically(dir / "summary.json", summary.dump(2) + "\n");
  s.log(fmt::format("  wrote {} (total {:.2f} s)", (dir / "summary.json").string(), seconds_since(s.start)));
}

// summary.json `spectral.soot` (a contract): the soot's refractive-index model and its Rayleigh
// constant, how it is combined with the gas (gas/soot.hpp); null without soot.
nlohmann::json soot_summary(const gas::LoadedModel& model, const problem::Medium& medium) {
  if (model.soot) {
    nlohmann::json j{{"model", model.soot->optics.model}, {"constant", model.soot->optics.constant}};
    if (const auto* sooty = dynamic_cast<const gas::SootyModel*>(model.spectral.get()))
      j.update({{"treatment", sooty->treatment()}, {"soot_intervals", sooty->soot_intervals()}});
    return j;
  }
  if (model.spectral || medium.soot_fv.empty()) return nullptr;
  const auto optics = gas::soot_optics(gas::kDefaultSootOptics, "soot");
  return {{"model", optics.model}, {"constant", optics.constant}, {"treatment", "planck-mean, added to kappa (gray run)"}};
}

// The case's spectral gas model, or an empty one for a gray run.
// states: what the model will see (its default species are those present in them).
gas::LoadedModel load_gas_model(Setup& s, std::span<const gas::GasState> states) {
  gas::LoadedModel model;
  io::YamlMap section(*s.cs.model, "model", s.cs.file.string());
  model = gas::make_model(section, {}, states);
  if (!model.spectral)
    throw InputError(fmt::format("{}: model type '{}' is a transmissivity model, usable only by the 1-D slab solver; in 3-D use "
                                 "its k-distribution form (type: snbck) or another k-type model",
                                 section.where("type"), model.type));
  s.log(fmt::format("  gas model {}: {} spectral points", model.name(), model.spectral->num_spectral_points()));
  std::string why_not;
  if (const auto device = move_line_sums_to_device(model, choose_backend(s.cs.solver), &why_not); !device.empty())
    s.log(fmt::format("  line-by-line sums on {}", device));
  else if (!why_not.empty())
    s.warnings.push_back(fmt::format("{}: the line-by-line sums stay on the CPU: {}", s.cs.file.string(), why_not));
  return model;
}

}  // namespace dgrte::runner
