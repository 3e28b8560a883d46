#include "gas/snb.hpp"

#include <cmath>

namespace dgrte::gas {

SnbModel::SnbModel(SnbDataSet set, const std::filesystem::path& gasdata, std::vector<int> species, bool strict)
    : data_(std::make_shared<SnbData>(set, gasdata, strict)), species_(std::move(species)) {
  for (int b = 0; b < data_->num_bands(); ++b) {
    bool any = false;
    for (int s : species_) any = any || data_->species_band(s, b) >= 0;
    if (any) bands_.push_back(b);
  }
}

void SnbModel::path_integrands(const GasState& st, int b, double a[3], double c[3]) const {
  const auto ti = data_->t_index(st.temperature);
  const double xs[3] = {st.x_h2o, st.x_co2, st.x_co};
  for (int s = 0; s < 3; ++s) a[s] = c[s] = 0;
  for (int s : species_) {
    const int sb = data_->species_band(s, b);
    if (sb < 0 || xs[s] <= 0) continue;
    const double kb = data_->kbar(s, sb, ti);
    a[s] = kb * xs[s] * st.pressure;
    c[s] = a[s] * data_->gamma(s, st) * data_->inv_delta(s, sb, ti);
  }
}

double SnbModel::transmissivity(const GasState& st, int b, double length) const {
  double a[3], c[3];
  path_integrands(st, b, a, c);
  const double lcm = 100.0 * length;
  double opt = 0;
  for (int s = 0; s < 3; ++s) opt += cg_optical(a[s] * lcm, c[s] * lcm);
  return std::exp(-opt);
}

double SnbModel::emissivity(const GasState& st, double length) const {
  double e = 0;
  for (int b : bands_) e += (1 - transmissivity(st, b, length)) * planck_emissive_power(data_->band_center(b), st.temperature);
  const double t = st.temperature;
  return e * SnbData::band_width() / (kSigma * t * t * t * t);
}

}  // namespace dgrte::gas
