#pragma once
// Absorption-line blackbody distribution function (ALBDF) of H2O, CO2, CO after Pearson, Webb,
// Solovjov & Ma, JQSRT 138 (2014) 82-96 (HITEMP-2010 based):
//   * tables at 1 atm (gasdata/slw/pearson2014_albdf_tables: co2_p1_0.txt, co_p1_0.txt, h2o_p1_0.bin =
//     raw little-endian float32), F[(Y)][Tg][Tb][C], Tg, Tb = 300..3000 K step 100, C_j = 1e-4 (1e7)^(j/70)
//     m^2/mol (per mole of the species), Y = x_H2O in {0, .05, .1, .2, .3, .4, .6, .8, 1};
//     interpolation: multilinear in (Y, Tg, Tb) and linear in ln C between the tabulated C_j;
//     arguments outside the table are clamped (T to [300, 3000] K, C/x to [1e-4, 1e3] m^2/mol).
//   * the correlation (gasdata/slw/pearson2014_correlation), valid 300-3000 K, 0.1-50 atm, used for
//     total pressures other than 1 atm (Source::Auto) or always (Source::Correlation).
// Mixtures use the multiplication rule F_mix(C) = F_H2O(C/x_H2O; Y = x_H2O) F_CO2(C/x_CO2) F_CO(C/x_CO)
// (Solovjov & Webb 2000), C per mole of mixture; absent species contribute 1.
// The gray gas absorption coefficient is kappa = N C with N = P/(R T) [mol/m^3].
#include <array>
#include <string>
#include <vector>

#include "gas/spectral_model.hpp"

namespace dgrte::gas {

enum class AlbdfSpecies { H2O = 0, CO2 = 1, CO = 2 };

// Molar concentration of the mixture N = P/(R T) [mol/m^3], P in atm.
double molar_concentration(double pressure_atm, double temperature);

// The 1 atm tables.
class AlbdfTables {
 public:
  static constexpr int kNT = 28, kNC = 71, kNY = 9;
  static constexpr double kTmin = 300, kTmax = 3000, kDT = 100;
  static constexpr double kCmin = 1e-4, kCmax = 1e3;
  static const std::array<double, kNY> kY;

  // dir = .../slw/pearson2014_albdf_tables. Throws InputError naming file and line/offset.
  static AlbdfTables load(const std::string& dir);
  static AlbdfTables load_default(const std::string& gasdata_dir);

  static double c_node(int j);  // 1e-4 (1e7)^(j/70)
  // Table entry: iy ignored for CO2/CO.
  double grid_value(AlbdfSpecies s, int iy, int itg, int itb, int ic) const;
  // Interpolated single-species F at species cross-section c [m^2/mol] (clamped).
  double species_f(AlbdfSpecies s, double c, double tg, double tb, double y_h2o) const;

  const float* data(AlbdfSpecies s) const { return s == AlbdfSpecies::H2O ? h2o_.data() : s == AlbdfSpecies::CO2 ? co2_.data() : co_.data(); }

 private:
  std::vector<float> h2o_, co2_, co_;  // stored as float (the H2O source is float32)
};

// The Pearson et al. (2014) correlation.
class AlbdfCorrelation {
 public:
  static AlbdfCorrelation load(const std::string& csv);
  static AlbdfCorrelation load_default(const std::string& gasdata_dir);
  // Single-species F at species cross-section c [m^2/mol], pressure in atm.
  double species_f(AlbdfSpecies s, double c, double tg, double tb, double pressure, double y_h2o) const;
  const std::array<double, 64>& b(AlbdfSpecies s) const { return b_[static_cast<int>(s)]; }
  const std::array<double, 64>& p(AlbdfSpecies s) const { return p_[static_cast<int>(s)]; }

 private:
  std::array<std::array<double, 64>, 3> b_{}, p_{};
};

class Albdf;

// F_mix(C) of one gas state at one blackbody temperature, set up once for repeated evaluation
// (no allocation; cheap to construct).
class AlbdfEval {
 public:
  AlbdfEval() = default;
  // F_mix at mixture cross-section c [m^2/mol].
  double f(double c) const;
  // Smallest C in [c_lo, c_hi] with F_mix(C) = f (clamped to the ends); bracketed Illinois false
  // position on ln C, relative tolerance 1e-12.
  double inverse(double f, double c_lo, double c_hi) const;

 private:
  friend class Albdf;
  struct Species {
    double inv_x = 0;  // 1/x_s
    bool table = true;
    // table: up to 8 corner row pointers and weights
    int ncorner = 0;
    std::array<const float*, 8> row{};
    std::array<double, 8> w{};
    // correlation: P(xi) = sum_l B[l] (xi - xi_p)^l - P2,  xi_p = sum_m A[m] xi^m
    std::array<double, 4> A{}, B{};
    bool co = false;
  };
  double species_f(const Species& s, double c) const;
  std::array<Species, 3> sp_{};
  int nsp_ = 0;
};

class Albdf {
 public:
  enum class Source { Auto, Table, Correlation };
  // Auto: tables when |P - 1| <= 1e-3 atm, correlation otherwise.
  Albdf(AlbdfTables tables, AlbdfCorrelation corr, Source source = Source::Auto);
  static Albdf load_default(const std::string& gasdata_dir, Source source = Source::Auto);

  AlbdfEval at(const GasState& gas, double tb) const;
  double f(double c, const GasState& gas, double tb) const { return at(gas, tb).f(c); }
  const AlbdfTables& tables() const { return tables_; }
  const AlbdfCorrelation& correlation() const { return corr_; }
  Source source() const { return source_; }

 private:
  AlbdfTables tables_;
  AlbdfCorrelation corr_;
  Source source_;
};

}  // namespace dgrte::gas
