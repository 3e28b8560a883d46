// ALBDF tables and correlation (Pearson et al. 2014) against REFERENCE_VALUES.md §5.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/error.hpp"
#include "gas/albdf.hpp"

using namespace dgrte::gas;

namespace {
const std::string kData = std::string(DGRTE_SOURCE_DIR) + "/gasdata";
const Albdf& albdf() {
  static const Albdf a = Albdf::load_default(kData);
  return a;
}
int it(double t) { return static_cast<int>(std::lround((t - 300) / 100)); }
int iy(double y) {
  for (int i = 0; i < AlbdfTables::kNY; ++i) {
    if (std::abs(AlbdfTables::kY[i] - y) < 1e-12) return i;
  }
  return -1;
}
struct Row {
  AlbdfSpecies s;
  double y, tg, tb;
  int j;
  double f_table, f_corr;
};
const Row kRows[] = {
    {AlbdfSpecies::CO2, 0, 1000, 1000, 40, 0.916757, 0.912310}, {AlbdfSpecies::CO2, 0, 1500, 1500, 40, 0.932721, 0.918068},
    {AlbdfSpecies::CO2, 0, 2000, 1000, 50, 0.940058, 0.959894}, {AlbdfSpecies::CO2, 0, 300, 300, 30, 0.880237, 0.901742},
    {AlbdfSpecies::CO2, 0, 1500, 1500, 60, 0.999147, 0.997261}, {AlbdfSpecies::CO, 0, 1000, 1000, 40, 0.985517, 0.983371},
    {AlbdfSpecies::CO, 0, 1500, 1500, 40, 0.990237, 0.988334},  {AlbdfSpecies::CO, 0, 300, 300, 30, 0.995549, 0.984079},
    {AlbdfSpecies::H2O, 0.2, 1000, 1000, 40, 0.921203, 0.916191}, {AlbdfSpecies::H2O, 0.2, 1500, 1500, 40, 0.944610, 0.945979},
    {AlbdfSpecies::H2O, 0.2, 2000, 1000, 50, 0.995677, 0.995544}, {AlbdfSpecies::H2O, 0.2, 300, 300, 30, 0.746222, 0.790114},
    {AlbdfSpecies::H2O, 0.0, 1000, 1000, 40, 0.934728, 0.936840}, {AlbdfSpecies::H2O, 0.0, 1500, 1500, 40, 0.951605, 0.953838},
};
}  // namespace

TEST(Albdf, TableReaderFirstValues) {
  const auto& t = albdf().tables();
  const double h2o[5] = {0.256142, 0.27358, 0.291793, 0.310066, 0.32734};
  const double co2[5] = {0.610907, 0.627043, 0.646295, 0.66394, 0.680841};
  for (int j = 0; j < 5; ++j) {
    EXPECT_NEAR(t.grid_value(AlbdfSpecies::H2O, 0, 0, 0, j), h2o[j], 1e-7);
    EXPECT_NEAR(t.grid_value(AlbdfSpecies::CO2, 0, 0, 0, j), co2[j], 1e-7);
  }
  EXPECT_NEAR(AlbdfTables::c_node(40), 1.0, 1e-12);
  EXPECT_NEAR(AlbdfTables::c_node(70), 1e3, 1e-9);
}

TEST(Albdf, GridValuesAndInterpolationAtGridPoints) {
  const auto& t = albdf().tables();
  for (const auto& r : kRows) {
    const double g = t.grid_value(r.s, iy(r.y), it(r.tg), it(r.tb), r.j);
    EXPECT_NEAR(g, r.f_table, 1e-6) << static_cast<int>(r.s) << " " << r.tg << " " << r.tb << " " << r.j;
    EXPECT_NEAR(t.species_f(r.s, AlbdfTables::c_node(r.j), r.tg, r.tb, r.y), g, 1e-7);
    // through the mixture evaluator with a single species at x = 1 (x_H2O = Y only for H2O)
    GasState gs{r.tg, 1.0, 0, 0, 0};
    if (r.s == AlbdfSpecies::H2O) gs.x_h2o = r.y > 0 ? r.y : 1e-9;
    if (r.s == AlbdfSpecies::CO2) gs.x_co2 = 1;
    if (r.s == AlbdfSpecies::CO) gs.x_co = 1;
    const double x = r.s == AlbdfSpecies::H2O ? gs.x_h2o : 1.0;
    EXPECT_NEAR(albdf().f(AlbdfTables::c_node(r.j) * x, gs, r.tb), g, 1e-6);
  }
}

TEST(Albdf, InterpolationBetweenGridPoints) {
  const auto& t = albdf().tables();
  // midway in Tg, Tb: multilinear average of the 4 corners
  const double f = t.species_f(AlbdfSpecies::CO2, 1.0, 1050, 1150, 0);
  const double e = 0.25 * (t.grid_value(AlbdfSpecies::CO2, 0, 7, 8, 40) + t.grid_value(AlbdfSpecies::CO2, 0, 8, 8, 40) +
                           t.grid_value(AlbdfSpecies::CO2, 0, 7, 9, 40) + t.grid_value(AlbdfSpecies::CO2, 0, 8, 9, 40));
  EXPECT_NEAR(f, e, 1e-7);
  // midway in ln C: average of neighbours
  const double cm = std::sqrt(AlbdfTables::c_node(40) * AlbdfTables::c_node(41));
  EXPECT_NEAR(t.species_f(AlbdfSpecies::CO, cm, 1000, 1000, 0),
              0.5 * (t.grid_value(AlbdfSpecies::CO, 0, 7, 7, 40) + t.grid_value(AlbdfSpecies::CO, 0, 7, 7, 41)), 1e-7);
  // Y interpolation for H2O between 0.1 and 0.2
  EXPECT_NEAR(t.species_f(AlbdfSpecies::H2O, 1.0, 1000, 1000, 0.15),
              0.5 * (t.grid_value(AlbdfSpecies::H2O, 2, 7, 7, 40) + t.grid_value(AlbdfSpecies::H2O, 3, 7, 7, 40)), 1e-7);
}

TEST(Albdf, CorrelationValues) {
  const auto& c = albdf().correlation();
  for (const auto& r : kRows) {
    EXPECT_NEAR(c.species_f(r.s, AlbdfTables::c_node(r.j), r.tg, r.tb, 1.0, r.y), r.f_corr, 2e-6)
        << static_cast<int>(r.s) << " " << r.tg << " " << r.tb;
  }
  // Pearson's sample-program case: H2O, C = 1, Tg = Tb = 1500 K, P = 2 atm, Y = 0.4
  EXPECT_NEAR(c.species_f(AlbdfSpecies::H2O, 1.0, 1500, 1500, 2.0, 0.4), 0.938164, 2e-6);
  // correlation vs table within a few % at 800-2500 K
  double worst = 0;
  for (auto s : {AlbdfSpecies::H2O, AlbdfSpecies::CO2, AlbdfSpecies::CO}) {
    for (double t : {800.0, 1200.0, 1600.0, 2000.0, 2500.0}) {
      for (int j = 30; j <= 60; j += 5) {
        const double ft = albdf().tables().species_f(s, AlbdfTables::c_node(j), t, t, 0.2);
        const double fc = c.species_f(s, AlbdfTables::c_node(j), t, t, 1.0, 0.2);
        worst = std::max(worst, std::abs(fc - ft) / ft);
      }
    }
  }
  std::printf("[albdf] correlation vs table (800-2500 K, C = 0.1..100): max rel diff %.3e\n", worst);
  EXPECT_LT(worst, 0.05);
}

TEST(Albdf, MixtureAndInverse) {
  GasState g{1200, 1.0, 0.2, 0.1, 0.02};
  const AlbdfEval e = albdf().at(g, 1500);
  // multiplication rule
  const auto& t = albdf().tables();
  const double c = 0.3;
  EXPECT_NEAR(e.f(c),
              t.species_f(AlbdfSpecies::H2O, c / 0.2, 1200, 1500, 0.2) * t.species_f(AlbdfSpecies::CO2, c / 0.1, 1200, 1500, 0) *
                  t.species_f(AlbdfSpecies::CO, c / 0.02, 1200, 1500, 0),
              1e-12);
  // monotone and invertible
  double prev = 0;
  for (int j = 0; j <= 100; ++j) {
    const double cc = 1e-6 * std::pow(1e9, j / 100.0);
    const double f = e.f(cc);
    EXPECT_GE(f, prev - 1e-15);
    prev = f;
  }
  for (double f : {0.5, 0.8, 0.9, 0.95, 0.99, 0.999}) {
    const double cc = e.inverse(f, 1e-10, 1e6);
    EXPECT_NEAR(e.f(cc), f, 1e-10) << f;
  }
  // correlation path (P = 2 atm) inverts too
  GasState g2 = g;
  g2.pressure = 2.0;
  const AlbdfEval e2 = albdf().at(g2, 1500);
  for (double f : {0.6, 0.9, 0.99}) EXPECT_NEAR(e2.f(e2.inverse(f, 1e-10, 1e6)), f, 1e-10);
  // transparent gas: F = 1 everywhere
  EXPECT_EQ(albdf().at(GasState{1000, 1, 0, 0, 0}, 1000).f(1e-3), 1.0);
}

TEST(Albdf, BadTableFileIsInputError) {
  EXPECT_THROW(AlbdfTables::load("/nonexistent/dir"), dgrte::InputError);
}
