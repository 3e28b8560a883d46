// Rates of the gas-radiation models, printed as one JSON object:
//   * LBL kernel: evaluated (line, grid point) pairs per second (Voigt, 25 cm^-1 wings) on the CPU,
//     with the staged HITRAN fragments (CO + CO2 + H2O, 1769 lines) at 1500 K on a 0.002 cm^-1 grid;
//   * SLW / RCSLW: (state x gray gas) evaluations per second of absorption() and emission_weight(),
//     for states served from the prepare() cache and for uncached states (ALBDF inversion per call).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gas/hitran.hpp"
#include "gas/lbl.hpp"
#include "gas/slw.hpp"
#include "gas/tips.hpp"

using namespace dgrte::gas;
using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct SlwRates {
  double abs_cached, abs_uncached, weight;
};

SlwRates slw_rates(SlwModel& m, const std::vector<GasState>& states) {
  SlwRates r{};
  const int ng = m.num_spectral_points();
  std::vector<double> k(states.size()), a(states.size()), tb(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) tb[i] = states[i].temperature;
  m.prepare(states);
  auto t0 = Clock::now();
  for (int j = 0; j < ng; ++j) m.absorption(j, states, k);
  r.abs_cached = static_cast<double>(states.size()) * ng / seconds_since(t0);
  t0 = Clock::now();
  for (int j = 0; j < ng; ++j) m.emission_weight(j, states, tb, a);
  r.weight = static_cast<double>(states.size()) * ng / seconds_since(t0);
  // uncached: prepare on a different medium with the same mean state
  std::vector<GasState> other(1, m.reference_state());
  m.set_reference_state(m.reference_state());
  m.prepare(other);
  const std::size_t nu = std::min<std::size_t>(states.size(), 20000);
  std::span<const GasState> sub(states.data(), nu);
  t0 = Clock::now();
  for (int j = 1; j < ng; ++j) m.absorption(j, sub, std::span<double>(k.data(), nu));
  r.abs_uncached = static_cast<double>(nu) * (ng - 1) / seconds_since(t0);
  return r;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string data = argc > 1 ? argv[1] : std::string(DGRTE_SOURCE_DIR) + "/gasdata";
  const std::string frag = data + "/lbl/hitran_fragments/";
  // ---------------- LBL kernel
  ParFilter f;
  LineList lines = read_par_files({frag + "hitran_co_3iso_2000_2300cm.par", frag + "hitran_co2_626_bandhead_4165_4200nm.par",
                                   frag + "hitran_2016_H2O_2iso_2000_2100cm.par"},
                                  f);
  const TipsTable tips = TipsTable::load_default(data);
  const LblLineData d = LblLineData::build(lines, tips);
  LblOptions opt;  // 25 cm^-1 wings
  LblLineArrays la;
  lbl_line_arrays(d, tips, GasState{1500, 1, 0.1, 0.1, 0.1}, opt, la);
  std::vector<double> grid;
  for (double nu = 1975; nu <= 2425; nu += 0.002) grid.push_back(nu);
  std::size_t pairs = 0;
  for (std::size_t l = 0; l < la.size(); ++l) {
    pairs += static_cast<std::size_t>(std::upper_bound(grid.begin(), grid.end(), la.center[l] + opt.wing_cutoff) -
                                      std::lower_bound(grid.begin(), grid.end(), la.center[l] - opt.wing_cutoff));
  }
  std::vector<double> kappa(grid.size());
  int reps = 0;
  auto t0 = Clock::now();
  double t = 0;
  do {
    std::fill(kappa.begin(), kappa.end(), 0.0);
    lbl_accumulate_voigt(la.size(), la.key.data(), la.center.data(), la.strength.data(), la.gamma_d.data(),
                         la.gamma_l.data(), la.center_margin, grid.size(), grid.data(), opt.wing_cutoff, kappa.data());
    ++reps;
    t = seconds_since(t0);
  } while (t < 2.0);
  const double lbl_rate = static_cast<double>(pairs) * reps / t;
  // ---------------- SLW / RCSLW
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> ut(600, 2200), ux(0.0, 0.25);
  std::vector<GasState> states(200000);
  for (auto& s : states) s = GasState{ut(rng), 1.0, ux(rng), ux(rng) * 0.5, ux(rng) * 0.1};
  auto albdf = std::make_shared<const Albdf>(Albdf::load_default(data));
  SlwOptions so;
  SlwModel slw(albdf, so);
  const SlwRates rs = slw_rates(slw, states);
  RcslwModel rc(albdf, so);
  const SlwRates rr = slw_rates(rc, states);
  std::printf("{\n  \"threads\": %d,\n", omp_get_max_threads());
  std::printf("  \"lbl\": {\"lines\": %zu, \"grid_points\": %zu, \"wing_cutoff_cm\": %.1f, \"line_point_pairs\": %zu, "
              "\"seconds_per_spectrum\": %.4g, \"line_points_per_second\": %.4g},\n",
              la.size(), grid.size(), opt.wing_cutoff, pairs, t / reps, lbl_rate);
  std::printf("  \"slw\": {\"gray_gases\": %d, \"states\": %zu, \"absorption_cached_state_gg_per_second\": %.4g, "
              "\"absorption_uncached_state_gg_per_second\": %.4g, \"emission_weight_state_gg_per_second\": %.4g},\n",
              so.n_gray, states.size(), rs.abs_cached, rs.abs_uncached, rs.weight);
  std::printf("  \"rcslw\": {\"gray_gases\": %d, \"states\": %zu, \"absorption_cached_state_gg_per_second\": %.4g, "
              "\"absorption_uncached_state_gg_per_second\": %.4g, \"emission_weight_state_gg_per_second\": %.4g}\n}\n",
              so.n_gray, states.size(), rr.abs_cached, rr.abs_uncached, rr.weight);
  return 0;
}
