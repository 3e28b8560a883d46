#include "dgrte/final_gather_run.hpp"

#include <Eigen/Dense>

#include <chrono>
#include <cmath>
#include <numeric>

namespace dgrte::runner {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The gather's own error (summary.json final_gather.error_estimate): per wall group the integral of
// |q_in - q_in from half the rays| (W, and relative to the group's incident power), per probe line the
// largest |value - value from half the rays| relative to the line's largest |value| (G or q_in).
nlohmann::json error_estimate(const transport::Discretization& disc, const problem::Walls& walls, const io::CaseSpec& cs,
                              const mc::GatherResult& g, const std::vector<std::vector<long>>& index) {
  std::vector<double> diff(g.q_in.size());
  for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = std::abs(g.q_in[k] - g.q_in_half[k]);
  const auto error = output::group_integrals(disc, walls, diff), incident = output::group_integrals(disc, walls, g.q_in);
  nlohmann::json wall_groups = nlohmann::json::object();
  for (const auto& [group, e] : error)
    wall_groups[group] = {{"q_in_W", e}, {"relative", e / std::max(std::abs(incident.at(group)), 1e-300)}};
  nlohmann::json probes = nlohmann::json::object();
  for (std::size_t p = 0; p < index.size(); ++p) {
    double largest = 0, worst = 0;
    for (const long i : index[p]) {
      if (i < 0) continue;
      largest = std::max(largest, std::abs(g.probe[static_cast<std::size_t>(i)][0]));
      worst = std::max(worst, std::abs(g.probe[static_cast<std::size_t>(i)][0] - g.probe_half[static_cast<std::size_t>(i)][0]));
    }
    probes[cs.output.probes[p].name] = {{"quantity", cs.output.probes[p].wall.empty() ? "G" : "q_in"},
                                        {"relative", worst / std::max(largest, 1e-300)}};
  }
  return {{"walls", wall_groups},
          {"probes", probes},
          {"definition", "difference to the same gather from the first half of each point's rays (an overestimate: "
                         "the half set's quadrature error; a nongray run: of the sum over its spectral points); walls: "
                         "integral of |difference| over the group [W] and relative to its incident power; probes: largest "
                         "|difference| over the line / largest |value|"}};
}

// The ray effect the gather removed (summary.json final_gather.ray_effect): per wall group the DG's
// incident and net power minus the gathered ones.
nlohmann::json ray_effect(const nlohmann::json& dg_walls, const nlohmann::json& gathered_walls) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [group, dg] : dg_walls.items()) {
    const auto& gw = gathered_walls.at(group);
    const double q_in = dg["q_in_W"].get<double>() - gw["q_in_W"].get<double>();
    out[group] = {{"q_in_W", q_in},
                  {"q_net_W", dg["q_net_W"].get<double>() - gw["q_net_W"].get<double>()},
                  {"relative", q_in / std::max(std::abs(gw["q_in_W"].get<double>()), 1e-300)}};
  }
  return out;
}

}  // namespace

FinalGatherRun::FinalGatherRun(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Medium& medium,
                               const problem::Walls& walls, const angular::Quadrature& quad, const solver::Collimated& beams,
                               mc::GatherTracer tracer, std::string tracer_name)
    : cs_(cs),
      disc_(disc),
      medium_(medium),
      walls_(walls),
      quad_(quad),
      beams_(beams),
      tracer_(mc::build_model(cs, disc, medium, walls, mc::Tracing::final_gather)),
      locator_(disc),
      control_{cs.output.final_gather_min_rays, cs.output.final_gather_max_rays, cs.output.final_gather_tolerance, 0, std::move(tracer),
               std::move(tracer_name)} {
  std::vector<std::size_t> all_faces(walls.num_faces());
  std::iota(all_faces.begin(), all_faces.end(), std::size_t{0});
  // The images of the collimated beams in mirrors (generations >= 1) at each point, added to the
  // gathered values: the DG's F_c (the gather attenuates the case's beams exactly itself).
  std::vector<const solver::CollimatedBeam*> images;
  for (const auto& beam : beams.beams)
    if (beam.generation > 0) images.push_back(&beam);
  auto image_wall_flux = [&](const output::WallPoint& at) {
    const std::size_t nfp = walls.face_nodes();
    const int f = walls.face(at.face).face;
    const Eigen::MatrixXd row = disc.ref.face_interpolation_matrix(f, {{at.l1, at.l2}});
    double v = 0;
    for (const auto* image : images)
      if (const double c = dot(image->direction, walls.normal(at.face)); c > 0)
        for (std::size_t j = 0; j < nfp; ++j) v += row(0, static_cast<Eigen::Index>(j)) * c * image->F[walls.element_node(at.face * nfp + j)];
    return v;
  };
  auto image_at = [&](const transport::PointLocator::Location& loc) {
    std::array<double, 4> v{0, 0, 0, 0};
    for (const auto* image : images) {
      const double F = locator_.evaluate(loc, image->F);
      v[0] += F;
      for (std::size_t c = 0; c < 3; ++c) v[c + 1] += F * image->direction[c];
    }
    return v;
  };
  long volume_point = 0;  // the volume probes' points in order: problem::Medium::output_points
  for (const auto& probe : cs.output.probes) {
    index_.emplace_back();
    if (!probe.wall.empty()) {  // point values on the wall (a point on an edge: its first face)
      const auto hits = output::locate_wall_probe(probe, disc, walls);
      const auto line = output::probe_points(probe);
      for (std::size_t i = 0; i < hits.size(); ++i) {
        index_.back().push_back(static_cast<long>(points_.size()));
        points_.push_back({line[i].first, -1, static_cast<long>(hits[i].front().face)});
        output_point_.push_back(-1);
        location_.emplace_back();
        on_walls_.emplace_back();
        images_.push_back({image_wall_flux(hits[i].front()), 0, 0, 0});
        const auto& own = tracer_.faces[hits[i].front().face].inward;
        for (const auto& other : output::wall_faces_at(line[i].first, disc, walls, all_faces))  // an edge: another wall's plane
          if (const auto& n = tracer_.faces[other.face].inward; std::abs(dot(n, own)) < 1 - 1e-6) {
            points_.back().adjacent_wall = n;
            break;
          }
      }
      continue;
    }
    for (const auto& [x, d] : output::probe_points(probe)) {
      const auto loc = locator_.locate(x);
      const long output_point = volume_point++;
      index_.back().push_back(loc ? static_cast<long>(points_.size()) : -1);
      if (!loc) continue;
      points_.push_back({x, static_cast<int>(loc->element), -1});
      output_point_.push_back(output_point);
      location_.push_back(loc);
      on_walls_.push_back(output::wall_faces_at(x, disc, walls, all_faces));
      images_.push_back(image_at(*loc));
      if (!on_walls_.back().empty()) points_.back().axis = tracer_.faces[on_walls_.back().front().face].inward;
    }
  }
  divq_shift_.assign(points_.size(), 0.0);
  seconds_ += seconds_since(created_);
}

void FinalGatherRun::add(const problem::Medium& medium, const problem::Walls& walls, const solver::GrayResult& result) {
  const auto t0 = Clock::now();
  if (&walls != &walls_ || &medium != &medium_) mc::set_properties(tracer_, disc_, medium, walls);  // a spectral point's wall emission
  // The gathered radiance is the diffuse part: the DG's G and q_in without the collimated beams
  // (the gather attenuates the case's beams itself; their scattering is a source of it).
  std::vector<double> diffuse_G = result.G, diffuse_q_in = result.q_in;
  for (std::size_t k = 0; k < beams_.G.size(); ++k) diffuse_G[k] -= beams_.G[k];
  for (std::size_t k = 0; k < beams_.q_in.size(); ++k) diffuse_q_in[k] -= beams_.q_in[k];
  mc::GatherInput in{disc_, medium, walls, quad_, diffuse_G, result.intensities.empty() ? nullptr : &result.intensities, diffuse_q_in};
  for (const auto& beam : beams_.beams)
    if (beam.generation > 0) in.beams.push_back({beam.direction, beam.F});
  mc::GatherControl control = control_;
  control.scramble = static_cast<std::uint32_t>(gathers_);
  const auto g = mc::final_gather(tracer_, in, points_, control);
  per_point_.push_back({{"rays_per_point", static_cast<double>(g.rays) / static_cast<double>(std::max<std::uint64_t>(g.points, 1))},
                        {"segments_per_ray", static_cast<double>(g.segments) / static_cast<double>(std::max<std::uint64_t>(g.rays, 1))},
                        {"points_at_max_rays", g.points_at_max},
                        {"seconds", g.seconds}});
  // div q at the volume probes: emission - kappa G, so the gathered G moves it by kappa (G_dg - G).
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (!location_[i]) continue;
    const auto& loc = *location_[i];
    const double G_dg = output::point_value(disc_, walls, locator_, loc, on_walls_[i], result.G, result.wall_G);
    const double G = g.probe[i][0] + g.probe_beam[i][0] + images_[i][0];
    // kappa at the point itself (problem::Medium::output_points), or the nodal interpolant with
    // solver.properties: nodes.
    const auto op = output_point_[i];
    const double kappa = op >= 0 && static_cast<std::size_t>(op) < medium.output_points.size()
                             ? medium.output_points.kappa[static_cast<std::size_t>(op)]
                             : locator_.evaluate(loc, medium.kappa);
    divq_shift_[i] += kappa * (G_dg - G);
  }
  if (traced_by_.empty()) traced_by_ = g.traced_by;
  mc::accumulate(total_, g);
  ++gathers_;
  seconds_ += seconds_since(t0);
}

nlohmann::json FinalGatherRun::finish(solver::GrayResult& result, output::RadiationFields& fields, output::GatheredProbes& probes) {
  const auto t0 = Clock::now();
  nlohmann::json out;
  out["dg_walls"] = output::wall_summary(disc_, walls_, fields);
  out["dg_energy_balance"] = output::energy_balance(disc_, walls_, fields, result);
  const auto& g = total_;
  const std::size_t nfp = walls_.face_nodes();
  for (std::size_t b = 0; b < walls_.num_faces(); ++b) {
    const auto& face = tracer_.faces[b];
    double entering = 0;  // the case's beams entering through this face (a window): leave the wall into the medium
    for (std::size_t i = 0; i < tracer_.beam_direction.size(); ++i)
      if (const double c = dot(tracer_.beam_direction[i], face.inward); face.group == tracer_.beam_group[i] && c > 0)
        entering += tracer_.beam_flux[i] * c;
    for (std::size_t j = 0; j < nfp; ++j) {
      const std::size_t k = b * nfp + j;
      const double emitted = walls_.emissive_power(b, j);
      result.q_in[k] = g.q_in[k] + g.beam_q_in[k];
      fields.q_net[k] = face.absorptivity * result.q_in[k] - emitted - face.irradiation - entering;  // absorbed - emitted
      result.q_out[k] = result.q_in[k] - fields.q_net[k];
      fields.q_emitted[k] = emitted;
      // the wall totals and energy_balance: the gathered walls (against the DG volume)
      fields.balance_q_in[k] = result.q_in[k], fields.balance_q_out[k] = result.q_out[k], fields.balance_q_net[k] = fields.q_net[k];
    }
  }
  probes = {};
  for (const auto& idx : index_) {
    probes.values.emplace_back();
    probes.collimated.emplace_back();
    probes.divq_shift.emplace_back();
    for (long i : idx) {
      if (i < 0) {
        probes.values.back().push_back({NAN, NAN, NAN, NAN});
        probes.collimated.back().push_back({NAN, NAN, NAN, NAN});
        probes.divq_shift.back().push_back(NAN);
        continue;
      }
      const auto p = static_cast<std::size_t>(i);
      auto v = g.probe[p];
      std::array<double, 4> beam{};
      for (std::size_t c = 0; c < 4; ++c) beam[c] = g.probe_beam[p][c] + images_[p][c];
      for (std::size_t c = 0; c < 4; ++c) v[c] += beam[c];
      probes.values.back().push_back(v);
      probes.collimated.back().push_back(beam);
      probes.divq_shift.back().push_back(divq_shift_[p]);
    }
  }
  const double per_point = static_cast<double>(g.rays) / static_cast<double>(std::max<std::uint64_t>(g.points * static_cast<std::uint64_t>(std::max(gathers_, 1)), 1));
  out["error_estimate"] = error_estimate(disc_, walls_, cs_, g, index_);
  out["ray_effect"] = ray_effect(out["dg_walls"], output::wall_summary(disc_, walls_, fields));
  out["rays_per_point"] = {{"min", control_.min_rays}, {"max", control_.max_rays}, {"mean", per_point}};
  out["tolerance"] = control_.tolerance;
  out["points_at_max_rays"] = g.points_at_max;
  out["receiver_points"] = g.points;
  out["spectral_points_gathered"] = gathers_;
  if (gathers_ > 1) out["per_spectral_point"] = per_point_;  // where a nongray gather's rays went
  out["rays"] = g.rays;
  out["segments"] = g.segments;
  out["traced_by"] = traced_by_;
  out["rays_per_second"] = static_cast<double>(g.rays) / std::max(g.seconds, 1e-12);
  out["definition"] = "walls, walls.vtu, wall probes and volume-probe G, q recomputed by integrating the converged DG source "
                      "along rays from every boundary face quadrature point and probe point (a nongray run: each spectral "
                      "point's, summed); dg_walls / dg_energy_balance: the DG values";
  seconds_ += seconds_since(t0);
  out["seconds"] = seconds_;
  return out;
}

}  // namespace dgrte::runner
