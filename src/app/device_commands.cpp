#include "app/commands.hpp"
#include "dgrte/device_backend.hpp"
#include "dgrte/dgrte.hpp"
#include "device/device_gather.hpp"
#include "device/device_line_sum.hpp"
#include "gas/lbl.hpp"
#include "gas/voigt.hpp"
#include "io/yaml_map.hpp"

#include "backend/device_data.hpp"
#include "common/error.hpp"
#include "mesh/tet_mesh.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"
#include "transport/sweep.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <filesystem>
#include <functional>
#include <unistd.h>

namespace dgrte::app {

using runner::BackendChoice;
using runner::choose_backend;

namespace {

void list_devices_command(bool json) {
  const auto all = device::list_devices();
  if (json) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& d : all)
      a.push_back({{"platform_index", d.platform_index}, {"device_index", d.device_index}, {"platform", d.platform}, {"device", d.name},
                   {"vendor", d.vendor}, {"driver", d.driver_version}, {"version", d.device_version}, {"gpu", d.is_gpu},
                   {"global_memory_bytes", d.global_memory}, {"local_memory_bytes", d.local_memory},
                   {"max_allocation_bytes", d.max_allocation}, {"compute_units", d.compute_units}, {"fp64", d.fp64}});
    std::cout << a.dump(2) << "\n";
    return;
  }
  if (all.empty()) {
    std::cout << "no OpenCL platform found (on Debian: apt install pocl-opencl-icd for the CPU; a GPU driver for a GPU)\n";
    return;
  }
  for (const auto& d : all)
    std::cout << fmt::format("{}:{}  {}  [{}]\n      {}, {} compute units, global memory {:.1f} GiB, local memory {} KiB, "
                             "fp64 {}, driver {}\n",
                             d.platform_index, d.device_index, d.name, d.platform, d.is_gpu ? "GPU" : d.is_cpu ? "CPU" : "other",
                             d.compute_units, static_cast<double>(d.global_memory) / 1073741824.0, d.local_memory / 1024,
                             d.fp64 ? "yes" : "no", d.driver_version);
  const auto pick = device::select_device("auto");
  std::cout << fmt::format("solver.backend: auto would use {}\n", device::first_fp64_gpu().platform_index >= 0
                                                                      ? pick.label()
                                                                      : std::string("the CPU path (no GPU with fp64)"));
}

// The transport problem of a case as the device core's arrays: every direction of `directions:`
// or every ordinate of `angular:` with its first right-hand side (sources and wall emission; no
// scattering or reflection yet) and its sweep plan.
// A case with output.final_gather: its DG solve on the CPU (outputs to a temporary directory,
// removed), then the first gather's arrays (a nongray case: its first spectral point's) as a gather
// dump; the run stops there.
void export_gather(const io::CaseSpec& cs, const std::string& case_file, const std::string& out, bool quiet) {
  const auto scratch = std::filesystem::temp_directory_path() / fmt::format("dgrte-export-{}", ::getpid());
  RunOptions ro;
  ro.case_file = case_file;
  ro.output_directory = scratch;
  ro.quiet = true;
  ro.backend = "cpu";  // the export machine needs no device
  struct Dumped {};    // thrown once the dump is written: the rest of the run is not needed
  std::string description;
  ro.gather_arrays = [&](const mc::GatherArrays& a, const std::string& host_only) {
    if (!host_only.empty())
      throw InputError(fmt::format("{}: {}: this case's gather integrates {} on the host only; a device dump needs a gather of "
                                   "emission and isotropic scattering", case_file, cs.output.final_gather_where, host_only));
    description = fmt::format("{}: final gather, {} elements, P{}, {} receivers", case_file, a.original.size(), a.order, a.receiver_int.size() / 2);
    device::write_gather_dump(out, {{a.planes, a.across, a.original},
                                    {a.order, a.terms, a.thin_points, a.fit_points, a.exponents, a.element, a.sigma_t, a.source, a.rules,
                                     a.faces},
                                    {a.receivers, a.receiver_int},
                                    description});
    throw Dumped{};
  };
  try {
    run_case(ro);
  } catch (const Dumped&) {
  } catch (...) {
    std::filesystem::remove_all(scratch);
    throw;
  }
  std::filesystem::remove_all(scratch);
  if (description.empty()) throw InputError(fmt::format("{}: the run gathered nothing, so no gather dump was written", case_file));
  if (!quiet) std::cout << fmt::format("wrote {} ({})\n", out, description);
}

// The case's mesh, discretisation, quadrature (null for `directions:` cases) and medium, handed to body.
void with_case_medium(const io::CaseSpec& cs, const std::function<void(const transport::Discretization&, const angular::Quadrature*,
                                                                         const problem::Medium&)>& body) {
  io::check_mesh_file_exists(cs.mesh);
  const auto mesh = cs.mesh.file.empty() ? mesh::mesh_geo(cs.mesh.geo, cs.mesh.size) : mesh::read_mesh(cs.mesh.file);
  const auto disc = transport::make_discretization(mesh, cs.order);
  std::unique_ptr<angular::Quadrature> quad;
  if (cs.angular) quad = std::make_unique<angular::Quadrature>(problem::build_quadrature(*cs.angular));
  const auto medium = problem::build_medium(cs, disc, quad.get());
  body(disc, quad.get(), medium);
}

// The line sum of the hottest gas state of `medium` on the LBL model's grid (the line arrays, the grid,
// the cut-off and the Voigt constants) as a line-sum dump.
void write_line_sum(const io::CaseSpec& cs, const std::string& case_file, const std::string& out, bool quiet, const problem::Medium& medium) {
  if (medium.gas.empty()) throw InputError(fmt::format("{}: --line-sum: the medium has no gas states", case_file));
  io::YamlMap section(*cs.model, "model", cs.file.string());
  auto model = gas::make_model(section, {}, medium.gas);
  if (!model.lbl) throw InputError(fmt::format("{}: --line-sum needs model type lbl, not {}", section.where("type"), model.type));
  const auto hottest = std::max_element(medium.gas.begin(), medium.gas.end(),
                                        [](const gas::GasState& a, const gas::GasState& b) { return a.temperature < b.temperature; });
  const auto a = model.lbl->line_arrays(*hottest);
  const auto w = gas::weideman_coefficients();
  device::LineSumDump d;
  d.key = a.key, d.center = a.center, d.strength = a.strength, d.gamma_d = a.gamma_d, d.gamma_l = a.gamma_l;
  d.grid = model.lbl->grid();
  d.center_margin = a.center_margin;
  d.cutoff = model.lbl->wing_cutoff();
  d.voigt.L = w.L, d.voigt.split = gas::kVoigtAsymptoticS, d.voigt.a = w.a;
  d.description = fmt::format("{}: line sum of {} lines on {} grid points ({:.6g}-{:.6g} cm-1), T {:.6g} K", case_file, a.size(),
                              d.grid.size(), d.grid.front(), d.grid.back(), hottest->temperature);
  device::write_line_sum_dump(out, d);
  if (!quiet) std::cout << fmt::format("wrote {} ({})\n", out, d.description);
}

// A case with model type lbl: its line-sum dump (write_line_sum).
void export_line_sum(const io::CaseSpec& cs, const std::string& case_file, const std::string& out, bool quiet) {
  if (!cs.model) throw InputError(fmt::format("{}: --line-sum needs a case with a gas model of type lbl", case_file));
  with_case_medium(cs, [&](const transport::Discretization&, const angular::Quadrature*, const problem::Medium& medium) {
    write_line_sum(cs, case_file, out, quiet, medium);
  });
}

void export_case(const std::string& case_file, const std::string& out, bool quiet, bool line_sum) {
  const auto cs = io::read_case(case_file);
  if (line_sum) return export_line_sum(cs, case_file, out, quiet);
  if (cs.output.final_gather) return export_gather(cs, case_file, out, quiet);
  with_case_medium(cs, [&](const transport::Discretization& disc, const angular::Quadrature* quad, const problem::Medium& medium) {
    std::vector<std::string> warnings;
    const problem::Walls walls(cs, disc, quad, warnings);
    std::vector<transport::Vec3> dirs;
    if (quad)
      for (std::size_t m = 0; m < quad->size(); ++m) dirs.push_back(walls.streaming(static_cast<int>(m)));
    else
      dirs = cs.directions;
    std::vector<std::vector<double>> rhs;
    std::vector<transport::SweepPlan> plans;
    const std::vector<double> state(walls.state_size(), 0.0), specular(walls.specular_size(), 0.0);
    std::vector<double> g(walls.num_faces() * walls.face_nodes());
    for (std::size_t m = 0; m < dirs.size(); ++m) {
      std::vector<double> r(medium.emission);
      problem::add_user_source(medium, disc, dirs[m], r);
      walls.inflow(quad ? static_cast<int>(m) : -1, dirs[m], true, state, specular, g);
      walls.lift(dirs[m], g, r);
      rhs.push_back(std::move(r));
      plans.push_back(transport::plan_sweep(disc, dirs[m]));
    }
    auto data = backend::device_data(disc, medium.extinction);
    backend::add_directions(data, dirs, rhs, plans);
    data.description = fmt::format("{}: {} tets, P{}, {} directions", case_file, disc.num_elements(), cs.order, dirs.size());
    device::write_transport_data(out, data);
    if (!quiet) std::cout << fmt::format("wrote {} ({})\n", out, data.description);
  });
}

}  // namespace

void add_device_commands(CLI::App& app) {
  auto* devices = app.add_subcommand("devices", "List OpenCL platforms and devices (global memory, compute units, fp64)");
  auto json = std::make_shared<bool>(false);
  devices->add_flag("--json", *json, "Print JSON");
  devices->callback([json] { list_devices_command(*json); });

  auto* exp = app.add_subcommand("export", "Write a case's transport problem (mesh, directions, sources, sweep plans) as a binary "
                                           "dump for dgrte-bench-device on a GPU node (docs/opencl.md); a case with "
                                           "output.final_gather: its DG solve, then the gather's arrays");
  auto case_file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto line_sum = std::make_shared<bool>(false);
  exp->add_option("case", *case_file, "Case file (YAML)")->required()->check(CLI::ExistingFile);
  exp->add_option("-o,--output", *out, "Dump file to write")->required();
  exp->add_flag("-q,--quiet", *quiet, "Print nothing but errors");
  exp->add_flag("--line-sum", *line_sum, "A case with model type lbl: its hottest state's line-by-line sum instead (the device's "
                                         "line-sum kernel)");
  exp->callback([case_file, out, quiet, line_sum] {
    try {
      export_case(*case_file, *out, *quiet, *line_sum);
    } catch (const device::DeviceError& e) {
      throw InputError(e.what());
    }
  });
}

}  // namespace dgrte::app
