#include "common/error.hpp"
#include "solver/ordinate_backend.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dgrte::solver {

namespace {

// sigma_s F_c Phi(s_m.s_c)/4 pi of every collimated beam: a known source of the diffuse field.
void add_beam_scattering(const GrayProblem& p, std::size_t m, std::span<double> rhs) {
  const std::size_t np = static_cast<std::size_t>(p.disc.num_nodes()), M = p.quad.size();
  std::vector<double> s(np);
  for (const auto& beam : p.beams->beams)
    for (std::size_t e = 0; e < p.disc.num_elements(); ++e) {
      const int op = p.medium.scattering_of_element[e];
      if (op < 0) continue;
      const double weight = beam.scatter_weight[static_cast<std::size_t>(op) * M + m];
      for (std::size_t i = 0; i < np; ++i) s[i] = beam.F[e * np + i] * weight;
      p.medium.scattering_term.apply_add(e, s.data(), rhs.data() + e * np);
    }
}

}  // namespace

void fixed_sources(const GrayProblem& p, int m, std::span<double> rhs) {
  const auto mu = static_cast<std::size_t>(m);
  std::copy(p.medium.emission.begin(), p.medium.emission.end(), rhs.begin());
  problem::add_user_source(p.medium, p.disc, p.quad.s[mu], rhs);
  if (p.beams) add_beam_scattering(p, mu, rhs);
}

void scattering_sources(const GrayProblem& p, int m, std::span<const double> phi, bool with_sources, std::span<double> rhs) {
  const std::size_t np = static_cast<std::size_t>(p.disc.num_nodes()), r = p.rank();
  const auto mu = static_cast<std::size_t>(m);
  if (with_sources) fixed_sources(p, m, rhs);
  else std::fill(rhs.begin(), rhs.end(), 0.0);
  if (r == 0) return;
  std::vector<double> s(np);
  for (std::size_t e = 0; e < p.solved; ++e) {
    const int op = p.medium.scattering_of_element[e];
    if (op < 0) continue;
    const auto& sm = p.medium.scattering[static_cast<std::size_t>(op)];
    const std::size_t ro = static_cast<std::size_t>(sm.rank);
    const double* Y = sm.to_direction.data() + mu * ro;
    for (std::size_t i = 0; i < np; ++i) {
      const std::size_t k = e * np + i;
      s[i] = 0;
      for (std::size_t j = 0; j < ro; ++j) s[i] += Y[j] * phi[k * r + j];
    }
    p.medium.scattering_term.apply_add(e, s.data(), rhs.data() + e * np);
  }
}

// Parallel over nodes, ordinates summed in a fixed order: results do not depend on the thread count.
void accumulate_moments(const GrayProblem& p, std::span<const int> members, std::span<const double* const> u, std::span<double> phi_out,
                        NodalMoments* out) {
  const std::size_t bsz = members.size();
  const std::size_t np = static_cast<std::size_t>(p.disc.num_nodes()), r = p.rank();
  const auto K = static_cast<std::ptrdiff_t>(p.solved);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < K; ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    const int op = r > 0 ? p.medium.scattering_of_element[e] : -1;
    for (std::size_t i = 0; i < np; ++i) {
      const std::size_t k = e * np + i;
      if (op >= 0) {
        const auto& sm = p.medium.scattering[static_cast<std::size_t>(op)];
        const std::size_t ro = static_cast<std::size_t>(sm.rank);
        for (std::size_t b = 0; b < bsz; ++b) {
          const double* Z = sm.to_moment.data() + static_cast<std::size_t>(members[b]) * ro;
          const double I = u[b][k];
          for (std::size_t j = 0; j < ro; ++j) phi_out[k * r + j] += Z[j] * I;
        }
      }
      if (out) {
        for (std::size_t b = 0; b < bsz; ++b) {
          const auto m = static_cast<std::size_t>(members[b]);
          const double I = u[b][k];
          out->G[k] += p.quad.w[m] * I;
          out->qx[k] += p.quad.s_bar[m][0] * I;
          out->qy[k] += p.quad.s_bar[m][1] * I;
          out->qz[k] += p.quad.s_bar[m][2] * I;
        }
      }
    }
  }
}

void throw_specular_divergence(int first_ordinate, int passes) {
  throw SolverError(fmt::format("specular reflections of the ordinate group of ordinate {} did not converge in {} passes: "
                                "a mirror enclosure with (almost) no absorption traps the radiation; add absorption or "
                                "a non-reflecting wall",
                                first_ordinate, passes));
}

}  // namespace dgrte::solver
