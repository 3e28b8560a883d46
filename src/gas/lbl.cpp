#include "gas/lbl.hpp"

#include "gas/gas_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <tuple>

#include "common/error.hpp"
#include "gas/voigt.hpp"

namespace dgrte::gas {
namespace {

constexpr double kTref = 296.0;            // K
constexpr double kBoltzmann = 1.380649e-23;  // J/K
constexpr double kAvogadro = 6.02214076e23;
constexpr double kLightSpeed = 2.99792458e8;  // m/s
constexpr double kSqrtLn2 = 0.83255461115769775635;
constexpr int kMaxIsotopologues = 64;

int species_of(int molecule) {
  switch (molecule) {
    case 1: return 0;
    case 2: return 1;
    case 5: return 2;
    default: return -1;
  }
}

double mole_fraction(const GasState& s, int species) {
  switch (species) {
    case 0: return s.x_h2o;
    case 1: return s.x_co2;
    case 2: return s.x_co;
    default: return 0.0;
  }
}

void check_state(const GasState& s) {
  if (!(s.temperature > 0) || !(s.pressure > 0)) {
    throw InputError(fmt::format("LBL: gas state with temperature {} K and pressure {} atm; both must be positive",
                                 s.temperature, s.pressure));
  }
}

}  // namespace

double line_intensity_at(double s296, double elower, double nu, double q296, double q_t, double t) {
  return s296 * q296 / q_t * std::exp(-kC2 * elower * (1.0 / t - 1.0 / kTref)) * (-std::expm1(-kC2 * nu / t)) /
         (-std::expm1(-kC2 * nu / kTref));
}

LblLineData LblLineData::build(const LineList& lines, const TipsTable& tips) {
  if (tips.size() > kMaxIsotopologues) throw InputError("LBL: too many isotopologues in the TIPS table");
  LblLineData d;
  const std::size_t n = lines.size();
  d.nu = lines.nu;
  d.s296 = lines.intensity;
  d.elower = lines.elower;
  d.gamma_air = lines.gamma_air;
  d.gamma_self = lines.gamma_self;
  d.n_air = lines.n_air;
  d.delta_air = lines.delta_air;
  d.doppler_factor.resize(n);
  d.tips_index.resize(n);
  d.species.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && lines.nu[i] < lines.nu[i - 1]) {
      throw InputError("LBL: line list is not sorted by wavenumber (call LineList::sort_by_wavenumber)");
    }
    const int k = tips.index(lines.molecule[i], lines.isotopologue[i]);
    if (k < 0) {
      throw InputError(fmt::format("LBL: line at {} cm-1 belongs to molecule {} isotopologue {}, which has no TIPS "
                                   "partition sum in gasdata/lbl/tips (only H2O, CO2, CO are supported); filter it out",
                                   lines.nu[i], lines.molecule[i], lines.isotopologue[i]));
    }
    d.tips_index[i] = k;
    d.species[i] = species_of(lines.molecule[i]);
    const double m = tips.isotopologue(k).molar_mass * 1e-3 / kAvogadro;  // kg
    // gamma_D = nu/c sqrt(2 ln2 k T/m) = nu * doppler_factor * sqrt(T)
    d.doppler_factor[i] = std::sqrt(2.0 * std::numbers::ln2 * kBoltzmann / m) / kLightSpeed;
    d.max_abs_shift = std::max(d.max_abs_shift, std::abs(lines.delta_air[i]));
  }
  d.q296.resize(tips.size());
  for (int k = 0; k < tips.size(); ++k) d.q296[k] = tips.q(k, kTref);
  return d;
}

void lbl_line_arrays(const LblLineData& d, const TipsTable& tips, const GasState& s, const LblOptions& opt,
                     LblLineArrays& out) {
  check_state(s);
  const double t = s.temperature, p = s.pressure;
  std::array<double, kMaxIsotopologues> qratio{};
  for (int k = 0; k < tips.size(); ++k) qratio[k] = d.q296[k] / tips.q(k, t);
  const double ntot = p * kAtm / (kBoltzmann * t) * 1e-6;  // cm^-3
  const double sqrt_t = std::sqrt(t);
  const double tr = kTref / t;
  const double inv_t = 1.0 / t, inv_tref = 1.0 / kTref;
  out.key.clear();
  out.center.clear();
  out.strength.clear();
  out.gamma_d.clear();
  out.gamma_l.clear();
  out.center_margin = opt.pressure_shift ? d.max_abs_shift * p : 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double x = mole_fraction(s, d.species[i]);
    if (!(x > 0)) continue;
    const double nu = d.nu[i];
    const double st = d.s296[i] * qratio[d.tips_index[i]] * std::exp(-kC2 * d.elower[i] * (inv_t - inv_tref)) *
                      (-std::expm1(-kC2 * nu * inv_t)) / (-std::expm1(-kC2 * nu * inv_tref));
    if (st < opt.min_intensity || !(st > 0)) continue;
    const double pself = x * p;
    const double gl = std::pow(tr, d.n_air[i]) * (d.gamma_air[i] * (p - pself) + d.gamma_self[i] * pself);
    const double c = opt.pressure_shift ? nu + d.delta_air[i] * p : nu;
    out.key.push_back(nu);
    out.center.push_back(c);
    out.strength.push_back(100.0 * x * ntot * st);
    out.gamma_d.push_back(c * d.doppler_factor[i] * sqrt_t);
    out.gamma_l.push_back(gl);
  }
}

void lbl_accumulate_voigt(std::size_t nlines, const double* key, const double* center, const double* strength,
                          const double* gamma_d, const double* gamma_l, double center_margin, std::size_t npts,
                          const double* grid, double cutoff, double* kappa) {
  if (nlines == 0 || npts == 0) return;
  constexpr std::size_t kBlock = 512;
  const long nblocks = static_cast<long>((npts + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic, 1)
  for (long b = 0; b < nblocks; ++b) {
    const std::size_t p0 = static_cast<std::size_t>(b) * kBlock;
    const std::size_t p1 = std::min(npts, p0 + kBlock);
    const double lo = grid[p0] - cutoff - center_margin;
    const double hi = grid[p1 - 1] + cutoff + center_margin;
    const std::size_t l0 = static_cast<std::size_t>(std::lower_bound(key, key + nlines, lo) - key);
    const std::size_t l1 = static_cast<std::size_t>(std::upper_bound(key, key + nlines, hi) - key);
    for (std::size_t l = l0; l < l1; ++l) {
      const double c = center[l];
      const std::size_t q0 = static_cast<std::size_t>(std::lower_bound(grid + p0, grid + p1, c - cutoff) - grid);
      const std::size_t q1 = static_cast<std::size_t>(std::upper_bound(grid + p0, grid + p1, c + cutoff) - grid);
      if (q0 >= q1) continue;
      const double inv_gd = 1.0 / gamma_d[l];
      const double xs = kSqrtLn2 * inv_gd;
      const double y = kSqrtLn2 * gamma_l[l] * inv_gd;
      const double amp = strength[l] * kSqrtLn2 * std::numbers::inv_sqrtpi * inv_gd;
      for (std::size_t q = q0; q < q1; ++q) kappa[q] += amp * voigt_k(xs * (grid[q] - c), y);
    }
  }
}

namespace {
void check_grid(std::span<const double> grid) {
  for (std::size_t i = 1; i < grid.size(); ++i) {
    if (!(grid[i] > grid[i - 1])) {
      throw InputError(fmt::format("LBL: the wavenumber grid must be strictly ascending (point {}: {} after {})", i,
                                   grid[i], grid[i - 1]));
    }
  }
}

std::vector<double> make_grid(double nu_min, double nu_max, double dnu) {
  if (!(dnu > 0) || !(nu_max >= nu_min) || !(nu_min >= 0)) {
    throw InputError(fmt::format("LBL: bad wavenumber grid nu_min = {}, nu_max = {}, dnu = {} cm-1 (need 0 <= nu_min <= "
                                 "nu_max and dnu > 0)",
                                 nu_min, nu_max, dnu));
  }
  const auto n = static_cast<std::size_t>(std::floor((nu_max - nu_min) / dnu * (1 + 1e-12))) + 1;
  std::vector<double> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = nu_min + static_cast<double>(i) * dnu;
  return g;
}
}  // namespace

std::vector<double> compute_absorption_spectrum(const LineList& lines, const TipsTable& tips, const GasState& state,
                                                std::span<const double> grid_cm, const LblOptions& opt) {
  check_grid(grid_cm);
  const LblLineData d = LblLineData::build(lines, tips);
  LblLineArrays a;
  lbl_line_arrays(d, tips, state, opt, a);
  std::vector<double> kappa(grid_cm.size(), 0.0);
  lbl_accumulate_voigt(a.size(), a.key.data(), a.center.data(), a.strength.data(), a.gamma_d.data(), a.gamma_l.data(),
                       a.center_margin, grid_cm.size(), grid_cm.data(), opt.wing_cutoff, kappa.data());
  return kappa;
}

std::vector<double> compute_absorption_spectrum(const std::vector<std::string>& par_files,
                                                const std::string& gasdata_dir, const GasState& state, double nu_min,
                                                double nu_max, double dnu, const LblOptions& opt,
                                                std::vector<double>* grid_out) {
  std::vector<double> grid = make_grid(nu_min, nu_max, dnu);
  ParFilter f;
  f.nu_min = std::max(0.0, nu_min - opt.wing_cutoff - 1.0);
  f.nu_max = nu_max + opt.wing_cutoff + 1.0;
  f.molecules = {1, 2, 5};
  const LineList lines = read_par_files(par_files, f);
  const TipsTable tips = TipsTable::load_default(gasdata_dir);
  auto kappa = compute_absorption_spectrum(lines, tips, state, grid, opt);
  if (grid_out) *grid_out = std::move(grid);
  return kappa;
}

// ---------------------------------------------------------------------------------------------
// LblModel

LblModel::LblModel(const LblModelConfig& cfg) : opt_(cfg.options), cache_limit_(cfg.cache_limit), red_(cfg.reduction) {
  if (cfg.par_files.empty()) {
    throw InputError("model lbl: key par_files is empty; list one or more HITRAN/HITEMP .par files (see docs/gas-lbl.md)");
  }
  grid_ = cfg.grid.empty() ? make_grid(cfg.nu_min, cfg.nu_max, cfg.dnu) : cfg.grid;
  check_grid(grid_);
  if (grid_.empty()) throw InputError("model lbl: empty wavenumber grid");
  ParFilter f;
  f.nu_min = std::max(0.0, grid_.front() - opt_.wing_cutoff - 1.0);
  f.nu_max = grid_.back() + opt_.wing_cutoff + 1.0;
  f.molecules = {1, 2, 5};
  f.min_intensity_296 = cfg.min_intensity_296;
  const LineList lines = read_par_files(cfg.par_files, f);
  tips_ = TipsTable::load_default(cfg.gasdata_dir);
  data_ = LblLineData::build(lines, tips_);
  init();
}

LblModel::LblModel(LineList lines, TipsTable tips, std::vector<double> grid_cm, LblOptions opt, std::size_t cache_limit,
                   LblReduction reduction)
    : tips_(std::move(tips)), grid_(std::move(grid_cm)), opt_(opt), cache_limit_(cache_limit), red_(reduction) {
  check_grid(grid_);
  if (grid_.empty()) throw InputError("model lbl: empty wavenumber grid");
  lines.sort_by_wavenumber();
  data_ = LblLineData::build(lines, tips_);
  init();
}

void LblModel::init() {
  const std::size_t n = grid_.size();
  edges_.resize(n + 1);
  const double h0 = n > 1 ? grid_[1] - grid_[0] : 1.0;
  const double h1 = n > 1 ? grid_[n - 1] - grid_[n - 2] : 1.0;
  edges_[0] = std::max(0.0, grid_[0] - 0.5 * h0);
  for (std::size_t i = 1; i < n; ++i) edges_[i] = 0.5 * (grid_[i - 1] + grid_[i]);
  edges_[n] = grid_[n - 1] + 0.5 * h1;
  if (!red_.kdistribution) return;
  if (!(red_.band_width > 0)) throw InputError(fmt::format("model lbl: band_width = {} cm^-1 must be positive", red_.band_width));
  if (red_.gauss_points < 1 || red_.gauss_points > 64)
    throw InputError(fmt::format("model lbl: gauss_points = {} must be between 1 and 64", red_.gauss_points));
  // Gauss-Legendre on two panels, [0, 0.9] and [0.9, 1] (half the points each, the first panel one
  // more when odd): k(g) rises steeply near g = 1 (line centres), which one panel under-resolves
  const int n_hi = red_.gauss_points / 2, n_lo = red_.gauss_points - n_hi;
  gx_.clear();
  gw_.clear();
  for (const auto& [g0, g1, panel_points] : {std::tuple{0.0, 0.9, n_lo}, std::tuple{0.9, 1.0, n_hi}}) {
    if (panel_points == 0) continue;
    std::vector<double> x, w;
    gauss_legendre_01(panel_points, x, w);
    for (int i = 0; i < panel_points; ++i) {
      gx_.push_back(g0 + (g1 - g0) * x[static_cast<std::size_t>(i)]);
      gw_.push_back((g1 - g0) * w[static_cast<std::size_t>(i)]);
    }
  }
  // bands of band_width from the first grid edge; a band holds the grid points whose centre lies in it
  bands_.clear();
  std::size_t first = 0;
  while (first < n) {
    const double hi = edges_[0] + red_.band_width * (std::floor((grid_[first] - edges_[0]) / red_.band_width) + 1);
    std::size_t last = first;
    while (last < n && grid_[last] < hi) ++last;
    bands_.push_back(Band{first, last});
    first = last;
  }
}

std::string LblModel::name() const {
  return red_.kdistribution ? fmt::format("lbl-kdistribution-{:g}cm-g{}", red_.band_width, red_.gauss_points) : "lbl";
}

void LblModel::band_quantiles(std::span<double> v, double* out) const {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  for (std::size_t i = 0; i < gx_.size(); ++i) {
    // equal weight 1/n per grid point: the m-th smallest value covers g in [m/n, (m+1)/n)
    const double pos = gx_[i] * n - 0.5;
    if (pos <= 0) out[i] = v.front();
    else if (pos >= n - 1) out[i] = v.back();
    else {
      const auto m = static_cast<std::size_t>(pos);
      const double w = pos - static_cast<double>(m);
      out[i] = (1 - w) * v[m] + w * v[m + 1];
    }
  }
}

std::vector<double> LblModel::band_kdistribution(int b, const GasState& state) const {
  const Band& band = bands_.at(static_cast<std::size_t>(b));
  std::vector<double> k(band.last - band.first), q(gx_.size());
  spectrum(state, std::span<const double>(grid_.data() + band.first, k.size()), k);
  band_quantiles(k, q.data());
  return q;
}

void LblModel::prepare(std::span<const GasState> medium, std::span<const double> /*weights: no averages*/) {
  cache_index_.clear();
  cache_.clear();
  std::vector<GasState> distinct;
  for (const auto& s : medium) {
    if (cache_index_.try_emplace(GasStateKey(s), distinct.size()).second) distinct.push_back(s);
    if (distinct.size() * values_per_state() > cache_limit_) {
      cache_index_.clear();  // too many distinct states: evaluate directly
      return;
    }
  }
  const std::size_t per = values_per_state();
  cache_.assign(distinct.size() * per, 0.0);
  LblLineArrays a;
  std::vector<double> full(red_.kdistribution ? grid_.size() : 0);
  for (std::size_t k = 0; k < distinct.size(); ++k) {
    lbl_line_arrays(data_, tips_, distinct[k], opt_, a);
    double* kappa = red_.kdistribution ? full.data() : cache_.data() + k * per;
    std::fill(kappa, kappa + grid_.size(), 0.0);
    try {
      sum_lines(a, grid_, std::span<double>(kappa, grid_.size()));
    } catch (...) {  // no half-filled cache behind a failed (device) sum
      cache_index_.clear();
      cache_.clear();
      throw;
    }
    if (!red_.kdistribution) continue;
    for (std::size_t b = 0; b < bands_.size(); ++b) {
      band_quantiles(std::span<double>(full.data() + bands_[b].first, bands_[b].last - bands_[b].first),
                     cache_.data() + k * per + b * gx_.size());
    }
  }
}

double LblModel::kappa_direct(int j, const GasState& s) const {
  check_state(s);
  const double nu0 = grid_[static_cast<std::size_t>(j)];
  const double t = s.temperature, p = s.pressure;
  const double margin = opt_.pressure_shift ? data_.max_abs_shift * p : 0.0;
  const auto b = std::lower_bound(data_.nu.begin(), data_.nu.end(), nu0 - opt_.wing_cutoff - margin);
  const auto e = std::upper_bound(data_.nu.begin(), data_.nu.end(), nu0 + opt_.wing_cutoff + margin);
  const std::size_t l0 = static_cast<std::size_t>(b - data_.nu.begin());
  const std::size_t l1 = static_cast<std::size_t>(e - data_.nu.begin());
  if (l0 >= l1) return 0.0;
  std::array<double, kMaxIsotopologues> qratio;
  qratio.fill(-1.0);  // filled lazily
  const double ntot = p * kAtm / (kBoltzmann * t) * 1e-6;
  const double sqrt_t = std::sqrt(t), tr = kTref / t, inv_t = 1.0 / t, inv_tref = 1.0 / kTref;
  double k = 0;
  for (std::size_t i = l0; i < l1; ++i) {
    const double x = mole_fraction(s, data_.species[i]);
    if (!(x > 0)) continue;
    const int ti = data_.tips_index[i];
    if (qratio[ti] < 0) qratio[ti] = data_.q296[ti] / tips_.q(ti, t);
    const double nu = data_.nu[i];
    const double c = opt_.pressure_shift ? nu + data_.delta_air[i] * p : nu;
    if (std::abs(nu0 - c) > opt_.wing_cutoff) continue;
    const double st = data_.s296[i] * qratio[ti] * std::exp(-kC2 * data_.elower[i] * (inv_t - inv_tref)) *
                      (-std::expm1(-kC2 * nu * inv_t)) / (-std::expm1(-kC2 * nu * inv_tref));
    if (st < opt_.min_intensity || !(st > 0)) continue;
    const double pself = x * p;
    const double gl = std::pow(tr, data_.n_air[i]) * (data_.gamma_air[i] * (p - pself) + data_.gamma_self[i] * pself);
    const double gd = c * data_.doppler_factor[i] * sqrt_t;
    k += 100.0 * x * ntot * st * voigt_profile(nu0 - c, gd, gl);
  }
  return k;
}

void LblModel::absorption(int j, std::span<const GasState> states, std::span<double> kappa) const {
  const std::size_t n = values_per_state();
  if (static_cast<std::size_t>(j) == n) {
    std::fill(kappa.begin(), kappa.end(), 0.0);
    return;
  }
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (!cache_index_.empty()) {
      const auto it = cache_index_.find(GasStateKey(states[i]));
      if (it != cache_index_.end()) {
        kappa[i] = cache_[it->second * n + static_cast<std::size_t>(j)];
        continue;
      }
    }
    if (red_.kdistribution) {
      // not prepared for this state: the band's spectrum is computed and sorted on the spot
      const std::size_t g = gx_.size();
      kappa[i] = band_kdistribution(static_cast<int>(static_cast<std::size_t>(j) / g), states[i])[static_cast<std::size_t>(j) % g];
    } else {
      kappa[i] = kappa_direct(j, states[i]);
    }
  }
}

bool LblModel::spectrum(const GasState& state, std::span<const double> wavenumbers, std::span<double> kappa) const {
  check_grid(wavenumbers);
  LblLineArrays a;
  lbl_line_arrays(data_, tips_, state, opt_, a);
  std::fill(kappa.begin(), kappa.end(), 0.0);
  sum_lines(a, wavenumbers, kappa);
  return true;
}

LblLineArrays LblModel::line_arrays(const GasState& state) const {
  check_state(state);
  LblLineArrays a;
  lbl_line_arrays(data_, tips_, state, opt_, a);
  return a;
}

void LblModel::set_line_sum(LineSum sum, std::string backend) {
  line_sum_ = std::move(sum);
  line_sum_backend_ = line_sum_ ? std::move(backend) : std::string("cpu");
}

void LblModel::sum_lines(const LblLineArrays& a, std::span<const double> grid, std::span<double> kappa) const {
  if (line_sum_) return line_sum_(a, grid, opt_.wing_cutoff, kappa);
  lbl_accumulate_voigt(a.size(), a.key.data(), a.center.data(), a.strength.data(), a.gamma_d.data(), a.gamma_l.data(),
                       a.center_margin, grid.size(), grid.data(), opt_.wing_cutoff, kappa.data());
}

void LblModel::emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                               std::span<double> a) const {
  (void)states;
  const std::size_t n = values_per_state();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double t = source_temperature[i];
    if (i > 0 && t == source_temperature[i - 1]) {  // neighbouring nodes of a uniform region: one Planck integral
      a[i] = a[i - 1];
      continue;
    }
    if (!(t > 0)) {
      a[i] = static_cast<std::size_t>(j) == n ? 1.0 : 0.0;
      continue;
    }
    if (static_cast<std::size_t>(j) == n) {
      a[i] = 1.0 - planck_band_fraction(edges_.front(), edges_.back(), t);
    } else if (red_.kdistribution) {
      const std::size_t g = gx_.size();
      const Band& b = bands_[static_cast<std::size_t>(j) / g];
      a[i] = gw_[static_cast<std::size_t>(j) % g] * planck_band_fraction(edges_[b.first], edges_[b.last], t);
    } else {
      a[i] = planck_band_fraction(edges_[static_cast<std::size_t>(j)], edges_[static_cast<std::size_t>(j) + 1], t);
    }
  }
}

std::pair<double, double> LblModel::wavenumber_interval(int j) const {
  if (j < 0 || static_cast<std::size_t>(j) >= values_per_state()) return SpectralModel::wavenumber_interval(j);  // the rest
  const auto u = static_cast<std::size_t>(j);
  if (red_.kdistribution) {
    const Band& b = bands_[u / gx_.size()];
    return {edges_[b.first], edges_[b.last]};
  }
  return {edges_[u], edges_[u + 1]};
}

}  // namespace dgrte::gas
