#include "gas/slw.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "common/error.hpp"
#include "gas/gas_common.hpp"

namespace dgrte::gas {

SlwModel::SlwModel(std::shared_ptr<const Albdf> albdf, SlwOptions opt) : SlwModel(std::move(albdf), std::move(opt), false) {}

SlwModel::SlwModel(const std::string& gasdata_dir, SlwOptions opt)
    : SlwModel(std::make_shared<const Albdf>(Albdf::load_default(gasdata_dir, opt.source)), opt, false) {}

RcslwModel::RcslwModel(const std::string& gasdata_dir, SlwOptions opt)
    : SlwModel(std::make_shared<const Albdf>(Albdf::load_default(gasdata_dir, opt.source)), opt, true) {}

SlwModel::SlwModel(std::shared_ptr<const Albdf> albdf, SlwOptions opt, bool rank_correlated)
    : albdf_(std::move(albdf)), opt_(std::move(opt)), rc_(rank_correlated), n_(opt_.n_gray) {
  const char* m = rc_ ? "rcslw" : "slw";
  if (n_ < 1 || n_ > 200) throw InputError(fmt::format("model {}: gray_gases = {} must be in 1..200", m, n_));
  if (!(opt_.c_min > 0) || !(opt_.c_max > opt_.c_min)) {
    throw InputError(fmt::format("model {}: need 0 < c_min < c_max (got {}, {}) [m^2/mol]", m, opt_.c_min, opt_.c_max));
  }
  c_lo_ = opt_.c_min * 1e-6;
  c_hi_ = opt_.c_max * 1e3;
  if (opt_.reference) set_reference_state(*opt_.reference);
}

void SlwModel::set_reference_state(const GasState& ref) {
  if (!(ref.temperature > 0) || !(ref.pressure > 0)) {
    throw InputError(fmt::format("model {}: reference state needs T > 0 and P > 0", name()));
  }
  ref_ = ref;
  have_ref_ = true;
  fixed_ref_ = true;
  build_grid();
}

void SlwModel::build_grid() {
  const double tref = ref_.temperature;
  const AlbdfEval e = albdf_->at(ref_, tref);
  f_.assign(n_, 0.0);
  ft_.assign(n_ + 1, 0.0);
  if (!rc_) {
    ct_ref_.resize(n_ + 1);
    c_ref_.resize(n_);
    for (int k = 0; k <= n_; ++k) ct_ref_[k] = opt_.c_min * std::pow(opt_.c_max / opt_.c_min, static_cast<double>(k) / n_);
    for (int k = 1; k <= n_; ++k) c_ref_[k - 1] = std::sqrt(ct_ref_[k - 1] * ct_ref_[k]);
    for (int k = 0; k <= n_; ++k) ft_[k] = e.f(ct_ref_[k]);
    for (int k = 0; k < n_; ++k) f_[k] = e.f(c_ref_[k]);
  } else {
    const double fmin = e.f(opt_.c_min), fmax = e.f(opt_.c_max);
    // positive half of the 2n-point Gauss-Legendre rule on [-1, 1] (Solovjov et al. 2017): nodes
    // z = 2y - 1 and weights 2w of the rule on [0, 1]
    std::vector<double> y, w;
    gauss_legendre_01(2 * n_, y, w);
    ft_[0] = fmin;
    double cum = 0;
    for (int k = 1; k <= n_; ++k) {
      const double xk = 2 * y[n_ + k - 1] - 1, wk = 2 * w[n_ + k - 1];
      cum += wk;
      f_[k - 1] = fmin + xk * (fmax - fmin);
      ft_[k] = fmin + std::min(cum, 1.0) * (fmax - fmin);
    }
    ft_[n_] = fmax;
  }
  cache_index_.clear();
  cache_.clear();
}

void SlwModel::check_ready() const {
  if (!have_ref_) {
    throw std::logic_error(fmt::format("model {}: no reference state; call prepare() or set_reference_state() first", name()));
  }
}

void SlwModel::prepare(std::span<const GasState> medium, std::span<const double> weights) {
  if (medium.empty() && !fixed_ref_) return;
  prepare_distributed(medium, weights, {});
}

void SlwModel::prepare_distributed(std::span<const GasState> medium, std::span<const double> weights,
                                   const SumOverRanks& sum_over_ranks) {
  if (!weights.empty() && weights.size() != medium.size())
    throw std::logic_error("SlwModel::prepare: one weight per state");
  if (!fixed_ref_) {
    // The reference state: the (weighted) average of the medium (Solovjov & Webb's choice for
    // non-isothermal media); in 3-D the weights are the nodes' volumes, so that fine mesh regions
    // do not dominate it. Distributed: the sums of all ranks.
    double sums[6] = {0, 0, 0, 0, 0, 0};  // w T, w p, w x_h2o, w x_co2, w x_co, w
    for (std::size_t i = 0; i < medium.size(); ++i) {
      const auto& s = medium[i];
      const double w = weights.empty() ? 1.0 : weights[i];
      sums[0] += w * s.temperature;
      sums[1] += w * s.pressure;
      sums[2] += w * s.x_h2o;
      sums[3] += w * s.x_co2;
      sums[4] += w * s.x_co;
      sums[5] += w;
    }
    if (sum_over_ranks) sum_over_ranks(sums, 6);
    if (!(sums[5] > 0)) throw std::logic_error("SlwModel::prepare: weights sum to zero");
    const double inv = 1.0 / sums[5];
    ref_ = GasState{sums[0] * inv, sums[1] * inv, sums[2] * inv, sums[3] * inv, sums[4] * inv};
    have_ref_ = true;
    build_grid();
  } else {
    cache_index_.clear();
    cache_.clear();
  }
  // cache the local cross-sections of every distinct state
  const std::size_t per = static_cast<std::size_t>(2 * n_ + 1);
  std::vector<GasState> distinct;
  GasStateIndex index;
  for (const auto& s : medium) {
    if (index.try_emplace(GasStateKey(s), distinct.size()).second) distinct.push_back(s);
    if (distinct.size() * per > opt_.cache_limit) return;  // too many: evaluate on the fly
  }
  std::vector<double> cache(distinct.size() * per);
  parallel_for(
      static_cast<long>(distinct.size()), 2,
      [&](long i) {
        const GasState& s = distinct[static_cast<std::size_t>(i)];
        const AlbdfEval e = albdf_->at(s, ref_.temperature);
        double* c = cache.data() + static_cast<std::size_t>(i) * per;
        for (int k = 0; k < n_; ++k) c[k] = e.inverse(f_[k], c_lo_, c_hi_);
        for (int k = 0; k <= n_; ++k) c[n_ + k] = rc_ ? e.inverse(ft_[k], c_lo_, c_hi_) : 0.0;
      },
      64);
  cache_ = std::move(cache);
  cache_index_ = std::move(index);
}

const double* SlwModel::cached(const GasState& s) const {
  if (cache_index_.empty()) return nullptr;
  const auto it = cache_index_.find(GasStateKey(s));
  if (it == cache_index_.end()) return nullptr;
  return cache_.data() + it->second * static_cast<std::size_t>(2 * n_ + 1);
}

double SlwModel::local_c(int k, const GasState& s) const {
  if (const double* c = cached(s)) return c[k - 1];
  return albdf_->at(s, ref_.temperature).inverse(f_[k - 1], c_lo_, c_hi_);
}

double SlwModel::local_ct(int k, const GasState& s) const {
  if (const double* c = cached(s)) return c[n_ + k];
  return albdf_->at(s, ref_.temperature).inverse(ft_[k], c_lo_, c_hi_);
}

void SlwModel::absorption(int j, std::span<const GasState> states, std::span<double> kappa) const {
  check_ready();
  if (j == 0) {
    std::fill(kappa.begin(), kappa.end(), 0.0);
    return;
  }
  parallel_for(static_cast<long>(states.size()), 4096, [&](long i) {
    const GasState& s = states[static_cast<std::size_t>(i)];
    kappa[static_cast<std::size_t>(i)] = molar_concentration(s.pressure, s.temperature) * local_c(j, s);
  });
}

void SlwModel::emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                               std::span<double> a) const {
  check_ready();
  parallel_for(static_cast<long>(states.size()), 4096, [&](long i) {
    const std::size_t ii = static_cast<std::size_t>(i);
    const double tb = source_temperature[ii];
    if (!rc_) {
      const AlbdfEval e = albdf_->at(ref_, tb);
      const double hi = j == n_ ? 1.0 : e.f(ct_ref_[j]);
      const double lo = j == 0 ? 0.0 : e.f(ct_ref_[j - 1]);
      a[ii] = std::max(0.0, hi - lo);
    } else {
      const GasState& s = states[ii];
      const AlbdfEval e = albdf_->at(s, tb);
      const double hi = j == n_ ? 1.0 : e.f(local_ct(j, s));
      const double lo = j == 0 ? 0.0 : e.f(local_ct(j - 1, s));
      a[ii] = std::max(0.0, hi - lo);
    }
  });
}

}  // namespace dgrte::gas
