#pragma once
// EM2C statistical narrow-band (Malkmus) parameters for H2O, CO2 and CO: the Soufiani & Taine
// (1997) set (25 cm^-1 bands, 300-2900 K) and the Rivière & Soufiani (2012) set (300-5000 K).
// Bands of all species are put on one common 25 cm^-1 grid. Units: kbar in cm^-1 atm^-1, 1/delta
// in cm, gamma in cm^-1, wavenumbers in cm^-1. See gasdata/PROVENANCE.md section 1.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "gas/gas_common.hpp"
#include "gas/spectral_model.hpp"

namespace dgrte::gas {

enum class SnbDataSet { Soufiani1997, Riviere2012 };
enum Species { kH2O = 0, kCO2 = 1, kCO = 2 };

// Parses "soufiani1997"/"1997"/"riviere2012"/"2012"; throws InputError naming `where`.
SnbDataSet parse_snb_dataset(const std::string& text, const std::string& where);

class SnbData {
 public:
  SnbData(SnbDataSet set, const std::filesystem::path& gasdata, bool strict = false);

  SnbDataSet dataset() const { return set_; }
  std::string dataset_name() const;
  int num_bands() const { return static_cast<int>(centers_.size()); }
  double band_center(int b) const { return centers_[b]; }
  static constexpr double band_width() { return 25.0; }
  // Index of band b in species s's table, or -1 if s has no data there.
  int species_band(int s, int b) const { return index_[s][b]; }

  struct TIndex {
    int i = 0;
    double w = 0;  // value = (1-w) table[i] + w table[i+1]
  };
  TIndex t_index(double temperature) const;  // clamps (warning/strict as configured)
  double kbar(int s, int sb, TIndex t) const {
    const double* p = &kbar_[s][static_cast<std::size_t>(sb) * nt_ + t.i];
    return (1 - t.w) * p[0] + t.w * p[t.w > 0 ? 1 : 0];
  }
  double inv_delta(int s, int sb, TIndex t) const {
    const double* p = &invd_[s][static_cast<std::size_t>(sb) * nt_ + t.i];
    return (1 - t.w) * p[0] + t.w * p[t.w > 0 ? 1 : 0];
  }
  // Collisional half-width [cm^-1] of species s in gas state st (PROVENANCE.md 1a/1b).
  double gamma(int s, const GasState& st) const;
  double t_min() const { return t0_; }
  double t_max() const { return t0_ + dt_ * (nt_ - 1); }
  const TemperatureRange& range() const { return range_; }

 private:
  SnbDataSet set_;
  std::vector<double> centers_;
  std::array<std::vector<int>, 3> index_;
  std::array<std::vector<double>, 3> kbar_, invd_;  // [sb * nt + it]
  int nt_ = 0;
  double t0_ = 300, dt_ = 100;
  TemperatureRange range_;
};

// Malkmus narrow-band transmissivity of a homogeneous path: X = x P L [atm cm], beta = gamma/delta.
double malkmus_transmissivity(double kbar, double beta, double x_atm_cm);

}  // namespace dgrte::gas
