// Evaluation rate of the spectral models: absorption() + emission_weight() for every spectral
// point over a batch of gas states. items/s = states x spectral points per second.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "gas/model_factory.hpp"

using namespace dgrte::gas;

namespace {
std::vector<GasState> states(int n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> t(400, 2400), xw(0.01, 0.3), xc(0.01, 0.15);
  std::vector<GasState> s(n);
  for (auto& g : s) g = GasState{t(rng), 1.0, xw(rng), xc(rng), 0.0};
  return s;
}

void run(benchmark::State& st, const std::string& type, std::vector<std::string> opts) {
  const auto batch = states(static_cast<int>(st.range(0)));
  auto m = make_model(type, opts, std::string(DGRTE_SOURCE_DIR) + "/gasdata", batch);
  const auto& sm = *m.spectral;
  const int nj = sm.num_spectral_points();
  std::vector<double> kappa(batch.size()), a(batch.size()), t(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) t[i] = batch[i].temperature;
  // SNBCK has thousands of points: sample a subset per iteration (rate is per point evaluated)
  const int stride = nj > 256 ? nj / 256 : 1;
  long evaluated = 0;
  for (auto _ : st) {
    for (int j = 0; j < nj; j += stride) {
      sm.absorption(j, batch, kappa);
      sm.emission_weight(j, batch, t, a);
      benchmark::DoNotOptimize(kappa.data());
      benchmark::DoNotOptimize(a.data());
      evaluated += static_cast<long>(batch.size());
    }
  }
  st.SetItemsProcessed(evaluated);
  st.counters["spectral_points"] = nj;
}
}  // namespace

BENCHMARK_CAPTURE(run, planck_mean, std::string("planck-mean"), std::vector<std::string>{})->Arg(4096);
BENCHMARK_CAPTURE(run, wsgg_smith1982, std::string("wsgg"), std::vector<std::string>{"correlation=smith1982"})->Arg(4096);
BENCHMARK_CAPTURE(run, wsgg_bordbar2014, std::string("wsgg"), std::vector<std::string>{"correlation=bordbar2014"})->Arg(4096);
BENCHMARK_CAPTURE(run, wsgg_cassol2014, std::string("wsgg"), std::vector<std::string>{"correlation=cassol2014"})->Arg(4096);
BENCHMARK_CAPTURE(run, snbck_2012_multiply, std::string("snbck"), std::vector<std::string>{})->Arg(1024);
BENCHMARK_CAPTURE(run, snbck_2012_mixture, std::string("snbck"), std::vector<std::string>{"overlap=mixture"})->Arg(1024);
BENCHMARK_CAPTURE(run, snbck_1997_multiply, std::string("snbck"), std::vector<std::string>{"dataset=soufiani1997"})->Arg(1024);

BENCHMARK_MAIN();
