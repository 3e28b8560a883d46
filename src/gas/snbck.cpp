#include "gas/snbck.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "common/error.hpp"

namespace dgrte::gas {

namespace {
// erfc(z) exp(z^2), stable for large z
double erfcx(double z) {
  if (z < 25.0) return std::erfc(z) * std::exp(z * z);
  const double iz2 = 1.0 / (z * z);
  return 1.0 / (z * std::sqrt(kPi)) * (1 - 0.5 * iz2 * (1 - 1.5 * iz2 * (1 - 2.5 * iz2 * (1 - 3.5 * iz2))));
}
}  // namespace

double malkmus_g(double k, double S, double B) {
  if (k <= 0) return 0.0;
  if (S <= 0) return 1.0;
  const double a = 0.5 * std::sqrt(kPi * B * S), b = 0.5 * std::sqrt(kPi * B / S);
  const double sk = std::sqrt(k);
  const double z1 = a / sk - b * sk, z2 = a / sk + b * sk;
  // e^{pi B} erfc(z2) = erfcx(z2) e^{pi B - z2^2}
  return 0.5 * std::erfc(z1) + 0.5 * erfcx(z2) * std::exp(kPi * B - z2 * z2);
}

double malkmus_f(double k, double S, double B) {
  if (k <= 0 || S <= 0) return 0.0;
  return std::sqrt(B * S / (4 * k)) / k * std::exp(0.25 * kPi * B * (2 - S / k - k / S));
}

double malkmus_g_inverse(double g, std::span<const double> S, std::span<const double> B, std::span<const double> w) {
  // atom at k = 0 from bands without absorption
  double atom = 0, smax = 0, sw = 0;
  for (std::size_t b = 0; b < S.size(); ++b) {
    if (S[b] <= 0) atom += w[b];
    else {
      smax = std::max(smax, S[b]);
      sw += w[b] * S[b];
    }
  }
  if (g <= atom + 1e-15 || smax <= 0) return 0.0;
  // r(u) = G(e^u) - g with G increasing in u = ln k
  auto eval = [&](double u, double& dg) {
    const double k = std::exp(u);
    double gg = 0;
    dg = 0;
    for (std::size_t b = 0; b < S.size(); ++b) {
      if (S[b] <= 0) {
        gg += w[b];
        continue;
      }
      gg += w[b] * malkmus_g(k, S[b], B[b]);
      dg += w[b] * k * malkmus_f(k, S[b], B[b]);
    }
    return gg - g;
  };
  // bracket [lo, hi] by steps doubling away from u = ln(mean k) ...
  double dg;
  double lo = std::log(sw > 0 ? sw : smax), hi = lo;
  if (eval(lo, dg) > 0) {
    for (double step = 1; eval(lo, dg) > 0; step *= 2) {
      hi = lo;
      lo -= step;
      if (lo < -700) return 0.0;  // below the smallest normal double: no absorption
    }
  } else {
    for (double step = 1; eval(hi, dg) <= 0; step *= 2) {
      lo = hi;
      hi += step;
      if (hi > 700) return std::exp(700.0);
    }
  }
  // ... then Newton in u, safeguarded by bisection whenever a step leaves the bracket
  double u = 0.5 * (lo + hi);
  for (int it = 0; it < 200 && hi - lo > 1e-13; ++it) {
    const double r = eval(u, dg);
    if (r > 0) hi = u;
    else lo = u;
    double un = (dg > 0) ? u - r / dg : 0.5 * (lo + hi);
    if (!(un > lo && un < hi)) un = 0.5 * (lo + hi);
    if (std::abs(un - u) < 1e-13) return std::exp(un);
    u = un;
  }
  return std::exp(u);
}

MalkmusRatioTable::MalkmusRatioTable(std::span<const double> g_values) : g_(g_values.begin(), g_values.end()) {
  const double h = std::log(10.0) / kPerDecade;
  n_ = static_cast<int>(std::lround((kLnBMax - kLnBMin) / h)) + 1;
  inv_h_ = 1.0 / h;
  ln_r_.resize(g_.size() * static_cast<std::size_t>(n_));
  for (std::size_t i = 0; i < g_.size(); ++i)
    for (int k = 0; k < n_; ++k)
      ln_r_[i * n_ + k] = std::log(malkmus_g_inverse(g_[i], 1.0, std::exp(kLnBMin + k * h)));
}

double MalkmusRatioTable::ratio(int i, double B) const {
  const double u = (std::log(B) - kLnBMin) * inv_h_;
  if (!(u >= 1.0 && u <= n_ - 2.0)) return malkmus_g_inverse(g_[static_cast<std::size_t>(i)], 1.0, B);
  // cubic Lagrange through nodes k-1..k+2
  const int k = std::min(static_cast<int>(u), n_ - 3);
  const double t = u - k;
  const double* f = &ln_r_[static_cast<std::size_t>(i) * n_ + k - 1];
  const double w0 = -t * (t - 1) * (t - 2) / 6, w1 = (t + 1) * (t - 1) * (t - 2) / 2, w2 = -(t + 1) * t * (t - 2) / 2,
               w3 = (t + 1) * t * (t - 1) / 6;
  return std::exp(w0 * f[0] + w1 * f[1] + w2 * f[2] + w3 * f[3]);
}

SnbckModel::SnbckModel(const SnbckOptions& opt, const std::filesystem::path& gasdata) : opt_(opt) {
  if (opt.gauss_points < 1 || opt.gauss_points > 64)
    throw InputError(fmt::format("model.gauss_points = {}: must be between 1 and 64", opt.gauss_points));
  if (opt.lumping < 1) throw InputError(fmt::format("model.lumping = {}: must be >= 1 (narrow bands per group)", opt.lumping));
  if (opt.overlap != "mixture" && opt.overlap != "multiply")
    throw InputError(fmt::format("model.overlap = '{}': use mixture or multiply", opt.overlap));
  data_ = std::make_shared<SnbData>(opt.dataset, gasdata, opt.strict);
  gauss_legendre_01(opt.gauss_points, gx_, gw_);
  ratio_ = MalkmusRatioTable(gx_);
  const int nb = data_->num_bands();
  // groups: runs of `lumping` consecutive bands that have data of a selected species
  Group cur;
  auto flush = [&]() {
    if (cur.bands.empty()) return;
    if (opt_.overlap == "mixture") cur.components = {-1};
    else
      for (int s : opt_.species)
        for (int b : cur.bands)
          if (data_->species_band(s, b) >= 0) {
            cur.components.push_back(s);
            break;
          }
    groups_.push_back(cur);
    cur = Group();
  };
  for (int b = 0; b < nb; ++b) {
    bool any = false;
    for (int s : opt_.species) any = any || data_->species_band(s, b) >= 0;
    if (!any) {
      flush();
      continue;
    }
    cur.bands.push_back(b);
    if (static_cast<int>(cur.bands.size()) == opt_.lumping) flush();
  }
  flush();
  const int ng = opt_.gauss_points;
  for (int gi = 0; gi < static_cast<int>(groups_.size()); ++gi) {
    const int nc = static_cast<int>(groups_[gi].components.size());
    std::vector<int> idx(nc, 0);
    while (true) {
      double w = 1;
      for (int c = 0; c < nc; ++c) w *= gw_[idx[c]];
      points_.push_back(Point{gi, idx, w});
      int c = 0;
      while (c < nc && ++idx[c] == ng) idx[c++] = 0;
      if (c == nc) break;
    }
  }
  covered_table_.resize(10001);
  for (int t = 0; t <= 10000; ++t) {
    double sum = 0;
    const double tt = std::max(1.0, static_cast<double>(t));
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) sum += group_fraction(g, tt);
    covered_table_[t] = sum;
  }
}

std::string SnbckModel::name() const {
  return fmt::format("snbck-{}-{}g{}{}", data_->dataset_name(), opt_.overlap, opt_.gauss_points,
                     opt_.lumping > 1 ? fmt::format("-lump{}", opt_.lumping) : "");
}

double SnbckModel::group_fraction(int g, double t) const {
  double sum = 0;
  for (int b : groups_[g].bands) sum += planck_emissive_power(data_->band_center(b), t);
  return sum * SnbData::band_width() / (kSigma * t * t * t * t);
}

double SnbckModel::clear_fraction(double t) const {
  const double u = std::clamp(t, 1.0, 10000.0);
  const int i = std::min(static_cast<int>(u), 9999);
  const double w = u - i;
  return std::max(0.0, 1.0 - ((1 - w) * covered_table_[i] + w * covered_table_[i + 1]));
}

double SnbckModel::component_k(const Group& gr, int c, const GasState& st, int gi) const {
  const double g = gx_[static_cast<std::size_t>(gi)];
  const int comp = gr.components[c];
  const auto ti = data_->t_index(st.temperature);
  const double xs[3] = {st.x_h2o, st.x_co2, st.x_co};
  double gam[3];
  for (int s : opt_.species) gam[s] = data_->gamma(s, st);
  const std::size_t nb = gr.bands.size();
  double S[64], B[64], W[64];
  std::vector<double> Sv, Bv, Wv;
  double* Sp = S;
  double* Bp = B;
  double* Wp = W;
  if (nb > 64) {
    Sv.resize(nb);
    Bv.resize(nb);
    Wv.resize(nb);
    Sp = Sv.data();
    Bp = Bv.data();
    Wp = Wv.data();
  }
  for (std::size_t k = 0; k < nb; ++k) {
    const int b = gr.bands[k];
    double smix = 0, root = 0;
    for (int s : opt_.species) {
      if (comp >= 0 && s != comp) continue;
      const int sb = data_->species_band(s, b);
      if (sb < 0 || xs[s] <= 0) continue;
      const double kb = data_->kbar(s, sb, ti);
      const double Ss = kb * xs[s] * st.pressure;
      const double beta = gam[s] * data_->inv_delta(s, sb, ti);
      smix += Ss;
      root += std::sqrt(Ss * beta);
    }
    Sp[k] = smix > 1e-300 ? smix : 0.0;
    const double beta_mix = smix > 1e-300 ? root * root / smix : 0.0;
    Bp[k] = 4.0 * beta_mix / kPi;
    Wp[k] = 1.0 / static_cast<double>(nb);
  }
  if (nb == 1) return Sp[0] > 0 ? 100.0 * Sp[0] * ratio_.ratio(gi, Bp[0]) : 0.0;
  return 100.0 * malkmus_g_inverse(g, std::span<const double>(Sp, nb), std::span<const double>(Bp, nb),
                                   std::span<const double>(Wp, nb));
}

void SnbckModel::absorption(int j, std::span<const GasState> states, std::span<double> kappa) const {
  if (j == static_cast<int>(points_.size())) {
    std::fill(kappa.begin(), kappa.begin() + states.size(), 0.0);
    return;
  }
  const auto& p = points_[j];
  const auto& gr = groups_[p.group];
  parallel_for(static_cast<long>(states.size()), 4096, [&](long i) {
    double k = 0;
    for (std::size_t c = 0; c < gr.components.size(); ++c)
      k += component_k(gr, static_cast<int>(c), states[static_cast<std::size_t>(i)], p.gi[c]);
    kappa[static_cast<std::size_t>(i)] = k;
  });
}

void SnbckModel::emission_weight(int j, std::span<const GasState> states, std::span<const double> ts,
                                 std::span<double> a) const {
  if (j == static_cast<int>(points_.size())) {
    for (std::size_t i = 0; i < states.size(); ++i) a[i] = clear_fraction(ts[i]);
    return;
  }
  const auto& p = points_[j];
  for (std::size_t i = 0; i < states.size(); ++i) a[i] = p.weight * group_fraction(p.group, ts[i]);
}

bool SnbckModel::spectrum(const GasState& st, std::span<const double> nu, std::span<double> kappa) const {
  // band-mean absorption coefficient sum_s kbar_s x_s P [1/m] of the narrow band containing nu
  const auto ti = data_->t_index(st.temperature);
  const double xs[3] = {st.x_h2o, st.x_co2, st.x_co};
  for (std::size_t i = 0; i < nu.size(); ++i) {
    const long b = std::lround((nu[i] - data_->band_center(0)) / SnbData::band_width());
    double k = 0;
    if (b >= 0 && b < data_->num_bands())
      for (int s : opt_.species) {
        const int sb = data_->species_band(s, static_cast<int>(b));
        if (sb >= 0) k += data_->kbar(s, sb, ti) * xs[s] * st.pressure;
      }
    kappa[i] = 100.0 * k;
  }
  return true;
}

}  // namespace dgrte::gas
