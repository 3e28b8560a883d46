#include "gas/slab.hpp"
#include "io/atomic_file.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fstream>
#include <limits>
#include <optional>

#include "common/error.hpp"
#include "gas/expression.hpp"
#include "gas/gas_common.hpp"
#include "gas/soot.hpp"

namespace dgrte::gas {

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// 1 - (1 - e^-d)/d, accurate for small d
double lin_coef(double d, double one_minus_e) {
  if (d < 1e-3) return d * (0.5 - d * (1.0 / 6.0 - d / 24.0));
  return 1.0 - one_minus_e / d;
}
}  // namespace

void slab_mu_quadrature(int per_panel, std::vector<double>& mu, std::vector<double>& w) {
  static constexpr double edges[] = {0, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.15, 0.35, 0.65, 1.0};
  std::vector<double> gx, gw;
  gauss_legendre_01(per_panel, gx, gw);
  mu.clear();
  w.clear();
  for (std::size_t p = 0; p + 1 < std::size(edges); ++p)
    for (int i = 0; i < per_panel; ++i) {
      mu.push_back(edges[p] + (edges[p + 1] - edges[p]) * gx[i]);
      w.push_back((edges[p + 1] - edges[p]) * gw[i]);
    }
}

GraySlab::GraySlab(std::vector<double> x, int per_panel) : x_(std::move(x)) {
  if (x_.size() < 2) throw InputError("slab: at least two grid nodes are needed");
  if (per_panel < 1 || per_panel > 32) throw InputError("slab.angles_per_panel: must be between 1 and 32");
  slab_mu_quadrature(per_panel, mu_, w_);
  const std::size_t n = x_.size();
  dtau_.resize(n - 1);
  for (auto* v : {&ip_, &im_, &tp_, &tm_, &qm_, &gm_, &qw0_, &gw0_, &qw1_, &gw1_}) v->resize(n);
}

void GraySlab::solve(std::span<const double> kappa, std::span<const double> ib, double eps0, double eb0, double eps1,
                     double eb1, std::span<double> q, std::span<double> G) {
  const std::size_t n = x_.size();
  for (std::size_t c = 0; c + 1 < n; ++c) dtau_[c] = 0.5 * (kappa[c] + kappa[c + 1]) * (x_[c + 1] - x_[c]);
  for (auto* v : {&qm_, &gm_, &qw0_, &gw0_, &qw1_, &gw1_}) std::fill(v->begin(), v->end(), 0.0);
  double h0 = 0, h1 = 0, t01 = 0;  // incident medium flux on walls, wall-to-wall transfer factor
  for (std::size_t m = 0; m < mu_.size(); ++m) {
    const double mu = mu_[m], wm = w_[m], imu = 1.0 / mu;
    ip_[0] = 0;
    tp_[0] = 1;
    for (std::size_t c = 0; c + 1 < n; ++c) {
      const double d = dtau_[c] * imu;
      const double e = std::exp(-d), ome = -std::expm1(-d), lc = lin_coef(d, ome);
      ip_[c + 1] = ip_[c] * e + ib[c] * ome + (ib[c + 1] - ib[c]) * lc;
      tp_[c + 1] = tp_[c] * e;
    }
    im_[n - 1] = 0;
    tm_[n - 1] = 1;
    for (std::size_t c = n - 1; c-- > 0;) {
      const double d = dtau_[c] * imu;
      const double e = std::exp(-d), ome = -std::expm1(-d), lc = lin_coef(d, ome);
      im_[c] = im_[c + 1] * e + ib[c + 1] * ome + (ib[c] - ib[c + 1]) * lc;
      tm_[c] = tm_[c + 1] * e;
    }
    const double a = 2 * kPi * wm * mu, b = 2 * kPi * wm;
    for (std::size_t i = 0; i < n; ++i) {
      qm_[i] += a * (ip_[i] - im_[i]);
      gm_[i] += b * (ip_[i] + im_[i]);
      qw0_[i] += 2 * wm * mu * tp_[i];
      gw0_[i] += 2 * wm * tp_[i];
      qw1_[i] += 2 * wm * mu * tm_[i];
      gw1_[i] += 2 * wm * tm_[i];
    }
    h0 += a * im_[0];
    h1 += a * ip_[n - 1];
    t01 += 2 * wm * mu * tp_[n - 1];
  }
  // radiosities J = eps Eb + (1 - eps) H
  const double r0 = 1 - eps0, r1 = 1 - eps1;
  const double a0 = eps0 * eb0 + r0 * h0, a1 = eps1 * eb1 + r1 * h1;
  const double det = 1 - r0 * r1 * t01 * t01;
  const double j0 = (a0 + r0 * t01 * a1) / det;
  const double j1 = a1 + r1 * t01 * j0;
  for (std::size_t i = 0; i < n; ++i) {
    q[i] = qm_[i] + j0 * qw0_[i] - j1 * qw1_[i];
    G[i] = gm_[i] + j0 * gw0_[i] + j1 * gw1_[i];
  }
}

// ---------------------------------------------------------------------------------------------
SlabCase parse_slab_case(const YAML::Node& root, const std::string& file) {
  SlabCase c;
  c.file = file;
  io::YamlMap top(root, "", file);
  auto s = top.sub("slab");
  if (!top.has("slab")) throw InputError(fmt::format("{}: the case needs a 'slab:' section", file));
  c.length = s.get_double("length", 1.0);
  if (!(c.length > 0)) throw InputError(fmt::format("{} = {} must be positive (m)", s.where("length"), c.length));
  c.points = s.get_int("points", 401);
  if (c.points < 3) throw InputError(fmt::format("{} = {} must be >= 3", s.where("points"), c.points));
  c.pressure = s.get_double("pressure", 1.0);
  if (!(c.pressure > 0)) throw InputError(fmt::format("{} = {} must be positive (atm)", s.where("pressure"), c.pressure));
  c.temperature = s.get_scalar_text("temperature", "");
  if (c.temperature.empty()) throw InputError(fmt::format("{}: slab.temperature is required (K, expression of x in m)", file));
  c.x_h2o = s.get_scalar_text("x_h2o", "0");
  c.x_co2 = s.get_scalar_text("x_co2", "0");
  c.x_co = s.get_scalar_text("x_co", "0");
  c.soot_fv = s.get_scalar_text("soot_fv", "0");
  c.refine = s.get_int("refine", 4);
  if (c.refine < 1 || c.refine > 64) throw InputError(fmt::format("{} = {} must be in 1..64", s.where("refine"), c.refine));
  c.angles_per_panel = s.get_int("angles_per_panel", 6);
  if (c.angles_per_panel < 1 || c.angles_per_panel > 32)
    throw InputError(fmt::format("{} = {} must be in 1..32", s.where("angles_per_panel"), c.angles_per_panel));
  auto walls = s.sub("walls");
  for (const char* side : {"left", "right"}) {
    auto w = walls.sub(side);
    SlabWall& wall = std::string(side) == "left" ? c.left : c.right;
    wall.temperature = w.get_double("temperature", 0.0);
    wall.emissivity = w.get_double("emissivity", 1.0);
    if (!(wall.temperature >= 0))
      throw InputError(fmt::format("{} = {} must be >= 0 K", w.where("temperature"), wall.temperature));
    if (!(wall.emissivity > 0 && wall.emissivity <= 1))
      throw InputError(fmt::format("{} = {} must be in (0, 1]", w.where("emissivity"), wall.emissivity));
    w.finish();
  }
  walls.finish();
  s.finish();
  if (top.has("model") && !top.node()["model"].IsMap())
    throw InputError(fmt::format("{}: model: expected a mapping (e.g. model: {{type: snbck}})", file));
  c.model = top.has("model") ? top.node()["model"] : YAML::Node(YAML::NodeType::Map);  // not a Clone: keeps the line marks
  top.allow("model");
  auto out = top.sub("output");
  c.output_directory = out.get_string("directory", "out");
  out.finish();
  c.gasdata = top.get_string("gasdata", "");
  top.finish();
  // compile the expressions now so that errors surface before any work (naming the key's line)
  for (auto [key, text] : {std::pair{"temperature", &c.temperature}, {"x_h2o", &c.x_h2o}, {"x_co2", &c.x_co2}, {"x_co", &c.x_co},
                           {"soot_fv", &c.soot_fv}})
    Expression(*text, {"x", "L"}, s.where(key));
  return c;
}

SlabCase read_slab_case(const std::filesystem::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw InputError(fmt::format("cannot read case file '{}'; check the path", file.string()));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: YAML syntax error at line {}: {}", file.string(), e.mark.line + 1, e.msg));
  }
  try {
    return parse_slab_case(root, file.string());
  } catch (const YAML::Exception& e) {  // a conversion no key check caught: still the file and line
    throw InputError(fmt::format("{}: line {}, column {}: unexpected value ({}); see docs/gas-models.md for the slab keys",
                                 file.string(), e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

namespace {

struct Profiles {
  std::vector<double> x;
  std::vector<GasState> states;
};

Profiles make_profiles(const SlabCase& c, const std::vector<double>& x) {
  Profiles p;
  p.x = x;
  Expression et(c.temperature, {"x", "L"}, c.file + ": slab.temperature"), ew(c.x_h2o, {"x", "L"}, c.file + ": slab.x_h2o"),
      ec(c.x_co2, {"x", "L"}, c.file + ": slab.x_co2"), eo(c.x_co, {"x", "L"}, c.file + ": slab.x_co"),
      ef(c.soot_fv, {"x", "L"}, c.file + ": slab.soot_fv");
  p.states.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v[2] = {x[i], c.length};
    const std::span<const double> sv(v, 2);
    GasState& s = p.states[i];
    s.temperature = et(sv);
    s.pressure = c.pressure;
    s.x_h2o = ew(sv);
    s.x_co2 = ec(sv);
    s.x_co = eo(sv);
    s.soot_fv = soot_fv_without_roundoff(ef(sv));
    validate_state(s, fmt::format("{}: slab profiles at x = {} m (keys slab.temperature, slab.x_h2o, slab.x_co2, slab.x_co, slab.soot_fv)",
                                  c.file, x[i]));
  }
  return p;
}

double trapezoid(const std::vector<double>& x, const std::vector<double>& f) {
  double s = 0;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) s += 0.5 * (f[i] + f[i + 1]) * (x[i + 1] - x[i]);
  return s;
}

Profiles fine_profiles(const SlabCase& c) {
  const int nf = (c.points - 1) * c.refine + 1;
  std::vector<double> xf(nf);
  for (int i = 0; i < nf; ++i) xf[i] = c.length * i / (nf - 1);
  return make_profiles(c, xf);
}

void solve_k_model(const SlabCase& c, const SpectralModel& model, const Profiles& prof, SlabResult& r, double t_start) {
  const int nf = static_cast<int>(prof.x.size());
  const auto& xf = prof.x;
  auto& mutable_model = const_cast<SpectralModel&>(model);
  mutable_model.prepare(prof.states);
  GraySlab slab(xf, c.angles_per_panel);
  const int nj = model.num_spectral_points();
  std::vector<double> kappa(nf), a(nf), ib(nf), q(nf), G(nf), qsum(nf, 0.0), dsum(nf, 0.0), t(nf);
  for (int i = 0; i < nf; ++i) t[i] = prof.states[i].temperature;
  const GasState wall_states[2] = {prof.states.front(), prof.states.back()};
  const double wall_t[2] = {c.left.temperature, c.right.temperature};
  double aw[2];
  r.time_setup = now() - t_start;
  double tprop = 0, tsolve = 0;
  for (int j = 0; j < nj; ++j) {
    double t0 = now();
    model.absorption(j, prof.states, kappa);
    model.emission_weight(j, prof.states, t, a);
    // walls at 0 K emit nothing: no weight needed (models need not accept T = 0)
    for (int w = 0; w < 2; ++w) {
      aw[w] = 0;
      if (wall_t[w] > 0)
        model.emission_weight(j, std::span<const GasState>(&wall_states[w], 1), std::span<const double>(&wall_t[w], 1),
                              std::span<double>(&aw[w], 1));
    }
    double t1 = now();
    for (int i = 0; i < nf; ++i) ib[i] = a[i] * kSigma * std::pow(t[i], 4) / kPi;
    const double eb0 = aw[0] * kSigma * std::pow(wall_t[0], 4), eb1 = aw[1] * kSigma * std::pow(wall_t[1], 4);
    slab.solve(kappa, ib, c.left.emissivity, eb0, c.right.emissivity, eb1, q, G);
    for (int i = 0; i < nf; ++i) {
      qsum[i] += q[i];
      dsum[i] += kappa[i] * (4 * kPi * ib[i] - G[i]);
    }
    tprop += t1 - t0;
    tsolve += now() - t1;
  }
  r.time_properties = tprop;
  r.time_solve = tsolve;
  r.spectral_points = nj;
  r.fine_points = nf;
  r.directions = slab.num_directions();
  r.divq_integral = trapezoid(xf, dsum);
  r.x.resize(c.points);
  r.q.resize(c.points);
  r.divq.resize(c.points);
  r.temperature.resize(c.points);
  for (int i = 0; i < c.points; ++i) {
    const int k = i * c.refine;
    r.x[i] = xf[k];
    r.q[i] = qsum[k];
    r.divq[i] = dsum[k];
    r.temperature[i] = t[k];
  }
}

// SNB: band transmissivities with Curtis-Godson averaging on a wall-clustered grid.
void solve_snb(const SlabCase& c, const SnbModel& snb, const std::optional<SootOptions>& soot, int npts, SlabResult& r,
               double t_start) {
  const int n = npts;
  std::vector<double> xs(n);
  for (int i = 0; i < n; ++i) xs[i] = 0.5 * c.length * (1 - std::cos(kPi * i / (n - 1)));
  xs.front() = 0;
  xs.back() = c.length;
  auto prof = make_profiles(c, xs);
  std::vector<double> mu, wmu;
  slab_mu_quadrature(std::max(2, c.angles_per_panel / 2), mu, wmu);
  const auto& data = snb.data();
  const double dnu = SnbData::band_width();
  // The spectral intervals: the model's bands; with soot, every band of the same 25 cm^-1 grid from
  // 0 to kSootTop (soot alone where no gas band is) and the Planck tail above it. Soot is gray within
  // a narrow band, so the band transmissivity is the gas's times exp(-soot optical depth).
  constexpr double kSootTop = 50000.0;
  struct Interval {
    int band;    // data band, or -1 (soot only)
    double nu;   // centre [cm^-1] (the tail: its lower end)
    bool tail;   // [kSootTop, inf): soot at its Planck-mean wavenumber
  };
  std::vector<Interval> intervals;
  if (!soot) {
    for (int b : snb.bands()) intervals.push_back({b, data.band_center(b), false});
  } else {
    std::vector<char> has_data(static_cast<std::size_t>(data.num_bands()), 0);
    for (int b : snb.bands()) has_data[static_cast<std::size_t>(b)] = 1;
    const double c0 = data.band_center(0);
    const double start = c0 - dnu * std::floor((c0 - 0.5 * dnu) / dnu);
    for (int k = 0;; ++k) {
      const double nu = start + k * dnu;
      if (nu + 0.5 * dnu > kSootTop) break;
      const long b = std::lround((nu - c0) / dnu);
      const bool data_band = b >= 0 && b < data.num_bands() && std::abs(data.band_center(static_cast<int>(b)) - nu) < 1e-6 &&
                             has_data[static_cast<std::size_t>(b)];
      intervals.push_back({data_band ? static_cast<int>(b) : -1, nu, false});
    }
    intervals.push_back({-1, kSootTop, true});
  }
  std::vector<double> qtot(n, 0.0);
  std::vector<std::array<double, 3>> A(n), C(n);
  std::vector<double> sc(n - 1), T(static_cast<std::size_t>(n) * n), ip(n), im(n), qb(n), soot_depth(n, 0.0);
  const double tw[2] = {c.left.temperature, c.right.temperature};
  const double eps0 = c.left.emissivity, eps1 = c.right.emissivity;
  double covered[2] = {0, 0};
  r.time_setup = now() - t_start;
  double tprop = 0, tsolve = 0;
  for (const auto& iv : intervals) {
    double t0 = now();
    bool active = false;
    // emissive power of the interval [W/m^2] at temperature t
    auto emission = [&](double t) {
      if (!(t > 0)) return 0.0;
      return iv.tail ? kSigma * std::pow(t, 4) * planck_fraction_above(kSootTop, t) : planck_emissive_power(iv.nu, t) * dnu;
    };
    for (int i = 0; i < n; ++i) A[i] = C[i] = {0, 0, 0};
    if (iv.band >= 0) {
      double a[3], cc[3], ap[3], cp[3];
      snb.path_integrands(prof.states[0], iv.band, ap, cp);
      for (int i = 1; i < n; ++i) {
        snb.path_integrands(prof.states[i], iv.band, a, cc);
        const double dx = 100.0 * (xs[i] - xs[i - 1]);
        for (int s = 0; s < 3; ++s) {
          A[i][s] = A[i - 1][s] + 0.5 * (a[s] + ap[s]) * dx;
          C[i][s] = C[i - 1][s] + 0.5 * (cc[s] + cp[s]) * dx;
          ap[s] = a[s];
          cp[s] = cc[s];
        }
      }
      for (int s = 0; s < 3; ++s) active = active || A[n - 1][s] > 0;
    }
    if (soot) {  // soot optical depth from x = 0 (trapezoid, like the gas's path integrals)
      auto kappa_soot = [&](int i) {
        const auto& st = prof.states[static_cast<std::size_t>(i)];
        const double nu = iv.tail ? planck_mean_wavenumber(kSootTop, std::numeric_limits<double>::infinity(), st.temperature) : iv.nu;
        return 100.0 * soot->optics.constant * st.soot_fv * nu;
      };
      double kp = kappa_soot(0);
      for (int i = 1; i < n; ++i) {
        const double k = kappa_soot(i);
        soot_depth[i] = soot_depth[i - 1] + 0.5 * (k + kp) * (xs[i] - xs[i - 1]);
        kp = k;
      }
      active = active || soot_depth[n - 1] > 0;
    }
    for (int k = 0; k < 2; ++k) covered[k] += emission(tw[k]);
    const double eb0 = emission(tw[0]), eb1 = emission(tw[1]);
    if (!active) {  // transparent band: plain wall-to-wall exchange
      const double qq = (eb0 - eb1) / (1 / eps0 + 1 / eps1 - 1);
      for (int i = 0; i < n; ++i) qtot[i] += qq;
      continue;
    }
    for (int i = 0; i + 1 < n; ++i)
      sc[i] = 0.5 * (emission(prof.states[i].temperature) + emission(prof.states[i + 1].temperature)) / kPi;
    double t1 = now();
    std::fill(qb.begin(), qb.end(), 0.0);
    double h0 = 0, h1 = 0, t01 = 0;
    std::vector<double> qw0(n, 0.0), qw1(n, 0.0);
    for (std::size_t m = 0; m < mu.size(); ++m) {
      const double imu = 1.0 / mu[m];
      for (int i = 0; i < n; ++i) {
        double* row = &T[static_cast<std::size_t>(i) * n];
        row[i] = 1.0;
        for (int j = i + 1; j < n; ++j) {
          double opt = (soot_depth[j] - soot_depth[i]) * imu;
          for (int s = 0; s < 3; ++s) {
            const double dA = (A[j][s] - A[i][s]) * imu;
            if (dA > 0) opt += SnbModel::cg_optical(dA, (C[j][s] - C[i][s]) * imu);
          }
          row[j] = std::exp(-opt);
        }
      }
      auto tau = [&](int i, int j) { return T[static_cast<std::size_t>(i) * n + j]; };
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int cc = 0; cc < j; ++cc) s += sc[cc] * (tau(cc + 1, j) - tau(cc, j));
        ip[j] = s;
      }
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int cc = i; cc + 1 < n; ++cc) s += sc[cc] * (tau(i, cc) - tau(i, cc + 1));
        im[i] = s;
      }
      const double a = 2 * kPi * wmu[m] * mu[m];
      for (int i = 0; i < n; ++i) {
        qb[i] += a * (ip[i] - im[i]);
        qw0[i] += 2 * wmu[m] * mu[m] * tau(0, i);
        qw1[i] += 2 * wmu[m] * mu[m] * tau(i, n - 1);
      }
      h0 += a * im[0];
      h1 += a * ip[n - 1];
      t01 += 2 * wmu[m] * mu[m] * tau(0, n - 1);
    }
    const double r0 = 1 - eps0, r1 = 1 - eps1;
    const double a0 = eps0 * eb0 + r0 * h0, a1 = eps1 * eb1 + r1 * h1;
    const double j0 = (a0 + r0 * t01 * a1) / (1 - r0 * r1 * t01 * t01);
    const double j1 = a1 + r1 * t01 * j0;
    for (int i = 0; i < n; ++i) qtot[i] += qb[i] + j0 * qw0[i] - j1 * qw1[i];
    tprop += t1 - t0;
    tsolve += now() - t1;
  }
  // clear part of the spectrum (outside the data bands): wall-to-wall exchange; with soot nothing is clear
  if (!soot) {
    double eclear[2];
    for (int k = 0; k < 2; ++k) eclear[k] = std::max(0.0, kSigma * std::pow(tw[k], 4) - covered[k]);
    const double qq = (eclear[0] - eclear[1]) / (1 / eps0 + 1 / eps1 - 1);
    for (int i = 0; i < n; ++i) qtot[i] += qq;
  }
  // divq = dq/dx: 3-point derivative on the non-uniform grid
  std::vector<double> dq(n);
  for (int i = 0; i < n; ++i) {
    int i0 = std::clamp(i - 1, 0, n - 3);
    const double x0 = xs[i0], x1 = xs[i0 + 1], x2 = xs[i0 + 2], xx = xs[i];
    const double l0 = (2 * xx - x1 - x2) / ((x0 - x1) * (x0 - x2));
    const double l1 = (2 * xx - x0 - x2) / ((x1 - x0) * (x1 - x2));
    const double l2 = (2 * xx - x0 - x1) / ((x2 - x0) * (x2 - x1));
    dq[i] = l0 * qtot[i0] + l1 * qtot[i0 + 1] + l2 * qtot[i0 + 2];
  }
  r.time_properties = tprop;
  r.time_solve = tsolve;
  r.spectral_points = static_cast<int>(intervals.size());
  r.fine_points = n;
  r.directions = static_cast<int>(mu.size());
  r.divq_integral = trapezoid(xs, dq);
  r.x.resize(c.points);
  r.q.resize(c.points);
  r.divq.resize(c.points);
  r.temperature.resize(c.points);
  Expression et(c.temperature, {"x", "L"}, c.file + ": slab.temperature");
  for (int i = 0; i < c.points; ++i) {
    const double x = c.length * i / (c.points - 1);
    auto it = std::upper_bound(xs.begin(), xs.end(), x);
    int k = std::clamp(static_cast<int>(it - xs.begin()) - 1, 0, n - 2);
    const double w = (x - xs[k]) / (xs[k + 1] - xs[k]);
    r.x[i] = x;
    r.q[i] = (1 - w) * qtot[k] + w * qtot[k + 1];
    r.divq[i] = (1 - w) * dq[k] + w * dq[k + 1];
    const double v[2] = {x, c.length};
    r.temperature[i] = et(std::span<const double>(v, 2));
  }
}

}  // namespace

SlabResult solve_slab(const SlabCase& c) {
  const double t0 = now();
  io::YamlMap msec(c.model, "model", c.file);
  const auto prof = fine_profiles(c);
  auto model = make_model(msec, c.gasdata, prof.states);
  SlabResult r;
  r.type = model.type;
  r.model = model.name();
  if (model.spectral) solve_k_model(c, *model.spectral, prof, r, t0);
  else if (model.snb) solve_snb(c, *model.snb, model.soot, model.snb_slab_points, r, t0);
  else throw InputError(fmt::format("{}: model type '{}' cannot be used by the slab solver", c.file, model.type));
  if (model.soot) {
    r.soot = SlabSoot{model.soot->optics.model, model.soot->optics.constant, "narrow bands (transmissivity x soot)", 0};
    if (const auto* sooty = dynamic_cast<const SootyModel*>(model.spectral.get()))
      r.soot->treatment = sooty->treatment(), r.soot->intervals = sooty->soot_intervals();
  }
  r.q_left = r.q.front();
  r.q_right = r.q.back();
  r.time_total = now() - t0;
  return r;
}

namespace {
}  // namespace

void write_slab_output(const SlabCase& c, const SlabResult& r, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create output directory '{}': {}", dir.string(), ec.message()));
  std::string csv = "x,q,divq\n";
  for (std::size_t i = 0; i < r.x.size(); ++i) csv += fmt::format("{:.10g},{:.10g},{:.10g}\n", r.x[i], r.q[i], r.divq[i]);
  io::write_text_atomically(dir / "slab.csv", csv);
  nlohmann::json summary = {{"case", c.file},
                             {"model", r.model},
                             {"type", r.type},
                             {"spectral_points", r.spectral_points},
                             {"fine_points", r.fine_points},
                             {"directions", r.directions},
                             {"output_points", r.x.size()},
                             {"length", c.length},
                             {"pressure", c.pressure},
                             {"wall_fluxes", {{"left", r.q_left}, {"right", r.q_right}}},
                             {"energy_balance", {{"divq_integral", r.divq_integral}, {"q_right_minus_q_left", r.q_right - r.q_left}}},
                             {"timings", {{"setup", r.time_setup}, {"properties", r.time_properties}, {"solve", r.time_solve},
                                          {"total", r.time_total}}}};
  if (r.soot)
    summary["spectral"] = {{"soot", {{"model", r.soot->model}, {"constant", r.soot->constant}, {"treatment", r.soot->treatment},
                                     {"soot_intervals", r.soot->intervals}}}};
  io::write_text_atomically(dir / "summary.json", summary.dump(2) + "\n");
}

}  // namespace dgrte::gas
