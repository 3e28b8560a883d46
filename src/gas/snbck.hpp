#pragma once
// SNBCK: statistical narrow-band correlated-k model. Per narrow band (or lumped group of bands),
// the Malkmus k-distribution g(k) (Liu, Smallwood & Gülder 2000) is inverted at Gauss-Legendre
// points in g. Overlapping species are treated either as one effective Malkmus gas (overlap
// "mixture": kbar_mix = sum kbar_s x_s P, line-overlap parameter from matching the optically
// thick limit, Liu et al. 2001) or as uncorrelated gases (overlap "multiply": product quadrature,
// n_g^n_species points per band). Non-uniform media: correlated-k (the same g at every state).
// The last spectral point is the clear part of the spectrum (kappa = 0).
#include <memory>
#include <string>
#include <vector>

#include "gas/snb_data.hpp"
#include "gas/spectral_model.hpp"

namespace dgrte::gas {

// Malkmus cumulative k-distribution g(k) for S = kbar x P [cm^-1] and B = 4 gamma/(pi delta).
double malkmus_g(double k, double S, double B);
// Its density dg/dk.
double malkmus_f(double k, double S, double B);
// Inverse of a weighted sum of Malkmus g's: finds k with sum_b w_b g(k; S_b, B_b) = g (weights sum
// to 1; bands with S_b = 0 count as k = 0). Relative accuracy ~1e-12 in k.
// An optional bracket lo <= k <= hi of the root and a first guess (0: none), e.g. from the roots
// of the single bands.
struct MalkmusRootHint {
  double lo = 0, hi = 0, start = 0;
};
double malkmus_g_inverse(double g, std::span<const double> S, std::span<const double> B, std::span<const double> w,
                         const MalkmusRootHint& hint = {});
// G(k) = sum_b w_b g(k; S_b, B_b), the mean k-distribution of a lumped group of narrow bands
// (weights sum to 1; bands with S_b = 0 count as k = 0), with the per-band coefficients computed once
// (assign) and shared by the roots at several g. Its sums run 8 or 4 bands at a time through glibc's
// vector erfc and exp where the build found them (libmvec), else one band at a time.
class MalkmusGroup {
 public:
  MalkmusGroup() = default;
  MalkmusGroup(std::span<const double> S, std::span<const double> B, std::span<const double> w) { assign(S, B, w); }
  void assign(std::span<const double> S, std::span<const double> B, std::span<const double> w);  // reuses storage
  // k with G(k) = g (relative accuracy ~1e-12), optionally from a bracket and start; dG/d(ln k) near
  // the root into *slope where the iteration had it (else 0)
  double inverse(double g, const MalkmusRootHint& hint = {}, double* slope = nullptr) const;
  // G(e^u) less the atom of the bands without absorption; dG/du and d2G/du2 into dg, d2g (u = ln k)
  double sum(double u, double& dg, double& d2g) const;
  // Bands summed at a time: 0 (default) the widest this CPU and build have; 1, 4 or 8 to compare them
  // (tests). lane_widths(): those available here.
  void set_lanes(int lanes) { lanes_ = lanes; }
  static std::vector<int> lane_widths();

 private:
  std::vector<double> coef_;  // per absorbing band a, b, c, w, e^{pi B}, each padded_ long
  std::size_t padded_ = 0;
  double atom_ = 0, smax_ = 0, sw_ = 0;
  int lanes_ = 0;
};

inline double malkmus_g_inverse(double g, double S, double B) {
  const double w = 1.0;
  return malkmus_g_inverse(g, std::span<const double>(&S, 1), std::span<const double>(&B, 1), std::span<const double>(&w, 1));
}

// k/S of the Malkmus k-distribution at fixed g values, tabulated in B. g(k; S, B) depends on k and S
// only through k/S (Liu et al. 2000, Eq. 8), so for one band and a Gauss point g_i the inverse is
// k = S r_i(B): one table lookup instead of a Newton solve per state. ln r_i is tabulated against
// ln B (64 nodes per decade, 1e-8 <= B <= 1e6) with cubic Lagrange interpolation (relative error
// < 1e-7, tests/gas); outside that range the exact inverse is used.
class MalkmusRatioTable {
 public:
  explicit MalkmusRatioTable(std::span<const double> g_values);
  double ratio(int i, double B) const;  // k/S at g_values[i]
  // k/S at every g value flagged in `wanted` (null: all), sharing the lookup in B; ln(k/S) likewise.
  void ratios(double B, const char* wanted, double* r) const;
  void log_ratios(double B, const char* wanted, double* ln_r) const;

 private:
  struct Stencil {
    bool inside = false;  // B within the table; else the exact inverse is used
    int k = 0;
    double w[4] = {0, 0, 0, 0};
  };
  Stencil stencil(double B) const;  // the interpolation in ln B shared by every g value
  static constexpr double kLnBMin = -18.420680743952367, kLnBMax = 13.815510557964274;  // ln 1e-8, ln 1e6
  static constexpr int kPerDecade = 64;
  std::vector<double> g_;
  std::vector<double> ln_r_;  // [i * n_ + node]
  int n_ = 0;
  double inv_h_ = 0;
};

struct SnbckOptions {
  SnbDataSet dataset = SnbDataSet::Riviere2012;
  int gauss_points = 7;
  std::string overlap = "multiply";  // or "mixture"
  int lumping = 1;                   // narrow bands per lumped group
  std::vector<int> species = {kH2O, kCO2, kCO};
  bool strict = false;
};

class SnbckModel final : public SpectralModel {
 public:
  SnbckModel(const SnbckOptions& opt, const std::filesystem::path& gasdata);
  std::string name() const override;
  int num_spectral_points() const override { return static_cast<int>(points_.size()) + 1; }
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;
  void evaluate_block(int first, int count, std::span<const GasState> states, std::span<const double> source_temperature,
                      std::span<double> kappa, std::span<double> a) const override;
  int block_end(int first, int max_count) const override;
  std::pair<double, double> wavenumber_interval(int j) const override;
  bool spectrum(const GasState& state, std::span<const double> wavenumbers, std::span<double> kappa) const override;
  std::pair<double, double> temperature_range() const override { return {data_->range().lo, data_->range().hi}; }

  const SnbData& data() const { return *data_; }
  int num_groups() const { return static_cast<int>(groups_.size()); }
  const std::vector<double>& g_points() const { return gx_; }
  const std::vector<double>& g_weights() const { return gw_; }

 private:
  struct Group {
    std::vector<int> bands;        // common-grid band indices
    std::vector<int> components;   // species per component (mixture mode: one component, -1)
  };
  struct Point {
    int group;
    std::vector<int> gi;  // g index per component
    double weight;        // product of Gauss weights
  };
  // What every band of one gas state shares: the temperature interpolation, mole fractions, and
  // the collisional half-widths.
  struct StateTerms {
    SnbData::TIndex ti;
    double x[3];
    double gamma[3];
  };
  StateTerms state_terms(const GasState& s) const;
  double group_fraction(int g, double t) const;
  double clear_fraction(double t) const;
  // The Malkmus parameters S_b [cm^-1] and B_b of component c of group gr, one per band (bands
  // without absorption: S = 0), into S and B (size >= the group's band count).
  void band_parameters(const Group& gr, int c, const GasState& s, const StateTerms& t, double* S, double* B) const;
  // k [1/m] of that component at the Gauss points gi flagged in `wanted` (size n_g), into k[gi]
  // (W: scratch of the group's band count);
  // one band: the ratio table; lumped bands: the inverse of the group's mean g(k), bracketed by the
  // bands' own roots (the ratio table) and started from their S-weighted geometric mean.
  void component_k(const Group& gr, const double* S, const double* B, double* W, MalkmusGroup& sum, const char* wanted,
                   double* k) const;
  // evaluate_block's work; a empty = absorption only.
  void evaluate_points(int first, int count, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> kappa, std::span<double> a) const;

  SnbckOptions opt_;
  std::shared_ptr<SnbData> data_;
  std::vector<Group> groups_;
  std::vector<Point> points_;
  std::vector<double> gx_, gw_;
  MalkmusRatioTable ratio_{std::span<const double>()};
  std::size_t max_group_bands_ = 1;     // scratch size of band_parameters
  std::vector<double> covered_table_;  // sum of group fractions vs T (1 K steps)
};

}  // namespace dgrte::gas
