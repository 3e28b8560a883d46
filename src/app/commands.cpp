#include "app/commands.hpp"

#include "dgrte/dgrte.hpp"
#include "common/error.hpp"
#include "mesh/tet_mesh.hpp"
#include "transport/krylov_solver.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <petscsys.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <memory>

namespace dgrte::app {

CommandLine::CommandLine(int argc, char** argv) {
  petsc.push_back(argv[0]);
  bool in_run = false, petsc_started = false;
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (i > 0 && !in_run && std::strcmp(a, "run") == 0) in_run = true;
    else if (in_run && !petsc_started && a[0] == '-' && a[1] != '-' && std::strlen(a) > 2) petsc_started = true;
    (petsc_started ? petsc : own).push_back(argv[i]);
  }
}

void add_run_command(CLI::App& app, CommandLine& cmd) {
  auto* run = app.add_subcommand("run", "Solve the RTE for a case file (see docs/case-file.md); PETSc options may follow");
  auto opts = std::make_shared<RunOptions>();
  auto out = std::make_shared<std::string>();
  auto linear = std::make_shared<bool>(false);
  auto backend = std::make_shared<std::string>();
  run->add_option("case", opts->case_file, "Case file (YAML)")->required()->check(CLI::ExistingFile);
  run->add_option("-o,--output", *out, "Output directory (overrides output.directory)");
  run->add_flag("--linear", *linear, "Write linear sub-tetrahedra instead of Lagrange cells to solution.vtu");
  run->add_flag("-q,--quiet", opts->quiet, "Print nothing but errors and warnings");
  run->add_option("--backend", *backend, "Where the transport solves run: cpu, opencl or auto (overrides solver.backend)");
  run->footer(
      "PETSc options (e.g. -ksp_monitor -ksp_rtol 1e-8 -log_view) go after the case file and other options;\n"
      "they override the case file's solver settings.");
  run->callback([opts, out, linear, backend, &cmd] {
    if (!out->empty()) opts->output_directory = *out;
    if (*linear) opts->linear_vtk = true;
    if (!backend->empty()) opts->backend = *backend;
    opts->progress = !opts->quiet && ::isatty(STDERR_FILENO);
    int pargc = static_cast<int>(cmd.petsc.size());
    std::vector<char*> pargv = cmd.petsc;
    pargv.push_back(nullptr);
    char** pa = pargv.data();
    transport::PetscSession petsc(&pargc, &pa);
    int ranks = 1;
    MPI_Comm_size(PETSC_COMM_WORLD, &ranks);
    try {
      run_case(*opts);
    } catch (...) {
      // Under mpirun a failure on one rank must stop every rank (they may be waiting in a
      // collective call): print the message once here, then abort the job with its exit code.
      if (ranks < 2) throw;
      int rank = 0;
      MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
      const int code = report_exception(fmt::format("dgrte (rank {} of {})", rank, ranks));
      MPI_Abort(PETSC_COMM_WORLD, code);
    }
  });
}

void add_mesh_info_command(CLI::App& app) {
  auto* info = app.add_subcommand("mesh-info", "Counts, physical groups, volume and quality of a mesh (.msh, or .geo with --size)");
  auto file = std::make_shared<std::string>();
  auto size = std::make_shared<double>(0.0);
  auto json = std::make_shared<bool>(false);
  info->add_option("mesh", *file, "Gmsh .msh or .geo file")->required()->check(CLI::ExistingFile);
  info->add_option("--size", *size, "Element size for meshing a .geo (m)");
  info->add_flag("--json", *json, "Print JSON instead of text");
  info->callback([file, size, json] {
    const bool geo = std::filesystem::path(*file).extension() == ".geo";
    if (geo && !(*size > 0)) throw InputError(fmt::format("{}: a .geo file needs --size (target element size in metres)", *file));
    // Describe meshes the solver would refuse (boundary faces in no Physical Surface): that is what users need it for.
    const auto mesh = geo ? mesh::mesh_geo(*file, *size, mesh::BoundaryLabels::optional)
                          : mesh::read_mesh(*file, mesh::BoundaryLabels::optional);
    const auto unlabelled = mesh::unlabelled_boundary_faces(mesh);
    const auto q = mesh::mesh_quality(mesh);
    auto groups = [](const std::vector<mesh::PhysicalGroup>& gs) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& g : gs) a.push_back({{"name", g.name}, {"tag", g.tag}});
      return a;
    };
    std::vector<std::size_t> per_volume(mesh.volume_groups.size(), 0), per_surface(mesh.surface_groups.size(), 0);
    for (int g : mesh.tet_group)
      if (g >= 0) ++per_volume[static_cast<std::size_t>(g)];
    for (const auto& bg : mesh.boundary_group)
      for (int g : bg)
        if (g >= 0) ++per_surface[static_cast<std::size_t>(g)];
    nlohmann::json j{{"file", *file},
                     {"elements", mesh.num_elements()},
                     {"vertices", mesh.vertices.size()},
                     {"volume_groups", groups(mesh.volume_groups)},
                     {"surface_groups", groups(mesh.surface_groups)},
                     {"volume", q.total_volume},
                     {"element_volume", {{"min", q.min_volume}, {"max", q.max_volume}}},
                     {"edge_length", {{"min", q.min_edge}, {"max", q.max_edge}}},
                     {"radius_ratio", {{"min", q.min_radius_ratio}, {"mean", q.mean_radius_ratio}}},
                     {"dihedral_angle_deg", {{"min", q.min_dihedral_deg}, {"max", q.max_dihedral_deg}}},
                     {"faces", {{"boundary", q.boundary_faces}, {"interior", q.interior_faces}}}};
    for (std::size_t i = 0; i < per_volume.size(); ++i) j["volume_groups"][i]["elements"] = per_volume[i];
    for (std::size_t i = 0; i < per_surface.size(); ++i) {
      j["surface_groups"][i]["faces"] = per_surface[i];
      j["surface_groups"][i]["interior_faces"] = mesh.interior_tagged_faces[i];
    }
    j["unlabelled_boundary_faces"] = unlabelled.count;
    if (unlabelled.count > 0) {
      const auto& c = unlabelled.first_centroid;
      j["first_unlabelled_face"] = {c[0], c[1], c[2]};
    }
    j["solver_ready"] = unlabelled.count == 0;
    if (*json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("{}: {} tetrahedra, {} vertices, volume {:.6g} m^3\n", *file, mesh.num_elements(),
                             mesh.vertices.size(), q.total_volume);
    std::cout << "volume groups:\n";
    for (std::size_t i = 0; i < mesh.volume_groups.size(); ++i)
      std::cout << fmt::format("  {:<20} tag {:<4} {} tets\n", mesh.volume_groups[i].name, mesh.volume_groups[i].tag, per_volume[i]);
    std::cout << "surface groups:\n";
    for (std::size_t i = 0; i < mesh.surface_groups.size(); ++i)
      std::cout << fmt::format("  {:<20} tag {:<4} {} boundary faces{}\n", mesh.surface_groups[i].name, mesh.surface_groups[i].tag,
                               per_surface[i],
                               mesh.interior_tagged_faces[i] == 0
                                   ? std::string()
                                   : fmt::format(", and {} interior faces (first at ({:.6g}, {:.6g}, {:.6g})) that no boundary "
                                                 "condition uses",
                                                 mesh.interior_tagged_faces[i], mesh.first_interior_tagged[i][0],
                                                 mesh.first_interior_tagged[i][1], mesh.first_interior_tagged[i][2]));
    if (unlabelled.count > 0)
      std::cout << fmt::format("  (none)               {} boundary faces in no Physical Surface, first at ({:.6g}, {:.6g}, {:.6g}); "
                               "`dgrte run` requires every boundary face in a Physical Surface: add one that contains them\n",
                               unlabelled.count, unlabelled.first_centroid[0], unlabelled.first_centroid[1],
                               unlabelled.first_centroid[2]);
    std::cout << fmt::format("faces: {} boundary, {} interior\n", q.boundary_faces, q.interior_faces);
    std::cout << fmt::format("element volume: min {:.4g}, max {:.4g} m^3; edge length: min {:.4g}, max {:.4g} m\n", q.min_volume,
                             q.max_volume, q.min_edge, q.max_edge);
    std::cout << fmt::format("radius ratio (1 = regular): min {:.4f}, mean {:.4f}; dihedral angles: {:.2f}..{:.2f} deg\n",
                             q.min_radius_ratio, q.mean_radius_ratio, q.min_dihedral_deg, q.max_dihedral_deg);
  });
}

}  // namespace dgrte::app
