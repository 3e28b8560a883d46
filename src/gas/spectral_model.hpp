#pragma once
// The one interface every spectral gas model implements (gray, Planck-mean, WSGG, SNBCK, SLW,
// RCSLW, line-by-line). A model turns the nongray RTE into a sum of gray problems ("spectral
// points" j):  s.grad I_j = kappa_j (a_j I_b(T) - I_j),  I = sum_j I_j,  with walls emitting
// eps * a_j(T_wall) * I_b(T_wall). Units: kappa in 1/m, temperature in K, pressure in atm (the
// case files' unit; convert at the edges), mole fractions dimensionless.
#include <algorithm>
#include <limits>
#include <functional>
#include <span>
#include <string>
#include <utility>

namespace dgrte::gas {

struct GasState {
  double temperature = 0;  // K
  double pressure = 1;     // total pressure, atm
  double x_h2o = 0;        // mole fractions
  double x_co2 = 0;
  double x_co = 0;
  double soot_fv = 0;      // soot volume fraction (gas/soot.hpp); 0 = no soot
};

class SpectralModel {
 public:
  virtual ~SpectralModel() = default;
  virtual std::string name() const = 0;
  virtual int num_spectral_points() const = 0;

  // Sees the whole medium once before any evaluation: models for non-uniform media choose their
  // reference state (SLW) or rank-correlate their gray gases (RCSLW) here. weights (optional, one
  // per state, e.g. the volume each DG node stands for): averages over the medium weight the states
  // by them; empty = equal weights (a uniform grid).
  virtual void prepare(std::span<const GasState> medium, std::span<const double> weights = {}) {
    (void)medium, (void)weights;
  }

  // The same for a medium spread over the ranks of a distributed run: `medium` holds this rank's
  // states (those with weight 0, e.g. a ghost layer, are evaluated but do not count in averages),
  // and sum_over_ranks(values, count) sums values over the ranks in place. A model that averages
  // over the medium must average over all ranks, so that its points do not depend on the
  // partition; the default (prepare on the local states) is right for models without averages.
  using SumOverRanks = std::function<void(double* values, int count)>;
  virtual void prepare_distributed(std::span<const GasState> medium, std::span<const double> weights, const SumOverRanks& sum_over_ranks) {
    (void)sum_over_ranks;
    prepare(medium, weights);
  }

  // kappa[i] = absorption coefficient [1/m] of spectral point j in the gas of states[i].
  virtual void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const = 0;

  // a[i] = emission weight of spectral point j for a blackbody source at source_temperature[i]
  // [K] in (or next to) the gas of states[i]; for the medium itself pass the gas temperature,
  // for a wall the wall temperature. Weights of a complete model sum to 1 over j.
  virtual void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                               std::span<double> a) const = 0;

  // Points [first, first + count) at once, for the gas itself: kappa[p * n + i] and a[p * n + i]
  // belong to point first + p and states[i] (n = states.size()), a weighted at source_temperature[i].
  // Models whose points share per-state work (SNBCK: the temperature interpolation, each band's
  // line parameters, the k-distribution inversion of all Gauss points of a band) override this so
  // that work is done once per state and block; the default evaluates point by point.
  virtual void evaluate_block(int first, int count, std::span<const GasState> states,
                              std::span<const double> source_temperature, std::span<double> kappa,
                              std::span<double> a) const {
    const std::size_t n = states.size();
    for (int p = 0; p < count; ++p) {
      const auto off = static_cast<std::size_t>(p) * n;
      absorption(first + p, states, kappa.subspan(off, n));
      emission_weight(first + p, states, source_temperature, a.subspan(off, n));
    }
  }

  // The end of a block that starts at `first` and holds at most max_count points, chosen so that
  // the points sharing per-state work stay together where they fit (SNBCK: whole band groups).
  virtual int block_end(int first, int max_count) const {
    return std::min(num_spectral_points(), first + std::max(1, max_count));
  }

  // The wavenumber interval [cm^-1] spectral point j stands for (SNBCK: its band group; LBL: its
  // grid cell or band), or {NaN, NaN} where it has none (gray gases of WSGG/SLW, clear parts).
  virtual std::pair<double, double> wavenumber_interval(int j) const {
    (void)j;
    return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  }

  // The temperatures [K] the model's data cover; states and wall temperatures outside are clamped
  // into it (or rejected by a strict model). Unlimited by default.
  virtual std::pair<double, double> temperature_range() const { return {0.0, std::numeric_limits<double>::infinity()}; }

  // Optional, for models with a wavenumber axis (line-by-line; SNB band means): kappa[i] [1/m] of
  // the gas in `state` at wavenumbers[i] [cm^-1]. Returns false when the model has no spectrum.
  virtual bool spectrum(const GasState& state, std::span<const double> wavenumbers, std::span<double> kappa) const {
    (void)state, (void)wavenumbers, (void)kappa;
    return false;
  }
};

}  // namespace dgrte::gas
