// Evaluation rates of the gas spectral models, printed as one JSON object (benchmarks/README.md):
//   * every k-type model (gray, Planck-mean, WSGG, SNBCK, SLW, RCSLW): absorption() and
//     emission_weight() over a batch of random gas states, in (state x spectral point) per second,
//     plus the time of prepare() on that batch;
//   * SNB: Curtis-Godson path integrands + band transmissivity, (state x band) per second;
//   * LBL kernel: (line x grid point) pairs per second of the Voigt accumulation, with the staged
//     HITRAN fragments (CO + CO2 + H2O) at 1500 K on a 0.002 cm^-1 grid, 25 cm^-1 wings.
// Each figure is the median of --repeats timed runs (default 5).
//   gas_rate_benchmark [--gasdata DIR] [--states N] [--repeats R] [--quick]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gas/hitran.hpp"
#include "gas/lbl.hpp"
#include "gas/model_factory.hpp"
#include "gas/tips.hpp"

using namespace dgrte::gas;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

double median_seconds(int repeats, const std::function<void()>& work) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    work();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<GasState> random_states(std::size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> t(400, 2400), xw(0.01, 0.3), xc(0.01, 0.15), xo(0.0, 0.05);
  std::vector<GasState> s(n);
  for (auto& g : s) g = GasState{t(rng), 1.0, xw(rng), xc(rng), xo(rng)};
  return s;
}

struct Case {
  std::string label, type;
  std::vector<std::string> options;
};

json k_model_rates(const Case& c, const std::string& gasdata, const std::vector<GasState>& states, int repeats) {
  auto m = make_model(c.type, c.options, gasdata, states);
  auto& sm = *m.spectral;
  std::vector<double> kappa(states.size()), a(states.size()), tb(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) tb[i] = states[i].temperature;
  const double t_prepare = median_seconds(1, [&] { sm.prepare(states); });
  const int nj = sm.num_spectral_points();
  // models with thousands of points: time an evenly spaced subset (rates are per point evaluated)
  const int stride = nj > 64 ? nj / 64 : 1;
  int evaluated_points = 0;
  for (int j = 0; j < nj; j += stride) ++evaluated_points;
  const double t_abs = median_seconds(repeats, [&] {
    for (int j = 0; j < nj; j += stride) sm.absorption(j, states, kappa);
  });
  const double t_em = median_seconds(repeats, [&] {
    for (int j = 0; j < nj; j += stride) sm.emission_weight(j, states, tb, a);
  });
  const double items = static_cast<double>(states.size()) * evaluated_points;
  // Block evaluation (SpectralModel::evaluate_block, what the 3-D spectral loop calls) against
  // point-by-point absorption + emission_weight, both over the same contiguous points.
  const int contiguous = std::min(nj, 448);
  std::vector<double> kb(states.size() * 64), ab(states.size() * 64);
  const double t_points = median_seconds(repeats, [&] {
    for (int j = 0; j < contiguous; ++j) {
      sm.absorption(j, states, kappa);
      sm.emission_weight(j, states, tb, a);
    }
  });
  const double t_block = median_seconds(repeats, [&] {
    for (int first = 0; first < contiguous;) {
      const int last = std::min(sm.block_end(first, 64), contiguous);
      sm.evaluate_block(first, last - first, states, tb, kb, ab);
      first = last;
    }
  });
  const double contiguous_items = static_cast<double>(states.size()) * contiguous;
  return json{{"label", c.label},
              {"contiguous_points", contiguous},
              {"per_point_state_points_per_second", contiguous_items / t_points},
              {"block_state_points_per_second", contiguous_items / t_block},
              {"block_speedup", t_points / t_block},
              {"model", sm.name()},
              {"spectral_points", nj},
              {"points_timed", evaluated_points},
              {"prepare_seconds", t_prepare},
              {"absorption_state_points_per_second", items / t_abs},
              {"emission_weight_state_points_per_second", items / t_em},
              {"state_points_per_second", items / (t_abs + t_em)}};
}

json snb_rates(const std::string& gasdata, const std::vector<GasState>& states, int repeats) {
  auto m = make_model("snb", {}, gasdata, states);
  const SnbModel& snb = *m.snb;
  const auto& bands = snb.bands();
  std::vector<double> tau(states.size());
  const double t = median_seconds(repeats, [&] {
    for (int b : bands) {
      const long n = static_cast<long>(states.size());
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) tau[static_cast<std::size_t>(i)] = snb.transmissivity(states[static_cast<std::size_t>(i)], b, 0.5);
    }
  });
  return json{{"model", snb.name()},
              {"bands", bands.size()},
              {"transmissivity_state_bands_per_second", static_cast<double>(states.size()) * bands.size() / t}};
}

json lbl_rates(const std::string& gasdata, int repeats, bool quick) {
  const std::string frag = gasdata + "/lbl/hitran_fragments/";
  ParFilter f;
  LineList lines = read_par_files({frag + "hitran_co_3iso_2000_2300cm.par", frag + "hitran_co2_626_bandhead_4165_4200nm.par",
                                   frag + "hitran_2016_H2O_2iso_2000_2100cm.par"},
                                  f);
  const TipsTable tips = TipsTable::load_default(gasdata);
  const LblLineData d = LblLineData::build(lines, tips);
  LblOptions opt;
  LblLineArrays la;
  lbl_line_arrays(d, tips, GasState{1500, 1, 0.1, 0.1, 0.1}, opt, la);
  std::vector<double> grid;
  const double dnu = quick ? 0.02 : 0.002;
  for (double nu = 1975; nu <= 2425; nu += dnu) grid.push_back(nu);
  std::size_t pairs = 0;
  for (std::size_t l = 0; l < la.size(); ++l) {
    pairs += static_cast<std::size_t>(std::upper_bound(grid.begin(), grid.end(), la.center[l] + opt.wing_cutoff) -
                                      std::lower_bound(grid.begin(), grid.end(), la.center[l] - opt.wing_cutoff));
  }
  std::vector<double> kappa(grid.size());
  const double t = median_seconds(repeats, [&] {
    std::fill(kappa.begin(), kappa.end(), 0.0);
    lbl_accumulate_voigt(la.size(), la.key.data(), la.center.data(), la.strength.data(), la.gamma_d.data(),
                         la.gamma_l.data(), la.center_margin, grid.size(), grid.data(), opt.wing_cutoff, kappa.data());
  });
  return json{{"lines", la.size()},
              {"grid_points", grid.size()},
              {"grid_step_cm", dnu},
              {"wing_cutoff_cm", opt.wing_cutoff},
              {"line_point_pairs", pairs},
              {"seconds_per_spectrum", t},
              {"line_points_per_second", static_cast<double>(pairs) / t}};
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr, "gas_rate_benchmark: %s\nusage: gas_rate_benchmark [--gasdata DIR] [--states N] [--repeats R] [--quick]\n", msg);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string gasdata = std::string(DGRTE_SOURCE_DIR) + "/gasdata";
  std::size_t n_states = 100000;
  int repeats = 5;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(fmt::format("{} needs a value", a).c_str());
      return argv[++i];
    };
    if (a == "--gasdata") gasdata = value();
    else if (a == "--states") n_states = std::stoul(value());
    else if (a == "--repeats") repeats = std::stoi(value());
    else if (a == "--quick") quick = true;
    else usage(fmt::format("unknown argument '{}'", a).c_str());
  }
  if (quick) {
    n_states = std::min<std::size_t>(n_states, 2000);
    repeats = 1;
  }
  if (repeats < 1 || n_states < 1) usage("--states and --repeats must be positive");
  const auto states = random_states(n_states);
  const std::vector<Case> cases = {
      {"gray", "gray", {"kappa=1.5"}},
      {"planck-mean", "planck-mean", {}},
      {"wsgg-smith1982", "wsgg", {"correlation=smith1982"}},
      {"wsgg-bordbar2014", "wsgg", {"correlation=bordbar2014"}},
      {"wsgg-cassol2014", "wsgg", {"correlation=cassol2014"}},
      {"snbck-2012-multiply", "snbck", {}},
      {"snbck-2012-mixture", "snbck", {"overlap=mixture"}},
      {"snbck-2012-mixture-lump4", "snbck", {"overlap=mixture", "lumping=4"}},
      {"snbck-2012-mixture-lump32-g4", "snbck", {"overlap=mixture", "lumping=32", "gauss_points=4"}},
      {"snbck-1997-multiply", "snbck", {"dataset=soufiani1997"}},
      {"slw-20", "slw", {}},
      {"rcslw-20", "rcslw", {}},
  };
  json out;
  out["threads"] = omp_get_max_threads();
  out["states"] = n_states;
  out["repeats"] = repeats;
  out["state_ranges"] = "T 400-2400 K, P 1 atm, x_H2O 0.01-0.3, x_CO2 0.01-0.15, x_CO 0-0.05 (uniform random)";
  json models = json::array();
  for (const auto& c : cases) models.push_back(k_model_rates(c, gasdata, states, repeats));
  out["k_models"] = models;
  out["snb"] = snb_rates(gasdata, states, repeats);
  out["lbl"] = lbl_rates(gasdata, repeats, quick);
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
