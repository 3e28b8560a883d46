// solver.method: montecarlo runs: forward bundles for the fields and walls, backward rays for the
// probes (src/mc), on the CPU or an OpenCL device, and their outputs.
#include "dgrte/runner.hpp"

#include "dgrte/device_backend.hpp"
#include "backend/device_tracer_data.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "mc/monte_carlo.hpp"
#include "output/radiation_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dgrte::runner {

// solver.method: montecarlo — forward bundles for fields and walls, backward rays for probes (src/mc).
nlohmann::json run_montecarlo(Setup& s, const RunOptions& opt) {
  const auto& cs = s.cs;
  const auto& disc = s.disc;
  // The problem layer builds the DG's wall tables from an angular set; the tracer uses none, so a
  // case without `angular:` gets S4 here, and the DG-only warnings of those tables are dropped.
  const auto quad = cs.angular ? problem::build_quadrature(*cs.angular) : angular::level_symmetric(4);
  const problem::Medium medium = problem::build_medium(cs, disc, &quad);
  report_fields(s, medium);
  std::vector<std::string> dg_only_warnings;
  const problem::Walls walls(cs, disc, &quad, dg_only_warnings);
  mc::McModel model = mc::build_model(cs, disc, medium, walls);
  gas::LoadedModel gas_model = medium.has_gas_model() ? load_gas_model(s, medium.gas) : gas::LoadedModel{};
  mc::McOptions mo;
  mo.paths = cs.solver.mc.paths;
  mo.batches = cs.solver.mc.batches;
  mo.seed = cs.solver.mc.seed;
  mo.probe_rays = cs.solver.mc.probe_rays;
  if (opt.progress) mo.progress = s.log;
  // solver.backend opencl: the forward paths run on the device (opencl/mc_forward.cl); probe rays
  // (backward) stay on the host.
  const auto backend_choice = choose_backend(cs.solver);
  std::shared_ptr<device::DeviceTracer> device_tracer;
  if (backend_choice.opencl) {
    device_tracer = std::make_shared<device::DeviceTracer>(backend::tracer_geometry(model), backend_choice.options.device,
                                                           backend_choice.options.cache_dir);
    mo.tracer = backend::device_batch_tracer(device_tracer);
    s.log(fmt::format("  forward paths on {} (kernel {} in {:.2f} s)", device_tracer->info().label(),
                      device_tracer->cache_hit() ? "loaded from the cache" : "built", device_tracer->build_seconds()));
  }

  // Probe points, located before the solve so that a bad probe fails early.
  struct ProbeLine {
    const io::ProbeSpec* spec;
    std::vector<std::pair<io::Vec3, double>> points;
    std::vector<long> index;  // into the traced points, -1: outside the mesh
  };
  std::vector<ProbeLine> lines;
  std::vector<mc::ProbePoint> traced;
  if (!cs.output.probes.empty()) {
    const transport::PointLocator locator(disc);
    for (const auto& probe : cs.output.probes) {
      ProbeLine line{&probe, output::probe_points(probe), {}};
      if (probe.wall.empty()) {
        for (const auto& [x, d] : line.points) {
          const auto loc = locator.locate(x);
          line.index.push_back(loc ? static_cast<long>(traced.size()) : -1);
          if (loc) traced.push_back({x, static_cast<int>(loc->element), -1});
        }
        const auto outside = std::count(line.index.begin(), line.index.end(), -1L);
        if (outside > 0)
          s.warnings.push_back(fmt::format("probe '{}': {} of {} points lie outside the mesh (written as nan)", probe.name, outside, probe.points));
      } else {
        const auto hits = output::locate_wall_probe(probe, disc, walls);
        for (std::size_t i = 0; i < hits.size(); ++i) {
          line.index.push_back(static_cast<long>(traced.size()));
          traced.push_back({line.points[i].first, -1, static_cast<long>(hits[i].front().face)});
        }
      }
      lines.push_back(std::move(line));
    }
  }
  s.log(fmt::format("dgrte {}: case {} — {} tets, Monte Carlo: {} paths in {} batches, seed {}{}{}", kVersion, cs.file.string(),
                    disc.num_elements(), mo.paths, mo.batches, mo.seed, medium.scatters() ? ", scattering" : "",
                    walls.reflects() ? ", reflecting walls" : ""));
  const double setup_seconds = seconds_since(s.start);
  mc::McResult r;
  mc::ProbeRun probes;
  // Emitted power per element and per face (W, W/m^2), summed over spectral points.
  std::vector<double> element_emission = model.emission, face_emission(model.faces.size());
  for (std::size_t b = 0; b < model.faces.size(); ++b) face_emission[b] = model.faces[b].emission;
  spectral::SpectralResult props;  // property report of a nongray run
  std::size_t traced_points = 0;
  if (!gas_model.spectral) {
    r = mc::solve_forward(model, mo);
    if (!traced.empty()) probes = mc::trace_probes(model, traced, mo);
  } else {
    // Nongray. Pass 1: every point's properties, its emitted power and the emission summed over the
    // points (exact, not sampled). Pass 2 traces: per_path — each batch a systematic sample of the
    // points by power (mc::SpectralSampler; points without paths are skipped); per_point — every
    // emitting point gets paths in proportion to its power (at least `batches`) and its own batches.
    spectral::SpectralOptions so;
    so.block_bytes = static_cast<std::size_t>(cs.solver.spectral_block_mb * 1024.0 * 1024.0);
    std::vector<double> power, blackbody;  // per point: emitted [W]; what the sources would emit at kappa = 1 [W]
    const std::vector<double> node_volume = spectral::node_volumes(disc);
    std::size_t clamped = 0;
    std::fill(element_emission.begin(), element_emission.end(), 0.0);
    std::fill(face_emission.begin(), face_emission.end(), 0.0);
    spectral::for_each_spectral_point(disc, medium, walls, *gas_model.spectral, so, props,
                                      [&](int, const problem::Medium& pm, const problem::Walls& pw, const spectral::PointProblem*) {
                                        mc::set_properties(model, disc, pm, pw);
                                        power.push_back(model.total_power());
                                        double bb = 0;
                                        for (std::size_t i = 0; i < node_volume.size(); ++i) bb += 4 * std::numbers::pi * node_volume[i] * pm.blackbody_intensity[i];
                                        for (const auto& f : model.faces) bb += f.emission * f.area;
                                        blackbody.push_back(bb);
                                        clamped = std::max(clamped, model.clamped_elements);
                                        for (std::size_t t = 0; t < element_emission.size(); ++t) element_emission[t] += model.emission[t];
                                        for (std::size_t b = 0; b < face_emission.size(); ++b) face_emission[b] += model.faces[b].emission;
                                      });
    double total = 0;
    for (double p : power) total += p;
    spectral::SpectralResult pass2;
    const auto t_trace = Clock::now();
    auto report = [&](int j, std::uint64_t paths, std::uint64_t paths_so_far) {
      if (opt.progress && (traced_points % 100 == 1 || props.spectral_points < 200))
        s.log(fmt::format("  spectral point {} / {}: {} paths, {:.3g} W ({} points traced, {:.3g} paths/s)", j + 1, props.spectral_points,
                          paths, power[static_cast<std::size_t>(j)], traced_points,
                          static_cast<double>(paths_so_far) / std::max(seconds_since(t_trace), 1e-9)));
    };
    if (cs.solver.mc.per_path) {
      mc::SpectralSampler sampler(power, blackbody, mo, model, traced.size());
      spectral::for_each_spectral_point(
          disc, medium, walls, *gas_model.spectral, so, pass2,
          [&](int j, const problem::Medium& pm, const problem::Walls& pw, const spectral::PointProblem*) {
            mc::set_properties(model, disc, pm, pw);
            sampler.trace_point(j, model, traced);
            ++traced_points;
            report(j, sampler.paths(j), sampler.forward_paths_traced());
          },
          [&](int j) { return sampler.paths(j) + (traced.empty() ? 0 : sampler.probe_rays(j)) > 0; });
      r = sampler.forward_result(model, element_emission, face_emission);
      if (!traced.empty()) probes = sampler.probe_result(model, traced, element_emission, face_emission);
    } else {
      auto share = [&](double p, std::uint64_t n) -> std::uint64_t {
        if (!(p > 0) || !(total > 0)) return 0;
        return std::max<std::uint64_t>(static_cast<std::uint64_t>(mo.batches),
                                       static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * p / total)));
      };
      std::uint64_t first = 0;
      spectral::for_each_spectral_point(
          disc, medium, walls, *gas_model.spectral, so, pass2,
          [&](int j, const problem::Medium& pm, const problem::Walls& pw, const spectral::PointProblem*) {
            const auto jj = static_cast<std::size_t>(j);
            mc::McOptions point = mo;
            point.paths = share(power[jj], mo.paths);
            point.probe_rays = share(power[jj], mo.probe_rays);
            point.first_path = first;
            first += std::max(point.paths, point.probe_rays);
            point.progress = {};
            mc::set_properties(model, disc, pm, pw);
            mc::accumulate(r, mc::solve_forward(model, point));
            if (!traced.empty()) mc::accumulate(probes, mc::trace_probes(model, traced, point));
            ++traced_points;
            report(j, point.paths, r.paths);
          },
          [&](int j) { return share(power[static_cast<std::size_t>(j)], mo.paths) > 0; });
    }
    props.property_seconds += pass2.property_seconds;
    model.clamped_elements = clamped;
    if (traced_points == 0) {  // nothing emits at any point: zero fields of the right sizes
      r = mc::solve_forward(model, mo);
      if (!traced.empty()) probes = mc::trace_probes(model, traced, mo);
    }
    if (props.gas_nodes_clamped > 0 || props.wall_nodes_clamped > 0)
      s.warnings.push_back(fmt::format("{}: the gas model {} covers {:.0f}-{:.0f} K; {} gas nodes and {} emitting wall nodes lie outside "
                                       "and take the properties at the nearest end of that range",
                                       cs.file.string(), gas_model.name(), props.temperature_range.first,
                                       props.temperature_range.second, props.gas_nodes_clamped, props.wall_nodes_clamped));
  }
  const double solve_seconds = seconds_since(s.start) - setup_seconds;
  s.log(fmt::format("  forward: {} paths, {} segments, {:.2f} s ({:.3g} paths/s, {:.3g} segments/s), {} lost", r.paths, r.segments,
                    r.seconds, static_cast<double>(r.paths) / r.seconds, static_cast<double>(r.segments) / r.seconds, r.lost_rays));
  if (!traced.empty())
    s.log(fmt::format("  probes: {} points x {} rays, {:.2f} s, {} lost", traced.size(), mo.probe_rays, probes.seconds, probes.lost_rays));
  if (model.clamped_elements > 0)
    s.warnings.push_back(fmt::format("Monte Carlo: in {} elements the mean of kappa, sigma_s or kappa Ib over the element was below 0 (a "
                                     "steep nodal field) and was set to 0; refine the mesh where the properties change fast",
                                     model.clamped_elements));
  if (probes.unfollowed_specular_beam_hits > 0)
    s.warnings.push_back(fmt::format("Monte Carlo probes: {} backward paths or shadow rays met a specular wall in the light of a collimated "
                                     "beam; the beam's mirror images are not followed by the probe estimator, so probe values may miss "
                                     "them (solution.vtu and walls.vtu, from the forward estimator, include them)",
                                     probes.unfollowed_specular_beam_hits));
  if (r.lost_rays + probes.lost_rays > 0)
    s.warnings.push_back(fmt::format("Monte Carlo: {} of {} forward paths and {} probe rays were lost (stuck on an edge or degenerate); "
                                     "their energy is missing from the tallies",
                                     r.lost_rays, r.paths, probes.lost_rays));

  auto summary = summary_header(s);
  const std::size_t F = model.faces.size(), nfp = walls.face_nodes();
  // Wall groups: totals with standard errors.
  nlohmann::json wj = nlohmann::json::object();
  for (std::size_t g = 0; g < model.group_names.size(); ++g) {
    double area = 0, emitted = 0;
    std::string type;
    for (std::size_t b = 0; b < F; ++b)
      if (model.faces[b].group == static_cast<int>(g)) {
        area += model.faces[b].area, emitted += face_emission[b] * model.faces[b].area;
        type = io::to_string(walls.wall(walls.wall_of(b)).type);
      }
    const double qin = r.group_q_in.mean[g], qnet = r.group_q_net.mean[g];
    wj[model.group_names[g]] = {{"type", type}, {"area", area}, {"q_net_W", qnet}, {"q_net_W_stderr", r.group_q_net.error[g]},
                                {"q_in_W", qin}, {"q_in_W_stderr", r.group_q_in.error[g]}, {"q_out_W", qin - qnet},
                                {"emitted_W", emitted}, {"q_net_mean", area > 0 ? qnet / area : 0.0}};
  }
  // The DG's scale (output::energy_balance): the largest of integral |div q|, integral |q_net| (per
  // face), the incident wall power and the emitted volume power.
  double volume_abs = 0, emitted_volume = 0, walls_abs = 0;
  for (std::size_t t = 0; t < model.kappa.size(); ++t) {
    const auto e = static_cast<std::size_t>(model.mesh.original[t]);
    volume_abs += std::abs(r.divq.mean[e]) * model.mesh.volume[t], emitted_volume += element_emission[t];
  }
  for (std::size_t b = 0; b < F; ++b) walls_abs += std::abs(r.q_net.mean[b]) * model.faces[b].area;
  const double scale = std::max({volume_abs, walls_abs, r.walls_q_in.mean, emitted_volume});
  summary["walls"] = wj;
  summary["energy_balance"] = {
      {"volume_W", r.volume_divq.mean}, {"volume_W_stderr", r.volume_divq.error}, {"walls_W", r.walls_q_net.mean},
      {"walls_W_stderr", r.walls_q_net.error}, {"imbalance_W", r.imbalance.mean}, {"imbalance_W_stderr", r.imbalance.error},
      {"scale_W", scale}, {"relative_imbalance", scale > 0 ? r.imbalance.mean / scale : 0.0},
      {"definition", "volume_W = integral of div q dV (emitted - absorbed by the medium); walls_W = integral of q_net dA (incident - "
                     "leaving, with beams entering through a wall counted as leaving it, as in the DG output); imbalance_W = volume_W - "
                     "walls_W per batch: Monte Carlo conserves energy bundle by bundle, so it is the noise of Russian roulette plus any "
                     "lost rays; relative_imbalance = imbalance_W / scale_W"}};
  summary["solver"] = {{"method", "montecarlo"}};
  summary["backend"] = {{"type", backend_choice.opencl ? "opencl" : "cpu"}, {"reason", backend_choice.reason}};
  if (device_tracer) {
    const auto& d = device_tracer->info();
    summary["backend"].update({{"platform", d.platform}, {"device", d.name}, {"driver", d.driver_version}, {"precision", "double"},
                               {"kernel_cache_hit", device_tracer->cache_hit()}, {"kernel_build_seconds", device_tracer->build_seconds()},
                               {"bytes_to_device", device_tracer->bytes_to_device()}, {"bytes_from_device", device_tracer->bytes_from_device()},
                               {"on_device", "forward paths (opencl/mc_forward.cl); probe rays on the host"}});
  }
  if (gas_model.spectral)
    summary["spectral"] = {{"model", gas_model.name()},
                           {"type", gas_model.type},
                           {"property_backend", property_backend(gas_model)},
                           {"spectral_points", props.spectral_points},
                           {"property_seconds", props.property_seconds},
                           {"sampling", cs.solver.mc.per_path ? "per_path" : "per_point"},
                           {"sampling_definition", cs.solver.mc.per_path
                                                       ? "each batch a systematic sample of the spectral points in proportion to their emitted power; points without paths are not traced"
                                                       : "paths per spectral point in proportion to its emitted power (at least `batches`), each point with its own batches"},
                           {"gas_nodes_clamped", props.gas_nodes_clamped},
                           {"wall_nodes_clamped", props.wall_nodes_clamped}};
  if (auto soot = soot_summary(gas_model, medium); !soot.is_null()) summary["spectral"]["soot"] = soot;
  summary["scattering"] = {{"present", medium.scatters()}};
  summary["montecarlo"] = {{"paths", r.paths},
                           {"batches", mo.batches},
                           {"seed", mo.seed},
                           {"paths_per_second", static_cast<double>(r.paths) / r.seconds},
                           {"segments_per_second", static_cast<double>(r.segments) / r.seconds},
                           {"segments", r.segments},
                           {"scattering_events", r.scattering_events},
                           {"wall_reflections", r.wall_reflections},
                           {"lost_rays", r.lost_rays},
                           {"source_power_W", r.source_power},
                           {"forward_seconds", r.seconds},
                           {"probe_points", traced.size()},
                           {"probe_rays", probes.rays},
                           {"probe_segments", probes.segments},
                           {"probe_lost_rays", probes.lost_rays},
                           {"probe_shadow_rays", probes.shadow_rays},
                           {"unfollowed_specular_beam_hits", probes.unfollowed_specular_beam_hits},
                           {"spectral_points_traced", traced_points},
                           {"probe_seconds", probes.seconds},
                           {"properties", "element means of the nodal fields"},
                           {"error_estimate", "standard error of the mean over independent batches"}};

  const auto& dir = cs.output.directory;
  if (s.write_files) std::filesystem::create_directories(dir);
  const auto t_out = Clock::now();
  {
    auto cells = element_fields(s.mesh);
    for (const auto& [name, est] : {std::pair<const char*, const mc::Estimate*>{"G", &r.G}, {"qx", &r.qx}, {"qy", &r.qy}, {"qz", &r.qz},
                                    {"divq", &r.divq}}) {
      cells.push_back({name, est->mean});
      cells.push_back({std::string(name) + "_stderr", est->error});
    }
    if (!gas_model.spectral) cells.push_back({"kappa_element", model.in_mesh_order(model.kappa)});
    cells.push_back({"sigma_s_element", model.in_mesh_order(model.sigma_s)});
    std::vector<output::PointField> pf{{"sigma_s", medium.sigma_s}, {"Ib", medium.blackbody_intensity}};
    pf.push_back(gas_model.spectral ? output::PointField{"kappa_planck", props.kappa_planck} : output::PointField{"kappa", medium.kappa});
    // Results::fields: the tallies are element means, repeated at each element's nodes.
    std::vector<std::vector<double>> at_nodes;
    for (const auto& c : cells) {
      auto& v = at_nodes.emplace_back(disc.num_dofs());
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = c.values[k / static_cast<std::size_t>(disc.num_nodes())];
    }
    std::vector<output::PointField> kept = pf;
    for (std::size_t c = 0; c < cells.size(); ++c) kept.push_back({cells[c].name, at_nodes[c]});
    keep_fields(s, disc, kept, medium);
    const bool vtk = cs.output.vtk && s.write_files;
    if (vtk) output::write_solution_vtu(dir / "solution.vtu", disc, pf, cells, cs.output.linear, group_names(s.mesh));
    std::vector<std::size_t> faces;
    output::CellField group{"surface_group", {}}, emissivity{"emissivity", {}}, q_out{"q_out", {}}, q_emitted{"q_emitted", {}};
    std::vector<double> wall_T(F * nfp);
    for (std::size_t b = 0; b < F; ++b) {
      faces.push_back(walls.element_face(b));
      const auto [e, f] = walls.face(b);
      const int g = s.mesh.boundary_group[e][static_cast<std::size_t>(f)];
      group.values.push_back(g >= 0 ? s.mesh.surface_groups[static_cast<std::size_t>(g)].tag : -1);
      emissivity.values.push_back(walls.wall(walls.wall_of(b)).emissivity);
      q_out.values.push_back(r.q_in.mean[b] - r.q_net.mean[b]);
      q_emitted.values.push_back(face_emission[b]);
      for (std::size_t j = 0; j < nfp; ++j) wall_T[b * nfp + j] = walls.temperature(b, j);
    }
    const std::vector<output::CellField> face_values{group, emissivity, {"q_in", r.q_in.mean}, {"q_in_stderr", r.q_in.error},
                                                 {"q_net", r.q_net.mean}, {"q_net_stderr", r.q_net.error}, q_out, q_emitted};
    // Results::wall_fields: per-face tallies repeated at each face's nodes.
    std::vector<std::vector<double>> at_face_nodes;
    std::vector<output::PointField> wall_arrays{{"temperature", wall_T}};
    for (std::size_t c = 2; c < face_values.size(); ++c) {
      auto& v = at_face_nodes.emplace_back(F * nfp);
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = face_values[c].values[k / nfp];
    }
    for (std::size_t c = 2; c < face_values.size(); ++c) wall_arrays.push_back({face_values[c].name, at_face_nodes[c - 2]});
    keep_wall_fields(s, disc, walls, wall_arrays);
    if (vtk) output::write_faces_vtu(dir / "walls.vtu", disc, faces, {{"temperature", wall_T}}, face_values, group_names(s.mesh));
  }
  if (!lines.empty()) {
    for (const auto& line : lines) {
      const bool wall = !line.spec->wall.empty();
      std::string text = wall ? "# Monte Carlo (backward rays per point): q_in incident flux [W/m^2], q_net = absorbed - emitted [W/m^2], "
                                "*_stderr their standard errors; distance [m] along the line\nx,y,z,distance,q_in,q_in_stderr,q_net,"
                                "q_net_stderr\n"
                              : "# Monte Carlo (backward rays per point): G, q [W/m^2], divq [W/m^3] (element's kappa and emission), "
                                "*_stderr their standard errors; distance [m] along the line\nx,y,z,distance,G,G_stderr,qx,qx_stderr,"
                                "qy,qy_stderr,qz,qz_stderr,divq,divq_stderr\n";
      for (std::size_t i = 0; i < line.points.size(); ++i) {
        const auto& [x, d] = line.points[i];
        text += fmt::format("{:.10g},{:.10g},{:.10g},{:.10g}", x[0], x[1], x[2], d);
        if (line.index[i] < 0) {
          text += wall ? ",nan,nan,nan,nan\n" : ",nan,nan,nan,nan,nan,nan,nan,nan,nan,nan\n";
          continue;
        }
        const auto& v = probes.values[static_cast<std::size_t>(line.index[i])];
        const auto list = wall ? std::vector<mc::ScalarEstimate>{v.q_in, v.q_net} : std::vector<mc::ScalarEstimate>{v.G, v.qx, v.qy, v.qz, v.divq};
        for (const auto& est : list) text += fmt::format(",{:.12g},{:.6g}", est.mean, est.error);
        text += "\n";
      }
      keep_probe(s, dir, line.spec->name, text);
    }
  }
  summary["outputs"] = {{"vtk", cs.output.vtk ? "solution.vtu" : ""}, {"walls_vtk", cs.output.vtk ? "walls.vtu" : ""},
                        {"vtk_cells", cs.output.linear ? "linear" : "lagrange"}, {"fields_on", "cells (element means)"}};
  finish(s, summary, setup_seconds, solve_seconds, t_out);
  return summary;
}

}  // namespace dgrte::runner
