#include "angular/quadrature.hpp"

#include "angular/moments.hpp"
#include "angular/tables.hpp"
#include "common/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numbers>
#include <string_view>

namespace dgrte::angular {
namespace {

constexpr double kPi = std::numbers::pi;

Vec3 scaled(const Vec3& a, double c) { return {a[0] * c, a[1] * c, a[2] * c}; }

void add_point(Quadrature& q, const Vec3& s, double w) {
  q.s.push_back(s);
  q.w.push_back(w);
  q.s_bar.push_back(scaled(s, w));
}

// The 8 octants by sign flips, octant order (+++), (++-), (+-+), (+--), (-++), (-+-), (--+), (---).
// weight_scale converts the tabulated weights to sr; with `normalise` the directions are scaled to unit
// length (for 7-digit tables).
Quadrature from_octant(const std::vector<OctantOrdinate>& octant, std::string name, double weight_scale, bool normalise) {
  Quadrature q;
  q.name = std::move(name);
  for (int oct = 0; oct < 8; ++oct) {
    const double sx = (oct & 4) ? -1 : 1, sy = (oct & 2) ? -1 : 1, sz = (oct & 1) ? -1 : 1;
    for (const auto& o : octant) {
      Vec3 s{sx * o.mu, sy * o.eta, sz * o.xi};
      if (normalise) s = scaled(s, 1 / norm(s));
      add_point(q, s, o.w * weight_scale);
    }
  }
  return q;
}

// Local frame (a, b, c), c along `axis`, to (x, y, z); cyclic so that it stays right-handed.
Vec3 from_axis_frame(const Vec3& local, int axis) {
  switch (axis) {
    case 0: return {local[2], local[0], local[1]};
    case 1: return {local[1], local[2], local[0]};
    default: return local;
  }
}

void check_axis(int axis, const char* set) {
  if (axis < 0 || axis > 2) throw InputError(fmt::format("{} set: axis {} is not 0 (x), 1 (y) or 2 (z)", set, axis));
}

// Gauss-Legendre nodes and weights on (-1, 1): Newton iteration on P_n from the usual cosine guesses.
void gauss_legendre(int n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(static_cast<std::size_t>(n), 0);
  w.assign(static_cast<std::size_t>(n), 0);
  auto legendre_and_derivative = [n](double z, double& p, double& dp) {
    double p0 = 1, p1 = z;
    for (int k = 2; k <= n; ++k) {
      const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
      p0 = p1;
      p1 = p2;
    }
    p = p1;
    dp = n * (z * p1 - p0) / (z * z - 1);
  };
  for (int i = 0; i < n; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), p = 0, dp = 0;
    for (int it = 0; it < 100; ++it) {
      legendre_and_derivative(z, p, dp);
      const double dz = p / dp;
      z -= dz;
      if (std::abs(dz) < 1e-15) break;
    }
    legendre_and_derivative(z, p, dp);
    x[static_cast<std::size_t>(i)] = z;  // descending
    w[static_cast<std::size_t>(i)] = 2 / ((1 - z * z) * dp * dp);
  }
}

std::string trim(std::string_view v) {
  const auto b = v.find_first_not_of(" \t\r"), e = v.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string() : std::string(v.substr(b, e - b + 1));
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
    fields.push_back(trim(std::string_view(line).substr(start, comma - start)));
  fields.push_back(trim(std::string_view(line).substr(start)));
  return fields;
}

bool parse_double(const std::string& f, double& v) {
  const char *begin = f.data(), *end = f.data() + f.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars takes no '+'
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  return ec == std::errc() && ptr == end && std::isfinite(v);
}

}  // namespace

int Quadrature::reflect(int m, const Vec3& n, double tol) const {
  const Vec3 u = scaled(n, 1 / norm(n));
  const Vec3& d = s.at(static_cast<std::size_t>(m));
  const double dn = dot(d, u);
  const Vec3 r{d[0] - 2 * dn * u[0], d[1] - 2 * dn * u[1], d[2] - 2 * dn * u[2]};
  for (std::size_t k = 0; k < s.size(); ++k)
    if (std::abs(s[k][0] - r[0]) <= tol && std::abs(s[k][1] - r[1]) <= tol && std::abs(s[k][2] - r[2]) <= tol)
      return static_cast<int>(k);
  return -1;
}

Quadrature level_symmetric(int n) {
  const auto octant = level_symmetric_octant(n);
  if (octant.empty())
    throw InputError(fmt::format("level-symmetric quadrature S{}: no LQ_N table for this order; use an even order from 2 to 16", n));
  // libdetran's weights sum to 1 per octant; an octant is pi/2 sr.
  return from_octant(octant, fmt::format("LQ_N S{} (level-symmetric, libdetran tables)", n), kPi / 2, false);
}

Quadrature heat_transfer_sn(int n) {
  const auto octant = heat_transfer_octant(n);
  if (octant.empty())
    throw InputError(fmt::format("heat-transfer quadrature S{}: the code_saturne heat-transfer sets exist for S4, S6 and S8 only; "
                                 "use one of these orders (or the level-symmetric LQ_N set for other orders)",
                                 n));
  // The table has 7 significant digits: the octant weights sum to pi/2 only to ~3e-7 and |s| = 1 only to
  // ~1e-7. We normalise the directions and scale the weights so that sum w = 4 pi to round-off (a change
  // of at most 3.4e-7 relative, far below the accuracy of the sets themselves) so that isotropic
  // scattering and emission conserve energy exactly on the set.
  double octant_sum = 0;
  for (const auto& o : octant) octant_sum += o.w;
  return from_octant(octant, fmt::format("heat-transfer S{} (code_saturne table; exact half-range flux)", n), (kPi / 2) / octant_sum,
                     true);
}

Quadrature thurgood(int n) {
  if (n < 1 || n > 1000) throw InputError(fmt::format("Thurgood quadrature T{}: the order must be between 1 and 1000", n));
  // Lattice point (i, j) of the octant face x + y + z = 1: ((N - i - j), i, j) / N. Upright triangles
  // (i,j), (i+1,j), (i,j+1); inverted ones (i+1,j), (i+1,j+1), (i,j+1) for i + j <= N - 2.
  // Thurgood, Pollard & Becker, ASME J. Heat Transfer 117 (1995) 1068; construction as in
  // shared/literature/quadrature/build_tn.py.
  auto lattice = [n](int i, int j) { return Vec3{double(n - i - j) / n, double(i) / n, double(j) / n}; };
  std::vector<OctantOrdinate> octant;
  auto add_triangle = [&](const Vec3& p, const Vec3& q, const Vec3& r) {
    const Vec3 c{(p[0] + q[0] + r[0]) / 3, (p[1] + q[1] + r[1]) / 3, (p[2] + q[2] + r[2]) / 3};
    const Vec3 a = scaled(p, 1 / norm(p)), b = scaled(q, 1 / norm(q)), d = scaled(r, 1 / norm(r));
    // Solid angle of the spherical triangle (Van Oosterom & Strackee, IEEE Trans. Biomed. Eng. 30 (1983)
    // 125): tan(Omega/2) = |a.(b x d)| / (1 + a.b + b.d + d.a), robust for small triangles.
    const Vec3 bxd{b[1] * d[2] - b[2] * d[1], b[2] * d[0] - b[0] * d[2], b[0] * d[1] - b[1] * d[0]};
    const double omega = 2 * std::atan2(std::abs(dot(a, bxd)), 1 + dot(a, b) + dot(b, d) + dot(d, a));
    const double len = norm(c);
    octant.push_back({c[0] / len, c[1] / len, c[2] / len, omega});
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; i + j < n; ++j) {
      add_triangle(lattice(i, j), lattice(i + 1, j), lattice(i, j + 1));
      if (i + j <= n - 2) add_triangle(lattice(i + 1, j), lattice(i + 1, j + 1), lattice(i, j + 1));
    }
  return from_octant(octant, fmt::format("T{} (Thurgood)", n), 1.0, false);
}

Vec3 axis_frame_direction(double mu, double phi, int axis) {
  const double st = std::sqrt(std::max(0.0, 1 - mu * mu));
  return from_axis_frame({st * std::cos(phi), st * std::sin(phi), mu}, axis);
}

Quadrature finite_volume(int n_polar, int n_azimuthal, int axis) {
  check_axis(axis, "finite-volume");
  if (n_polar < 1 || n_azimuthal < 1)
    throw InputError(fmt::format("finite-volume set {} x {}: the polar and azimuthal counts must be at least 1", n_polar, n_azimuthal));
  if (n_azimuthal == 1 && n_polar % 2)
    throw InputError(fmt::format("finite-volume set {} x 1: the middle polar band of an odd polar count with one azimuthal sector has "
                                 "no mean direction (s_bar = 0); use an even polar count or at least 2 azimuthal sectors",
                                 n_polar));
  Quadrature q;
  q.name = fmt::format("FV {} x {} (theta x phi about {})", n_polar, n_azimuthal, "xyz"[axis]);
  const double dth = kPi / n_polar, dph = 2 * kPi / n_azimuthal;
  for (int i = 0; i < n_polar; ++i) {
    const double t0 = i * dth, t1 = (i + 1) * dth;
    // Over theta in [t0, t1]: integral sin^2 (transverse part of s times sin theta) and sin cos (axial part).
    const double sin2 = (t1 - t0) / 2 - (std::sin(2 * t1) - std::sin(2 * t0)) / 4;
    const double sincos = (std::sin(t1) * std::sin(t1) - std::sin(t0) * std::sin(t0)) / 2;
    const double w = dph * (std::cos(t0) - std::cos(t1));
    for (int k = 0; k < n_azimuthal; ++k) {
      const double p0 = k * dph, p1 = (k + 1) * dph;
      const Vec3 sb = from_axis_frame({sin2 * (std::sin(p1) - std::sin(p0)), sin2 * (std::cos(p0) - std::cos(p1)), sincos * dph}, axis);
      q.s.push_back(scaled(sb, 1 / norm(sb)));
      q.w.push_back(w);
      q.s_bar.push_back(sb);
      q.cells.push_back({axis, std::cos(t1), std::cos(t0), p0, p1});
    }
  }
  return q;
}

Quadrature product_gauss(int n_polar, int n_azimuthal, int axis) {
  check_axis(axis, "product");
  if (n_polar < 2 || n_polar % 2)
    throw InputError(fmt::format("product set {} x {}: the polar count must be even and at least 2 (half-range Gauss)", n_polar, n_azimuthal));
  if (n_azimuthal < 1) throw InputError(fmt::format("product set {} x {}: the azimuthal count must be at least 1", n_polar, n_azimuthal));
  // Half-range Gauss: n_polar/2 Gauss-Legendre nodes mapped to (0, 1), weights summing to 1 there.
  std::vector<double> z, wz;
  gauss_legendre(n_polar / 2, z, wz);
  std::vector<double> mu, wmu;
  for (std::size_t i = 0; i < z.size(); ++i) mu.push_back((1 + z[i]) / 2), wmu.push_back(wz[i] / 2);  // descending
  for (std::size_t i = z.size(); i-- > 0;) mu.push_back(-(1 + z[i]) / 2), wmu.push_back(wz[i] / 2);  // mirror, descending
  Quadrature q;
  q.name = fmt::format("product {} x {} (half-range Gauss cosine about {} x uniform azimuth)", n_polar, n_azimuthal, "xyz"[axis]);
  const double dph = 2 * kPi / n_azimuthal;
  for (std::size_t i = 0; i < mu.size(); ++i) {
    for (int k = 0; k < n_azimuthal; ++k) {
      add_point(q, axis_frame_direction(mu[i], (k + 0.5) * dph, axis), wmu[i] * dph);
      q.cells.push_back({axis, mu[i], mu[i], k * dph, (k + 1) * dph});
    }
  }
  return q;
}

Quadrature from_file(const std::filesystem::path& file) {
  const std::string fname = file.string();
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("{}: cannot open the quadrature file; check the path", fname));
  Quadrature q;
  q.name = fmt::format("file {}", file.filename().string());
  std::string raw;
  bool header = false;
  for (int ln = 1; std::getline(in, raw); ++ln) {
    const std::string line = trim(std::string_view(raw).substr(0, raw.find('#')));
    if (line.empty()) continue;
    const auto fields = split_csv(line);
    if (!header) {
      std::string names;
      for (const auto& f : fields) {
        std::string l = f;
        std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        names += (names.empty() ? "" : ",") + l;
      }
      if (names != "sx,sy,sz,w")
        throw InputError(fmt::format("{}: line {}: expected the header line 'sx,sy,sz,w' before the ordinates (got '{}')", fname, ln, line));
      header = true;
      continue;
    }
    std::array<double, 4> v{};
    bool ok = fields.size() == 4;
    for (std::size_t k = 0; ok && k < 4; ++k) ok = parse_double(fields[k], v[k]);
    if (!ok)
      throw InputError(fmt::format("{}: line {}: expected four numbers sx,sy,sz,w (direction, weight in sr), got '{}'", fname, ln, line));
    const Vec3 s{v[0], v[1], v[2]};
    const double len = norm(s);
    if (std::abs(len - 1) > 1e-6)
      throw InputError(fmt::format("{}: line {}: the direction ({}, {}, {}) has length {:.9g}; give unit vectors (|s| - 1 within 1e-6 "
                                   "is normalised)",
                                   fname, ln, v[0], v[1], v[2], len));
    if (!(v[3] > 0)) throw InputError(fmt::format("{}: line {}: the weight {} must be a positive solid angle in sr", fname, ln, v[3]));
    add_point(q, scaled(s, 1 / len), v[3]);
  }
  if (q.s.empty()) throw InputError(fmt::format("{}: no ordinates; expected a header line 'sx,sy,sz,w' and one line per ordinate", fname));
  const double sum = weight_sum(q);
  if (std::abs(sum / (4 * kPi) - 1) > 1e-6)
    throw InputError(fmt::format("{}: the weights sum to {:.10g} sr, not 4 pi = {:.10g} (relative difference {:.3g}); the weights must be "
                                 "solid angles in sr summing to 4 pi within 1e-6",
                                 fname, sum, 4 * kPi, sum / (4 * kPi) - 1));
  // Exactly 4 pi, so that isotropic scattering and emission conserve energy on the set.
  for (std::size_t m = 0; m < q.size(); ++m) {
    q.w[m] *= 4 * kPi / sum;
    q.s_bar[m] = scaled(q.s[m], q.w[m]);
  }
  return q;
}

}  // namespace dgrte::angular
