// Soot (gas/soot.hpp): Rayleigh constants, Planck-weighted mean wavenumbers against quadrature,
// and SootyModel around band (SNBCK, line-by-line) and global (WSGG, SLW, gray) models: weights that
// sum to one, the exact optically thin limit, soot added at each band's wavenumber, the exact
// spectral emissivity of a soot layer, and errors for bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gas/gas_common.hpp"
#include "gas_test_util.hpp"
#include "gas/model_factory.hpp"
#include "gas/soot.hpp"

using namespace dgrte::gas;

namespace {

const std::filesystem::path kData = gastest::gasdata_dir();
constexpr double kInf = std::numeric_limits<double>::infinity();

// int_lo^hi f(eta) E_b,eta d eta by the midpoint rule in ln eta (hi finite).
template <class F>
double planck_integral(double lo, double hi, double t, F f, int n = 200000) {
  const double a = std::log(lo), b = std::log(hi), h = (b - a) / n;
  double s = 0;
  for (int i = 0; i < n; ++i) {
    const double eta = std::exp(a + (i + 0.5) * h);
    s += f(eta) * planck_emissive_power(eta, t) * eta * h;
  }
  return s;
}

GasState sooty_state(double t, double fv) {
  GasState s;
  s.temperature = t;
  s.x_h2o = 0.1;
  s.x_co2 = 0.08;
  s.soot_fv = fv;
  return s;
}

// sum_j a_j and sum_j a_j kappa_j of a model for one state (weights at the gas temperature).
std::pair<double, double> sums(const SpectralModel& m, const GasState& s) {
  double wsum = 0, ksum = 0;
  for (int j = 0; j < m.num_spectral_points(); ++j) {
    double k = 0, a = 0;
    const double t = s.temperature;
    m.absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&k, 1));
    m.emission_weight(j, std::span<const GasState>(&s, 1), std::span<const double>(&t, 1), std::span<double>(&a, 1));
    wsum += a, ksum += a * k;
  }
  return {wsum, ksum};
}

LoadedModel model_with_soot(const std::string& type, const std::vector<std::string>& options, const GasState& s) {
  return make_model(type, options, kData, std::span<const GasState>(&s, 1));
}

}  // namespace

TEST(Soot, RayleighConstants) {
  // Dalzell & Sarofim (1969): m = 1.57 - 0.56 i gives the classic C = 4.89
  EXPECT_NEAR(rayleigh_soot_constant(1.57, 0.56), 4.892, 1e-3);
  const auto [n, k] = chang_charalampopoulos_index(1.0);  // at 1 um only the constant terms remain
  EXPECT_DOUBLE_EQ(n, 1.811);
  EXPECT_DOUBLE_EQ(k, 0.5821);
  const auto cc = soot_optics("chang-charalampopoulos-1990", "k");
  EXPECT_GT(cc.constant, 4.6);  // their C(lambda) is 4.1 - 5.4 over 1 - 8 um
  EXPECT_LT(cc.constant, 5.1);
  EXPECT_DOUBLE_EQ(soot_optics("5.5", "k").constant, 5.5);
  EXPECT_EQ(soot_optics("5.5", "k").model, "constant");
  EXPECT_THROW(soot_optics("-1", "model.soot.refractive_index"), dgrte::InputError);
  EXPECT_THROW(soot_optics("graphite", "model.soot.refractive_index"), dgrte::InputError);
}

TEST(Soot, PlanckMeanWavenumber) {
  for (double t : {300.0, 1000.0, 2500.0}) {
    // over the whole spectrum: 4 zeta(5) / zeta(4) T / c2 (Modest Eq. 12.x: kappa_P = 3.83 C f_v T / c2)
    EXPECT_NEAR(planck_mean_wavenumber(0, kInf, t), 3.83223 * t / kC2, 1e-5 * t / kC2);
    for (auto [lo, hi] : {std::pair{10.0, 200.0}, {1000.0, 1500.0}, {5000.0, 9000.0}, {20000.0, 40000.0}}) {
      const double num = planck_integral(lo, hi, t, [](double e) { return e; });
      const double den = planck_integral(lo, hi, t, [](double) { return 1.0; });
      EXPECT_NEAR(planck_mean_wavenumber(lo, hi, t), num / den, 1e-7 * hi) << lo << " " << hi << " " << t;
    }
  }
  EXPECT_NEAR(soot_planck_mean_kappa(5.0, 1e-6, 1500.0), 100 * 5.0 * 1e-6 * 3.83223 * 1500 / kC2, 1e-6);
  EXPECT_EQ(soot_planck_mean_kappa(5.0, 0.0, 1500.0), 0.0);
}

// Global models: every gas point times every soot interval; weights sum to those of the gas, and the
// optically thin limit sum_j a_j kappa_j is the gas's plus the soot's Planck mean, exactly.
TEST(Soot, GlobalModelsMultiplyAndKeepTheThinLimit) {
  const GasState s = sooty_state(1400.0, 2e-6);
  GasState clean = s;
  clean.soot_fv = 0;
  const double c = soot_optics(kDefaultSootOptics, "").constant;
  for (const std::string type : {"wsgg", "slw", "planck-mean", "gray"}) {
    auto sooty = model_with_soot(type, {}, s);
    auto gas = model_with_soot(type, {}, clean);
    ASSERT_TRUE(sooty.soot) << type;
    ASSERT_FALSE(gas.soot) << type;
    const auto* sm = dynamic_cast<const SootyModel*>(sooty.spectral.get());
    ASSERT_NE(sm, nullptr);
    EXPECT_EQ(sm->treatment(), "multiplication");
    const int m = gas.spectral->num_spectral_points() == 1 ? 1 : 6;
    EXPECT_EQ(sm->soot_intervals(), m) << type;
    EXPECT_EQ(sooty.spectral->num_spectral_points(), m * gas.spectral->num_spectral_points());
    sooty.spectral->prepare(std::span<const GasState>(&s, 1));
    gas.spectral->prepare(std::span<const GasState>(&clean, 1));
    const auto [w_gas, k_gas] = sums(*gas.spectral, clean);
    const auto [w, k] = sums(*sooty.spectral, s);
    EXPECT_NEAR(w, w_gas, 1e-12) << type;
    // exact up to the Planck-fraction series of gas_common (~1e-7 near x = c2 eta / T = 2)
    EXPECT_NEAR(k, k_gas + soot_planck_mean_kappa(c, s.soot_fv, s.temperature), 1e-6 * k) << type;
  }
}

// Band models: soot at the centre of each point's interval, the transparent remainder cut into
// soot-only intervals; the weights still sum to one and the thin limit is the soot's Planck mean.
TEST(Soot, BandModelsAddSootByInterval) {
  const GasState s = sooty_state(1500.0, 1e-6);
  const double c = soot_optics(kDefaultSootOptics, "").constant;
  auto m = model_with_soot("snbck", {"lumping=4", "gauss_points=4"}, s);
  const auto* sm = dynamic_cast<const SootyModel*>(m.spectral.get());
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->treatment(), "band");
  GasState clean = s;
  clean.soot_fv = 0;
  const auto [w, k] = sums(*m.spectral, s);
  const auto [w0, k0] = sums(*m.spectral, clean);
  EXPECT_NEAR(w, 1.0, 1e-3);  // SNBCK's band fractions are midpoint sums
  EXPECT_NEAR(w, w0, 1e-12);
  // soot's thin limit: each interval's emission fraction times kappa at its centre or mean
  EXPECT_NEAR(k - k0, soot_planck_mean_kappa(c, s.soot_fv, s.temperature), 3e-3 * (k - k0));
  // every point's soot: C f_v times a wavenumber inside its interval
  for (int j = 0; j < m.spectral->num_spectral_points(); ++j) {
    double ks = 0, kc = 0;
    m.spectral->absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&ks, 1));
    m.spectral->absorption(j, std::span<const GasState>(&clean, 1), std::span<double>(&kc, 1));
    const auto [lo, hi] = m.spectral->wavenumber_interval(j);
    ASSERT_TRUE(std::isfinite(lo)) << j;
    const double eta = (ks - kc) / (100 * c * s.soot_fv);
    EXPECT_GE(eta, lo * (1 - 1e-12)) << j;
    if (std::isfinite(hi)) {
      EXPECT_LE(eta, hi * (1 + 1e-12)) << j;
    }
  }
  EXPECT_THROW(model_with_soot("snbck", {"soot={gray_gases: 4}"}, s), dgrte::InputError);  // band models follow their bands
}

// Line-by-line (the CO fragment): kappa_j = kappa_gas(eta_j) + C f_v eta_j at every grid point.
TEST(Soot, LineByLineAddsSootAtEveryWavenumber) {
  GasState s;
  s.temperature = 1500;
  s.x_co = 0.05;
  s.soot_fv = 5e-7;
  const std::string par = (kData / "lbl/hitran_fragments/hitran_co_3iso_2000_2300cm.par").string();
  auto m = model_with_soot("lbl", {"par_files=" + par, "nu_min=2100", "nu_max=2110", "dnu=0.5"}, s);
  GasState clean = s;
  clean.soot_fv = 0;
  const double c = soot_optics(kDefaultSootOptics, "").constant;
  const auto& gas = dynamic_cast<const SootyModel&>(*m.spectral).gas();
  for (int j = 0; j + 1 < gas.num_spectral_points(); ++j) {
    double ks = 0, kg = 0;
    m.spectral->absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&ks, 1));
    gas.absorption(j, std::span<const GasState>(&clean, 1), std::span<double>(&kg, 1));
    EXPECT_NEAR(ks, kg + 100 * c * s.soot_fv * (2100 + 0.5 * j), 1e-9 * ks) << j;
  }
  const auto [w, k] = sums(*m.spectral, s);
  EXPECT_NEAR(w, 1.0, 1e-12);
  (void)k;
}

// A homogeneous soot layer: the emissivity sum_j a_j (1 - exp(-kappa_j L)) against the exact
// spectral integral of (1 - exp(-C f_v eta L)); 8 intervals are within 0.5 %, and more are better.
TEST(Soot, SootLayerEmissivityConverges) {
  GasState s;
  s.temperature = 1500;
  s.soot_fv = 1e-6;
  const double c = soot_optics(kDefaultSootOptics, "").constant, length = 0.5;
  const double exact = planck_integral(1.0, 1e5, s.temperature, [&](double eta) { return 1 - std::exp(-100 * c * s.soot_fv * eta * length); }) /
                       (kSigma * std::pow(s.temperature, 4));
  double previous = 1;
  for (int m : {1, 2, 4, 8, 16}) {
    auto model = model_with_soot("gray", {"kappa=0", "soot={gray_gases: " + std::to_string(m) + "}"}, s);
    model.spectral->prepare(std::span<const GasState>(&s, 1));
    const double err = std::abs(homogeneous_emissivity(*model.spectral, s, length) / exact - 1);
    EXPECT_LT(err, previous) << m;
    if (m >= 8) {
      EXPECT_LT(err, 5e-3) << m;
    }
    previous = err;
  }
  // band models: soot-only intervals of <= 25 % width
  auto band = model_with_soot("snbck", {"lumping=4", "gauss_points=2"}, s);
  EXPECT_NEAR(homogeneous_emissivity(*band.spectral, s, length), exact, 2e-3 * exact);
}

TEST(Soot, BadInput) {
  GasState s = sooty_state(1500, -1e-7);
  EXPECT_THROW(validate_state(s, "x"), dgrte::InputError);
  s.soot_fv = 1.5;
  EXPECT_THROW(validate_state(s, "x"), dgrte::InputError);
  s.soot_fv = 1e-6;
  EXPECT_NO_THROW(validate_state(s, "x"));
  EXPECT_THROW(model_with_soot("wsgg", {"soot={refractive_index: graphite}"}, s), dgrte::InputError);
  EXPECT_THROW(model_with_soot("wsgg", {"soot={gray_gases: 0}"}, s), dgrte::InputError);
  EXPECT_THROW(model_with_soot("wsgg", {"soot={bogus: 1}"}, s), dgrte::InputError);
}
