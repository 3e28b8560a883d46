#pragma once
// Spectral-line weighted-sum-of-gray-gases models with the Pearson et al. (2014) ALBDF (albdf.hpp):
//
// SlwModel ("slw", classical SLW, Denison & Webb 1993/1995 with the Solovjov & Webb reference approach):
//   * supplemental cross-sections C~_k = c_min (c_max/c_min)^(k/N), k = 0..N (log-spaced, per mole of
//     mixture; default N = 20, c_min = 1e-4, c_max = 1e3 m^2/mol); gray gas k = 1..N has
//     C_k = sqrt(C~_{k-1} C~_k) at the reference state; spectral point 0 is the clear gas (kappa = 0).
//   * reference state phi_ref = (T_ref, P_ref, x_ref): set explicitly (SlwOptions::reference /
//     set_reference_state) or, by default, chosen in prepare() as the average of the medium's states
//     (the solver passes equal-weight samples, so this is the volume average of T, P and mole
//     fractions, as recommended by Solovjov & Webb).
//   * local absorption coefficients by the equivalence (rank-correlation) relation at T_ref:
//     F(C_k,loc; phi_loc, T_ref) = F(C_k; phi_ref, T_ref), kappa_k = N_loc C_k,loc, N = P/(R T).
//   * weights (reference approach): a_k(T_b) = F(C~_k; phi_ref, T_b) - F(C~_{k-1}; phi_ref, T_b),
//     a_0 = F(C~_0; phi_ref, T_b), and the last gray gas takes the remainder 1 - F(C~_{N-1}) so that
//     weights sum to 1. They depend on the source temperature only (like WSGG).
// RcslwModel ("rcslw", Solovjov, Webb, Andre, Lemonnier, JQSRT 197 (2017) 26-44):
//   * gray gases defined in F space at the reference state: F_min = F(c_min; phi_ref, T_ref),
//     F_max = F(c_max; phi_ref, T_ref); with the N positive nodes x_k and weights w_k of the 2N-point
//     Gauss-Legendre rule, F_k = F_min + x_k (F_max - F_min) and F~_k = F_min + (F_max - F_min) sum_{i<=k} w_i;
//   * local cross-sections by rank correlation: F(C_k,loc; phi_loc, T_ref) = F_k,
//     F(C~_k,loc; phi_loc, T_ref) = F~_k; kappa_k = N_loc C_k,loc;
//   * weights from the local gas: a_k(T_b) = F(C~_k,loc; phi_loc, T_b) - F(C~_{k-1},loc; phi_loc, T_b),
//     a_0 = F(C~_0,loc; phi_loc, T_b), the last one 1 - F(C~_{N-1},loc; phi_loc, T_b).
// For a homogeneous isothermal gas both reduce to the standard SLW (with different gray-gas grids).
// Inverse ALBDF: bracketed Illinois false position on ln C (AlbdfEval::inverse).
// prepare() caches the local cross-sections of every distinct state of the medium (up to
// cache_limit values); other states are evaluated on the fly without allocation.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gas/albdf.hpp"
#include "gas/spectral_model.hpp"
#include "gas/state_key.hpp"

namespace dgrte::gas {

struct SlwOptions {
  int n_gray = 20;             // gray gases, not counting the clear gas
  double c_min = 1e-4;         // m^2/mol (per mole of mixture)
  double c_max = 1e3;
  Albdf::Source source = Albdf::Source::Auto;
  std::optional<GasState> reference;  // fixed reference state (else: medium average in prepare())
  std::size_t cache_limit = 50'000'000;
};

class SlwModel : public SpectralModel {
 public:
  SlwModel(std::shared_ptr<const Albdf> albdf, SlwOptions opt = {});
  SlwModel(const std::string& gasdata_dir, SlwOptions opt = {});

  std::string name() const override { return rc_ ? "rcslw" : "slw"; }
  std::pair<double, double> temperature_range() const override { return {AlbdfTables::kTmin, AlbdfTables::kTmax}; }
  int num_spectral_points() const override { return n_ + 1; }
  void prepare(std::span<const GasState> medium, std::span<const double> weights = {}) override;
  void prepare_distributed(std::span<const GasState> medium, std::span<const double> weights,
                           const SumOverRanks& sum_over_ranks) override;
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;

  // Fixes the reference state (prepare() then keeps it).
  void set_reference_state(const GasState& ref);
  const GasState& reference_state() const { return ref_; }
  // Reference-state F values of gray gas k = 1..N (F_k) and supplementals k = 0..N (F~_k).
  const std::vector<double>& gray_f() const { return f_; }
  const std::vector<double>& supplemental_f() const { return ft_; }
  const Albdf& albdf() const { return *albdf_; }

 protected:
  SlwModel(std::shared_ptr<const Albdf> albdf, SlwOptions opt, bool rank_correlated);

 private:
  void build_grid();
  void check_ready() const;
  // local cross-sections: c[0..N-1] gray gases 1..N, ct[0..N] supplementals (RCSLW) — computed
  double local_c(int k, const GasState& s) const;   // k = 1..N
  double local_ct(int k, const GasState& s) const;  // k = 0..N
  const double* cached(const GasState& s) const;

  std::shared_ptr<const Albdf> albdf_;
  SlwOptions opt_;
  bool rc_ = false;
  int n_ = 0;
  bool have_ref_ = false, fixed_ref_ = false;
  GasState ref_;
  std::vector<double> ct_ref_, c_ref_;  // SLW: reference supplemental and gray cross-sections
  std::vector<double> f_, ft_;          // f_[k-1] = F_k, ft_[k] = F~_k
  double c_lo_ = 0, c_hi_ = 0;          // inversion bracket
  GasStateIndex cache_index_;
  std::vector<double> cache_;  // per state: N gray C_loc, then N+1 supplemental C~_loc
};

class RcslwModel : public SlwModel {
 public:
  RcslwModel(std::shared_ptr<const Albdf> albdf, SlwOptions opt = {}) : SlwModel(std::move(albdf), std::move(opt), true) {}
  RcslwModel(const std::string& gasdata_dir, SlwOptions opt = {});
};

}  // namespace dgrte::gas
