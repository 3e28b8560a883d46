#pragma once
// Gray models (one spectral point, weight 1): a constant or expression absorption coefficient,
// and the Planck-mean absorption coefficient of the RADCAL polynomial fits (TNF workshop).
#include <memory>
#include <mutex>
#include <string>

#include "gas/expression.hpp"
#include "gas/gas_common.hpp"
#include "gas/spectral_model.hpp"

namespace dgrte::gas {

// kappa [1/m] = constant, or an expression of T [K], P [atm], x_h2o, x_co2, x_co.
class GrayModel final : public SpectralModel {
 public:
  explicit GrayModel(double kappa);
  GrayModel(const std::string& expression, const std::string& where);
  std::string name() const override { return "gray"; }
  int num_spectral_points() const override { return 1; }
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;

 private:
  double constant_ = 0;
  std::unique_ptr<Expression> expr_;
  mutable std::mutex mutex_;  // muparser evaluation is stateful
};

// RADCAL polynomial fits of the Planck-mean absorption coefficient per atm of absorber
// [1/(m atm)], valid 300-2500 K (REFERENCE_VALUES.md section 2).
double planck_mean_h2o(double temperature);
double planck_mean_co2(double temperature);
double planck_mean_co(double temperature);

class PlanckMeanModel final : public SpectralModel {
 public:
  explicit PlanckMeanModel(bool strict = false);
  std::string name() const override { return "planck-mean"; }
  std::pair<double, double> temperature_range() const override { return {range_.lo, range_.hi}; }
  int num_spectral_points() const override { return 1; }
  void absorption(int j, std::span<const GasState> states, std::span<double> kappa) const override;
  void emission_weight(int j, std::span<const GasState> states, std::span<const double> source_temperature,
                       std::span<double> a) const override;
  // kappa_P [1/m] of one state (clamped T, with the warning).
  double kappa(const GasState& s) const;

 private:
  TemperatureRange range_;
};

}  // namespace dgrte::gas
