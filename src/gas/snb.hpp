#pragma once
// SNB: the Malkmus statistical narrow-band model itself (band-averaged transmissivities, not a
// sum of gray gases). Homogeneous paths: tau = exp{-2 beta [sqrt(1 + kbar X / beta) - 1]}.
// Non-uniform paths: Curtis-Godson averages (PROVENANCE.md 1a). Overlapping species: product of
// transmissivities. Used by the slab solver's transmissivity path and `dgrte gas emissivity`.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gas/snb_data.hpp"

namespace dgrte::gas {

class SnbModel {
 public:
  SnbModel(SnbDataSet set, const std::filesystem::path& gasdata, std::vector<int> species = {kH2O, kCO2, kCO},
           bool strict = false);
  std::string name() const { return "snb-" + data_->dataset_name(); }
  const SnbData& data() const { return *data_; }
  const std::vector<int>& species() const { return species_; }
  // Bands (common-grid indices) where a selected species has data.
  const std::vector<int>& bands() const { return bands_; }

  // Curtis-Godson path integrands of species s in band b at a state, per cm of path:
  // a = kbar x P [cm^-1], c = kbar beta x P [cm^-1] (beta = gamma/delta).
  void path_integrands(const GasState& st, int b, double a[3], double c[3]) const;
  // Optical "thickness" -2 ln(tau)/2 for accumulated integrals A = int a ds, C = int c ds [dimensionless]:
  // tau_s = exp(-2A / (1 + sqrt(1 + A^2/C))).
  static double cg_optical(double A, double C) {
    if (A <= 0) return 0;
    if (C <= 0) return A;
    return 2 * A / (1 + std::sqrt(1 + A * A / C));
  }
  // Band transmissivity of a homogeneous path of length L [m].
  double transmissivity(const GasState& st, int b, double length) const;
  // Total emissivity of a homogeneous isothermal path of length L [m]:
  // sum_b (1 - tau_b) E_b,nu(nu_b, T) dnu / (sigma T^4).
  double emissivity(const GasState& st, double length) const;

 private:
  std::shared_ptr<SnbData> data_;
  std::vector<int> species_;
  std::vector<int> bands_;
};

}  // namespace dgrte::gas
