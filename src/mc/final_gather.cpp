#include "mc/final_gather.hpp"


#include "gas/gas_common.hpp"
#include "mesh/tet_topology.hpp"

#include <Eigen/Dense>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <numbers>
#include <tuple>

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

// The DG fields a ray reads, per mesh element as coefficients of monomials xi^a eta^b zeta^c
// (a + b + c <= p) in element-local coordinates (x - centroid) / size: evaluating one at a point is
// a short loop with no allocation (the cost of the gather is one or two evaluations per element
// crossing).
struct Fields {
  int order = 1;
  std::size_t terms = 0;
  std::vector<std::array<int, 3>> exponents;
  std::vector<Vec3> centre;
  std::vector<double> scale;        // 1 / element size
  std::vector<double> sigma_t;      // kappa + sigma_s (attenuation), terms per element
  std::vector<double> source;       // kappa I_b (+ sigma_s G / 4 pi where the phase function is isotropic)
  std::vector<std::vector<double>> scattered;  // per ordinate m: sigma_s I_m (anisotropic elements only)
  std::vector<double> sigma_t_max;  // per element: max nodal sigma_t (sub-interval count)
  std::vector<char> anisotropic;    // per element: scattering source from the intensities

  // Monomials of the local coordinates of x in element e.
  void monomials(std::size_t e, const Vec3& x, double* out) const {
    double p[3][kMaxPower + 1];
    for (int d = 0; d < 3; ++d) {
      const double xi = (x[static_cast<std::size_t>(d)] - centre[e][static_cast<std::size_t>(d)]) * scale[e];
      p[d][0] = 1;
      for (int k = 1; k <= order; ++k) p[d][k] = p[d][k - 1] * xi;
    }
    for (std::size_t k = 0; k < terms; ++k) out[k] = p[0][exponents[k][0]] * p[1][exponents[k][1]] * p[2][exponents[k][2]];
  }
  static constexpr int kMaxPower = 8;
};

double dot_n(const double* a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

Fields make_fields(const GatherInput& in) {
  const auto& disc = in.disc;
  const std::size_t K = disc.num_elements(), np = static_cast<std::size_t>(disc.num_nodes());
  Fields f;
  f.order = disc.ref.order;
  for (int a = 0; a <= f.order; ++a)
    for (int b = 0; a + b <= f.order; ++b)
      for (int c = 0; a + b + c <= f.order; ++c) f.exponents.push_back({a, b, c});
  f.terms = f.exponents.size();  // = N_p
  f.centre.resize(K), f.scale.resize(K);
  f.sigma_t.assign(K * np, 0.0), f.source.assign(K * np, 0.0);
  f.sigma_t_max.assign(K, 0.0), f.anisotropic.assign(K, 0);
  bool any_anisotropic = false;
  for (std::size_t el = 0; el < K; ++el) {
    const int op = in.medium.scattering_of_element.empty() ? -1 : in.medium.scattering_of_element[el];
    f.anisotropic[el] = op >= 0 && !in.medium.phase[static_cast<std::size_t>(op)].is_isotropic();
    any_anisotropic = any_anisotropic || f.anisotropic[el];
  }
  if (any_anisotropic) f.scattered.assign(in.quad.size(), std::vector<double>(K * np, 0.0));
  const auto P = static_cast<Eigen::Index>(np);
  Eigen::MatrixXd V(P, P), rhs(P, 2);
  std::vector<double> mono(np);
  for (std::size_t el = 0; el < K; ++el) {
    const auto v = disc.element_vertices(el);
    Vec3 c{0, 0, 0};
    double size = 0;
    for (int i = 0; i < 4; ++i)
      for (int d = 0; d < 3; ++d) c[static_cast<std::size_t>(d)] += 0.25 * v[static_cast<std::size_t>(i)][static_cast<std::size_t>(d)];
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) {
        double l2 = 0;
        for (int d = 0; d < 3; ++d) l2 += std::pow(v[static_cast<std::size_t>(i)][static_cast<std::size_t>(d)] - v[static_cast<std::size_t>(j)][static_cast<std::size_t>(d)], 2);
        size = std::max(size, std::sqrt(l2));
      }
    f.centre[el] = c, f.scale[el] = 1 / size;
    for (std::size_t i = 0; i < np; ++i) {
      f.monomials(el, disc.node_position[el * np + i], mono.data());
      for (std::size_t k = 0; k < np; ++k) V(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) = mono[k];
      const std::size_t n = el * np + i;
      const double sigma_t = in.medium.kappa[n] + in.medium.sigma_s[n];
      rhs(static_cast<Eigen::Index>(i), 0) = sigma_t;
      rhs(static_cast<Eigen::Index>(i), 1) =
          in.medium.kappa[n] * in.medium.blackbody_intensity[n] + (f.anisotropic[el] ? 0.0 : in.medium.sigma_s[n] * in.G[n] / (4 * kPi));
      f.sigma_t_max[el] = std::max(f.sigma_t_max[el], sigma_t);
    }
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(V);
    const Eigen::MatrixXd coef = lu.solve(rhs);
    for (std::size_t k = 0; k < np; ++k)
      f.sigma_t[el * np + k] = coef(static_cast<Eigen::Index>(k), 0), f.source[el * np + k] = coef(static_cast<Eigen::Index>(k), 1);
    if (f.anisotropic[el]) {
      Eigen::MatrixXd sI(P, static_cast<Eigen::Index>(in.quad.size()));
      for (std::size_t m = 0; m < in.quad.size(); ++m)
        for (std::size_t i = 0; i < np; ++i)
          sI(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(m)) = in.medium.sigma_s[el * np + i] * (*in.intensities)[m][el * np + i];
      const Eigen::MatrixXd c_sI = lu.solve(sI);
      for (std::size_t m = 0; m < in.quad.size(); ++m)
        for (std::size_t k = 0; k < np; ++k) f.scattered[m][el * np + k] = c_sI(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(m));
    }
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
    const std::size_t np = f_.terms;
    const int n_sub = std::max(1, static_cast<int>(std::ceil(f_.sigma_t_max[e] * l / kMaxOpticalStep)));
    const double h = l / n_sub;
    const double* c_beta = &f_.sigma_t[e * np];
    const double* c_source = &f_.source[e * np];
    double c_scattered[220];  // N_p <= 165 (P8)
    const bool aniso = f_.anisotropic[e];
    if (aniso) anisotropic_coefficients(e, d, aniso_weight, c_scattered);
    double mono[220];
    // Per sub-interval: beta constant (the mean of its two Gauss values), S linear through them,
    // integral_0^h S(t) exp(-beta t) dt exactly (a constant source and beta give the exact answer).
    double integral = 0, Tsub = 1;
    for (int s = 0; s < n_sub; ++s) {
      double beta[2], src[2];
      for (int q = 0; q < 2; ++q) {
        const double tq = h * (s + 0.5 + (q == 0 ? -0.5 : 0.5) / std::sqrt(3.0));
        f_.monomials(e, {x[0] + tq * d[0], x[1] + tq * d[1], x[2] + tq * d[2]}, mono);
        beta[q] = dot_n(mono, c_beta, np);
        src[q] = dot_n(mono, c_source, np) + (aniso ? dot_n(mono, c_scattered, np) : 0.0);
      }
      const double k = std::max(0.0, 0.5 * (beta[0] + beta[1]));
      const double s0 = 0.5 * (src[0] + src[1]);
      const double s1 = (src[1] - src[0]) * std::sqrt(3.0) / h;  // slope
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

  // Coefficients of sigma_s / (4 pi) sum_m w_m Phi(s_m . s) I_m in element e, s = -d the radiation's direction.
  void anisotropic_coefficients(std::size_t e, const Vec3& d, std::vector<double>& weight, double* out) const {
    const auto& quad = in_.quad;
    const int op = in_.medium.scattering_of_element[e];
    const auto& phase = in_.medium.phase[static_cast<std::size_t>(op)];
    if (weight.size() != quad.size() + 1 || weight.back() != op) {
      // w_m Phi(s_m . s) / 4 pi, normalised to sum 1 on the set (as the DG's phase matrix conserves
      // energy): an isotropic field I scatters exactly sigma_s I into every direction.
      weight.assign(quad.size() + 1, 0.0);
      double sum = 0;
      for (std::size_t mm = 0; mm < quad.size(); ++mm) sum += weight[mm] = quad.w[mm] * phase(-dot(quad.s[mm], d));
      for (std::size_t mm = 0; mm < quad.size(); ++mm) weight[mm] *= sum > 0 ? 1 / sum : 0.0;
      weight.back() = op;
    }
    const std::size_t np = f_.terms;
    for (std::size_t k = 0; k < np; ++k) out[k] = 0;
    for (std::size_t mm = 0; mm < quad.size(); ++mm) {
      const double* c = &f_.scattered[mm][e * np];
      for (std::size_t k = 0; k < np; ++k) out[k] += weight[mm] * c[k];
    }
  }

  const McModel& m_;
  const GatherInput& in_;
  const Fields& f_;
  const std::vector<double>& reflected_;
};

// The L2 projection onto a face's nodal polynomials from values at quadrature points: q_in has
// singular derivatives at wall edges and corners, where interpolating point values at the nodes
// would cost per cents; the projection keeps every face's mean exact (to the rule's accuracy).
struct FaceProjection {
  std::vector<std::array<double, 2>> points;   // (l1, l2) of the face vertices (v_a, v_b, v_c)
  std::array<Eigen::MatrixXd, 4> to_nodes;     // per local face: N_fp x Q
};

FaceProjection face_projection(const dg::ReferenceTet& ref) {
  // Collapsed Gauss-Legendre on the triangle: l1 = u, l2 = v (1 - u), weight (1 - u) w_u w_v,
  // exact to degree 2n - 2 in (l1, l2).
  const int n = ref.order + 2;
  std::vector<double> x, w;
  gas::gauss_legendre_01(n, x, w);
  FaceProjection fp;
  std::vector<double> weight;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double u = x[static_cast<std::size_t>(i)], v = x[static_cast<std::size_t>(j)];
      fp.points.push_back({u, v * (1 - u)});
      weight.push_back((1 - u) * w[static_cast<std::size_t>(i)] * w[static_cast<std::size_t>(j)]);
    }
  const Eigen::Map<const Eigen::VectorXd> W(weight.data(), static_cast<Eigen::Index>(weight.size()));
  for (int f = 0; f < 4; ++f) {
    const Eigen::MatrixXd P = ref.face_interpolation_matrix(f, fp.points);  // Q x N_fp
    const Eigen::MatrixXd PtW = P.transpose() * W.asDiagonal();
    fp.to_nodes[static_cast<std::size_t>(f)] = (PtW * P).ldlt().solve(PtW);
  }
  return fp;
}

}  // namespace

GatherResult final_gather(const McModel& model, const GatherInput& in, const std::vector<ProbePoint>& probes, int rays) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& disc = in.disc;
  const std::size_t nfp = in.walls.face_nodes();
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
  out.probe_half.assign(probes.size(), {0, 0, 0, 0});
  out.q_in_half.assign(out.q_in.size(), 0.0);
  const FaceProjection projection = face_projection(disc.ref);
  const std::size_t per_face = projection.points.size();
  std::vector<double> at_points(in.walls.num_faces() * per_face), at_points_half(at_points.size());
  const std::size_t wall_points = at_points.size(), total = wall_points + probes.size();
  std::uint64_t segments = 0;
  // Cosine-weighted hemisphere into the domain: q_in = (pi / N) sum I; and from the even-numbered rays.
  const int half_rays = (rays + 1) / 2;
  auto hemisphere = [&](std::size_t t, const Vec3& x, const Vec3& inward, Counters& c) {
    double s = 0, s_even = 0;
    for (int k = 0; k < rays; ++k) {
      const auto [u, v] = lattice(k, rays);
      const double L = ray.radiance(t, x, scatter_direction(inward, std::sqrt(u), v), c);
      s += L;
      if (k % 2 == 0) s_even += L;
    }
    return std::pair{kPi * s / rays, kPi * s_even / half_rays};
  };
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : segments)
  for (std::int64_t pi = 0; pi < static_cast<std::int64_t>(total); ++pi) {
    Counters c;
    const auto p = static_cast<std::size_t>(pi);
    if (p < wall_points) {
      const std::size_t b = p / per_face, q = p % per_face;
      const std::size_t ef = in.walls.element_face(b), e = ef / 4;
      const auto v = disc.element_vertices(e);
      const auto& fv = mesh::kFaceVertices[ef % 4];
      const auto [l1, l2] = projection.points[q];
      Vec3 x{};
      for (int d = 0; d < 3; ++d) {
        const auto k = static_cast<std::size_t>(d);
        x[k] = (1 - l1 - l2) * v[static_cast<std::size_t>(fv[0])][k] + l1 * v[static_cast<std::size_t>(fv[1])][k] + l2 * v[static_cast<std::size_t>(fv[2])][k];
      }
      std::tie(at_points[p], at_points_half[p]) = hemisphere(static_cast<std::size_t>(model.mesh.tracer_index[e]), x, model.faces[b].inward, c);
    } else {
      const auto& pt = probes[p - wall_points];
      if (pt.face >= 0) {
        const auto& face = model.faces[static_cast<std::size_t>(pt.face)];
        const auto [full, half] = hemisphere(static_cast<std::size_t>(face.element), pt.x, face.inward, c);
        out.probe[p - wall_points] = {full, 0, 0, 0};
        out.probe_half[p - wall_points] = {half, 0, 0, 0};
      } else {
        const auto t = static_cast<std::size_t>(model.mesh.tracer_index[static_cast<std::size_t>(pt.element)]);
        // Antipodal pairs of a Fibonacci lattice: the odd moments (q) of a uniform field vanish exactly.
        std::array<double, 4> acc{0, 0, 0, 0}, acc_even{0, 0, 0, 0};
        const int half = std::max(1, rays / 2);
        for (int k = 0; k < half; ++k) {
          const auto [u, v] = lattice(k, half);
          const double mu = 1 - 2 * u, st = std::sqrt(std::max(0.0, 1 - mu * mu)), phi = 2 * kPi * v;
          for (const double sign : {1.0, -1.0}) {
            const Vec3 d{sign * st * std::cos(phi), sign * st * std::sin(phi), sign * mu};
            const double L = ray.radiance(t, pt.x, d, c);
            std::array<double, 4> add{L, -L * d[0], -L * d[1], -L * d[2]};
            for (std::size_t r = 0; r < 4; ++r) {
              acc[r] += add[r];
              if (k % 2 == 0) acc_even[r] += add[r];
            }
          }
        }
        const int pairs_even = (half + 1) / 2;
        for (std::size_t r = 0; r < 4; ++r) acc[r] *= 4 * kPi / (2 * half), acc_even[r] *= 4 * kPi / (2 * pairs_even);
        out.probe[p - wall_points] = acc;
        out.probe_half[p - wall_points] = acc_even;
      }
    }
    segments += c.segments;
  }
  for (std::size_t b = 0; b < in.walls.num_faces(); ++b) {
    const auto& P = projection.to_nodes[in.walls.element_face(b) % 4];
    const Eigen::Map<const Eigen::VectorXd> g(&at_points[b * per_face], static_cast<Eigen::Index>(per_face));
    const Eigen::Map<const Eigen::VectorXd> g_half(&at_points_half[b * per_face], static_cast<Eigen::Index>(per_face));
    const Eigen::VectorXd nodal = P * g, nodal_half = P * g_half;
    for (std::size_t j = 0; j < nfp; ++j) {
      out.q_in[b * nfp + j] = nodal[static_cast<Eigen::Index>(j)];
      out.q_in_half[b * nfp + j] = nodal_half[static_cast<Eigen::Index>(j)];
    }
  }
  out.points = total;
  out.rays = static_cast<std::uint64_t>(rays) * total;
  out.segments = segments;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace dgrte::mc
