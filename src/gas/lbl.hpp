#pragma once
// Line-by-line (LBL) spectral absorption coefficient from HITRAN/HITEMP line lists.
//
// Physics (HITRAN conventions; T_ref = 296 K, c2 = 1.4387769 cm K):
//   S(T)   = S(296) Q(296)/Q(T) exp(-c2 E''/T)/exp(-c2 E''/296) [1 - exp(-c2 nu/T)]/[1 - exp(-c2 nu/296)]
//            with Q from TIPS-2021 (tips.hpp);
//   gamma_L = (296/T)^n_air [gamma_air (P - p_self) + gamma_self p_self]   (HWHM, P in atm, p_self = x P;
//            the self width uses n_air too, as HAPI/RADIS do with .par data);
//   nu_c    = nu + delta_air P (pressure shift; can be switched off);
//   gamma_D = nu_c/c sqrt(2 ln2 k T / m)                                    (HWHM);
//   kappa(nu) [1/m] = 100 * sum_lines x N S(T) V(nu - nu_c; gamma_D, gamma_L),  N = P/(k T) [cm^-3],
//   V = area-normalised Voigt profile (voigt.hpp: Weideman-32 / Humlicek region II, rel. err < 5e-6),
//   truncated at |nu - nu_c| > wing_cutoff (plain truncation, no pedestal subtraction; default 25 cm^-1
//   as in HITRAN/HAPI practice (HAPI's default wing = 50 HWHM is narrower; RADIS's default is 10 cm^-1).
// The mole fraction x of a line's molecule comes from GasState (H2O: x_h2o, CO2: x_co2, CO: x_co);
// lines of other molecules contribute nothing.
//
// The inner loop (lbl_accumulate_voigt) is a plain function over flat structure-of-arrays line data,
// data-parallel over lines x wavenumbers and OpenMP-parallel over blocks of grid points, so that an
// OpenCL/GPU kernel can take it over with the same arguments.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gas/hitran.hpp"
#include "gas/spectral_model.hpp"
#include "gas/state_key.hpp"
#include "gas/tips.hpp"

namespace dgrte::gas {

struct LblOptions {
  double wing_cutoff = 25.0;    // cm^-1, lines truncated beyond |nu - nu_c| > wing_cutoff
  double min_intensity = 0.0;   // drop lines with S(T) below this [cm^-1/(molecule cm^-2)] (RADIS: 'cutoff')
  bool pressure_shift = true;   // apply delta_air * P
};

// HITRAN line-intensity temperature scaling S(T) from S(296 K) (see the formula above).
double line_intensity_at(double s296, double elower, double nu, double q296, double q_t, double temperature);

// Per-line constants derived once from a LineList (sorted by nu) and a TIPS table.
struct LblLineData {
  std::vector<double> nu, s296, elower, gamma_air, gamma_self, n_air, delta_air, doppler_factor;
  std::vector<int> tips_index;  // dense TipsTable index
  std::vector<int> species;     // 0 = H2O, 1 = CO2, 2 = CO, -1 = other (x = 0)
  std::vector<double> q296;     // per TIPS index
  double max_abs_shift = 0;     // max |delta_air| [cm^-1/atm]
  std::size_t size() const { return nu.size(); }
  // Throws InputError if a line's isotopologue has no partition sum.
  static LblLineData build(const LineList& lines, const TipsTable& tips);
};

// Line parameters at one gas state, flat arrays (the kernel's input).
struct LblLineArrays {
  std::vector<double> key;       // unshifted nu, ascending (search key)
  std::vector<double> center;    // shifted centre [cm^-1]
  std::vector<double> strength;  // 100 x N S(T) [1/m per cm^-1 of profile]
  std::vector<double> gamma_d, gamma_l;  // HWHM [cm^-1]
  double center_margin = 0;      // max |center - key|
  std::size_t size() const { return key.size(); }
};

// Computes the line arrays for `state` (drops lines with x = 0 or S(T) < min_intensity).
void lbl_line_arrays(const LblLineData& data, const TipsTable& tips, const GasState& state, const LblOptions& opt,
                     LblLineArrays& out);

// The LBL kernel: kappa[p] += sum_l strength[l] V(grid[p] - center[l]) for |grid[p] - center[l]| <= cutoff.
// key[] ascending with |center - key| <= center_margin; grid[] ascending. OpenMP parallel over grid blocks.
void lbl_accumulate_voigt(std::size_t nlines, const double* key, const double* center, const double* strength,
                          const double* gamma_d, const double* gamma_l, double center_margin, std::size_t npts,
                          const double* grid, double cutoff, double* kappa);

// kappa_nu [1/m] of the gas `state` on the ascending wavenumber grid `grid_cm` [cm^-1].
// This is the API the CLI (`--par`) uses. Throws InputError for a non-ascending grid or a
// temperature outside the TIPS range.
std::vector<double> compute_absorption_spectrum(const LineList& lines, const TipsTable& tips, const GasState& state,
                                                std::span<const double> grid_cm, const LblOptions& opt = {});

// Convenience: reads `par_files` (window [nu_min - cutoff, nu_max + cutoff], molecules H2O/CO2/CO),
// TIPS from <gasdata_dir>/lbl/tips, builds the grid nu_min, nu_min + dnu, ..., <= nu_max, and returns
// kappa_nu [1/m] on it (grid returned in grid_out when non-null).
std::vector<double> compute_absorption_spectrum(const std::vector<std::string>& par_files,
                                                const std::string& gasdata_dir, const GasState& state, double nu_min,
                                                double nu_max, double dnu, const LblOptions& opt = {},
                                                std::vector<double>* grid_out = nullptr);

// How the LBL spectrum becomes spectral points of the RTE.
//  * every (default): one spectral point per grid wavenumber (exact; n_grid + 1 points);
//  * kdistribution: the grid is cut into bands of `band_width` cm^-1; in each band the kappa_nu of a
//    state are sorted into the band's k-distribution k(g) (equal weight per grid point, k(g) by linear
//    interpolation between order statistics) and taken at `gauss_points` Gauss-Legendre points in g
//    (n_bands x gauss_points + 1 points). Non-uniform media: correlated-k (the same g everywhere),
//    as SNBCK; exact for a homogeneous medium up to the g quadrature.
struct LblReduction {
  bool kdistribution = false;
  double band_width = 25.0;  // cm^-1
  int gauss_points = 16;
};

struct LblModelConfig {
  std::vector<std::string> par_files;
  std::string gasdata_dir;            // for TIPS (lbl/tips)
  double nu_min = 0, nu_max = 0, dnu = 0.01;  // grid [cm^-1] (used when `grid` is empty)
  std::vector<double> grid;           // explicit ascending grid [cm^-1]
  LblOptions options;
  double min_intensity_296 = 0;       // read-time cut-off on HITRAN S(296)
  std::size_t cache_limit = 50'000'000;  // max cached kappa values (distinct states x cached values per state)
  LblReduction reduction;
};

// SpectralModel over the grid (LblReduction::kdistribution: over bands x Gauss points in g, see
// above). Every wavenumber: spectral point j < n is the grid interval around
// grid[j] (kappa_j = kappa_nu(grid[j]), weight = Planck fraction of [edge_j, edge_{j+1}] at the
// source temperature, edges = midpoints between grid points), and point n is the transparent
// remainder of the spectrum (kappa = 0, weight = 1 - Planck fraction of the whole grid), so weights
// sum to 1. prepare() computes and caches the full spectrum of every distinct state of the medium
// (if distinct states x grid points <= cache_limit); states not in the cache are evaluated by direct
// summation over the lines within the cut-off of grid[j] (no allocation).
// A replacement for lbl_accumulate_voigt on one state's line arrays (an OpenCL device's, say):
// kappa[p] += the line sum at grid[p].
using LineSum = std::function<void(const LblLineArrays& lines, std::span<const double> grid, double cutoff, std::span<double> kappa)>;

class LblModel : public SpectralModel {
 public:
  explicit LblModel(const LblModelConfig& cfg);
  LblModel(LineList lines, TipsTable tips, std::vector<double> grid_cm, LblOptions opt = {},
           std::size_t cache_limit = 50'000'000, LblReduction reduction = {});

  std::string name() const override;
  int num_spectral_points() const override {
    return static_cast<int>(red_.kdistribution ? bands_.size() * gx_.size() : grid_.size()) + 1;
  }
  void prepare(std::span<const GasState> medium, std::span<const double> weights = {}) override;
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;
  std::pair<double, double> wavenumber_interval(int j) const override;
  // kappa_nu [1/m] at arbitrary ascending wavenumbers (full line summation, any state).
  bool spectrum(const GasState& state, std::span<const double> wavenumbers, std::span<double> kappa) const override;

  // The line sums of prepare() and spectrum() go to `sum` (named `backend`, e.g. "opencl") instead of
  // lbl_accumulate_voigt; kappa_direct (single grid points) stays on the host.
  void set_line_sum(LineSum sum, std::string backend);
  const std::string& property_backend() const { return line_sum_backend_; }  // "cpu" unless set_line_sum

  const std::vector<double>& grid() const { return grid_; }
  double wing_cutoff() const { return opt_.wing_cutoff; }
  LblLineArrays line_arrays(const GasState& state) const;  // what the line sums of `state` take
  std::size_t num_lines() const { return data_.size(); }
  // kappa at grid point j by direct line summation (no cache).
  double kappa_direct(int j, const GasState& s) const;
  // kdistribution: k(g) [1/m] of band b of `state` at the model's Gauss points (no cache).
  std::vector<double> band_kdistribution(int b, const GasState& state) const;
  int num_bands() const { return static_cast<int>(bands_.size()); }

 private:
  struct Band {
    std::size_t first, last;  // grid points [first, last)
  };
  void init();
  std::size_t values_per_state() const { return red_.kdistribution ? bands_.size() * gx_.size() : grid_.size(); }
  // Sorted-band quantiles of kappa (one band's grid values) at the Gauss points, into out[0..G).
  void band_quantiles(std::span<double> band_kappa, double* out) const;

  void sum_lines(const LblLineArrays& a, std::span<const double> grid, std::span<double> kappa) const;

  LineSum line_sum_;
  std::string line_sum_backend_ = "cpu";
  TipsTable tips_;
  LblLineData data_;
  std::vector<double> grid_, edges_;
  LblOptions opt_;
  std::size_t cache_limit_;
  LblReduction red_;
  std::vector<Band> bands_;
  std::vector<double> gx_, gw_;  // Gauss-Legendre in g on [0, 1]
  GasStateIndex cache_index_;
  std::vector<double> cache_;  // [state][grid point] or [state][band * G + g]
};

}  // namespace dgrte::gas
