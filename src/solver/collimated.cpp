#include "solver/collimated.hpp"

#include "common/error.hpp"
#include "transport/sweep.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace dgrte::solver {
namespace {

constexpr int kMaxGenerations = 30;
constexpr double kEnergyCutoff = 1e-12;  // stop following reflections below this fraction of the input

struct PendingBeam {
  Vec3 direction{};
  std::vector<double> inflow;  // per boundary face node (Walls order)
  int generation = 0;
};

}  // namespace

Collimated solve_collimated(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad,
                            const problem::Medium& medium, const problem::Walls& walls, std::vector<std::string>& warnings) {
  Collimated out;
  if (cs.collimated.empty()) return out;
  const std::size_t n = disc.num_dofs(), np = static_cast<std::size_t>(disc.num_nodes()), nfp = walls.face_nodes();
  const std::size_t nb = walls.num_faces() * nfp, M = quad.size();
  const auto& mesh = *disc.mesh;
  out.q_in.assign(nb, 0.0);
  out.q_out.assign(nb, 0.0);
  out.diffuse_irradiation.assign(nb, 0.0);
  for (auto* v : {&out.G, &out.qx, &out.qy, &out.qz}) v->assign(n, 0.0);

  std::vector<PendingBeam> pending;
  double input_power = 0;
  for (const auto& spec : cs.collimated) {
    PendingBeam beam{spec.direction, std::vector<double>(nb, 0.0), 0};
    std::size_t in_group = 0, facing = 0;
    for (std::size_t b = 0; b < walls.num_faces(); ++b) {
      const auto [e, f] = walls.face(b);
      const int g = mesh.boundary_group[e][static_cast<std::size_t>(f)];
      if (g < 0 || problem::group_label(mesh.surface_groups[static_cast<std::size_t>(g)]) != spec.boundary) continue;
      ++in_group;
      if (transport::inflow_coefficient(disc.geometry[e], f, spec.direction) == 0.0) continue;
      ++facing;
      for (std::size_t j = 0; j < nfp; ++j) beam.inflow[b * nfp + j] = spec.flux;
    }
    if (in_group == 0)
      throw InputError(fmt::format("{}: boundary '{}' is not a surface group with boundary faces in the mesh", spec.where, spec.boundary));
    if (facing == 0)
      throw InputError(fmt::format("{}: boundary '{}' faces away from the beam direction ({:.4g}, {:.4g}, {:.4g}): no face has "
                                   "direction . outward normal < 0, so the beam cannot enter there",
                                   spec.where, spec.boundary, spec.direction[0], spec.direction[1], spec.direction[2]));
    pending.push_back(std::move(beam));
  }

  std::vector<double> rhs(n), F(n);
  for (int generation = 0; !pending.empty(); ++generation) {
    if (generation >= kMaxGenerations) {
      double left = 0;
      for (const auto& p : pending)
        for (std::size_t b = 0; b < walls.num_faces(); ++b)
          for (std::size_t j = 0; j < nfp; ++j) left += p.inflow[b * nfp + j] * std::abs(dot(p.direction, walls.normal(b)));
      out.unfollowed_fraction = input_power > 0 ? left / input_power : 0;
      warnings.push_back(fmt::format("collimated beams: specular reflections followed for {} generations; {:.2e} of the beam "
                                     "energy (per unit face-node flux) was still travelling and is dropped",
                                     kMaxGenerations, out.unfollowed_fraction));
      break;
    }
    out.generations = generation + 1;
    std::vector<PendingBeam> next;
    std::map<std::array<long long, 3>, std::size_t> next_of_direction;
    for (auto& p : pending) {
      const Vec3 s = p.direction;
      std::fill(rhs.begin(), rhs.end(), 0.0);
      walls.lift(s, p.inflow, rhs);
      std::fill(F.begin(), F.end(), 0.0);
      transport::sweep_solve(disc, transport::plan_sweep(disc, s), medium.extinction, rhs, F);
      for (std::size_t k = 0; k < n; ++k) {
        out.G[k] += F[k];
        out.qx[k] += F[k] * s[0];
        out.qy[k] += F[k] * s[1];
        out.qz[k] += F[k] * s[2];
      }
      for (std::size_t b = 0; b < walls.num_faces(); ++b) {
        const auto [e, f] = walls.face(b);
        const double sn = dot(s, walls.normal(b));
        if (transport::inflow_coefficient(disc.geometry[e], f, s) != 0.0) {
          for (std::size_t j = 0; j < nfp; ++j) out.q_out[b * nfp + j] += p.inflow[b * nfp + j] * -sn;
          if (generation == 0)
            for (std::size_t j = 0; j < nfp; ++j) input_power += p.inflow[b * nfp + j] * -sn;
          continue;
        }
        const auto& wall = walls.wall(walls.wall_of(b));
        const int* fn = disc.ref.face_nodes[static_cast<std::size_t>(f)].data();
        for (std::size_t j = 0; j < nfp; ++j) {
          const double q = F[e * np + static_cast<std::size_t>(fn[j])] * sn;  // the beam's flux into the wall
          out.q_in[b * nfp + j] += q;
          out.diffuse_irradiation[b * nfp + j] += wall.rho_diffuse * q;
        }
        if (wall.rho_specular <= 0 || sn <= transport::kTangentTolerance) continue;
        const auto& nrm = walls.normal(b);
        const Vec3 mirror{s[0] - 2 * sn * nrm[0], s[1] - 2 * sn * nrm[1], s[2] - 2 * sn * nrm[2]};
        std::array<long long, 3> key{};
        for (int c = 0; c < 3; ++c) key[static_cast<std::size_t>(c)] = std::llround(mirror[static_cast<std::size_t>(c)] * 1e9);
        auto it = next_of_direction.find(key);
        if (it == next_of_direction.end()) {
          it = next_of_direction.emplace(key, next.size()).first;
          next.push_back({mirror, std::vector<double>(nb, 0.0), generation + 1});
        }
        // Reflected flux density: rho_s F (the mirrored beam crosses the face at the same |s.n|).
        for (std::size_t j = 0; j < nfp; ++j)
          next[it->second].inflow[b * nfp + j] += wall.rho_specular * F[e * np + static_cast<std::size_t>(fn[j])];
      }
      // Beams along the same direction (e.g. bouncing between parallel mirrors) share one field.
      bool merged = false;
      for (auto& old : out.beams)
        if (std::abs(old.direction[0] - s[0]) + std::abs(old.direction[1] - s[1]) + std::abs(old.direction[2] - s[2]) < 1e-12) {
          for (std::size_t k = 0; k < n; ++k) old.F[k] += F[k];
          merged = true;
          break;
        }
      if (merged) continue;
      CollimatedBeam beam{s, F, p.generation, {}};
      beam.scatter_weight.assign(medium.scattering.size() * M, 0.0);
      for (std::size_t op = 0; op < medium.scattering.size(); ++op) {
        double norm = 0;
        for (std::size_t m = 0; m < M; ++m) norm += quad.w[m] * medium.phase[op](std::clamp(dot(quad.s[m], s), -1.0, 1.0));
        for (std::size_t m = 0; m < M; ++m)
          beam.scatter_weight[op * M + m] = medium.phase[op](std::clamp(dot(quad.s[m], s), -1.0, 1.0)) / norm;
      }
      out.beams.push_back(std::move(beam));
    }
    // Drop reflected beams whose energy is negligible.
    std::vector<PendingBeam> kept;
    for (auto& p : next) {
      double power = 0;
      for (std::size_t b = 0; b < walls.num_faces(); ++b)
        for (std::size_t j = 0; j < nfp; ++j) power += p.inflow[b * nfp + j] * std::abs(dot(p.direction, walls.normal(b)));
      if (power > kEnergyCutoff * input_power) kept.push_back(std::move(p));
    }
    pending.swap(kept);
  }
  return out;
}

}  // namespace dgrte::solver
