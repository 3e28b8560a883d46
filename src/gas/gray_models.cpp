#include "gas/gray_models.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace dgrte::gas {

GrayModel::GrayModel(double kappa) : constant_(kappa) {
  if (!(kappa >= 0)) throw InputError(fmt::format("model.kappa: absorption coefficient {} must be >= 0 (1/m)", kappa));
}

GrayModel::GrayModel(const std::string& expression, const std::string& where)
    : expr_(std::make_unique<Expression>(expression, std::vector<std::string>{"T", "P", "x_h2o", "x_co2", "x_co"}, where)) {
  if (expr_->is_constant()) {
    constant_ = (*expr_)(std::span<const double>());
    expr_.reset();
    if (!(constant_ >= 0)) throw InputError(fmt::format("{}: absorption coefficient {} must be >= 0 (1/m)", where, constant_));
  }
}

void GrayModel::absorption(int, std::span<const GasState> states, std::span<double> kappa) const {
  if (!expr_) {
    for (std::size_t i = 0; i < states.size(); ++i) kappa[i] = constant_;
    return;
  }
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < states.size(); ++i) {
    const auto& s = states[i];
    const double v[5] = {s.temperature, s.pressure, s.x_h2o, s.x_co2, s.x_co};
    const double k = (*expr_)(std::span<const double>(v, 5));
    if (k < 0)
      throw InputError(fmt::format("{}: expression \"{}\" gives a negative absorption coefficient {} at T={} K",
                                   expr_->where(), expr_->text(), k, s.temperature));
    kappa[i] = k;
  }
}

void GrayModel::emission_weight(int, std::span<const GasState> states, std::span<const double>, std::span<double> a) const {
  for (std::size_t i = 0; i < states.size(); ++i) a[i] = 1.0;
}

double planck_mean_h2o(double t) {
  static constexpr double c[6] = {-0.23093, -1.12390, 9.41530, -2.99880, 0.51382, -1.86840e-5};
  const double u = 1000.0 / t;
  double r = 0;
  for (int i = 5; i >= 0; --i) r = r * u + c[i];
  return r;
}
double planck_mean_co2(double t) {
  static constexpr double c[6] = {18.741, -121.310, 273.500, -194.050, 56.310, -5.8169};
  const double u = 1000.0 / t;
  double r = 0;
  for (int i = 5; i >= 0; --i) r = r * u + c[i];
  return r;
}
double planck_mean_co(double t) {
  static constexpr double lo[5] = {4.7869, -0.06953, 2.95775e-4, -4.25732e-7, 2.02894e-10};
  static constexpr double hi[5] = {10.09, -0.01183, 4.7753e-6, -5.87209e-10, -2.5334e-14};
  const double* c = t <= 750 ? lo : hi;
  double r = 0;
  for (int i = 4; i >= 0; --i) r = r * t + c[i];
  return r;
}

PlanckMeanModel::PlanckMeanModel(bool strict) : range_(300, 2500, "planck-mean") { range_.strict = strict; }

double PlanckMeanModel::kappa(const GasState& s) const {
  const double t = range_.clamp(s.temperature);
  return s.pressure * (s.x_h2o * planck_mean_h2o(t) + s.x_co2 * planck_mean_co2(t) + s.x_co * planck_mean_co(t));
}

void PlanckMeanModel::absorption(int, std::span<const GasState> states, std::span<double> kappa) const {
  for (std::size_t i = 0; i < states.size(); ++i) kappa[i] = this->kappa(states[i]);
}

void PlanckMeanModel::emission_weight(int, std::span<const GasState> states, std::span<const double>,
                                      std::span<double> a) const {
  for (std::size_t i = 0; i < states.size(); ++i) a[i] = 1.0;
}

}  // namespace dgrte::gas
