// Model factory / CLI wiring of slw, rcslw and lbl: the factory builds them from type + KEY=VALUE options
// (as `dgrte gas emissivity --model slw` / `gas spectrum --model lbl --par FILE` do) and they reproduce the
// direct API results (REFERENCE_VALUES.md §7 for the SLW emissivities, as tests/gas/test_slw.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gas/lbl.hpp"
#include "gas/model_factory.hpp"

using namespace dgrte::gas;

namespace {
const std::string kData = std::string(DGRTE_SOURCE_DIR) + "/gasdata";
const std::string kCo = kData + "/lbl/hitran_fragments/hitran_co_3iso_2000_2300cm.par";

// Same as `dgrte gas emissivity`: eps = sum_j a_j(T) (1 - exp(-kappa_j L)) for the one state.
double path_emissivity(const LoadedModel& m, const GasState& s, double L, double* weight_sum = nullptr) {
  auto& sm = *m.spectral;
  sm.prepare(std::span<const GasState>(&s, 1));
  double e = 0, sum = 0, k, a;
  const double t = s.temperature;
  for (int j = 0; j < sm.num_spectral_points(); ++j) {
    sm.absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&k, 1));
    sm.emission_weight(j, std::span<const GasState>(&s, 1), std::span<const double>(&t, 1), std::span<double>(&a, 1));
    e += a * -std::expm1(-k * L);
    sum += a;
  }
  if (weight_sum) *weight_sum = sum;
  return e;
}

bool registered(const std::string& type) {
  for (const auto& [k, d] : model_types())
    if (k == type) return true;
  return false;
}
}  // namespace

TEST(GasFactory, SlwAndRcslwHomogeneousEmissivity) {
  const GasState s{1000, 1.0, 0.2, 0.1, 0.0};
  for (const std::string type : {"slw", "rcslw"}) {
    EXPECT_TRUE(registered(type));
    auto m = make_model(type, {}, kData, std::span<const GasState>(&s, 1));
    ASSERT_TRUE(m.spectral) << type;
    EXPECT_EQ(m.name(), type);
    EXPECT_EQ(m.spectral->num_spectral_points(), 21);  // gray_gases default 20 + clear gas
    double wsum = 0;
    const double e = path_emissivity(m, s, 1.0, &wsum);
    EXPECT_NEAR(wsum, 1.0, 1e-12);
    EXPECT_NEAR(e / 0.3134, 1.0, 0.01) << type << " eps " << e;  // REFERENCE_VALUES §7 (ALBDF), as test_slw.cpp
    const double e01 = path_emissivity(m, GasState{1000, 1.0, 0.2, 0.1, 0.0}, 0.1);
    EXPECT_NEAR(e01 / 0.1096, 1.0, 0.01) << type;

    auto m10 = make_model(type, {"gray_gases=10", "reference={T: 1000, x_h2o: 0.2, x_co2: 0.1}"}, kData,
                          std::span<const GasState>(&s, 1));
    EXPECT_EQ(m10.spectral->num_spectral_points(), 11);
    EXPECT_NEAR(path_emissivity(m10, s, 1.0) / 0.3134, 1.0, type == "slw" ? 0.05 : 0.01) << type;

    EXPECT_THROW(make_model(type, {"gray_gases=0"}, kData), dgrte::InputError);
    EXPECT_THROW(make_model(type, {"albdf=nonsense"}, kData), dgrte::InputError);
    EXPECT_THROW(make_model(type, {"no_such_key=1"}, kData), dgrte::InputError);
    EXPECT_THROW(make_model(type, {"reference={P: 1}"}, kData), dgrte::InputError);  // T required
  }
}

TEST(GasFactory, LblRequiresParFilesAndMatchesApi) {
  EXPECT_TRUE(registered("lbl"));
  try {
    make_model("lbl", {}, kData);
    FAIL() << "lbl without par_files must throw";
  } catch (const dgrte::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("par_files"), std::string::npos) << msg;
    EXPECT_NE(msg.find("HITEMP"), std::string::npos) << msg;
    EXPECT_NE(msg.find("docs/gas-lbl.md"), std::string::npos) << msg;
  }
  EXPECT_THROW(make_model("lbl", {"par_files=[]"}, kData), dgrte::InputError);
  EXPECT_THROW(make_model("lbl", {"par_files=/nonexistent/file.par"}, kData), dgrte::InputError);

  const GasState s{1500, 1.0, 0.0, 0.0, 0.1};
  const double nu_min = 2100, nu_max = 2200, dnu = 0.5;
  auto m = make_model("lbl",
                      {"par_files=['" + kCo + "']", "nu_min=2100", "nu_max=2200", "dnu=0.5", "wing_cutoff=25"}, kData,
                      std::span<const GasState>(&s, 1));
  ASSERT_TRUE(m.spectral);
  EXPECT_EQ(m.name(), "lbl");
  EXPECT_EQ(m.spectral->num_spectral_points(), 202);  // 201 grid points + transparent remainder
  std::vector<double> grid;
  const auto ref = compute_absorption_spectrum({kCo}, kData, s, nu_min, nu_max, dnu, LblOptions{}, &grid);
  ASSERT_EQ(grid.size(), 201u);
  std::vector<double> k(grid.size());
  ASSERT_TRUE(m.spectral->spectrum(s, grid, k));
  double kmax = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    EXPECT_NEAR(k[i], ref[i], 1e-9 * std::abs(ref[i]) + 1e-300);
    kmax = std::max(kmax, k[i]);
  }
  EXPECT_GT(kmax, 0.0);
  // The spectral-model path (prepare + absorption) gives the same kappa; weights sum to 1.
  double wsum = 0;
  const double e = path_emissivity(m, s, 1.0, &wsum);
  EXPECT_NEAR(wsum, 1.0, 1e-12);
  EXPECT_GT(e, 0.0);
  EXPECT_LT(e, 1.0);
  double kj;
  m.spectral->absorption(10, std::span<const GasState>(&s, 1), std::span<double>(&kj, 1));
  EXPECT_NEAR(kj, ref[10], 1e-9 * std::abs(ref[10]) + 1e-300);
  // a single file as a scalar works too
  auto m2 = make_model("lbl", {"par_files=" + kCo, "nu_min=2150", "nu_max=2160", "dnu=1"}, kData);
  EXPECT_EQ(m2.spectral->num_spectral_points(), 12);
}
