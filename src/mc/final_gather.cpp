#include "mc/final_gather.hpp"

#include "gas/gas_common.hpp"
#include "common/tet_topology.hpp"

#include <Eigen/Dense>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <limits>
#include <numbers>
#include <tuple>

namespace dgrte::mc {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kMaxDelta = 0.02;  // a chord's sub-intervals: the largest deviation of tau from linear (see segment)
constexpr double kThinChord = 0.1;  // below this optical thickness a chord takes the short rule (see segment)
// A ray stops below this transmission: what it would still collect is at most this times the
// largest source / sigma_t or wall radiance ahead (a bias of 1e-6 of it, far below the tolerance).
constexpr double kMinTransmission = 1e-6;
constexpr int kMaxMirrors = 10000;          // specular bounces followed per ray (mirrors around a clear gas)

// Point k of the 2-D Sobol' sequence, a (0,2)-sequence in base 2: every block of 2^m points
// k = j 2^m .. (j + 1) 2^m - 1 is a (0,m,2)-net, so the first n points of a doubling are as evenly
// spread as a lattice of n. Dimension 1 is van der Corput's; dimension 2 has the direction numbers
// of the polynomial x + 1 (v_1 = 1/2, v_(j+1) = v_j xor v_j / 2: the Pascal matrix mod 2). Each
// coordinate is Owen-scrambled (nested uniform scrambling by a fixed hash, Burley 2020, "Practical
// hash-based Owen scrambling", JCGT 9(4)): the nets survive, the points leave the corners of their
// cells (unscrambled, every u is a multiple of 1/n: a bias of order 1/n), and the error of a smooth
// integrand falls about as n^(-3/2).
std::uint32_t reverse_bits(std::uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

std::uint32_t owen_scramble(std::uint32_t x, std::uint32_t seed) {
  x = reverse_bits(x);
  x += seed;  // Laine-Karras: each bit depends only on the bits below it (above, once reversed)
  x ^= x * 0x6c50b47cu;
  x ^= x * 0xb82f1e52u;
  x ^= x * 0xc7afe638u;
  x ^= x * 0x8d22f6e6u;
  return reverse_bits(x);
}

std::pair<double, double> sobol2(std::uint32_t k, std::uint32_t scramble) {
  std::uint32_t a = 0, b = 0, v = 1u << 31;
  for (int j = 0; k != 0; ++j, k >>= 1, v ^= v >> 1)
    if (k & 1u) a ^= 1u << (31 - j), b ^= v;
  constexpr double kScale = 1.0 / 4294967296.0;
  const std::uint32_t key = scramble * 0x9e3779b9u;  // 0: the gray gather's scrambling
  return {(owen_scramble(a, 0x8a3f21c5u ^ key) + 0.5) * kScale, (owen_scramble(b, 0x3c6ef372u ^ (key >> 7 | key << 25)) + 0.5) * kScale};
}

// M_k(x) = integral_0^1 s^k exp(-x s) ds, k = 0..n (n <= 8). Below x = 2: M_n from its series
// sum_j (-x)^j / (j! (n + j + 1)) and the stable downward recursion M_(k-1) = (x M_k + exp(-x)) / k;
// above: the upward recursion M_k = (k M_(k-1) - exp(-x)) / x (its error grows by at most
// n! / x^n < 160).
// Returns exp(-x). Reciprocals from a table: divisions would dominate the cost of a segment.
constexpr std::array<double, 64> kReciprocal = [] {
  std::array<double, 64> r{};
  for (std::size_t i = 1; i < r.size(); ++i) r[i] = 1.0 / static_cast<double>(i);
  return r;
}();

double exp_moments(double x, int n, double* M) {
  const double e = std::exp(-x);
  if (x < 2) {
    double term = 1, sum = kReciprocal[static_cast<std::size_t>(n + 1)];
    for (int j = 1; j < 40; ++j) {  // 2^40 / 40! < 1e-35
      term *= -x * kReciprocal[static_cast<std::size_t>(j)];
      const double add = term * kReciprocal[static_cast<std::size_t>(n + j + 1)];
      sum += add;
      if (std::abs(add) < 1e-17 * sum) break;
    }
    M[n] = sum;
    for (int k = n; k > 0; --k) M[k - 1] = (x * M[k] + e) * kReciprocal[static_cast<std::size_t>(k)];
    return e;
  }
  const double rx = 1 / x;
  M[0] = -std::expm1(-x) * rx;
  for (int k = 1; k <= n; ++k) M[k] = (k * M[k - 1] - e) * rx;
  return e;
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
  std::vector<std::vector<double>> beam_scattered;  // per beam: sigma_s F_c (anisotropic elements only)
  std::vector<Vec3> beam_direction;                 // per beam
  // The case's beams (the first case_beams of the beams): elements cut by a beam's shadow boundary
  // (some nodes lit, some not), where a polynomial cannot follow F_c: its scattering there is taken
  // at each point from a shadow ray instead (sigma_s from its own polynomial).
  std::size_t case_beams = 0;
  std::vector<std::vector<char>> beam_cut;  // [beam][element]
  std::vector<double> sigma_s;              // terms per element
  std::vector<double> sigma_t_max;  // per element: max nodal sigma_t (sub-interval count)
  std::vector<char> sigma_t_constant;  // per element: sigma_t the same at every node (exact segment integral)
  std::vector<char> anisotropic;    // per element: scattering source from the intensities
  // A segment's source as a polynomial in s = t / l: its values at the p + 1 Gauss points s_i of
  // [0, 1] times to_monomials (row-major, (p + 1)^2) give the coefficients of s^k.
  std::vector<double> gauss_s, gauss_w, to_monomials;
  // The same with thin_points Gauss points, for optically thin chords, and with fit_points =
  // max(p + 1, 3) for the source times exp(-delta) on a sub-interval.
  int thin_points = 2, fit_points = 3;
  std::vector<double> thin_s, thin_w, thin_to_monomials, fit_s, fit_w, fit_to_monomials;

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

  // integral of sigma_t over the chord of length l from x along d in element e (Gauss, p + 1 points).
  double optical_depth(std::size_t e, const Vec3& x, const Vec3& d, double l) const;
};

// Four partial sums: one chain of dependent additions would make this latency-bound.
double dot_n(const double* a, const double* b, std::size_t n) {
  double s[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t k = 0; k < 4; ++k) s[k] += a[i + k] * b[i + k];
  for (; i < n; ++i) s[0] += a[i] * b[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

double Fields::optical_depth(std::size_t e, const Vec3& x, const Vec3& d, double l) const {
  if (sigma_t_constant[e]) return sigma_t_max[e] * l;
  double mono[220], tau = 0;
  for (std::size_t i = 0; i < gauss_s.size(); ++i) {
    const double t = l * gauss_s[i];
    monomials(e, {x[0] + t * d[0], x[1] + t * d[1], x[2] + t * d[2]}, mono);
    tau += gauss_w[i] * dot_n(mono, &sigma_t[e * terms], terms);
  }
  return std::max(0.0, tau * l);
}

// exp(-tau) of the case's beam i from its entry faces to x (in tracer cell t), tau through the DG's
// sigma_t polynomials; 0 in the beam's shadow.
double beam_transmission(const McModel& m, const Fields& f, std::size_t i, std::size_t t, const Vec3& x) {
  long wall = -1;
  return shadow_transmission(m, i, t, x, [&](std::size_t cell, const Vec3& y, const Vec3& d, double l) {
    return l > 0 ? f.optical_depth(static_cast<std::size_t>(m.mesh.original[cell]), y, d, l) : 0.0;
  }, wall);
}

// The case's beams at point x (tracer cell t): sum of F exp(-tau), and of F exp(-tau) b.
std::array<double, 4> case_beams_at(const McModel& m, const Fields& f, std::size_t t, const Vec3& x) {
  std::array<double, 4> out{0, 0, 0, 0};
  for (std::size_t i = 0; i < m.beam_direction.size(); ++i) {
    const double F = m.beam_flux[i] * beam_transmission(m, f, i, t, x);
    out[0] += F;
    for (std::size_t c = 0; c < 3; ++c) out[c + 1] += F * m.beam_direction[i][c];
  }
  return out;
}

// The case's beams' flux into a wall at x (inward normal n): sum of F exp(-tau) (b . n_out).
double case_beams_into_wall(const McModel& m, const Fields& f, std::size_t t, const Vec3& x, const Vec3& inward) {
  double q = 0;
  for (std::size_t i = 0; i < m.beam_direction.size(); ++i)
    if (const double c = -dot(m.beam_direction[i], inward); c > 0) q += m.beam_flux[i] * c * beam_transmission(m, f, i, t, x);
  return q;
}

// A collimated beam's nodal flux density F_c and direction.
struct BeamField {
  Vec3 direction{};
  std::vector<double> F;
};

// cut[i][e]: element e is cut by the shadow boundary of case beam i (see Fields::beam_cut).
Fields make_fields(const GatherInput& in, const std::vector<BeamField>& beam_fields, const std::vector<std::vector<char>>& cut) {
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
  f.sigma_t_max.assign(K, 0.0), f.sigma_t_constant.assign(K, 0), f.anisotropic.assign(K, 0);
  // Gauss points of [0, 1] and the map from values there to monomial coefficients.
  auto gauss_rule = [](int n, std::vector<double>& x, std::vector<double>& w, std::vector<double>& to_monomials) {
    gas::gauss_legendre_01(n, x, w);
    Eigen::MatrixXd V(n, n);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) V(i, k) = std::pow(x[static_cast<std::size_t>(i)], k);
    const Eigen::MatrixXd inv = V.inverse();
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < n; ++i) to_monomials.push_back(inv(k, i));
  };
  gauss_rule(f.order + 1, f.gauss_s, f.gauss_w, f.to_monomials);
  f.thin_points = std::max(2, (f.order + 2) / 2);
  gauss_rule(f.thin_points, f.thin_s, f.thin_w, f.thin_to_monomials);
  f.fit_points = std::max(f.order + 1, 3);
  gauss_rule(f.fit_points, f.fit_s, f.fit_w, f.fit_to_monomials);
  bool any_anisotropic = false;
  for (std::size_t el = 0; el < K; ++el) {
    const int op = in.medium.scattering_of_element.empty() ? -1 : in.medium.scattering_of_element[el];
    f.anisotropic[el] = op >= 0 && !in.medium.phase[static_cast<std::size_t>(op)].is_isotropic();
    any_anisotropic = any_anisotropic || f.anisotropic[el];
  }
  if (any_anisotropic) f.scattered.assign(in.quad.size(), std::vector<double>(K * np, 0.0));
  if (any_anisotropic) f.beam_scattered.assign(beam_fields.size(), std::vector<double>(K * np, 0.0));
  for (const auto& beam : beam_fields) f.beam_direction.push_back(beam.direction);
  f.case_beams = cut.size();
  f.beam_cut = cut;
  f.sigma_s.assign(K * np, 0.0);
  auto is_cut = [&](std::size_t b, std::size_t el) { return b < cut.size() && cut[b][el]; };
  const auto P = static_cast<Eigen::Index>(np);
  Eigen::MatrixXd V(P, P), rhs(P, 3);
  std::vector<double> mono(np);
  // The medium the solve integrates (problem::Medium: from the property points): sigma_t and sigma_s
  // as L2 projections, the emission kappa Ib projected, and scattering applied as the solve applies
  // it (the Galerkin block K_s where sigma_s varies on an element).
  const auto& medium = in.medium;
  if (!medium.has_solve_terms(K, np))
    throw std::logic_error("final_gather: the medium's solve terms are not built (problem::build_medium)");
  const std::vector<double> sigma_t_nodes = medium.extinction.projection(), sigma_s_nodes = medium.scattering_term.projection();
  std::vector<double> scattered_in(np), incident(np);
  for (std::size_t el = 0; el < K; ++el) {
    // sigma_s (G + sum of beam F_c) / 4 pi: scattered isotropically (anisotropic elements: per segment)
    for (std::size_t i = 0; i < np; ++i) {
      double beams = 0;
      for (std::size_t b = 0; b < beam_fields.size(); ++b) beams += is_cut(b, el) ? 0.0 : beam_fields[b].F[el * np + i];
      incident[i] = (in.G[el * np + i] + beams) / (4 * kPi);
    }
    std::fill(scattered_in.begin(), scattered_in.end(), 0.0);
    if (!f.anisotropic[el]) medium.scattering_term.apply_add(el, incident.data(), scattered_in.data());
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
      rhs(static_cast<Eigen::Index>(i), 0) = sigma_t_nodes[n];
      rhs(static_cast<Eigen::Index>(i), 2) = sigma_s_nodes[n];
      rhs(static_cast<Eigen::Index>(i), 1) = medium.emission[n] + scattered_in[i];
      f.sigma_t_max[el] = std::max(f.sigma_t_max[el], sigma_t_nodes[n]);
    }
    double lowest = f.sigma_t_max[el];
    for (std::size_t i = 0; i < np; ++i) lowest = std::min(lowest, sigma_t_nodes[el * np + i]);
    f.sigma_t_constant[el] = f.sigma_t_max[el] - lowest <= 1e-12 * f.sigma_t_max[el];
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(V);
    const Eigen::MatrixXd coef = lu.solve(rhs);
    for (std::size_t k = 0; k < np; ++k)
      f.sigma_t[el * np + k] = coef(static_cast<Eigen::Index>(k), 0), f.source[el * np + k] = coef(static_cast<Eigen::Index>(k), 1),
      f.sigma_s[el * np + k] = coef(static_cast<Eigen::Index>(k), 2);
    if (f.anisotropic[el]) {
      Eigen::MatrixXd sI(P, static_cast<Eigen::Index>(in.quad.size()));
      for (std::size_t m = 0; m < in.quad.size(); ++m) {
        std::fill(scattered_in.begin(), scattered_in.end(), 0.0);
        medium.scattering_term.apply_add(el, (*in.intensities)[m].data() + el * np, scattered_in.data());
        for (std::size_t i = 0; i < np; ++i) sI(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(m)) = scattered_in[i];
      }
      const Eigen::MatrixXd c_sI = lu.solve(sI);
      for (std::size_t m = 0; m < in.quad.size(); ++m)
        for (std::size_t k = 0; k < np; ++k) f.scattered[m][el * np + k] = c_sI(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(m));
      if (!beam_fields.empty()) {
        Eigen::MatrixXd sF(P, static_cast<Eigen::Index>(beam_fields.size()));
        for (std::size_t b = 0; b < beam_fields.size(); ++b) {
          std::fill(scattered_in.begin(), scattered_in.end(), 0.0);
          if (!is_cut(b, el)) medium.scattering_term.apply_add(el, beam_fields[b].F.data() + el * np, scattered_in.data());
          for (std::size_t i = 0; i < np; ++i) sF(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(b)) = scattered_in[i];
        }
        const Eigen::MatrixXd c_sF = lu.solve(sF);
        for (std::size_t b = 0; b < beam_fields.size(); ++b)
          for (std::size_t k = 0; k < np; ++k) f.beam_scattered[b][el * np + k] = c_sF(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(b));
      }
    }
  }
  return f;
}

// Per thread: the segment count, and copies of the user source expressions (muparser binds its
// variables per object, so one object must not be evaluated by two threads at once).
struct Counters {
  std::uint64_t segments = 0;
  std::vector<io::Expression> sources;
};

class RayIntegrator {
 public:
  RayIntegrator(const McModel& m, const GatherInput& in, const Fields& f, const std::vector<double>& reflected)
      : m_(m), in_(in), f_(f), reflected_(reflected) {}

  // Radiance arriving at x (in tracer element t) from direction d (traced along d).
  double radiance(std::size_t t, Vec3 x, Vec3 d, Counters& c) const {
    double L = 0, T = 1, tail = 0;
    int mirrors = 0, zero_steps = 0;
    std::vector<double> aniso_weight;  // w_m Phi(s_m . s) for the current direction
    while (T > kMinTransmission) {
      const Exit ex = exit_face(m_.cells[t].plane, x.data(), d.data());
      if (ex.face < 0 || zero_steps > 64) break;
      zero_steps = ex.distance > 0 ? 0 : zero_steps + 1;
      ++c.segments;
      if (ex.distance > 0) {
        const double T0 = T;
        const double part = segment(t, x, d, ex.distance, T, aniso_weight, tail, c);  // updates T
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
      if (const double rho_d = (1 - face.absorptivity) * (1 - face.specular_share); rho_d > 0 && f_.case_beams > 0)
        L += T * rho_d * case_beams_into_wall(m_, f_, t, x, face.inward) / kPi;
      const double specular = rho * face.specular_share;
      if (!(specular > 0) || ++mirrors > kMaxMirrors) break;
      T *= specular;
      const double dn = dot(d, face.inward);
      d = {d[0] - 2 * dn * face.inward[0], d[1] - 2 * dn * face.inward[1], d[2] - 2 * dn * face.inward[2]};
      aniso_weight.clear();
    }
    // Stopped by the transmission cutoff: what lies beyond is taken as the last segment's S / sigma_t
    // (the radiance of a thick medium there; exact at equilibrium).
    if (!(T > kMinTransmission)) L += T * tail;
    return L;
  }

 private:
  // integral_0^l S exp(-tau) along the segment from x; T is multiplied by the segment's transmission.
  // tail: S / sigma_t at the segment's end (0 where sigma_t = 0).
  double segment(std::size_t t, const Vec3& x, const Vec3& d, double l, double& T, std::vector<double>& aniso_weight, double& tail,
                 Counters& c) const {
    const auto e = static_cast<std::size_t>(m_.mesh.original[t]);
    const std::size_t np = f_.terms;
    double combined[220];  // N_p <= 165 (P8): kappa I_b + the direction's scattering (anisotropic elements)
    const double* c_source = &f_.source[e * np];
    if (f_.anisotropic[e]) {
      anisotropic_coefficients(e, d, aniso_weight, combined);
      for (std::size_t k = 0; k < np; ++k) combined[k] += c_source[k];
      const auto& phase = in_.medium.phase[static_cast<std::size_t>(in_.medium.scattering_of_element[e])];
      for (std::size_t b = 0; b < f_.beam_direction.size(); ++b) {  // sigma_s F_c Phi(s_c . s) / 4 pi, s = -d
        const double w = phase(-dot(f_.beam_direction[b], d)) / (4 * kPi);
        const double* cb = &f_.beam_scattered[b][e * np];
        for (std::size_t k = 0; k < np; ++k) combined[k] += w * cb[k];
      }
      c_source = combined;
    }
    double mono[220];
    const int user = in_.medium.source_of_element.empty() ? -1 : in_.medium.source_of_element[e];
    const Vec3 s_rad{-d[0], -d[1], -d[2]};  // the radiation's direction
    // Case beams whose shadow boundary cuts this element: sigma_s F exp(-tau) w at each point.
    double cut_weight[16];
    std::size_t cut_beam[16], n_cut = 0;
    for (std::size_t b = 0; b < f_.case_beams && n_cut < 16; ++b)
      if (f_.beam_cut[b][e]) {
        const int op = in_.medium.scattering_of_element[e];
        cut_beam[n_cut] = b;
        cut_weight[n_cut++] = m_.beam_flux[b] * in_.medium.phase[static_cast<std::size_t>(op)](-dot(f_.beam_direction[b], d)) / (4 * kPi);
      }
    auto source_at = [&](double tq) {
      const Vec3 y{x[0] + tq * d[0], x[1] + tq * d[1], x[2] + tq * d[2]};
      f_.monomials(e, y, mono);
      double S = dot_n(mono, c_source, np);
      if (n_cut > 0) {
        const double sigma_s = dot_n(mono, &f_.sigma_s[e * np], np);
        for (std::size_t k = 0; k < n_cut; ++k) S += sigma_s * cut_weight[k] * beam_transmission(m_, f_, cut_beam[k], t, y);
      }
      return user < 0 ? S : S + c.sources[static_cast<std::size_t>(user)](y, s_rad);
    };
    // Along the chord, t = l s, the element's source S and sigma_t are polynomials of degree p in s:
    // their values at the p + 1 Gauss points give their coefficients, and the optical depth
    // tau(s) = l integral_0^s sigma_t is a polynomial of degree p + 1, exact. On each sub-interval
    // [s_a, s_b] (length h, optical thickness tau_b - tau_a = beta h):
    //   integral S exp(-tau) dt = exp(-tau_a) integral_0^h f(u) exp(-beta u) du,
    //   f(u) = S exp(-delta(u)),  delta(u) = tau(s_a + u / l) - tau_a - beta u,
    // with f fitted by its p + 1 Gauss values and the moments of exp(-beta u) exact (exp_moments).
    // delta vanishes at both ends and where sigma_t is uniform (then the integral is exact for the
    // source polynomial); sub-intervals keep |delta| <= kMaxDelta (about Delta(sigma_t) h / 8 for a
    // linear sigma_t), so that f is smooth however thick the sub-interval is.
    const double* c_beta = &f_.sigma_t[e * np];
    const bool uniform = f_.sigma_t_constant[e];
    if (f_.sigma_t_max[e] * l <= kThinChord) {
      // An optically thin chord: sigma_t constant (its Gauss mean) and the source fitted at m =
      // max(2, (p + 2) / 2) Gauss points, which is Gauss's rule, exact for the degree-p source, as
      // tau -> 0; the neglected variation of sigma_t and the fit's error scale with tau.
      const auto m = static_cast<std::size_t>(f_.thin_points);
      double S_val[9], moments[9], tau = 0;
      for (std::size_t i = 0; i < m; ++i) {
        S_val[i] = source_at(l * f_.thin_s[i]);
        tau += f_.thin_w[i] * (uniform ? f_.sigma_t_max[e] : dot_n(mono, c_beta, np));
      }
      tau = std::max(0.0, tau * l);
      const double transmission = exp_moments(tau, static_cast<int>(m) - 1, moments);
      double integral = 0, S_end = 0;
      for (std::size_t k = 0; k < m; ++k) {
        const double c = dot_n(&f_.thin_to_monomials[k * m], S_val, m);
        integral += c * moments[k];
        S_end += c;
      }
      T *= transmission;
      tail = tau > 0 ? S_end * l / tau : 0.0;
      return l * integral;
    }
    const int n = f_.order + 1;
    const auto un = static_cast<std::size_t>(n), uf = static_cast<std::size_t>(f_.fit_points);
    double S_val[9], beta_val[9], S_coef[9], beta_coef[9], tau_coef[10];
    for (std::size_t i = 0; i < un; ++i) {
      S_val[i] = source_at(l * f_.gauss_s[i]);  // leaves the point's monomials in mono
      beta_val[i] = uniform ? f_.sigma_t_max[e] : dot_n(mono, c_beta, np);
    }
    double beta_lo = beta_val[0], beta_hi = beta_val[0];
    for (std::size_t i = 0; i < un; ++i) beta_lo = std::min(beta_lo, beta_val[i]), beta_hi = std::max(beta_hi, beta_val[i]);
    for (std::size_t k = 0; k < un; ++k) {
      S_coef[k] = dot_n(&f_.to_monomials[k * un], S_val, un);
      beta_coef[k] = uniform ? (k == 0 ? beta_val[0] : 0.0) : dot_n(&f_.to_monomials[k * un], beta_val, un);
      tau_coef[k + 1] = l * beta_coef[k] * kReciprocal[k + 1];
    }
    tau_coef[0] = 0;
    auto horner = [](const double* c, std::size_t count, double x) {
      double v = c[count - 1];
      for (std::size_t k = count - 1; k-- > 0;) v = v * x + c[k];
      return v;
    };
    auto tau_at = [&](double x) { return horner(tau_coef, un + 1, x); };
    // User sources and the pointwise beams of cut elements are not polynomials: evaluated again at
    // each sub-interval's points.
    const bool polynomial = user < 0 && n_cut == 0;
    const int n_sub = uniform ? 1 : std::max(1, static_cast<int>(std::ceil(std::sqrt((beta_hi - beta_lo) * l / (8 * kMaxDelta)))));
    const double step = 1.0 / n_sub, h = l * step;
    double integral = 0, tau_a = 0, T_a = 1;
    for (int sub = 0; sub < n_sub; ++sub) {
      const double s_a = sub * step;
      const double tau_b = uniform ? beta_val[0] * l : std::max(tau_a, tau_at(s_a + step));  // sigma_t's polynomial may dip below 0
      const double beta = (tau_b - tau_a) / h;
      // f is fitted at fit_points = max(p + 1, 3) points: at P1, delta is quadratic even where S and
      // sigma_t are linear. delta takes tau's running maximum (as tau_b does where sigma_t's
      // polynomial dips below 0), so it never amplifies the source.
      double f_val[9];
      for (std::size_t i = 0; i < uf; ++i) {
        const double u = f_.fit_s[i], x = s_a + step * u;
        const double S = n_sub == 1 && uf == un ? S_val[i] : polynomial ? horner(S_coef, un, x) : source_at(l * x);
        const double delta = uniform ? 0.0 : std::max(tau_at(x), tau_a) - tau_a - beta * h * u;
        f_val[i] = delta == 0 ? S : S * std::exp(-delta);
      }
      double moments[9];
      const double transmission = exp_moments(beta * h, f_.fit_points - 1, moments);
      double part = 0;
      for (std::size_t k = 0; k < uf; ++k) part += dot_n(&f_.fit_to_monomials[k * uf], f_val, uf) * moments[k];
      integral += T_a * h * part;
      T_a *= transmission;
      tau_a = tau_b;
    }
    T *= T_a;
    // The tail beyond a stopping ray: S / sigma_t at the chord's end.
    const double beta_end = uniform ? beta_val[0] : horner(beta_coef, un, 1.0), S_end = polynomial ? horner(S_coef, un, 1.0) : source_at(l);
    tail = beta_end > 0 ? S_end / beta_end : 0.0;
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

// A quadrature rule on the triangle exact to degree 2p (so that the face mass matrix is exact) with
// as few points as known: P1 the 3-point rule of degree 2 (Strang & Fix 1973), P2 the 6-point rule
// of degree 4 (Dunavant 1985, Int. J. Numer. Meth. Eng. 21:1129, table of degree 4), instead of the
// (p + 1)^2 points of the collapsed Gauss rule used above P2: the gather's wall rays fall by 1/4
// (P1) and 1/3 (P2). Points as (l1, l2), weights summing to 1 (the projection does not see their scale).
void face_rule(int order, std::vector<std::array<double, 2>>& points, std::vector<double>& weight) {
  auto orbit = [&](double a, double w) {  // the 3 points (a, a, 1 - 2a) and their permutations
    for (const auto& [l1, l2] : {std::pair{a, a}, {a, 1 - 2 * a}, {1 - 2 * a, a}}) points.push_back({l1, l2}), weight.push_back(w / 3);
  };
  if (order == 1) return orbit(1.0 / 6.0, 1.0);
  if (order == 2) {
    orbit(0.445948490915965, 3 * 0.223381589678011);
    orbit(0.091576213509771, 3 * 0.109951743655322);
    return;
  }
  // Collapsed Gauss-Legendre: l1 = u, l2 = v (1 - u), weight (1 - u) w_u w_v, exact to degree
  // 2n - 2 in (l1, l2): n = p + 1.
  const int n = order + 1;
  std::vector<double> x, w;
  gas::gauss_legendre_01(n, x, w);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double u = x[static_cast<std::size_t>(i)], v = x[static_cast<std::size_t>(j)];
      points.push_back({u, v * (1 - u)});
      weight.push_back(2 * (1 - u) * w[static_cast<std::size_t>(i)] * w[static_cast<std::size_t>(j)]);
    }
}

FaceProjection face_projection(const dg::ReferenceTet& ref) {
  FaceProjection fp;
  std::vector<double> weight;
  face_rule(ref.order, fp.points, weight);
  const Eigen::Map<const Eigen::VectorXd> W(weight.data(), static_cast<Eigen::Index>(weight.size()));
  for (int f = 0; f < 4; ++f) {
    const Eigen::MatrixXd P = ref.face_interpolation_matrix(f, fp.points);  // Q x N_fp
    const Eigen::MatrixXd PtW = P.transpose() * W.asDiagonal();
    fp.to_nodes[static_cast<std::size_t>(f)] = (PtW * P).ldlt().solve(PtW);
  }
  return fp;
}

// A receiver: a wall point (the cosine-weighted hemisphere about its inward normal, q_in = pi x the
// mean radiance; on an edge, `adjacent` is the other wall's inward normal) or a volume point (the
// sphere in antipodal pairs about `normal`, its axis: G = 4 pi x the mean radiance, q = -4 pi x the
// mean of L d, d pointing back along the ray; the odd moments of a uniform field vanish exactly).
struct Receiver {
  std::size_t t = 0;  // tracer cell
  Vec3 x{}, normal{}, adjacent{};
  bool sphere = false;
  double floor = 0;  // below this |value| the tolerance is absolute
};

// Sample k of a receiver (a ray, or an antipodal pair) added to acc. Hemisphere: cos theta =
// sqrt(1 - u), ray 0 along the normal. On an edge (adjacent inward normal m = c n + a t1, a > 0) the
// directions with a sin(theta) cos(phi) + c cos(theta) < 0 leave through the other wall at once: for
// each u the open arc |phi| <= phi0 and the blocked rest are sampled by the same v, weighted by their
// shares phi0 / pi and 1 - phi0 / pi, so that the radiance's jump between them is on the border of
// each part's samples.
void sample_receiver(const RayIntegrator& ray, const Receiver& r, std::uint32_t k, std::uint32_t scramble, std::array<double, 4>& acc,
                     Counters& c) {
  const auto [u, v] = sobol2(k, scramble);
  if (r.sphere) {
    const Vec3 d = scatter_direction(r.normal, 1 - u, v);
    for (const double sign : {1.0, -1.0}) {
      const Vec3 ds{sign * d[0], sign * d[1], sign * d[2]};
      const double L = ray.radiance(r.t, r.x, ds, c);
      acc[0] += 0.5 * L, acc[1] -= 0.5 * L * ds[0], acc[2] -= 0.5 * L * ds[1], acc[3] -= 0.5 * L * ds[2];
    }
    return;
  }
  const Vec3& n = r.normal;
  const double cn = dot(r.adjacent, n);
  Vec3 t1{r.adjacent[0] - cn * n[0], r.adjacent[1] - cn * n[1], r.adjacent[2] - cn * n[2]};
  const double a = std::sqrt(dot(t1, t1));
  if (!(a > 1e-6)) {
    acc[0] += ray.radiance(r.t, r.x, scatter_direction(n, std::sqrt(1 - u), v), c);
    return;
  }
  for (double& x : t1) x /= a;
  const Vec3 t2{n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]};
  const double ct = std::sqrt(1 - u), st = std::sqrt(u);
  const double phi0 = st > 0 ? std::acos(std::clamp(-cn * ct / (a * st), -1.0, 1.0)) : (cn >= 0 ? kPi : 0.0);
  auto along = [&](double phi) {
    const double cp = std::cos(phi), sp = std::sin(phi);
    const Vec3 d{st * cp * t1[0] + st * sp * t2[0] + ct * n[0], st * cp * t1[1] + st * sp * t2[1] + ct * n[1],
                 st * cp * t1[2] + st * sp * t2[2] + ct * n[2]};
    return ray.radiance(r.t, r.x, d, c);
  };
  const double open = phi0 / kPi;
  if (open > 0) acc[0] += open * along(phi0 * (2 * v - 1));
  if (open < 1) acc[0] += (1 - open) * along(phi0 + (2 * kPi - 2 * phi0) * v);
}

// One receiver's integral from nested sample sets: norm x the mean over its samples, and the same
// from the first half of them.
struct PointIntegral {
  std::array<double, 4> full{}, half{};
  int samples = 0;  // rays (a sphere's pairs count twice)
  bool converged = false;
};

// Samples [first, last) of one receiver: the unit of work of a pass (at most kChunk samples, so that
// a pass of a few receivers still spreads over every thread or work-item).
struct GatherTask {
  std::uint32_t receiver, first, last;
};
constexpr std::uint32_t kChunk = 32;

// The doubling control over all receivers at once. Each starts at min_rays (a sphere: min_rays / 2
// pairs) and doubles, keeping the samples it has, until its value and the value from the first half
// of its samples differ by at most tolerance x max(|value|, floor) in every component at two
// doublings in a row, or max_rays. Every pass traces the next samples of the receivers still open,
// as GatherTasks, by trace(tasks) -> their sums (the host loop, or a device); the sums are added per
// receiver in task order, so a pass's result does not depend on who traced it.
template <class Trace>
std::vector<PointIntegral> integrate_points(const std::vector<Receiver>& receivers, const GatherControl& control, Trace&& trace) {
  struct State {
    std::array<double, 4> sum{}, sum_half{};
    int n = 0, target = 0, min = 0, max = 0;
    double previous = std::numeric_limits<double>::infinity();  // the last doubling's difference
    bool open = true;
  };
  std::vector<State> state(receivers.size());
  for (std::size_t i = 0; i < receivers.size(); ++i) {
    const int per = receivers[i].sphere ? 2 : 1;  // rays per sample
    state[i].min = state[i].target = std::max(1, control.min_rays / per);
    state[i].max = std::max(1, control.max_rays / per);
  }
  std::vector<PointIntegral> out(receivers.size());
  std::vector<GatherTask> tasks;
  std::vector<char> first_half;  // per task: part of the first half of a receiver's first pass
  auto add_tasks = [&](std::uint32_t i, int first, int last, bool half) {
    for (int k = first; k < last; k += static_cast<int>(kChunk)) {
      tasks.push_back({i, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(std::min(last, k + static_cast<int>(kChunk)))});
      first_half.push_back(half);
    }
  };
  while (true) {
    tasks.clear(), first_half.clear();
    for (std::size_t i = 0; i < receivers.size(); ++i) {
      auto& st = state[i];
      if (!st.open) continue;
      const auto id = static_cast<std::uint32_t>(i);
      if (st.n == 0 && st.target > 1) {  // the first pass: its first half is the first estimate's half
        add_tasks(id, 0, st.target / 2, true);
        add_tasks(id, st.target / 2, st.target, false);
      } else {
        st.sum_half = st.sum;  // a doubling: the half is everything traced so far
        add_tasks(id, st.n, st.target, false);
      }
    }
    if (tasks.empty()) return out;
    const std::vector<std::array<double, 4>> sums = trace(tasks);
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      auto& st = state[tasks[k].receiver];
      for (std::size_t c = 0; c < 4; ++c) {
        st.sum[c] += sums[k][c];
        if (first_half[k]) st.sum_half[c] += sums[k][c];
      }
    }
    for (std::size_t i = 0; i < receivers.size(); ++i) {
      auto& st = state[i];
      if (!st.open) continue;
      const int n_half = st.n > 0 ? st.n : st.target > 1 ? st.target / 2 : st.target;
      if (n_half == st.target) st.sum_half = st.sum;  // a single sample: no half
      st.n = st.target;
      const double norm = receivers[i].sphere ? 4 * kPi : kPi;
      auto& r = out[i];
      double diff = 0;
      for (std::size_t c = 0; c < 4; ++c) {
        r.full[c] = norm * st.sum[c] / st.n, r.half[c] = norm * st.sum_half[c] / n_half;
        diff = std::max(diff, std::abs(r.full[c] - r.half[c]));
      }
      r.samples = st.n * (receivers[i].sphere ? 2 : 1);
      // Two doublings in a row must meet the tolerance: one difference of two nested nets can be small
      // by chance where the radiance jumps (the edges of a hot wall seen through the medium).
      const double allowed = control.tolerance * std::max(std::abs(r.full[0]), receivers[i].floor);
      r.converged = diff <= allowed && st.previous <= allowed;
      st.previous = diff;
      if (r.converged || st.target >= st.max) {
        st.open = false;
      } else {
        st.target = std::min(2 * st.target, st.max);
      }
    }
  }
}

// The gather as GatherArrays (a device's view): the tracer's mesh, the element polynomials, the
// Gauss rules, what each boundary face sends back along a ray, the receivers.
GatherArrays gather_arrays(const McModel& model, const Fields& f, const std::vector<double>& reflected, const std::vector<Receiver>& receivers) {
  GatherArrays a;
  const std::size_t K = model.mesh.num_elements();
  a.planes.reserve(16 * K), a.across.reserve(4 * K);
  for (std::size_t t = 0; t < K; ++t) {
    for (std::size_t k = 0; k < 4; ++k) {
      const auto& p = model.cells[t].plane[k];
      a.planes.insert(a.planes.end(), {p.n[0], p.n[1], p.n[2], p.offset});
      a.across.push_back(model.cells[t].across[k]);
    }
    a.original.push_back(static_cast<int>(model.mesh.original[t]));
  }
  a.order = f.order, a.terms = static_cast<int>(f.terms), a.thin_points = f.thin_points, a.fit_points = f.fit_points;
  for (const auto& e : f.exponents) a.exponents.insert(a.exponents.end(), e.begin(), e.end());
  for (std::size_t e = 0; e < f.centre.size(); ++e)
    a.element.insert(a.element.end(), {f.centre[e][0], f.centre[e][1], f.centre[e][2], f.scale[e], f.sigma_t_max[e], f.sigma_t_constant[e] ? 1.0 : 0.0});
  a.sigma_t = f.sigma_t, a.source = f.source;
  for (const auto* r : {&f.gauss_s, &f.gauss_w, &f.to_monomials, &f.thin_s, &f.thin_w, &f.thin_to_monomials, &f.fit_s, &f.fit_w, &f.fit_to_monomials})
    a.rules.insert(a.rules.end(), r->begin(), r->end());
  for (std::size_t b = 0; b < model.faces.size(); ++b) {
    const auto& face = model.faces[b];
    a.faces.insert(a.faces.end(), {face.leaving() / kPi + reflected[b], face.absorptivity, face.specular_share, face.inward[0], face.inward[1], face.inward[2]});
  }
  for (const auto& r : receivers) {
    a.receivers.insert(a.receivers.end(), {r.x[0], r.x[1], r.x[2], r.normal[0], r.normal[1], r.normal[2], r.adjacent[0], r.adjacent[1], r.adjacent[2]});
    a.receiver_int.insert(a.receiver_int.end(), {static_cast<int>(r.t), r.sphere ? 1 : 0});
  }
  return a;
}

}  // namespace

GatherResult final_gather(const McModel& model, const GatherInput& in, const std::vector<ProbePoint>& probes, const GatherControl& control) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& disc = in.disc;
  const std::size_t nfp = in.walls.face_nodes();
  // Beams: the case's, F exp(-tau) at every node along shadow rays (through the sigma_t of a first
  // pass), then their images in mirrors with the DG's F.
  std::vector<BeamField> beam_fields;
  const std::size_t np = static_cast<std::size_t>(disc.num_nodes());
  std::vector<std::vector<char>> cut;
  if (!model.beam_direction.empty()) {
    const Fields attenuation = make_fields(in, {}, {});
    for (std::size_t i = 0; i < model.beam_direction.size(); ++i) {
      BeamField bf{model.beam_direction[i], std::vector<double>(disc.num_dofs(), 0.0)};
      cut.emplace_back(disc.num_elements(), 0);
#pragma omp parallel for schedule(dynamic, 16)
      for (std::int64_t ei = 0; ei < static_cast<std::int64_t>(disc.num_elements()); ++ei) {
        const auto e = static_cast<std::size_t>(ei);
        const auto t = static_cast<std::size_t>(model.mesh.tracer_index[e]);
        bool lit = false, dark = false;
        for (std::size_t k = e * np; k < (e + 1) * np; ++k) {
          bf.F[k] = model.beam_flux[i] * beam_transmission(model, attenuation, i, t, disc.node_position[k]);
          (bf.F[k] > 0 ? lit : dark) = true;
        }
        cut.back()[e] = lit && dark && !in.medium.scattering_of_element.empty() && in.medium.scattering_of_element[e] >= 0;
      }
      beam_fields.push_back(std::move(bf));
    }
  }
  for (const auto& b : in.beams) beam_fields.push_back({b.direction, std::vector<double>(b.F.begin(), b.F.end())});
  const Fields fields = make_fields(in, beam_fields, cut);
  const FaceProjection projection = face_projection(disc.ref);
  const std::size_t per_face = projection.points.size();
  const std::size_t wall_points = in.walls.num_faces() * per_face;
  // Wall point p: its face, position and tracer cell.
  auto wall_point = [&](std::size_t p) {
    const std::size_t b = p / per_face;
    const auto [e, f] = in.walls.face(b);
    const auto v = disc.element_vertices(e);
    const auto& fv = dgrte::kFaceVertices[static_cast<std::size_t>(f)];
    const auto [l1, l2] = projection.points[p % per_face];
    Vec3 x{};
    for (std::size_t k = 0; k < 3; ++k)
      x[k] = (1 - l1 - l2) * v[static_cast<std::size_t>(fv[0])][k] + l1 * v[static_cast<std::size_t>(fv[1])][k] + l2 * v[static_cast<std::size_t>(fv[2])][k];
    return std::tuple{b, x, static_cast<std::size_t>(model.mesh.tracer_index[e])};
  };
  GatherResult out;
  // The beams' flux into the walls: the case's from shadow rays at the wall points (projected like
  // q_in), their images' from the DG's F_c at the face nodes (images_q_in).
  out.beam_q_in.assign(in.walls.num_faces() * nfp, 0.0);
  std::vector<double> images_q_in(out.beam_q_in.size(), 0.0);
  if (!model.beam_direction.empty() || !in.beams.empty()) {
    std::vector<double> at_points_beam(wall_points, 0.0);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t pi = 0; pi < static_cast<std::int64_t>(wall_points); ++pi) {
      const auto [b, x, t] = wall_point(static_cast<std::size_t>(pi));
      at_points_beam[static_cast<std::size_t>(pi)] = case_beams_into_wall(model, fields, t, x, model.faces[b].inward);
    }
    for (std::size_t b = 0; b < in.walls.num_faces(); ++b) {
      const Eigen::VectorXd nodal = projection.to_nodes[static_cast<std::size_t>(in.walls.face(b).face)] *
                                    Eigen::Map<const Eigen::VectorXd>(&at_points_beam[b * per_face], static_cast<Eigen::Index>(per_face));
      for (std::size_t j = 0; j < nfp; ++j) {
        out.beam_q_in[b * nfp + j] = nodal[static_cast<Eigen::Index>(j)];
        for (const auto& image : in.beams)
          if (const double c = -dot(image.direction, model.faces[b].inward); c > 0)
            images_q_in[b * nfp + j] += c * image.F[in.walls.element_node(b * nfp + j)];
        out.beam_q_in[b * nfp + j] += images_q_in[b * nfp + j];
      }
    }
  }
  // The diffusely reflected radiance of each face: rho_d d q_in^DG with the face mean of the DG's
  // (diffuse) incident flux and the DG's own factor d (so that a DG solution at equilibrium gathers
  // exactly), plus rho_d q / pi of the beam images that hit it (face mean). The case's beams are
  // reflected where each ray meets the wall (a shadow ray there: their lit patches have sharp edges).
  std::vector<double> reflected(in.walls.num_faces(), 0.0);
  for (std::size_t b = 0; b < reflected.size(); ++b) {
    const auto f = static_cast<std::size_t>(in.walls.face(b).face);
    const Eigen::VectorXd w = disc.ref.face_mass[f].colwise().sum().transpose();
    double mean = 0, images = 0;
    for (std::size_t j = 0; j < nfp; ++j) {
      mean += w[static_cast<Eigen::Index>(j)] * in.q_in[b * nfp + j] / w.sum();
      images += w[static_cast<Eigen::Index>(j)] * images_q_in[b * nfp + j] / w.sum();
    }
    const auto& face = model.faces[b];
    reflected[b] = (1 - face.absorptivity) * (1 - face.specular_share) * (in.walls.diffuse_factor(b) * mean + images / kPi);
  }
  // Below these the tolerance is absolute: 1 % of the largest DG q_in (walls) and G (volume).
  double floor_wall = 0, floor_volume = 0;
  for (const double v : in.q_in) floor_wall = std::max(floor_wall, 0.01 * std::abs(v));
  for (const double v : in.G) floor_volume = std::max(floor_volume, 0.01 * std::abs(v));
  out.q_in.assign(in.walls.num_faces() * nfp, 0.0);
  out.probe.assign(probes.size(), {0, 0, 0, 0});
  out.probe_half.assign(probes.size(), {0, 0, 0, 0});
  out.q_in_half.assign(out.q_in.size(), 0.0);
  std::vector<double> at_points(wall_points), at_points_half(wall_points);
  out.probe_beam.assign(probes.size(), {0, 0, 0, 0});
  const std::size_t total = wall_points + probes.size();
  // A perfect mirror (a symmetry plane) absorbs nothing: its q_in has no use, and gathering it
  // would cost most of the rays of a 2-D case modelled as a slice between mirrors (DG value kept).
  auto mirror = [&](std::size_t b) { return model.faces[b].absorptivity == 0 && model.faces[b].specular_share == 1; };
  // The receivers: the wall points (not on mirrors), then the probes.
  const RayIntegrator ray(model, in, fields, reflected);
  std::vector<Receiver> receivers;
  std::vector<std::size_t> receiver_of(total, SIZE_MAX);
  for (std::size_t p = 0; p < total; ++p) {
    Receiver r;
    if (p < wall_points) {
      const auto [b, x, t] = wall_point(p);
      if (mirror(b)) continue;
      r = {t, x, model.faces[b].inward, {0, 0, 0}, false, floor_wall};
    } else if (const auto& pt = probes[p - wall_points]; pt.face >= 0) {
      const auto& face = model.faces[static_cast<std::size_t>(pt.face)];
      r = {static_cast<std::size_t>(face.element), pt.x, face.inward, pt.adjacent_wall, false, floor_wall};
    } else {
      r = {static_cast<std::size_t>(model.mesh.tracer_index[static_cast<std::size_t>(pt.element)]), pt.x, pt.axis, {0, 0, 0}, true, floor_volume};
    }
    receiver_of[p] = receivers.size();
    receivers.push_back(r);
  }
  std::uint64_t segments = 0;
  auto host_trace = [&](const std::vector<GatherTask>& tasks) {
    std::vector<std::array<double, 4>> sums(tasks.size(), {0, 0, 0, 0});
    std::uint64_t pass_segments = 0;
#pragma omp parallel reduction(+ : pass_segments)
    {
      Counters c;
      c.sources = in.medium.source;  // this thread's copies
#pragma omp for schedule(dynamic, 4)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(tasks.size()); ++i) {
        const auto& task = tasks[static_cast<std::size_t>(i)];
        for (std::uint32_t k = task.first; k < task.last; ++k)
          sample_receiver(ray, receivers[task.receiver], k, control.scramble, sums[static_cast<std::size_t>(i)], c);
      }
      pass_segments += c.segments;
    }
    segments += pass_segments;
    return sums;
  };
  // Another tracer (a device) takes the gathers whose sources are element polynomials.
  std::string host_only;
  if (std::any_of(fields.anisotropic.begin(), fields.anisotropic.end(), [](char a) { return a != 0; }))
    host_only = "anisotropic scattering";
  else if (std::any_of(in.medium.source_of_element.begin(), in.medium.source_of_element.end(), [](int u) { return u >= 0; }))
    host_only = "user sources";
  else if (!model.beam_direction.empty())
    host_only = "collimated beams";
  if (control.arrays_out) control.arrays_out(gather_arrays(model, fields, reflected, receivers), host_only);
  std::vector<PointIntegral> integrals;
  if (control.tracer && host_only.empty()) {
    const GatherArrays arrays = gather_arrays(model, fields, reflected, receivers);
    bool fresh = true;
    auto device_trace = [&](const std::vector<GatherTask>& tasks) {
      std::vector<std::uint32_t> flat;
      flat.reserve(3 * tasks.size());
      for (const auto& t : tasks) flat.insert(flat.end(), {t.receiver, t.first, t.last});
      const std::vector<double> sums = control.tracer(arrays, flat, control.scramble, fresh, segments);
      fresh = false;
      std::vector<std::array<double, 4>> out_sums(tasks.size());
      for (std::size_t i = 0; i < tasks.size(); ++i)
        for (std::size_t c = 0; c < 4; ++c) out_sums[i][c] = sums[4 * i + c];
      return out_sums;
    };
    integrals = integrate_points(receivers, control, device_trace);
    out.traced_by = control.tracer_name;
  } else {
    integrals = integrate_points(receivers, control, host_trace);
    if (control.tracer) out.traced_by = "host (" + control.tracer_name + " does not integrate " + host_only + ")";
  }
  std::uint64_t rays = 0, at_max = 0;
  for (const auto& r : integrals) rays += static_cast<std::uint64_t>(r.samples), at_max += r.converged ? 0 : 1;
  for (std::size_t p = 0; p < total; ++p) {
    if (receiver_of[p] == SIZE_MAX) continue;
    const auto& r = integrals[receiver_of[p]];
    if (p < wall_points) {
      at_points[p] = r.full[0], at_points_half[p] = r.half[0];
    } else if (probes[p - wall_points].face >= 0) {
      out.probe[p - wall_points] = {r.full[0], 0, 0, 0};
      out.probe_half[p - wall_points] = {r.half[0], 0, 0, 0};
    } else {
      out.probe[p - wall_points] = r.full;
      out.probe_half[p - wall_points] = r.half;
    }
  }
  // The case's beams at the probes (shadow rays).
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t pi = 0; pi < static_cast<std::int64_t>(probes.size()); ++pi) {
    const auto& pt = probes[static_cast<std::size_t>(pi)];
    const auto& r = receivers[receiver_of[wall_points + static_cast<std::size_t>(pi)]];
    out.probe_beam[static_cast<std::size_t>(pi)] =
        pt.face >= 0 ? std::array<double, 4>{case_beams_into_wall(model, fields, r.t, pt.x, r.normal), 0, 0, 0} : case_beams_at(model, fields, r.t, pt.x);
  }
  for (std::size_t b = 0; b < in.walls.num_faces(); ++b) {
    if (mirror(b)) {  // the DG's diffuse q_in
      for (std::size_t j = 0; j < nfp; ++j) out.q_in[b * nfp + j] = out.q_in_half[b * nfp + j] = in.q_in[b * nfp + j];
      continue;
    }
    const auto& P = projection.to_nodes[static_cast<std::size_t>(in.walls.face(b).face)];
    auto at = [&](const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(&v[b * per_face], static_cast<Eigen::Index>(per_face)); };
    const Eigen::VectorXd nodal = P * at(at_points), nodal_half = P * at(at_points_half);
    for (std::size_t j = 0; j < nfp; ++j) {
      out.q_in[b * nfp + j] = nodal[static_cast<Eigen::Index>(j)];
      out.q_in_half[b * nfp + j] = nodal_half[static_cast<Eigen::Index>(j)];
    }
  }
  std::size_t mirror_points = 0;
  for (std::size_t b = 0; b < in.walls.num_faces(); ++b) mirror_points += mirror(b) ? per_face : 0;
  out.points = total - mirror_points;
  out.rays = rays;
  out.points_at_max = control.tolerance > 0 ? at_max : 0;
  out.segments = segments;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void accumulate(GatherResult& total, const GatherResult& part) {
  if (total.q_in.empty() && total.probe.empty()) {
    total = part;
    return;
  }
  auto add = [](auto& to, const auto& from) {
    if (to.size() != from.size()) throw std::logic_error("mc::accumulate: gathers of different receivers");
    for (std::size_t i = 0; i < to.size(); ++i) to[i] += from[i];
  };
  auto add4 = [](auto& to, const auto& from) {
    if (to.size() != from.size()) throw std::logic_error("mc::accumulate: gathers of different receivers");
    for (std::size_t i = 0; i < to.size(); ++i)
      for (std::size_t c = 0; c < 4; ++c) to[i][c] += from[i][c];
  };
  add(total.q_in, part.q_in), add(total.q_in_half, part.q_in_half), add(total.beam_q_in, part.beam_q_in);
  add4(total.probe, part.probe), add4(total.probe_half, part.probe_half), add4(total.probe_beam, part.probe_beam);
  total.rays += part.rays, total.segments += part.segments, total.points_at_max += part.points_at_max;
  total.seconds += part.seconds;
}

}  // namespace dgrte::mc
