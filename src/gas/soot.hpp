#pragma once
// Soot in the Rayleigh limit (particles much smaller than the wavelength): the spectral absorption
// coefficient is  kappa_eta = C f_v eta  (eta the wavenumber in 1/m, f_v the soot volume fraction),
// C = 36 pi n k / ((n^2 - k^2 + 2)^2 + 4 n^2 k^2) for the complex refractive index m = n - ik
// (Modest, Radiative Heat Transfer, 3rd ed., Sec. 12.8; scattering is negligible in this limit).
// SootyModel adds soot to any k-type gas model (docs/gas-models.md, "Soot"):
//  * band models (points with a wavenumber interval: SNBCK, line-by-line) add C f_v eta at the
//    centre of each point's interval; their transparent remainder becomes soot-only gray points,
//    the rest of the spectrum cut into intervals of at most 25 % relative width;
//  * global models (gray, Planck-mean, WSGG, SLW, RCSLW) are multiplied with a soot k-distribution
//    of `gray_gases` wavenumber intervals (gas and soot spectrally uncorrelated: the
//    multiplication of Solovjov & Webb, J. Heat Transfer 122 (2000), and Cassol et al., IJHMT 79
//    (2014)); one interval = the Planck-mean soot absorption coefficient for gray runs.
// Every soot interval takes the Planck-weighted mean of kappa_eta over it at the local temperature,
// so the optically thin limit (the emission) is exact whatever the number of intervals.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gas/spectral_model.hpp"

namespace dgrte::gas {

// The refractive-index model used when the case names none.
inline constexpr const char* kDefaultSootOptics = "chang-charalampopoulos-1990";

// The refractive-index model of the soot and its Rayleigh constant C.
struct SootOptics {
  std::string model;    // chang-charalampopoulos-1990 | dalzell-sarofim-1969 | constant
  double constant = 0;  // C (dimensionless)
};

// C of a complex refractive index n - ik.
double rayleigh_soot_constant(double n, double k);
// Chang & Charalampopoulos (Proc. R. Soc. Lond. A 430 (1990) 577): n and k of soot at wavelength
// lambda [um], fitted over 0.4 - 30 um.
std::pair<double, double> chang_charalampopoulos_index(double lambda_um);
// The optics by name: chang-charalampopoulos-1990 (C = the Planck-mean equivalent of their n(lambda),
// k(lambda) at 1500 K, 4.81; 5.03 at 1000 K, 4.60 at 2000 K), dalzell-sarofim-1969 (n = 1.57,
// k = 0.56: C = 4.89) or a number (C itself). Throws InputError naming `where`.
SootOptics soot_optics(const std::string& name_or_constant, const std::string& where);

// A volume fraction from an expression that vanishes at a wall (e.g. sin) can come out at -1e-32:
// values above -1e-15 (far below any soot) are round-off and become 0; others are left for the
// caller's check.
inline double soot_fv_without_roundoff(double fv) { return fv < 0 && fv > -1e-15 ? 0.0 : fv; }
// A soot volume fraction must be finite and lie in [0, 1).
inline bool valid_soot_fv(double fv) { return std::isfinite(fv) && fv >= 0 && fv < 1; }

// Planck-weighted mean wavenumber [cm^-1] over [lo, hi] (hi may be infinite) at temperature t [K].
double planck_mean_wavenumber(double lo, double hi, double t);
// Planck-mean absorption coefficient [1/m] of soot: C f_v eta_mean(0, inf, T) = 3.83 C f_v T / c2.
double soot_planck_mean_kappa(double constant, double soot_fv, double t);

struct SootOptions {
  SootOptics optics;
  int gray_gases = 0;  // soot intervals multiplied into a global model; 0 = 1 for single-point models, else 6
};

class SootyModel final : public SpectralModel {
 public:
  SootyModel(std::unique_ptr<SpectralModel> gas, SootOptions options);
  std::string name() const override;
  int num_spectral_points() const override { return static_cast<int>(points_.size()); }
  void prepare(std::span<const GasState> medium, std::span<const double> weights = {}) override;
  void prepare_distributed(std::span<const GasState> medium, std::span<const double> weights,
                           const SumOverRanks& sum_over_ranks) override;
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;
  void evaluate_block(int first, int count, std::span<const GasState> states, std::span<const double> source_temperature,
                      std::span<double> kappa, std::span<double> a) const override;
  int block_end(int first, int max_count) const override;
  std::pair<double, double> wavenumber_interval(int j) const override;
  std::pair<double, double> temperature_range() const override { return gas_->temperature_range(); }
  bool spectrum(const GasState& state, std::span<const double> wavenumbers, std::span<double> kappa) const override;

  const SootOptions& options() const { return opt_; }
  bool band_mode() const { return band_mode_; }
  // "band" or "multiplication" (see the header comment), for summaries.
  std::string treatment() const { return band_mode_ ? "band" : "multiplication"; }
  int soot_intervals() const { return static_cast<int>(pieces_.size()); }
  const SpectralModel& gas() const { return *gas_; }

 private:
  struct Point {
    int gas;      // the gas model's point
    int piece;    // soot interval (pieces_), or -1: the gas point's own interval
  };
  // Soot intervals [lo, hi] (cm^-1); band mode: the complement of the gas points' intervals.
  struct Piece {
    double lo, hi;
  };
  void set_global_pieces(double reference_temperature);
  // kappa_soot / f_v [1/m] of point p at gas temperature t.
  double soot_kappa_per_fv(const Point& p, double t) const;
  // The factor on the gas point's weight at source temperature t (band mode: `complement` is
  // complement_fraction(t) when known, < 0 to compute it).
  double weight_factor(const Point& p, double t, double complement = -1.0) const;
  // Band mode: the Planck fraction of all soot-only intervals at t.
  double complement_fraction(double t) const;
  std::vector<GasState> without_soot(std::span<const GasState> states) const;

  std::unique_ptr<SpectralModel> gas_;
  SootOptions opt_;
  bool band_mode_ = false;
  std::vector<Piece> pieces_;
  std::vector<Point> points_;
  std::vector<double> gas_mid_;  // band mode: centre of each gas point's interval (NaN: remainder)
};

}  // namespace dgrte::gas
