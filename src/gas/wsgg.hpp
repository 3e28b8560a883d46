#pragma once
// Weighted-sum-of-gray-gases models: Smith, Shen & Friedman (1982), Bordbar, Wecel & Hyppanen
// (2014, with the Bordbar-Fraga-Hostikka 2020 pure-species limits) and Cassol, Brittes, Franca &
// Ezekoye (2014, superposition of H2O and CO2 gray gases). Coefficients are read from
// gasdata/wsgg/*.csv. Spectral point 0 is the clear gas (kappa = 0, a_0 = 1 - sum a_i).
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "gas/gas_common.hpp"
#include "gas/spectral_model.hpp"

namespace dgrte::gas {

class WsggModel final : public SpectralModel {
 public:
  enum class Variant { Smith1982, Bordbar2014, Cassol2014 };
  // `smith_set` (Smith only): "auto" (by MR = x_h2o/x_co2) or a fixed set: "co2", "h2o-thin",
  // "h2o-1atm", "mr1", "mr2".
  WsggModel(Variant v, const std::filesystem::path& gasdata, bool strict = false, std::string smith_set = "auto");
  std::string name() const override;
  int num_spectral_points() const override;
  std::pair<double, double> temperature_range() const override { return {range_.lo, range_.hi}; }
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;
  // a_j and kappa_j of one state with the weights at temperature tsource.
  void coefficients(const GasState& s, double tsource, std::span<double> kappa, std::span<double> a) const;

 private:
  struct SmithSet {
    std::array<double, 3> kp{};
    std::array<std::array<double, 4>, 3> b{};
  };
  int smith_select(const GasState& s, double& pa) const;
  void smith(const GasState& s, double t, std::span<double> kappa, std::span<double> a) const;
  void bordbar(const GasState& s, double t, std::span<double> kappa, std::span<double> a) const;
  void cassol(const GasState& s, double t, std::span<double> kappa, std::span<double> a) const;

  Variant variant_;
  TemperatureRange range_;
  int smith_fixed_ = -1;
  std::array<SmithSet, 5> smith_{};  // co2, h2o-thin, h2o-1atm, mr1, mr2
  std::array<std::array<std::array<double, 5>, 5>, 4> bc_{};  // c[i][j][k]
  std::array<std::array<double, 5>, 4> bd_{};                 // d[i][k]
  std::array<double, 4> pure_k_co2_{}, pure_k_h2o_{};
  std::array<std::array<double, 5>, 4> pure_b_co2_{}, pure_b_h2o_{};
  std::array<double, 4> cas_k_co2_{}, cas_k_h2o_{};
  std::array<std::array<double, 5>, 4> cas_b_co2_{}, cas_b_h2o_{};
};

}  // namespace dgrte::gas
