#include "mc/final_gather.hpp"

#include "dg/reference_tet.hpp"

#include <Eigen/Dense>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <numbers>

namespace dgrte::mc {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kMaxOpticalStep = 0.2;     // sub-interval optical thickness along a ray
constexpr double kMinTransmission = 1e-12;  // a ray stops below this (its remaining radiance is negligible)
constexpr int kMaxMirrors = 10000;          // specular bounces followed per ray (mirrors around a clear gas)

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Fibonacci lattice: point k of n on the unit square, (u, v) = ((k + 1/2)/n, frac(k / golden)).
std::pair<double, double> lattice(int k, int n) {
  const double u = (k + 0.5) / n;
  const double v = std::fmod(k * 0.6180339887498949, 1.0);
  return {u, v};
}

// The DG fields a ray reads, as modal coefficients per mesh element (column e).
struct Fields {
  int order = 1;
  Eigen::MatrixXd vinv;               // V^{-1}
  Eigen::MatrixXd sigma_t, emission;  // kappa + sigma_s (attenuation), kappa I_b
  Eigen::MatrixXd iso_source;         // sigma_s G / (4 pi) where the phase function is isotropic
  std::vector<double> sigma_t_max;    // per element: max nodal sigma_t (sub-interval count)
  std::vector<char> anisotropic;      // per element: scattering source from the intensities
};

Fields make_fields(const GatherInput& in) {
  const auto& disc = in.disc;
  const std::size_t K = disc.num_elements(), np = static_cast<std::size_t>(disc.num_nodes());
  Fields f;
  f.order = disc.ref.order;
  f.vinv = disc.ref.vandermonde.inverse();
  const auto P = static_cast<Eigen::Index>(np);
  f.sigma_t.resize(P, static_cast<Eigen::Index>(K));
  f.emission.resize(P, static_cast<Eigen::Index>(K));
  f.iso_source = Eigen::MatrixXd::Zero(P, static_cast<Eigen::Index>(K));
  f.sigma_t_max.assign(K, 0.0);
  f.anisotropic.assign(K, 0);
  Eigen::VectorXd k(P), e(P), s(P);
  for (std::size_t el = 0; el < K; ++el) {
    const int op = in.medium.scattering_of_element.empty() ? -1 : in.medium.scattering_of_element[el];
    const bool iso = op < 0 || in.medium.phase[static_cast<std::size_t>(op)].is_isotropic();
    for (std::size_t i = 0; i < np; ++i) {
      const std::size_t n = el * np + i;
      k[static_cast<Eigen::Index>(i)] = in.medium.kappa[n] + in.medium.sigma_s[n];
      e[static_cast<Eigen::Index>(i)] = in.medium.kappa[n] * in.medium.blackbody_intensity[n];
      s[static_cast<Eigen::Index>(i)] = iso ? in.medium.sigma_s[n] * in.G[n] / (4 * kPi) : 0.0;
      f.sigma_t_max[el] = std::max(f.sigma_t_max[el], in.medium.kappa[n] + in.medium.sigma_s[n]);
    }
    f.sigma_t.col(static_cast<Eigen::Index>(el)) = f.vinv * k;
    f.emission.col(static_cast<Eigen::Index>(el)) = f.vinv * e;
    if (iso) f.iso_source.col(static_cast<Eigen::Index>(el)) = f.vinv * s;
    f.anisotropic[el] = op >= 0 && !iso;
  }
  return f;
}

struct Counters {
  std::uint64_t segments = 0;
};

class RayIntegrator {
 public:
  RayIntegrator(const McModel& m, const GatherInput& in, const Fields& f, const std::vector<double>& reflected)
      : m_(m), in_(in), f_(f), reflected_(reflected) {}

  // Radiance arriving at x (in tracer element t) from direction d (traced along d).
  double radiance(std::size_t t, Vec3 x, Vec3 d, Counters& c) const {
    double L = 0, T = 1;
    int mirrors = 0, zero_steps = 0;
    std::vector<double> aniso_weight;  // w_m Phi(s_m . s) for the current direction
    while (T > kMinTransmission) {
      const Exit ex = exit_face(m_.cells[t].plane, x.data(), d.data());
      if (ex.face < 0 || zero_steps > 64) break;
      zero_steps = ex.distance > 0 ? 0 : zero_steps + 1;
      ++c.segments;
      if (ex.distance > 0) {
        const double T0 = T;
        const double part = segment(t, x, d, ex.distance, T, aniso_weight);  // updates T
        L += T0 * part;
      }
      for (int k = 0; k < 3; ++k) x[static_cast<std::size_t>(k)] += ex.distance * d[static_cast<std::size_t>(k)];
      const int next = m_.cells[t].across[ex.face];
      if (next >= 0) {
        t = static_cast<std::size_t>(next);
        continue;
      }
      const auto b = static_cast<std::size_t>(-1 - next);
      const auto& face = m_.faces[b];
      const double rho = 1 - face.absorptivity;
      L += T * (face.leaving() / kPi + reflected_[b]);
      const double specular = rho * face.specular_share;
      if (!(specular > 0) || ++mirrors > kMaxMirrors) break;
      T *= specular;
      const double dn = dot(d, face.inward);
      d = {d[0] - 2 * dn * face.inward[0], d[1] - 2 * dn * face.inward[1], d[2] - 2 * dn * face.inward[2]};
      aniso_weight.clear();
    }
    return L;
  }

 private:
  // integral_0^l S exp(-tau) along the segment from x; T is multiplied by the segment's transmission.
  double segment(std::size_t t, const Vec3& x, const Vec3& d, double l, double& T, std::vector<double>& aniso_weight) const {
    const auto e = static_cast<std::size_t>(m_.mesh.original[t]);
    const auto& g = in_.disc.geometry[e];
    const auto v0 = in_.disc.element_vertices(e)[0];
    const int n_sub = std::max(1, static_cast<int>(std::ceil(f_.sigma_t_max[e] * l / kMaxOpticalStep)));
    const double h = l / n_sub;
    dg::Points rst(2 * n_sub, 3);
    for (int s = 0; s < n_sub; ++s)
      for (int q = 0; q < 2; ++q) {
        const double tq = h * (s + 0.5 + (q == 0 ? -0.5 : 0.5) / std::sqrt(3.0));
        const Vec3 y{x[0] + tq * d[0] - v0[0], x[1] + tq * d[1] - v0[1], x[2] + tq * d[2] - v0[2]};
        for (int r = 0; r < 3; ++r)
          rst(2 * s + q, r) = -1 + g.grad_rst[static_cast<std::size_t>(r)][0] * y[0] + g.grad_rst[static_cast<std::size_t>(r)][1] * y[1] +
                              g.grad_rst[static_cast<std::size_t>(r)][2] * y[2];
      }
    const Eigen::MatrixXd psi = dg::orthonormal_basis(f_.order, rst);
    const auto col = static_cast<Eigen::Index>(e);
    const Eigen::VectorXd beta = psi * f_.sigma_t.col(col);
    Eigen::VectorXd source = psi * (f_.emission.col(col) + f_.iso_source.col(col));
    if (f_.anisotropic[e]) source += psi * (f_.vinv * anisotropic_source(e, d, aniso_weight));
    // Per sub-interval: beta constant (the mean of its two Gauss values), S linear through them,
    // integral_0^h S(t) exp(-beta t) dt exactly (a constant source and beta give the exact answer).
    double integral = 0, Tsub = 1;
    for (int s = 0; s < n_sub; ++s) {
      const double k = std::max(0.0, 0.5 * (beta[2 * s] + beta[2 * s + 1]));
      const double s0 = 0.5 * (source[2 * s] + source[2 * s + 1]);
      const double s1 = (source[2 * s + 1] - source[2 * s]) * std::sqrt(3.0) / h;  // slope
      const double kh = k * h;
      double a0, a1;  // integral_0^h exp(-k t) dt, integral_0^h t exp(-k t) dt
      if (kh < 1e-4) {
        a0 = h * (1 - kh / 2 + kh * kh / 6);
        a1 = h * h * (0.5 - kh / 3 + kh * kh / 8);
      } else {
        const double ekh = std::exp(-kh);
        a0 = -std::expm1(-kh) / k;
        a1 = (1 - ekh * (1 + kh)) / (k * k);
      }
      integral += Tsub * (s0 * a0 + s1 * (a1 - 0.5 * h * a0));
      Tsub *= std::exp(-kh);
    }
    T *= Tsub;
    return integral;
  }

  // sigma_s / (4 pi) sum_m w_m Phi(s_m . s) I_m at the element's nodes, s = -d the radiation's direction.
  Eigen::VectorXd anisotropic_source(std::size_t e, const Vec3& d, std::vector<double>& weight) const {
    const auto& quad = in_.quad;
    const int op = in_.medium.scattering_of_element[e];
    const auto& phase = in_.medium.phase[static_cast<std::size_t>(op)];
    if (weight.size() != quad.size() + 1 || weight.back() != op) {
      // w_m Phi(s_m . s) / 4 pi, normalised to sum 1 on the set (as the DG's phase matrix conserves
      // energy): an isotropic field I scatters exactly sigma_s I into every direction.
      weight.assign(quad.size() + 1, 0.0);
      double sum = 0;
      for (std::size_t mm = 0; mm < quad.size(); ++mm) sum += weight[mm] = quad.w[mm] * phase(-dot(quad.s[mm], d));
      for (std::size_t mm = 0; mm < quad.size(); ++mm) weight[mm] *= sum > 0 ? 4 * kPi / sum : 0.0;
      weight.back() = op;
    }
    const std::size_t np = static_cast<std::size_t>(in_.disc.num_nodes());
    Eigen::VectorXd j = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(np));
    for (std::size_t mm = 0; mm < quad.size(); ++mm) {
      const auto& I = (*in_.intensities)[mm];
      for (std::size_t i = 0; i < np; ++i) j[static_cast<Eigen::Index>(i)] += weight[mm] * I[e * np + i];
    }
    for (std::size_t i = 0; i < np; ++i) j[static_cast<Eigen::Index>(i)] *= in_.medium.sigma_s[e * np + i] / (4 * kPi);
    return j;
  }

  const McModel& m_;
  const GatherInput& in_;
  const Fields& f_;
  const std::vector<double>& reflected_;
};

}  // namespace

GatherResult final_gather(const McModel& model, const GatherInput& in, const std::vector<ProbePoint>& probes, int rays) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& disc = in.disc;
  const std::size_t nfp = in.walls.face_nodes(), np = static_cast<std::size_t>(disc.num_nodes());
  const Fields fields = make_fields(in);
  // The diffusely reflected radiance of each face, rho_d d q_in^DG with the face mean of the DG
  // incident flux and the DG's own factor d (so that a DG solution at equilibrium gathers exactly).
  std::vector<double> reflected(in.walls.num_faces(), 0.0);
  for (std::size_t b = 0; b < reflected.size(); ++b) {
    const auto f = static_cast<std::size_t>(in.walls.element_face(b) % 4);
    const Eigen::VectorXd w = disc.ref.face_mass[f].colwise().sum().transpose();
    double mean = 0;
    for (std::size_t j = 0; j < nfp; ++j) mean += w[static_cast<Eigen::Index>(j)] * in.q_in[b * nfp + j] / w.sum();
    const auto& face = model.faces[b];
    reflected[b] = (1 - face.absorptivity) * (1 - face.specular_share) * in.walls.diffuse_factor(b) * mean;
  }
  const RayIntegrator ray(model, in, fields, reflected);
  GatherResult out;
  out.q_in.assign(in.walls.num_faces() * nfp, 0.0);
  out.probe.assign(probes.size(), {0, 0, 0, 0});
  const std::size_t wall_points = out.q_in.size(), total = wall_points + probes.size();
  std::uint64_t segments = 0;
  // Cosine-weighted hemisphere into the domain: q_in = (pi / N) sum I.
  auto hemisphere = [&](std::size_t t, const Vec3& x, const Vec3& inward, Counters& c) {
    double s = 0;
    for (int k = 0; k < rays; ++k) {
      const auto [u, v] = lattice(k, rays);
      s += ray.radiance(t, x, scatter_direction(inward, std::sqrt(u), v), c);
    }
    return kPi * s / rays;
  };
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : segments)
  for (std::int64_t pi = 0; pi < static_cast<std::int64_t>(total); ++pi) {
    Counters c;
    const auto p = static_cast<std::size_t>(pi);
    if (p < wall_points) {
      const std::size_t b = p / nfp, j = p % nfp;
      const std::size_t ef = in.walls.element_face(b), e = ef / 4;
      const auto x = disc.node_position[e * np + static_cast<std::size_t>(disc.ref.face_nodes[ef % 4][j])];
      out.q_in[p] = hemisphere(static_cast<std::size_t>(model.mesh.tracer_index[e]), x, model.faces[b].inward, c);
    } else {
      const auto& pt = probes[p - wall_points];
      if (pt.face >= 0) {
        const auto& face = model.faces[static_cast<std::size_t>(pt.face)];
        out.probe[p - wall_points] = {hemisphere(static_cast<std::size_t>(face.element), pt.x, face.inward, c), 0, 0, 0};
      } else {
        const auto t = static_cast<std::size_t>(model.mesh.tracer_index[static_cast<std::size_t>(pt.element)]);
        // Antipodal pairs of a Fibonacci lattice: the odd moments (q) of a uniform field vanish exactly.
        std::array<double, 4> acc{0, 0, 0, 0};
        const int half = std::max(1, rays / 2);
        for (int k = 0; k < half; ++k) {
          const auto [u, v] = lattice(k, half);
          const double mu = 1 - 2 * u, st = std::sqrt(std::max(0.0, 1 - mu * mu)), phi = 2 * kPi * v;
          for (const double sign : {1.0, -1.0}) {
            const Vec3 d{sign * st * std::cos(phi), sign * st * std::sin(phi), sign * mu};
            const double L = ray.radiance(t, pt.x, d, c);
            acc[0] += L;
            for (int r = 0; r < 3; ++r) acc[static_cast<std::size_t>(1 + r)] -= L * d[static_cast<std::size_t>(r)];
          }
        }
        for (auto& a : acc) a *= 4 * kPi / (2 * half);
        out.probe[p - wall_points] = acc;
      }
    }
    segments += c.segments;
  }
  out.rays = static_cast<std::uint64_t>(rays) * total;
  out.segments = segments;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace dgrte::mc
