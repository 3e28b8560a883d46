#include "gas/soot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "gas/gas_common.hpp"

namespace dgrte::gas {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Soot intervals of band models: at most this ratio hi/lo (kappa_eta varies by <= 25 % across one),
// from kLowest to kHighest cm^-1, plus [0, kLowest] and [kHighest, inf).
constexpr double kBandRatio = 1.25, kLowest = 50.0, kHighest = 50000.0;

// M_n(x) = int_x^inf t^n / (e^t - 1) dt for n = 3, 4: the Bernoulli series for x < 1, else
// sum_k e^{-kx} sum_i n!/i! x^i / k^{n-i+1} (summed from the small terms up).
double planck_moment_above(int n, double x) {
  if (x <= 0) return n == 3 ? kPi * kPi * kPi * kPi / 15.0 : 24.0 * 1.0369277551433699;
  if (x < 1.0) {
    // t^(n-1) (1 - t/2 + t^2/12 - t^4/720 + t^6/30240 - t^8/1209600 + t^10/47900160) integrated over [0, x]
    static constexpr double b[] = {1.0, -0.5, 1.0 / 12, 0, -1.0 / 720, 0, 1.0 / 30240, 0, -1.0 / 1209600, 0, 1.0 / 47900160};
    double below = 0, xp = std::pow(x, n);
    for (int k = 0; k <= 10; ++k, xp *= x) below += b[k] * xp / (n + k);
    return planck_moment_above(n, 0.0) - below;
  }
  const int terms = std::min(200, 2 + static_cast<int>(40.0 / x));
  double coef[5] = {0, 0, 0, 0, 0};  // n!/i!
  for (int i = n, fact = 1; i >= 0; fact *= std::max(i, 1), --i) coef[i] = fact;
  double sum = 0;
  for (int k = terms; k >= 1; --k) {
    const double dk = k;
    double inner = 0, xi = 1;  // sum_i n!/i! x^i / k^(n-i+1)
    for (int i = 0; i <= n; ++i, xi *= x) inner += coef[i] * xi / std::pow(dk, n - i + 1);
    sum += std::exp(-dk * x) * inner;
  }
  return sum;
}

}  // namespace

double rayleigh_soot_constant(double n, double k) {
  const double a = n * n - k * k + 2;
  return 36.0 * kPi * n * k / (a * a + 4 * n * n * k * k);
}

std::pair<double, double> chang_charalampopoulos_index(double lambda_um) {
  const double l = std::log(lambda_um);
  return {1.811 + 0.1263 * l + 0.0270 * l * l + 0.0417 * l * l * l, 0.5821 + 0.1213 * l + 0.2309 * l * l - 0.0100 * l * l * l};
}

namespace {
// The constant C that gives the Planck-mean absorption of C(lambda) / lambda at temperature t,
// over the range of the Chang & Charalampopoulos fit (0.4 - 30 um; midpoint rule in ln lambda).
double chang_charalampopoulos_constant(double t) {
  constexpr int n = 4000;
  const double l0 = std::log(0.4), l1 = std::log(30.0), h = (l1 - l0) / n;
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    const double lambda = std::exp(l0 + (i + 0.5) * h);  // um
    const double eta = 1e4 / lambda;                     // cm^-1
    const auto [nr, ki] = chang_charalampopoulos_index(lambda);
    const double w = planck_emissive_power(eta, t) * eta;  // E_b,eta d eta / d ln lambda
    num += rayleigh_soot_constant(nr, ki) * eta * w;
    den += eta * w;
  }
  return num / den;
}
}  // namespace

SootOptics soot_optics(const std::string& name, const std::string& where) {
  if (name == "chang-charalampopoulos-1990") return {name, chang_charalampopoulos_constant(1500.0)};
  if (name == "dalzell-sarofim-1969") return {name, rayleigh_soot_constant(1.57, 0.56)};
  char* end = nullptr;
  const double c = std::strtod(name.c_str(), &end);
  if (end && *end == '\0' && !name.empty()) {
    if (!(c > 0 && c < 100))
      throw InputError(fmt::format("{} = {}: the Rayleigh constant C must be positive (soot: 2 to 10)", where, name));
    return {"constant", c};
  }
  throw InputError(fmt::format("{} = '{}': use chang-charalampopoulos-1990 (default), dalzell-sarofim-1969 or a number (the "
                               "constant C of kappa = C f_v eta)", where, name));
}

double planck_mean_wavenumber(double lo, double hi, double t) {
  if (!(t > 0)) return lo;  // no emission at all
  const double s = kC2 / t;
  const double xl = lo * s, xh = std::isfinite(hi) ? hi * s : kInf;
  const double m3 = planck_moment_above(3, xl) - (std::isfinite(xh) ? planck_moment_above(3, xh) : 0.0);
  const double m4 = planck_moment_above(4, xl) - (std::isfinite(xh) ? planck_moment_above(4, xh) : 0.0);
  if (!(m3 > 1e-300)) return std::isfinite(hi) ? 0.5 * (lo + hi) : lo;  // no emission there: the interval's start
  return m4 / m3 / s;
}

double soot_planck_mean_kappa(double constant, double soot_fv, double t) {
  if (!(soot_fv > 0) || !(t > 0)) return 0.0;
  return 100.0 * constant * soot_fv * planck_mean_wavenumber(0.0, kInf, t);
}

SootyModel::SootyModel(std::unique_ptr<SpectralModel> gas, SootOptions options) : gas_(std::move(gas)), opt_(std::move(options)) {
  const int ng = gas_->num_spectral_points();
  std::vector<std::pair<double, double>> intervals;
  gas_mid_.assign(static_cast<std::size_t>(ng), std::numeric_limits<double>::quiet_NaN());
  for (int j = 0; j < ng; ++j) {
    const auto [lo, hi] = gas_->wavenumber_interval(j);
    if (std::isfinite(lo) && std::isfinite(hi)) {
      gas_mid_[static_cast<std::size_t>(j)] = 0.5 * (lo + hi);
      intervals.emplace_back(lo, hi);
    }
  }
  band_mode_ = !intervals.empty();
  if (band_mode_) {
    if (opt_.gray_gases != 0)
      throw InputError(fmt::format("model.soot.gray_gases applies to global models (gray, planck-mean, wsgg, slw, rcslw); "
                                   "{} resolves the spectrum, and soot follows its intervals: remove the key",
                                   gas_->name()));
    // the complement of the gas points' intervals, cut into intervals of ratio <= kBandRatio
    std::sort(intervals.begin(), intervals.end());
    double covered = 0;  // everything below is covered or already cut
    auto cut = [&](double lo, double hi) {
      if (!(hi > lo * (1 + 1e-12))) return;
      if (lo < kLowest) {
        const double top = std::min(hi, kLowest);
        pieces_.push_back({lo, top});
        lo = top;
      }
      const double span_hi = std::min(hi, kHighest);
      if (span_hi > lo) {
        const int n = std::max(1, static_cast<int>(std::ceil(std::log(span_hi / lo) / std::log(kBandRatio) - 1e-9)));
        const double r = std::pow(span_hi / lo, 1.0 / n);
        double a = lo;
        for (int i = 0; i < n; ++i) {
          const double b = i + 1 == n ? span_hi : a * r;
          pieces_.push_back({a, b});
          a = b;
        }
      }
      if (hi > kHighest) pieces_.push_back({std::max(lo, kHighest), hi});
    };
    for (const auto& [lo, hi] : intervals) {
      cut(covered, lo);
      covered = std::max(covered, hi);
    }
    cut(covered, kInf);
    for (int j = 0; j < ng; ++j) {
      if (std::isfinite(gas_mid_[static_cast<std::size_t>(j)])) points_.push_back({j, -1});
      else
        for (int m = 0; m < static_cast<int>(pieces_.size()); ++m) points_.push_back({j, m});
    }
    return;
  }
  if (opt_.gray_gases == 0) opt_.gray_gases = ng == 1 ? 1 : 6;
  if (opt_.gray_gases < 1 || opt_.gray_gases > 64)
    throw InputError(fmt::format("model.soot.gray_gases = {}: use 1 to 64 soot intervals", opt_.gray_gases));
  set_global_pieces(1500.0);
  for (int j = 0; j < ng; ++j)
    for (int m = 0; m < opt_.gray_gases; ++m) points_.push_back({j, m});
}

void SootyModel::set_global_pieces(double t) {
  // The soot k-distribution cut at the partial sums of Gauss-Legendre weights in the Planck fraction
  // at the reference temperature: narrower intervals where kappa_eta is smallest and largest.
  std::vector<double> gx, gw;
  gauss_legendre_01(opt_.gray_gases, gx, gw);
  pieces_.clear();
  double lo = 0, g = 0;
  for (int m = 0; m < opt_.gray_gases; ++m) {
    g += gw[static_cast<std::size_t>(m)];
    double hi = kInf;
    if (m + 1 < opt_.gray_gases) {
      double a = 0, b = 1e6;  // bisection for the wavenumber below which the fraction g is emitted
      for (int it = 0; it < 200 && b - a > 1e-9 * b; ++it) {
        const double c = 0.5 * (a + b);
        (planck_fraction_below(c, t) < g ? a : b) = c;
      }
      hi = 0.5 * (a + b);
    }
    pieces_.push_back({lo, hi});
    lo = hi;
  }
}

std::string SootyModel::name() const { return gas_->name() + "+soot"; }

std::vector<GasState> SootyModel::without_soot(std::span<const GasState> states) const {
  std::vector<GasState> s(states.begin(), states.end());
  for (auto& x : s) x.soot_fv = 0;  // the gas part: caches of gas spectra (LBL, SLW) see gas states only
  return s;
}

void SootyModel::prepare(std::span<const GasState> medium, std::span<const double> weights) {
  prepare_distributed(medium, weights, [](double*, int) {});
}

void SootyModel::prepare_distributed(std::span<const GasState> medium, std::span<const double> weights,
                                     const SumOverRanks& sum_over_ranks) {
  gas_->prepare_distributed(without_soot(medium), weights, sum_over_ranks);
  if (band_mode_ || opt_.gray_gases == 1) return;
  // reference temperature of the soot intervals: the mean over the sooty part of the medium
  double s[4] = {0, 0, 0, 0};  // sum w T, sum w over sooty states; the same over all states
  for (std::size_t i = 0; i < medium.size(); ++i) {
    const double w = weights.empty() ? 1.0 : weights[i];
    const int o = medium[i].soot_fv > 0 ? 0 : 2;
    s[o] += w * medium[i].temperature, s[o + 1] += w;
    if (o == 0) s[2] += w * medium[i].temperature, s[3] += w;
  }
  sum_over_ranks(s, 4);
  const double t = s[1] > 0 ? s[0] / s[1] : s[3] > 0 ? s[2] / s[3] : 1500.0;
  set_global_pieces(t);
}

double SootyModel::soot_kappa_per_fv(const Point& p, double t) const {
  const double eta = p.piece < 0 ? gas_mid_[static_cast<std::size_t>(p.gas)]
                                 : planck_mean_wavenumber(pieces_[static_cast<std::size_t>(p.piece)].lo,
                                                          pieces_[static_cast<std::size_t>(p.piece)].hi, t);
  return 100.0 * opt_.optics.constant * eta;
}

double SootyModel::complement_fraction(double t) const {
  double total = 0;
  for (const auto& q : pieces_) total += planck_band_fraction(q.lo, q.hi, t);
  return total;
}

double SootyModel::weight_factor(const Point& p, double t, double complement) const {
  if (p.piece < 0) return 1.0;
  const auto& pc = pieces_[static_cast<std::size_t>(p.piece)];
  if (!(t > 0)) return p.piece == 0 ? 1.0 : 0.0;  // nothing is emitted; any partition of the weight will do
  const double f = planck_band_fraction(pc.lo, pc.hi, t);
  if (!band_mode_) return f;
  // the share of the gas point's (transparent) remainder: its part of the complement
  if (complement < 0) complement = complement_fraction(t);
  return complement > 0 ? f / complement : 1.0 / static_cast<double>(pieces_.size());
}

void SootyModel::absorption(int j, std::span<const GasState> states, std::span<double> kappa) const {
  const Point& p = points_[static_cast<std::size_t>(j)];
  gas_->absorption(p.gas, without_soot(states), kappa);
  for (std::size_t i = 0; i < states.size(); ++i)
    if (states[i].soot_fv > 0) kappa[i] += states[i].soot_fv * soot_kappa_per_fv(p, states[i].temperature);
}

void SootyModel::emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                                 std::span<double> a) const {
  const Point& p = points_[static_cast<std::size_t>(j)];
  gas_->emission_weight(p.gas, without_soot(states), source_temperature, a);
  for (std::size_t i = 0; i < states.size(); ++i) a[i] *= weight_factor(p, source_temperature[i]);
}

void SootyModel::evaluate_block(int first, int count, std::span<const GasState> states, std::span<const double> ts,
                                std::span<double> kappa, std::span<double> a) const {
  if (count <= 0) return;
  const std::size_t n = states.size();
  const int g0 = points_[static_cast<std::size_t>(first)].gas, g1 = points_[static_cast<std::size_t>(first + count - 1)].gas;
  const auto gas_states = without_soot(states);
  std::vector<double> kg(static_cast<std::size_t>(g1 - g0 + 1) * n), ag(kg.size());
  gas_->evaluate_block(g0, g1 - g0 + 1, gas_states, ts, kg, ag);
  // band mode: the complement's Planck fraction per source temperature, once per block
  std::vector<double> complement(n, -1.0);
  if (band_mode_)
    for (int q = 0; q < count; ++q)
      if (points_[static_cast<std::size_t>(first + q)].piece >= 0) {
        for (std::size_t i = 0; i < n; ++i) complement[i] = ts[i] > 0 ? complement_fraction(ts[i]) : -1.0;
        break;
      }
  for (int q = 0; q < count; ++q) {
    const Point& p = points_[static_cast<std::size_t>(first + q)];
    const std::size_t in = static_cast<std::size_t>(p.gas - g0) * n, out = static_cast<std::size_t>(q) * n;
    for (std::size_t i = 0; i < n; ++i) {
      const double fv = states[i].soot_fv;
      kappa[out + i] = kg[in + i] + (fv > 0 ? fv * soot_kappa_per_fv(p, states[i].temperature) : 0.0);
      a[out + i] = ag[in + i] * weight_factor(p, ts[i], complement[i]);
    }
  }
}

int SootyModel::block_end(int first, int max_count) const {
  const int np = num_spectral_points();
  int end = std::min(np, first + std::max(1, max_count));
  const int g_first = points_[static_cast<std::size_t>(first)].gas, g_last = points_[static_cast<std::size_t>(end - 1)].gas;
  const int g_end = gas_->block_end(g_first, g_last - g_first + 1);  // the gas model's own grouping
  if (g_end <= g_last) {
    int cut = first + 1;
    while (cut < end && points_[static_cast<std::size_t>(cut)].gas < g_end) ++cut;
    end = cut;
  }
  return end;
}

std::pair<double, double> SootyModel::wavenumber_interval(int j) const {
  const Point& p = points_[static_cast<std::size_t>(j)];
  if (p.piece < 0) return gas_->wavenumber_interval(p.gas);
  if (!band_mode_) return SpectralModel::wavenumber_interval(j);  // a soot gray gas spans many pieces of the spectrum
  const auto& pc = pieces_[static_cast<std::size_t>(p.piece)];
  return {pc.lo, pc.hi};
}

bool SootyModel::spectrum(const GasState& state, std::span<const double> wavenumbers, std::span<double> kappa) const {
  GasState gas_state = state;
  gas_state.soot_fv = 0;
  if (!gas_->spectrum(gas_state, wavenumbers, kappa)) return false;
  for (std::size_t i = 0; i < wavenumbers.size(); ++i) kappa[i] += 100.0 * opt_.optics.constant * state.soot_fv * wavenumbers[i];
  return true;
}

}  // namespace dgrte::gas
