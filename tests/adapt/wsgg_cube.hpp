#pragma once
// A nongray case with an exact answer (tests/adapt): a weighted sum of gray gases (Smith et al.
// 1982) in an isothermal cube [-1, 1]^3 (1500 K, 1 atm, x_H2O 0.2, x_CO2 0.1) with cold black walls.
// Each gray gas j has the discrete-ordinates intensity a_j I_b (1 - exp(-kappa_j d(x, s))), d the
// distance to the wall upstream; kappa_j and a_j are the model's own (gas library), so `exact:` is
// the spectrally integrated intensity of the run's own model and set.
#include "gas/model_factory.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <span>
#include <string>
#include <utility>

namespace dgrte::test_support {

// The exact expression (x, y, z, sx, sy, sz) and the model's number of spectral points.
inline std::pair<std::string, int> wsgg_cube_exact() {
  const gas::GasState state{1500.0, 1.0, 0.2, 0.1, 0.0, 0.0};
  auto model = gas::make_model("wsgg", {"correlation=smith1982"});
  model.spectral->prepare(std::span<const gas::GasState>(&state, 1));
  const double Ib = 5.670374419e-8 * std::pow(state.temperature, 4) / std::numbers::pi;
  const std::string d = "min((sx>0 ? (1+x)/sx : (1-x)/(-sx)), (sy>0 ? (1+y)/sy : (1-y)/(-sy)), (sz>0 ? (1+z)/sz : (1-z)/(-sz)))";
  std::string exact;
  const int n = model.spectral->num_spectral_points();
  for (int j = 0; j < n; ++j) {
    double kappa = 0, a = 0;
    const double T = state.temperature;
    model.spectral->absorption(j, std::span<const gas::GasState>(&state, 1), std::span<double>(&kappa, 1));
    model.spectral->emission_weight(j, std::span<const gas::GasState>(&state, 1), std::span<const double>(&T, 1), std::span<double>(&a, 1));
    exact += fmt::format("{}{:.17g}*(1-exp(-{:.17g}*{}))", j ? "+" : "", a * Ib, kappa, d);
  }
  return {exact, n};
}

// The case at order p on the 0.5 m mesh of validation/mms/cube.geo, S4, with `extra` appended.
inline std::string wsgg_cube_case(int order, const std::string& exact, const std::string& extra) {
  return fmt::format("mesh: {{geo: " DGRTE_SOURCE_DIR "/validation/mms/cube.geo, size: 0.5}}\norder: {}\n"
                     "angular: {{quadrature: sn, order: 4}}\nmodel: {{type: wsgg, correlation: smith1982}}\n"
                     "media: {{\"*\": {{temperature: 1500, pressure: 1, x_h2o: 0.2, x_co2: 0.1}}}}\n"
                     "boundaries: {{\"*\": {{type: black, temperature: 0}}}}\nexact: \"{}\"\n{}",
                     order, exact, extra);
}

}  // namespace dgrte::test_support
