#include "angular/quadrature.hpp"

#include "angular/tables.hpp"
#include "common/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

namespace dgrte::angular {
namespace {

constexpr double kPi = std::numbers::pi;

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
Vec3 scaled(const Vec3& a, double c) { return {a[0] * c, a[1] * c, a[2] * c}; }

void add(Quadrature& q, const Vec3& s, double w) {
  q.s.push_back(s);
  q.w.push_back(w);
  q.s_bar.push_back(scaled(s, w));
}

// The 8 octants by sign reflection, in the order (+++), (++-), (+-+), (+--), (-++), ...
Quadrature from_octant(const std::vector<OctantOrdinate>& octant, std::string name, bool renormalise) {
  Quadrature q;
  q.name = std::move(name);
  double octant_sum = 0;
  for (const auto& o : octant) octant_sum += o.w;
  const double scale = renormalise ? (kPi / 2) / octant_sum : 1.0;
  for (int oct = 0; oct < 8; ++oct) {
    const double sx = (oct & 4) ? -1 : 1, sy = (oct & 2) ? -1 : 1, sz = (oct & 1) ? -1 : 1;
    for (const auto& o : octant) {
      Vec3 s{sx * o.mu, sy * o.eta, sz * o.xi};
      if (renormalise) s = scaled(s, 1 / norm(s));
      add(q, s, o.w * scale);
    }
  }
  return q;
}

// Maps local coordinates (a, b, c) with c along `axis` to (x, y, z): cyclic, right-handed.
Vec3 from_axis_frame(const Vec3& local, int axis) {
  switch (axis) {
    case 0: return {local[2], local[0], local[1]};
    case 1: return {local[1], local[2], local[0]};
    default: return local;
  }
}

void check_axis(int axis) {
  if (axis < 0 || axis > 2) throw InputError(fmt::format("axis {} is not x, y or z (0, 1, 2)", axis));
}

// Gauss-Legendre nodes and weights on (0, 1), n points (Newton on P_n from Chebyshev guesses).
void gauss_legendre_unit(int n, std::vector<double>& x, std::vector<double>& w) {
  x.resize(static_cast<std::size_t>(n));
  w.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      const double dz = p1 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    x[static_cast<std::size_t>(i)] = (1 - z) / 2;  // ascending on (0, 1)
    w[static_cast<std::size_t>(i)] = 1 / ((1 - z * z) * dp * dp);  // (2/((1-z^2)P'^2)) / 2
  }
}

}  // namespace

int Quadrature::reflect(int m, const Vec3& n, double tol) const {
  const Vec3& d = s[static_cast<std::size_t>(m)];
  const double dn = dot(d, n);
  const Vec3 r{d[0] - 2 * dn * n[0], d[1] - 2 * dn * n[1], d[2] - 2 * dn * n[2]};
  for (std::size_t k = 0; k < s.size(); ++k)
    if (std::abs(s[k][0] - r[0]) < tol && std::abs(s[k][1] - r[1]) < tol && std::abs(s[k][2] - r[2]) < tol) return static_cast<int>(k);
  return -1;
}

Quadrature level_symmetric(int n) {
  const auto* t = level_symmetric_octant(n);
  if (!t) throw InputError(fmt::format("level-symmetric S_{} does not exist here: use an even order 2..16", n));
  return from_octant(*t, fmt::format("LQ_N S{} (level-symmetric)", n), false);
}

Quadrature heat_transfer_sn(int n) {
  const auto* t = heat_transfer_octant(n);
  if (!t) throw InputError(fmt::format("heat-transfer S_{} does not exist: use 4, 6 or 8", n));
  // 7-digit tables: directions and weights renormalised (|s| = 1, sum 4 pi) at the 1e-7 level.
  return from_octant(*t, fmt::format("heat-transfer S{} (code_saturne / Carlson-Lathrop)", n), true);
}

Quadrature thurgood(int n) {
  if (n < 1) throw InputError(fmt::format("T_N needs N >= 1 (got {})", n));
  // Octant 1: lattice a(i, j) = ((n - i - j) e1 + i e2 + j e3) / n on the face x + y + z = 1.
  auto a = [n](int i, int j) { return Vec3{double(n - i - j) / n, double(i) / n, double(j) / n}; };
  std::vector<OctantOrdinate> octant;
  auto triangle = [&](const Vec3& p, const Vec3& q, const Vec3& r) {
    const Vec3 c{(p[0] + q[0] + r[0]) / 3, (p[1] + q[1] + r[1]) / 3, (p[2] + q[2] + r[2]) / 3};
    const Vec3 u = scaled(p, 1 / norm(p)), v = scaled(q, 1 / norm(q)), w = scaled(r, 1 / norm(r));
    // Van Oosterom & Strackee (1983): tan(Omega/2) = |u.(v x w)| / (1 + u.v + v.w + w.u).
    const Vec3 vw{v[1] * w[2] - v[2] * w[1], v[2] * w[0] - v[0] * w[2], v[0] * w[1] - v[1] * w[0]};
    const double omega = 2 * std::atan2(std::abs(dot(u, vw)), 1 + dot(u, v) + dot(v, w) + dot(w, u));
    const double len = norm(c);
    octant.push_back({c[0] / len, c[1] / len, c[2] / len, omega});
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; i + j < n; ++j) {
      triangle(a(i, j), a(i + 1, j), a(i, j + 1));
      if (i + j <= n - 2) triangle(a(i + 1, j), a(i + 1, j + 1), a(i, j + 1));
    }
  return from_octant(octant, fmt::format("T{} (Thurgood)", n), false);
}

Quadrature finite_volume(int n_polar, int n_azimuthal, int axis) {
  check_axis(axis);
  if (n_polar < 1 || n_azimuthal < 1) throw InputError("finite-volume set needs polar >= 1 and azimuthal >= 1");
  Quadrature q;
  q.name = fmt::format("FV {} x {} (theta x phi about {})", n_polar, n_azimuthal, "xyz"[axis]);
  const double dth = kPi / n_polar, dph = 2 * kPi / n_azimuthal;
  for (int i = 0; i < n_polar; ++i) {
    const double t0 = i * dth, t1 = (i + 1) * dth;
    const double a = (t1 - t0) / 2 - (std::sin(2 * t1) - std::sin(2 * t0)) / 4;  // integral sin^2
    const double c = (std::sin(t1) * std::sin(t1) - std::sin(t0) * std::sin(t0)) / 2;  // integral sin cos
    for (int j = 0; j < n_azimuthal; ++j) {
      const double p0 = j * dph, p1 = (j + 1) * dph;
      const Vec3 local{a * (std::sin(p1) - std::sin(p0)), a * (std::cos(p0) - std::cos(p1)), c * dph};
      const Vec3 sb = from_axis_frame(local, axis);
      q.s.push_back(scaled(sb, 1 / norm(sb)));
      q.w.push_back(dph * (std::cos(t0) - std::cos(t1)));
      q.s_bar.push_back(sb);
    }
  }
  return q;
}

Quadrature product_gauss(int n_polar, int n_azimuthal, int axis) {
  check_axis(axis);
  if (n_polar < 2 || n_polar % 2) throw InputError(fmt::format("product set needs an even polar count >= 2 (got {})", n_polar));
  if (n_azimuthal < 1) throw InputError("product set needs azimuthal >= 1");
  std::vector<double> mu, wm;
  gauss_legendre_unit(n_polar / 2, mu, wm);
  Quadrature q;
  q.name = fmt::format("product {} x {} (half-range Gauss in the cosine about {} x uniform azimuth)", n_polar, n_azimuthal, "xyz"[axis]);
  for (int hemi : {1, -1})
    for (std::size_t i = 0; i < mu.size(); ++i) {
      const double c = hemi * mu[i], st = std::sqrt(1 - c * c);
      for (int k = 0; k < n_azimuthal; ++k) {
        const double ph = (k + 0.5) * 2 * kPi / n_azimuthal;
        add(q, from_axis_frame({st * std::cos(ph), st * std::sin(ph), c}, axis), wm[i] * 2 * kPi / n_azimuthal);
      }
    }
  return q;
}

Quadrature from_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("{}: cannot open the quadrature file (check the path)", file.string()));
  Quadrature q;
  q.name = fmt::format("file {}", file.filename().string());
  std::string line;
  bool header = false;
  for (int ln = 1; std::getline(in, line); ++ln) {
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!header) {
      header = true;
      if (line.find("sx") != std::string::npos) continue;
    }
    std::stringstream ss(line);
    std::array<double, 4> v{};
    char comma = 0;
    for (int k = 0; k < 4; ++k) {
      if (k && !(ss >> comma && comma == ',')) throw InputError(fmt::format("{}: line {}: expected sx,sy,sz,w", file.string(), ln));
      if (!(ss >> v[static_cast<std::size_t>(k)])) throw InputError(fmt::format("{}: line {}: expected four numbers sx,sy,sz,w", file.string(), ln));
    }
    Vec3 s{v[0], v[1], v[2]};
    const double len = norm(s);
    if (std::abs(len - 1) > 1e-6)
      throw InputError(fmt::format("{}: line {}: direction has length {:.9g}; give unit vectors (normalised silently within 1e-6)",
                                   file.string(), ln, len));
    if (!(v[3] > 0)) throw InputError(fmt::format("{}: line {}: weight {} must be positive", file.string(), ln, v[3]));
    add(q, scaled(s, 1 / len), v[3]);
  }
  if (q.s.empty()) throw InputError(fmt::format("{}: no ordinates (expected lines sx,sy,sz,w)", file.string()));
  const double sum = weight_sum(q);
  if (std::abs(sum / (4 * kPi) - 1) > 1e-6)
    throw InputError(fmt::format("{}: the weights sum to {:.10g}, not 4 pi = {:.10g}: weights are solid angles in sr", file.string(), sum, 4 * kPi));
  return q;
}

double weight_sum(const Quadrature& q) {
  double s = 0;
  for (double w : q.w) s += w;
  return s;
}

Vec3 first_moment(const Quadrature& q) {
  Vec3 m{};
  for (std::size_t k = 0; k < q.size(); ++k)
    for (int d = 0; d < 3; ++d) m[d] += q.s_bar[k][d];
  return m;
}

std::array<Vec3, 3> second_moment(const Quadrature& q) {
  std::array<Vec3, 3> m{};
  for (std::size_t k = 0; k < q.size(); ++k)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] += q.w[k] * q.s[k][i] * q.s[k][j];
  return m;
}

double half_range_flux(const Quadrature& q, const Vec3& n) {
  double h = 0;
  for (std::size_t k = 0; k < q.size(); ++k) h += std::max(0.0, dot(q.s_bar[k], n));
  return h;
}

}  // namespace dgrte::angular
