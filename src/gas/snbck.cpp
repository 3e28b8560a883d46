#include "gas/snbck.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

double malkmus_g_inverse(double g, std::span<const double> S, std::span<const double> B, std::span<const double> w,
                         const MalkmusRootHint& hint) {
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
  // Per absorbing band, what every evaluation shares: with z1 = a/sqrt(k) - b sqrt(k),
  // z2 = a/sqrt(k) + b sqrt(k) (a = sqrt(pi B S)/2, b = sqrt(pi B / S)/2) and E = exp(-z1^2),
  //   g_b = erfc(z1)/2 + erfcx(z2) E/2,   k f_b = c E / sqrt(k),  c = sqrt(B S)/2
  // (z2^2 = z1^2 + pi B). A band whose |z1| > 6.5 is saturated: g_b = 0 or 1 and f_b = 0 to 1e-19.
  constexpr std::size_t kStack = 64;  // bands per group on the stack (a lumped group rarely has more)
  double stack[4 * kStack];
  std::vector<double> heap(S.size() > kStack ? 4 * S.size() : 0);
  double* coef = heap.empty() ? stack : heap.data();  // a, b, c, w per absorbing band
  std::size_t n = 0;
  for (std::size_t b = 0; b < S.size(); ++b) {
    if (S[b] <= 0) continue;
    double* c = coef + 4 * n++;
    c[0] = 0.5 * std::sqrt(kPi * B[b] * S[b]);
    c[1] = 0.5 * std::sqrt(kPi * B[b] / S[b]);
    c[2] = 0.5 * std::sqrt(B[b] * S[b]);
    c[3] = w[b];
  }
  // r(u) = G(e^u) - g with G increasing in u = ln k
  auto eval = [&](double u, double& dg) {
    const double sk = std::exp(0.5 * u), isk = 1.0 / sk;
    double gg = atom;
    dg = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double* c = coef + 4 * i;
      const double a = c[0] * isk, bb = c[1] * sk;
      const double z1 = a - bb;
      if (z1 > 6.5) continue;
      if (z1 < -6.5) {
        gg += c[3];
        continue;
      }
      const double e = std::exp(-z1 * z1);
      gg += c[3] * 0.5 * (std::erfc(z1) + erfcx(a + bb) * e);
      dg += c[3] * c[2] * isk * e;
    }
    return gg - g;
  };
  double dg;
  double lo = std::log(sw > 0 ? sw : smax), hi = lo, u = lo;
  if (hint.lo > 0 && hint.hi >= hint.lo) {
    // a bracket from the bands' own roots: G(max_b k_b) >= g always; G(min_b k_b) <= g unless bands
    // without absorption (the atom) lift G, then search down from there
    lo = std::log(hint.lo) - 1e-6;  // widened by the ratio table's accuracy
    hi = std::log(hint.hi) + 1e-6;
    if (atom > 0)
      for (double step = 0.25; eval(lo, dg) > 0; step *= 2) {
        hi = std::min(hi, lo);
        lo -= step;
        if (lo < -700) return 0.0;
      }
    u = hint.start > 0 ? std::clamp(std::log(hint.start), lo, hi) : 0.5 * (lo + hi);
  } else {
    // bracket [lo, hi] by steps doubling away from u = ln(mean k)
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
    u = 0.5 * (lo + hi);
  }
  // Newton in u, safeguarded whenever a step leaves the bracket:
  // Where a Newton step would leave the bracket (a sum of steep, far-apart bands: G is flat between
  // them), false position on the bracket's residuals once both are known (Illinois: a side kept
  // twice has its residual halved, so it cannot stall), else bisection.
  double r_lo = std::numeric_limits<double>::quiet_NaN(), r_hi = r_lo;
  int side = 0;  // +1: hi moved last, -1: lo moved last
  for (int it = 0; it < 200 && hi - lo > 1e-13; ++it) {
    const double r = eval(u, dg);
    if (r > 0) {
      hi = u, r_hi = r;
      if (side == 1) r_lo *= 0.5;
      side = 1;
    } else {
      lo = u, r_lo = r;
      if (side == -1) r_hi *= 0.5;
      side = -1;
    }
    double un = (dg > 0) ? u - r / dg : lo - 1;
    if (!(un > lo && un < hi)) {
      un = (r_lo < 0 && r_hi > 0) ? lo + (hi - lo) * r_lo / (r_lo - r_hi) : 0.5 * (lo + hi);
      if (!(un > lo && un < hi)) un = 0.5 * (lo + hi);
    }
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

MalkmusRatioTable::Stencil MalkmusRatioTable::stencil(double B) const {
  const double u = (std::log(B) - kLnBMin) * inv_h_;
  Stencil st;
  if (!(u >= 1.0 && u <= n_ - 2.0)) return st;  // outside the table: inside = false
  // cubic Lagrange through nodes k-1..k+2
  st.inside = true;
  st.k = std::min(static_cast<int>(u), n_ - 3);
  const double t = u - st.k;
  st.w[0] = -t * (t - 1) * (t - 2) / 6, st.w[1] = (t + 1) * (t - 1) * (t - 2) / 2, st.w[2] = -(t + 1) * t * (t - 2) / 2,
  st.w[3] = (t + 1) * t * (t - 1) / 6;
  return st;
}

double MalkmusRatioTable::ratio(int i, double B) const {
  const auto ui = static_cast<std::size_t>(i);
  const Stencil st = stencil(B);
  if (!st.inside) return malkmus_g_inverse(g_[ui], 1.0, B);
  const double* f = &ln_r_[ui * n_ + st.k - 1];
  return std::exp(st.w[0] * f[0] + st.w[1] * f[1] + st.w[2] * f[2] + st.w[3] * f[3]);
}

void MalkmusRatioTable::ratios(double B, const char* wanted, double* r) const {
  const Stencil st = stencil(B);
  for (std::size_t i = 0; i < g_.size(); ++i) {
    if (wanted && !wanted[i]) continue;
    if (!st.inside) {
      r[i] = malkmus_g_inverse(g_[i], 1.0, B);
      continue;
    }
    const double* f = &ln_r_[i * n_ + st.k - 1];
    r[i] = std::exp(st.w[0] * f[0] + st.w[1] * f[1] + st.w[2] * f[2] + st.w[3] * f[3]);
  }
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
  for (const auto& g : groups_) max_group_bands_ = std::max(max_group_bands_, g.bands.size());
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

SnbckModel::StateTerms SnbckModel::state_terms(const GasState& st) const {
  StateTerms t{data_->t_index(st.temperature), {st.x_h2o, st.x_co2, st.x_co}, {0, 0, 0}};
  for (int s : opt_.species) t.gamma[s] = data_->gamma(s, st);
  return t;
}

void SnbckModel::band_parameters(const Group& gr, int c, const GasState& st, const StateTerms& t, double* S,
                                 double* B) const {
  const int comp = gr.components[static_cast<std::size_t>(c)];
  for (std::size_t k = 0; k < gr.bands.size(); ++k) {
    const int b = gr.bands[k];
    double smix = 0, root = 0;
    for (int s : opt_.species) {
      if (comp >= 0 && s != comp) continue;
      const int sb = data_->species_band(s, b);
      if (sb < 0 || t.x[s] <= 0) continue;
      const double Ss = data_->kbar(s, sb, t.ti) * t.x[s] * st.pressure;
      const double beta = t.gamma[s] * data_->inv_delta(s, sb, t.ti);
      smix += Ss;
      root += std::sqrt(Ss * beta);
    }
    // one effective Malkmus gas: the optically thick limit fixes beta (Liu et al. 2001)
    S[k] = smix > 1e-300 ? smix : 0.0;
    B[k] = smix > 1e-300 ? 4.0 * root * root / smix / kPi : 0.0;
  }
}

void SnbckModel::component_k(const Group& gr, const double* S, const double* B, double* W, const char* wanted,
                             double* k) const {
  const std::size_t nb = gr.bands.size(), ng = gx_.size();
  if (nb == 1) {
    if (!(S[0] > 0)) {
      for (std::size_t i = 0; i < ng; ++i) k[i] = 0.0;
      return;
    }
    ratio_.ratios(B[0], wanted, k);
    for (std::size_t i = 0; i < ng; ++i) k[i] *= 100.0 * S[0];
    return;
  }
  // Each band's own root k_b = S_b r(g, B_b) (the ratio table) brackets the group's root: the
  // group's g(k) is the mean of the bands' g_b(k).
  std::fill(W, W + nb, 1.0 / static_cast<double>(nb));
  double r[64], log_sum[64];  // n_g <= 64 (checked in the constructor)
  MalkmusRootHint hints[64];
  for (std::size_t i = 0; i < ng; ++i) {
    k[i] = 0.0;
    log_sum[i] = 0.0;
    hints[i] = {std::numeric_limits<double>::max(), 0.0, 0.0};
  }
  double s_sum = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    if (!(S[b] > 0)) continue;
    ratio_.ratios(B[b], wanted, r);
    for (std::size_t i = 0; i < ng; ++i) {
      if (!wanted[i]) continue;
      const double kb = S[b] * r[i];
      hints[i].lo = std::min(hints[i].lo, kb);
      hints[i].hi = std::max(hints[i].hi, kb);
      log_sum[i] += S[b] * std::log(kb);
    }
    s_sum += S[b];
  }
  if (!(s_sum > 0)) return;
  const std::span<const double> w(W, nb);
  for (std::size_t i = 0; i < ng; ++i) {
    if (!wanted[i]) continue;
    hints[i].start = std::exp(log_sum[i] / s_sum);  // the S-weighted geometric mean of the bands' roots
    k[i] = 100.0 * malkmus_g_inverse(gx_[i], std::span<const double>(S, nb), std::span<const double>(B, nb), w, hints[i]);
  }
}

void SnbckModel::absorption(int j, std::span<const GasState> states, std::span<double> kappa) const {
  evaluate_points(j, 1, states, {}, kappa, {});
}

void SnbckModel::evaluate_block(int first, int count, std::span<const GasState> states, std::span<const double> ts,
                                std::span<double> kappa, std::span<double> a) const {
  evaluate_points(first, count, states, ts, kappa, a);
}

std::pair<double, double> SnbckModel::wavenumber_interval(int j) const {
  if (j < 0 || j >= static_cast<int>(points_.size())) return SpectralModel::wavenumber_interval(j);
  const auto& bands = groups_[static_cast<std::size_t>(points_[static_cast<std::size_t>(j)].group)].bands;
  const double half = 0.5 * SnbData::band_width();
  return {data_->band_center(bands.front()) - half, data_->band_center(bands.back()) + half};
}

int SnbckModel::block_end(int first, int max_count) const {
  const int np = num_spectral_points(), clear = static_cast<int>(points_.size());
  const int want = std::min(np, first + std::max(1, max_count));
  if (want >= np || first >= clear) return want;
  // back to the start of the group that `want` would split, unless that leaves nothing
  int end = want;
  if (end < clear && points_[static_cast<std::size_t>(end)].group == points_[static_cast<std::size_t>(end - 1)].group) {
    const int g = points_[static_cast<std::size_t>(end)].group;
    while (end > first && points_[static_cast<std::size_t>(end - 1)].group == g) --end;
    if (end == first) end = want;
  }
  return end;
}

void SnbckModel::evaluate_points(int first, int count, std::span<const GasState> states, std::span<const double> ts,
                                 std::span<double> kappa, std::span<double> a) const {
  const std::size_t n = states.size(), ng = gx_.size();
  const bool weights = !a.empty();
  const int clear = static_cast<int>(points_.size()), last = first + count;
  const std::size_t max_bands = max_group_bands_;
  constexpr std::size_t kChunk = 64;  // states per task: the scratch below is allocated once per chunk
  parallel_for(static_cast<long>((n + kChunk - 1) / kChunk), 4, [&](long chunk) {
    std::vector<double> S(max_bands), B(max_bands), W(max_bands), k(3 * ng);
    std::vector<char> wanted(3 * ng);
    const std::size_t i_end = std::min(n, (static_cast<std::size_t>(chunk) + 1) * kChunk);
    for (std::size_t i = static_cast<std::size_t>(chunk) * kChunk; i < i_end; ++i) {
      const GasState& st = states[i];
      const StateTerms terms = state_terms(st);
      for (int j = first; j < last;) {
        if (j >= clear) {
          const auto o = static_cast<std::size_t>(j - first) * n + i;
          kappa[o] = 0.0;
          if (weights) a[o] = clear_fraction(ts[i]);
          ++j;
          continue;
        }
        // the points of this group inside the block, and which Gauss points each component needs
        const int group = points_[static_cast<std::size_t>(j)].group;
        const Group& gr = groups_[static_cast<std::size_t>(group)];
        const std::size_t nc = gr.components.size();
        int j_end = j;
        std::fill(wanted.begin(), wanted.end(), 0);
        for (; j_end < last && j_end < clear && points_[static_cast<std::size_t>(j_end)].group == group; ++j_end)
          for (std::size_t c = 0; c < nc; ++c)
            wanted[c * ng + static_cast<std::size_t>(points_[static_cast<std::size_t>(j_end)].gi[c])] = 1;
        for (std::size_t c = 0; c < nc; ++c) {
          band_parameters(gr, static_cast<int>(c), st, terms, S.data(), B.data());
          component_k(gr, S.data(), B.data(), W.data(), &wanted[c * ng], &k[c * ng]);
        }
        const double fraction = weights ? group_fraction(group, ts[i]) : 0.0;
        for (; j < j_end; ++j) {
          const auto& p = points_[static_cast<std::size_t>(j)];
          double kj = 0;
          for (std::size_t c = 0; c < nc; ++c) kj += k[c * ng + static_cast<std::size_t>(p.gi[c])];
          const auto o = static_cast<std::size_t>(j - first) * n + i;
          kappa[o] = kj;
          if (weights) a[o] = p.weight * fraction;
        }
      }
    }
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
