#include "app/run_case.hpp"

#include "backend/cpu_transport.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "io/atomic_file.hpp"
#include "io/case_file.hpp"
#include "io/vtk_output.hpp"
#include "mesh/tet_mesh.hpp"
#include "transport/discretization.hpp"
#include "transport/field_evaluation.hpp"
#include "transport/krylov_solver.hpp"
#include "transport/upwind_operator.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

namespace dgrte::app {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string group_label(const mesh::PhysicalGroup& g) { return g.name.empty() ? fmt::format("#{}", g.tag) : g.name; }

// Which case-file entry (by index) serves each physical group; "*" covers the rest. Entries that
// name no group of the mesh, and groups with no entry, are errors.
template <typename Spec>
std::vector<int> match_groups(const std::vector<mesh::PhysicalGroup>& groups, const std::vector<Spec>& specs,
                              const std::string& section, const std::string& what, const io::CaseSpec& cs,
                              bool need_ungrouped) {
  int star = -1;
  std::map<std::string, int> by_name;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].group == "*") star = static_cast<int>(i);
    else by_name[specs[i].group] = static_cast<int>(i);
  }
  std::string available;
  for (const auto& g : groups) available += (available.empty() ? "" : ", ") + group_label(g);
  for (const auto& [name, i] : by_name) {
    const bool found = std::any_of(groups.begin(), groups.end(), [&](const auto& g) { return group_label(g) == name; });
    if (!found)
      throw InputError(fmt::format("{}: {}.{}: the mesh has no {} physical group '{}' (it has: {})", cs.file.string(),
                                   section, name, what, name, available.empty() ? "none" : available));
  }
  std::vector<int> out;
  for (const auto& g : groups) {
    const auto it = by_name.find(group_label(g));
    const int idx = it != by_name.end() ? it->second : star;
    if (idx < 0)
      throw InputError(fmt::format("{}: {}: the {} physical group '{}' of the mesh has no entry; add '{}:' or '\"*\":' under {}",
                                   cs.file.string(), section, what, group_label(g), group_label(g), section));
    out.push_back(idx);
  }
  if (need_ungrouped && star < 0)
    throw InputError(fmt::format("{}: {}: some elements belong to no {} physical group; add a '\"*\":' entry under {}",
                                 cs.file.string(), section, what, section));
  out.push_back(star);  // last entry: for elements in no group
  return out;
}

double peak_memory_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kB
}

void write_probes(const std::filesystem::path& dir, const io::CaseSpec& cs, const transport::Discretization& disc,
                  const std::vector<std::vector<double>>& fields, std::vector<std::string>& warnings) {
  if (cs.output.probes.empty()) return;
  std::filesystem::create_directories(dir / "probes");
  const transport::PointLocator locator(disc);
  for (const auto& probe : cs.output.probes) {
    std::string text = "x,y,z";
    for (std::size_t d = 0; d < fields.size(); ++d) text += fmt::format(",I_{}", d);
    text += "\n";
    int outside = 0;
    for (int i = 0; i < probe.points; ++i) {
      const double t = probe.points > 1 ? static_cast<double>(i) / (probe.points - 1) : 0.0;
      const transport::Vec3 x{probe.from[0] + t * (probe.to[0] - probe.from[0]), probe.from[1] + t * (probe.to[1] - probe.from[1]),
                              probe.from[2] + t * (probe.to[2] - probe.from[2])};
      text += fmt::format("{:.10g},{:.10g},{:.10g}", x[0], x[1], x[2]);
      const auto loc = locator.locate(x);
      if (!loc) ++outside;
      for (const auto& u : fields) text += loc ? fmt::format(",{:.12g}", locator.evaluate(*loc, u)) : std::string(",nan");
      text += "\n";
    }
    if (outside)
      warnings.push_back(fmt::format("probe '{}': {} of {} points lie outside the mesh (written as nan)", probe.name, outside, probe.points));
    io::write_text_atomically(dir / "probes" / (probe.name + ".csv"), text);
  }
}

}  // namespace

nlohmann::json run_case(const RunOptions& opt) {
  const auto t_start = Clock::now();
  auto cs = io::read_case(opt.case_file);
  if (opt.output_directory) cs.output.directory = *opt.output_directory;
  if (opt.linear_vtk) cs.output.linear = *opt.linear_vtk;
  auto log = [&](const std::string& s) {
    if (!opt.quiet) std::cout << s << std::endl;
  };
  std::vector<std::string> warnings = cs.warnings;
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";

  // Mesh and its groups.
  const mesh::TetMesh mesh = cs.mesh.file.empty() ? mesh::mesh_geo(cs.mesh.geo, cs.mesh.size) : mesh::read_mesh(cs.mesh.file);
  const bool ungrouped = std::any_of(mesh.tet_group.begin(), mesh.tet_group.end(), [](int g) { return g < 0; });
  const auto medium_of_group = match_groups(mesh.volume_groups, cs.media, "media", "volume", cs, ungrouped);
  const auto boundary_of_group = match_groups(mesh.surface_groups, cs.boundaries, "boundaries", "surface", cs, false);
  log(fmt::format("dgrte {}: case {} — {} tets, order {}, {} direction(s)", kVersion, cs.file.string(), mesh.num_elements(),
                  cs.order, cs.directions.size()));

  const auto disc = transport::make_discretization(mesh, cs.order);
  const std::size_t K = disc.num_elements(), np = disc.num_nodes(), nfp = disc.ref.num_face_nodes, n = disc.num_dofs();

  auto medium_of = [&](std::size_t e) -> const io::MediumSpec& {
    const int g = mesh.tet_group[e];
    return cs.media[static_cast<std::size_t>(medium_of_group[g >= 0 ? static_cast<std::size_t>(g) : medium_of_group.size() - 1])];
  };
  // Direction-independent nodal data: kappa and kappa * Ib.
  std::vector<double> kappa(n), emission(n);
  for (std::size_t e = 0; e < K; ++e) {
    const auto& m = medium_of(e);
    for (std::size_t i = 0; i < np; ++i) {
      const auto& x = disc.node_position[e * np + i];
      const double k = m.kappa(x);
      if (!(k >= 0) || !std::isfinite(k))
        throw InputError(fmt::format("{}: media.{}.kappa = {} at ({:.4g}, {:.4g}, {:.4g}): the absorption coefficient must be finite and >= 0",
                                     cs.file.string(), m.group, k, x[0], x[1], x[2]));
      double ib;
      if (m.blackbody_intensity) {
        ib = (*m.blackbody_intensity)(x);
      } else {
        const double T = (*m.temperature)(x);
        ib = io::kStefanBoltzmann * std::pow(T, 4) / io::kPi;
      }
      kappa[e * np + i] = k;
      emission[e * np + i] = k * ib;
    }
  }
  const std::size_t budget = static_cast<std::size_t>(cs.solver.preconditioner_memory_mb * 1024.0 * 1024.0);
  backend::CpuTransport op(disc, budget);
  const auto blocks = cs.solver.preconditioner == io::Preconditioner::none           ? backend::BlockKind::none
                      : cs.solver.preconditioner == io::Preconditioner::block_jacobi ? backend::BlockKind::full
                                                                                     : backend::BlockKind::partial;
  const double setup_seconds = seconds_since(t_start);

  // One solve per direction.
  std::vector<std::vector<double>> solutions;
  nlohmann::json solves = nlohmann::json::array();
  double solve_seconds = 0;
  std::size_t preconditioner_bytes = 0;
  std::vector<double> rhs(n), g(K * 4 * nfp);
  for (std::size_t d = 0; d < cs.directions.size(); ++d) {
    const auto& s = cs.directions[d];
    const auto t0 = Clock::now();
    op.set_direction(s, kappa, blocks);
    preconditioner_bytes = std::max(preconditioner_bytes, op.preconditioner_bytes());
    for (std::size_t e = 0; e < K; ++e) {
      const auto& m = medium_of(e);
      for (std::size_t i = 0; i < np; ++i) rhs[e * np + i] = emission[e * np + i] + m.source(disc.node_position[e * np + i], s);
      for (int f = 0; f < 4; ++f) {
        if (mesh.neighbour[e][f] >= 0 || op.coefficients().inflow[e][f] == 0.0) continue;
        const auto& b = cs.boundaries[static_cast<std::size_t>(boundary_of_group[static_cast<std::size_t>(mesh.boundary_group[e][f])])];
        for (std::size_t j = 0; j < nfp; ++j) {
          const auto& x = disc.node_position[e * np + static_cast<std::size_t>(disc.ref.face_nodes[f][j])];
          g[(e * 4 + f) * nfp + j] = b.type == io::BoundaryType::black
                                         ? io::kStefanBoltzmann * std::pow(b.temperature, 4) / io::kPi
                                         : (*b.intensity)(x, s);
        }
      }
    }
    transport::add_boundary_inflow(disc, op.coefficients(), g, rhs);
    std::vector<double> u(n, 0.0);
    transport::KrylovOptions ko;
    ko.rtol = cs.solver.rtol;
    ko.max_iterations = cs.solver.max_iterations;
    ko.precondition = blocks != backend::BlockKind::none;
    ko.progress = opt.progress;
    ko.label = fmt::format("direction {} ({:.5g}, {:.5g}, {:.5g})", d, s[0], s[1], s[2]);
    const auto res = transport::solve_bicgstab(op, rhs, u, ko);
    const double sec = seconds_since(t0);
    solve_seconds += sec;
    log(fmt::format("  {}: {} iterations, relative residual {:.2e}, {:.3f} s", ko.label, res.iterations, res.relative_residual, sec));
    solves.push_back({{"direction", {s[0], s[1], s[2]}}, {"iterations", res.iterations},
                      {"relative_residual", res.relative_residual}, {"converged", res.converged}, {"seconds", sec},
                      {"krylov_seconds", res.seconds}, {"reason", res.reason}});
    solutions.push_back(std::move(u));
  }

  nlohmann::json summary;
  summary["dgrte_version"] = kVersion;
  summary["case"] = cs.file.string();
  nlohmann::json vg = nlohmann::json::array(), sg = nlohmann::json::array();
  for (const auto& gr : mesh.volume_groups) vg.push_back(group_label(gr));
  for (const auto& gr : mesh.surface_groups) sg.push_back(group_label(gr));
  summary["mesh"] = {{"file", mesh.source}, {"elements", K}, {"vertices", mesh.vertices.size()}, {"volume_groups", vg}, {"surface_groups", sg}};
  summary["order"] = cs.order;
  summary["nodes_per_element"] = np;
  summary["dofs"] = n;
  summary["directions"] = cs.directions.size();
  summary["solver"] = {{"method", cs.solver.method}, {"preconditioner", io::to_string(cs.solver.preconditioner)},
                       {"rtol", cs.solver.rtol}, {"max_iterations", cs.solver.max_iterations},
                       {"preconditioner_bytes", preconditioner_bytes},
                       {"preconditioner_blocks_cached", preconditioner_bytes > 0 || blocks == backend::BlockKind::none}};
  summary["solves"] = solves;

  // Errors against the exact solution, over all directions.
  std::vector<io::CellField> cell_fields;
  {
    io::CellField id{"element_id", {}}, group{"volume_group", {}};
    for (std::size_t e = 0; e < K; ++e) {
      id.values.push_back(static_cast<double>(e));
      const int gi = mesh.tet_group[e];
      group.values.push_back(gi >= 0 ? mesh.volume_groups[static_cast<std::size_t>(gi)].tag : -1);
    }
    cell_fields.push_back(std::move(id));
    cell_fields.push_back(std::move(group));
  }
  if (cs.exact) {
    double err2 = 0, ex2 = 0, linf = 0;
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t d = 0; d < solutions.size(); ++d) {
      const auto& s = cs.directions[d];
      const auto norms = transport::error_norms(disc, solutions[d], [&](const transport::Vec3& x) { return (*cs.exact)(x, s); });
      err2 += norms.l2 * norms.l2;
      ex2 += norms.exact_l2 * norms.exact_l2;
      linf = std::max(linf, norms.linf);
      per.push_back({{"l2", norms.l2}, {"linf", norms.linf}, {"relative_l2", norms.relative_l2}});
      solves[d]["error"] = per.back();
      cell_fields.push_back({fmt::format("error_{}", d), norms.element_l2});
    }
    summary["solves"] = solves;
    summary["error"] = {{"l2", std::sqrt(err2)}, {"linf", linf}, {"relative_l2", ex2 > 0 ? std::sqrt(err2 / ex2) : std::sqrt(err2)},
                        {"quadrature_degree", 2 * cs.order + 2}};
    log(fmt::format("  error: L2 {:.4e}, max {:.4e}, relative L2 {:.4e}", std::sqrt(err2), linf,
                    ex2 > 0 ? std::sqrt(err2 / ex2) : std::sqrt(err2)));
  }

  // Outputs.
  const auto& dir = cs.output.directory;
  std::filesystem::create_directories(dir);
  const auto t_out = Clock::now();
  if (cs.output.vtk) {
    std::vector<io::PointField> pf;
    std::vector<std::string> names;
    for (std::size_t d = 0; d < solutions.size(); ++d) names.push_back(fmt::format("I_{}", d));
    for (std::size_t d = 0; d < solutions.size(); ++d) pf.push_back({names[d], solutions[d]});
    io::write_solution_vtu(dir / "solution.vtu", disc, pf, cell_fields, cs.output.linear);
  }
  write_probes(dir, cs, disc, solutions, warnings);
  for (std::size_t i = cs.warnings.size(); i < warnings.size(); ++i) std::cerr << "warning: " << warnings[i] << "\n";

  summary["timing"] = {{"setup_seconds", setup_seconds}, {"solve_seconds", solve_seconds},
                       {"output_seconds", seconds_since(t_out)}, {"total_seconds", seconds_since(t_start)}};
  summary["grind_ns_per_dof"] = solve_seconds * 1e9 / (static_cast<double>(n) * static_cast<double>(cs.directions.size()));
  summary["peak_memory_mb"] = peak_memory_mb();
  summary["outputs"] = {{"vtk", cs.output.vtk ? "solution.vtu" : ""}, {"vtk_cells", cs.output.linear ? "linear" : "lagrange"}};
  summary["warnings"] = warnings;
  io::write_text_atomically(dir / "summary.json", summary.dump(2) + "\n");
  log(fmt::format("  wrote {} (total {:.2f} s)", (dir / "summary.json").string(), seconds_since(t_start)));
  return summary;
}

}  // namespace dgrte::app
