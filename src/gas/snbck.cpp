#include "gas/snbck.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <limits>
#include <fmt/format.h>

#include "common/error.hpp"

#if DGRTE_HAVE_LIBMVEC
#include <immintrin.h>
// glibc's vector math (libmvec): the x86-64 vector ABI names of erfc and exp.
extern "C" {
[[gnu::target("avx512f")]] __m512d _ZGVeN8v_erfc(__m512d);
[[gnu::target("avx512f")]] __m512d _ZGVeN8v_exp(__m512d);
[[gnu::target("avx2")]] __m256d _ZGVdN4v_erfc(__m256d);
[[gnu::target("avx2")]] __m256d _ZGVdN4v_exp(__m256d);
}
#endif

namespace dgrte::gas {

namespace {
// erfc(z) exp(z^2), stable for large z
double erfcx(double z) {
  if (z < 25.0) return std::erfc(z) * std::exp(z * z);
  const double iz2 = 1.0 / (z * z);
  return 1.0 / (z * std::sqrt(kPi)) * (1 - 0.5 * iz2 * (1 - 1.5 * iz2 * (1 - 2.5 * iz2 * (1 - 3.5 * iz2))));
}

// The sums of MalkmusGroup::sum over whole SIMD vectors of bands (SoA coefficients, padded with
// weight-0 bands) through glibc's vector erfc and exp (libmvec, glibc >= 2.35). The branch-free form:
// e^{pi B} erfc(z2) (= erfcx(z2) e^{-z1^2}, since z2^2 - z1^2 = pi B) while z2 < 25, where pi B < 625
// wherever the band is not saturated (z2 >= |z1|), else erfcx's asymptotic series; a saturated band
// (|z1| > 6.5) adds its limit to within 1e-19 without a branch.
struct BandCoefficients {
  const double *a, *b, *c, *w, *e;  // e = e^{pi B}
  std::size_t n;                    // a multiple of the lane count
};
// Inlined only into the target-specific functions below, so the vector ABI note (-Wpsabi) that its
// generic instantiation draws does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
template <class V, class Erfc, class Exp>
[[gnu::always_inline]] inline double sum_lanes(const BandCoefficients& bc, double isk, double sk, double& dg, double& d2g,
                                               Erfc erfc_v, Exp exp_v) {
  constexpr std::size_t W = sizeof(V) / sizeof(double);
  V gs = {}, ds = {}, d2s = {};
  for (std::size_t i = 0; i < bc.n; i += W) {
    V av, bv, cv, wv, ev;
    std::memcpy(&av, bc.a + i, sizeof(V)), std::memcpy(&bv, bc.b + i, sizeof(V)), std::memcpy(&cv, bc.c + i, sizeof(V));
    std::memcpy(&wv, bc.w + i, sizeof(V)), std::memcpy(&ev, bc.e + i, sizeof(V));
    const V z1 = av * isk - bv * sk, z2 = av * isk + bv * sk;
    const V e = exp_v(-z1 * z1);
    const V iz2 = 1.0 / (z2 * z2);
    const V far = e / (z2 * std::sqrt(kPi)) * (1 - 0.5 * iz2 * (1 - 1.5 * iz2 * (1 - 2.5 * iz2 * (1 - 3.5 * iz2))));
    const V near = erfc_v(z2) * ev;
    const V tail = z2 < 25.0 ? near : far;
    gs += wv * 0.5 * (erfc_v(z1) + tail);
    const V de = wv * cv * e;
    ds += de;
    d2s += de * (z1 * z2 - 0.5);
  }
  double g = 0, d = 0, d2 = 0;
  for (std::size_t l = 0; l < W; ++l) g += gs[l], d += ds[l], d2 += d2s[l];
  dg = d * isk, d2g = d2 * isk;
  return g;
}
#pragma GCC diagnostic pop
#if DGRTE_HAVE_LIBMVEC
[[gnu::target("avx512f"), gnu::flatten]] double sum_avx512(const BandCoefficients& bc, double isk, double sk, double& dg,
                                                         double& d2g) {
  return sum_lanes<__m512d>(bc, isk, sk, dg, d2g, _ZGVeN8v_erfc, _ZGVeN8v_exp);
}
[[gnu::target("avx2,fma"), gnu::flatten]] double sum_avx2(const BandCoefficients& bc, double isk, double sk, double& dg,
                                                        double& d2g) {
  return sum_lanes<__m256d>(bc, isk, sk, dg, d2g, _ZGVdN4v_erfc, _ZGVdN4v_exp);
}
bool cpu_has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool cpu_has_avx512() { return __builtin_cpu_supports("avx512f"); }
#endif
constexpr std::size_t kLanes = 8;  // bands are padded to a multiple of this
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

void MalkmusGroup::assign(std::span<const double> S, std::span<const double> B, std::span<const double> w) {
  atom_ = smax_ = sw_ = 0;
  std::size_t n = 0;
  for (std::size_t b = 0; b < S.size(); ++b) {
    if (S[b] <= 0) atom_ += w[b];
    else {
      smax_ = std::max(smax_, S[b]);
      sw_ += w[b] * S[b];
      ++n;
    }
  }
  // Per absorbing band, what every evaluation shares: with z1 = a/sqrt(k) - b sqrt(k),
  // z2 = a/sqrt(k) + b sqrt(k) (a = sqrt(pi B S)/2, b = sqrt(pi B / S)/2) and E = exp(-z1^2),
  //   g_b = erfc(z1)/2 + erfcx(z2) E/2,   k f_b = c E / sqrt(k),  c = sqrt(B S)/2.
  padded_ = (n + kLanes - 1) / kLanes * kLanes;
  coef_.resize(5 * padded_);
  double *a = coef_.data(), *bb = a + padded_, *c = bb + padded_, *wc = c + padded_, *e = wc + padded_;
  std::size_t i = 0;
  for (std::size_t k = 0; k < S.size(); ++k) {
    if (!(S[k] > 0)) continue;
    a[i] = 0.5 * std::sqrt(kPi * B[k] * S[k]);
    bb[i] = 0.5 * std::sqrt(kPi * B[k] / S[k]);
    c[i] = 0.5 * std::sqrt(B[k] * S[k]);
    wc[i] = w[k];
    e[i] = std::exp(std::min(kPi * B[k], 700.0));
    ++i;
  }
  for (; i < padded_; ++i) a[i] = bb[i] = c[i] = wc[i] = 0.0, e[i] = 1.0;
}

double MalkmusGroup::sum(double u, double& dg, double& d2g) const {
  const double sk = std::exp(0.5 * u), isk = 1.0 / sk;
  const double *a = coef_.data(), *bb = a + padded_, *c = bb + padded_, *w = c + padded_;
#if DGRTE_HAVE_LIBMVEC
  const BandCoefficients bc{a, bb, c, w, w + padded_, padded_};
  if ((lanes_ == 0 || lanes_ == 8) && cpu_has_avx512()) return sum_avx512(bc, isk, sk, dg, d2g);
  if ((lanes_ == 0 || lanes_ == 4) && cpu_has_avx2()) return sum_avx2(bc, isk, sk, dg, d2g);
#endif
  double g = 0;
  dg = d2g = 0;
  for (std::size_t i = 0; i < padded_; ++i) {
    const double z1 = a[i] * isk - bb[i] * sk, z2 = a[i] * isk + bb[i] * sk;
    if (z1 > 6.5) continue;
    if (z1 < -6.5) {
      g += w[i];
      continue;
    }
    const double e = std::exp(-z1 * z1);
    g += w[i] * 0.5 * (std::erfc(z1) + erfcx(z2) * e);
    dg += w[i] * c[i] * isk * e;
    d2g += w[i] * c[i] * isk * e * (z1 * z2 - 0.5);
  }
  return g;
}

std::vector<int> MalkmusGroup::lane_widths() {
  std::vector<int> widths{1};
#if DGRTE_HAVE_LIBMVEC
  if (cpu_has_avx2()) widths.push_back(4);
  if (cpu_has_avx512()) widths.push_back(8);
#endif
  return widths;
}

double MalkmusGroup::inverse(double g, const MalkmusRootHint& hint, double* slope) const {
  const double atom = atom_;
  if (slope) *slope = 0.0;
  if (g <= atom + 1e-15 || smax_ <= 0) return 0.0;
  // r(u) = G(e^u) - g with G increasing in u = ln k
  double dg, d2g;
  auto eval = [&](double u, double& d) { return atom + sum(u, d, d2g) - g; };
  double lo = std::log(sw_ > 0 ? sw_ : smax_), hi = lo, u = lo;
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
  // Halley's method in u (G' and G'' come with G at little extra cost: cubic convergence), safeguarded
  // whenever a step leaves the bracket (a sum of steep, far-apart bands: G is flat between them):
  // false position on the bracket's residuals once both are known (Illinois: a side kept twice has
  // its residual halved, so it cannot stall), else bisection.
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
    // Halley's step is Newton's divided by 1 - r G''/(2 G'^2); only where that factor is within [1/2, 3/2]
    // (near the root), so that a short step always means a short Newton step
    const bool halley = std::abs(r * d2g) <= dg * dg;
    const double step = dg > 0 ? (halley ? 2 * r * dg / (2 * dg * dg - r * d2g) : r / dg) : 0.0;
    // Where a step lands this close to the root, the evaluation that would confirm it is skipped (the
    // bracket only corrects its rounding): a Newton step's error is ~|G''/(2G')| step^2, and a Halley
    // step, which corrects exactly that term, is left with a fraction ~step of it.
    const double newton_error = std::abs(d2g / (2 * dg)) * step * step;
    if (dg > 0 && std::abs(step) < 1e-3 && newton_error < (halley ? 1e-9 : 1e-14)) {
      if (slope) *slope = dg;
      return std::exp(std::clamp(u - step, lo, hi));
    }
    double un = dg > 0 ? u - step : lo - 1;
    const bool local = un > lo && un < hi;
    if (!local) {
      un = (r_lo < 0 && r_hi > 0) ? lo + (hi - lo) * r_lo / (r_lo - r_hi) : 0.5 * (lo + hi);
      if (!(un > lo && un < hi)) un = 0.5 * (lo + hi);
    }
    if (std::abs(un - u) < 1e-13) return std::exp(un);
    u = un;
  }
  return std::exp(u);
}

double malkmus_g_inverse(double g, std::span<const double> S, std::span<const double> B, std::span<const double> w,
                         const MalkmusRootHint& hint) {
  return MalkmusGroup(S, B, w).inverse(g, hint);
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

void MalkmusRatioTable::log_ratios(double B, const char* wanted, double* ln_r) const {
  const Stencil st = stencil(B);
  for (std::size_t i = 0; i < g_.size(); ++i) {
    if (wanted && !wanted[i]) continue;
    if (!st.inside) {
      ln_r[i] = std::log(malkmus_g_inverse(g_[i], 1.0, B));
      continue;
    }
    const double* f = &ln_r_[i * n_ + st.k - 1];
    ln_r[i] = st.w[0] * f[0] + st.w[1] * f[1] + st.w[2] * f[2] + st.w[3] * f[3];
  }
}

void MalkmusRatioTable::ratios(double B, const char* wanted, double* r) const {
  log_ratios(B, wanted, r);
  for (std::size_t i = 0; i < g_.size(); ++i)
    if (!wanted || wanted[i]) r[i] = std::exp(r[i]);
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

void SnbckModel::component_k(const Group& gr, const double* S, const double* B, double* W, MalkmusGroup& sum,
                             const char* wanted, double* k) const {
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
  // group's g(k) is the mean of the bands' g_b(k). In logs: ln k_b = ln S_b + ln r.
  std::fill(W, W + nb, 1.0 / static_cast<double>(nb));
  double ln_r[64], ln_lo[64], ln_hi[64], log_sum[64];  // n_g <= 64 (checked in the constructor)
  for (std::size_t i = 0; i < ng; ++i) {
    k[i] = 0.0;
    log_sum[i] = 0.0;
    ln_lo[i] = std::numeric_limits<double>::max();
    ln_hi[i] = -std::numeric_limits<double>::max();
  }
  double s_sum = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    if (!(S[b] > 0)) continue;
    ratio_.log_ratios(B[b], wanted, ln_r);
    const double ln_s = std::log(S[b]);
    for (std::size_t i = 0; i < ng; ++i) {
      if (!wanted[i]) continue;
      const double ln_kb = ln_s + ln_r[i];
      ln_lo[i] = std::min(ln_lo[i], ln_kb);
      ln_hi[i] = std::max(ln_hi[i], ln_kb);
      log_sum[i] += S[b] * ln_kb;
    }
    s_sum += S[b];
  }
  if (!(s_sum > 0)) return;
  sum.assign(std::span<const double>(S, nb), std::span<const double>(B, nb), std::span<const double>(W, nb));
  // Bracket: the bands' extreme roots. Start: the S-weighted geometric mean of their roots for the
  // first Gauss point; for the next ones (g ascending) a Newton step from the last root, which is also
  // a lower bound.
  double k_last = 0, g_last = 0, slope_last = 0;
  for (std::size_t i = 0; i < ng; ++i) {
    if (!wanted[i]) continue;
    MalkmusRootHint hint{std::exp(ln_lo[i]), std::exp(ln_hi[i]), std::exp(log_sum[i] / s_sum)};
    if (k_last > 0 && slope_last > 0 && gx_[i] > g_last) {
      hint.lo = std::max(hint.lo, k_last);
      hint.hi = std::max(hint.hi, hint.lo);
      hint.start = k_last * std::exp(std::min((gx_[i] - g_last) / slope_last, 50.0));
    }
    double slope = 0;
    const double root = sum.inverse(gx_[i], hint, &slope);
    k[i] = 100.0 * root;
    k_last = root, g_last = gx_[i], slope_last = slope;
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
    MalkmusGroup sum;
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
          component_k(gr, S.data(), B.data(), W.data(), sum, &wanted[c * ng], &k[c * ng]);
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
