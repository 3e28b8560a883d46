// Line-by-line: .par reader, line intensities, widths, kappa_nu of CO against RADIS, LblModel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gas/gas_common.hpp"
#include "gas/hitran.hpp"
#include "gas/lbl.hpp"
#include "gas/slab.hpp"
#include "gas/tips.hpp"

using namespace dgrte::gas;

namespace {
const std::string kData = std::string(DGRTE_SOURCE_DIR) + "/gasdata";
const std::string kFrag = kData + "/lbl/hitran_fragments/";

const TipsTable& tips() {
  static const TipsTable t = TipsTable::load_default(kData);
  return t;
}

LineList single_line(const std::string& file, double nu) {
  ParFilter f;
  f.nu_min = nu - 1e-5;
  f.nu_max = nu + 1e-5;
  LineList l;
  read_par_file(kFrag + file, f, l);
  return l;
}

struct RadisRef {
  std::vector<double> nu, k001, k05;  // cm^-1
};

RadisRef read_radis() {
  RadisRef r;
  std::ifstream in(kData + "/lbl/reference_spectra/radis_CO_1500K_1atm_abscoeff.csv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 'w') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream is(line);
    double a, b, c;
    is >> a >> b >> c;
    r.nu.push_back(a);
    r.k001.push_back(b);
    r.k05.push_back(c);
  }
  return r;
}

double trapz(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 1; i < x.size(); ++i) s += 0.5 * (y[i] + y[i - 1]) * (x[i] - x[i - 1]);
  return s;
}
}  // namespace

TEST(HitranPar, ReadsFragments) {
  ParFilter f;
  LineList co;
  EXPECT_EQ(read_par_file(kFrag + "hitran_co_3iso_2000_2300cm.par", f, co), 573u);
  LineList co2;
  EXPECT_EQ(read_par_file(kFrag + "hitran_co2_626_bandhead_4165_4200nm.par", f, co2), 332u);
  LineList h2o;
  EXPECT_EQ(read_par_file(kFrag + "hitran_2016_H2O_2iso_2000_2100cm.par", f, h2o), 864u);
  // first record of the CO file: " 52 2000.052539 1.353E-29 4.415E+01.05670.062 4448.30300.74-.002750"
  EXPECT_EQ(co.molecule[0], 5);
  EXPECT_EQ(co.isotopologue[0], 2);
  EXPECT_DOUBLE_EQ(co.nu[0], 2000.052539);
  EXPECT_DOUBLE_EQ(co.intensity[0], 1.353e-29);
  EXPECT_DOUBLE_EQ(co.gamma_air[0], 0.0567);
  EXPECT_DOUBLE_EQ(co.gamma_self[0], 0.062);
  EXPECT_DOUBLE_EQ(co.elower[0], 4448.3030);
  EXPECT_DOUBLE_EQ(co.n_air[0], 0.74);
  EXPECT_DOUBLE_EQ(co.delta_air[0], -0.002750);
  // filters
  ParFilter g;
  g.nu_min = 2100;
  g.nu_max = 2200;
  g.isotopologues = {1};
  g.min_intensity_296 = 1e-22;
  LineList sel;
  read_par_file(kFrag + "hitran_co_3iso_2000_2300cm.par", g, sel);
  ASSERT_GT(sel.size(), 0u);
  for (std::size_t i = 0; i < sel.size(); ++i) {
    EXPECT_EQ(sel.isotopologue[i], 1);
    EXPECT_GE(sel.nu[i], 2100);
    EXPECT_LE(sel.nu[i], 2200);
    EXPECT_GE(sel.intensity[i], 1e-22);
  }
}

TEST(HitranPar, MalformedLineReportsLineNumber) {
  const auto dir = std::filesystem::temp_directory_path() / "dgrte_test_lbl";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "bad.par").string();
  {
    std::ifstream in(kFrag + "hitran_co_3iso_2000_2300cm.par");
    std::ofstream out(path);
    std::string line;
    for (int i = 1; i <= 5 && std::getline(in, line); ++i) {
      if (i == 4) line.replace(16, 9, "1.3x3E-29");  // corrupt the intensity field of line 4
      out << line << '\n';
    }
    out << "short line\n";
  }
  ParFilter f;
  LineList l;
  try {
    read_par_file(path, f, l);
    FAIL() << "no exception";
  } catch (const dgrte::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path + ":4:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("S"), std::string::npos) << msg;
  }
  // a truncated record
  {
    std::ofstream out(path);
    out << "short line\n";
  }
  try {
    LineList l2;
    read_par_file(path, f, l2);
    FAIL() << "no exception";
  } catch (const dgrte::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":1:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_par_file((dir / "missing.par").string(), f, l), dgrte::InputError);
}

TEST(Lbl, LineIntensitiesAtTemperature) {
  struct Ref {
    const char* file;
    double nu;
    int m;
    double s[3];  // 1000, 1500, 2000 K
  };
  const Ref refs[] = {{"hitran_co_3iso_2000_2300cm.par", 2172.758825, 5, {1.77843e-19, 1.04243e-19, 6.50866e-20}},
                      {"hitran_co2_626_bandhead_4165_4200nm.par", 2380.715175, 2, {4.14307e-19, 1.89268e-19, 8.28776e-20}},
                      {"hitran_2016_H2O_2iso_2000_2100cm.par", 2016.83473, 1, {1.05594e-20, 6.57418e-21, 3.74393e-21}}};
  const double ts[3] = {1000, 1500, 2000};
  for (const auto& r : refs) {
    const LineList l = single_line(r.file, r.nu);
    ASSERT_EQ(l.size(), 1u) << r.file;
    const int k = tips().index(l.molecule[0], l.isotopologue[0]);
    for (int i = 0; i < 3; ++i) {
      const double s = line_intensity_at(l.intensity[0], l.elower[0], l.nu[0], tips().q(k, 296.0), tips().q(k, ts[i]), ts[i]);
      EXPECT_NEAR(s / r.s[i], 1.0, 2e-5) << r.file << " T=" << ts[i];
    }
  }
}

TEST(Lbl, LineWidthsAtState) {
  struct Ref {
    const char* file;
    double nu, gl, gd;
  };
  const Ref refs[] = {{"hitran_co_3iso_2000_2300cm.par", 2172.758825, 0.01795, 0.00570},
                      {"hitran_co2_626_bandhead_4165_4200nm.par", 2380.715175, 0.02062, 0.00498},
                      {"hitran_2016_H2O_2iso_2000_2100cm.par", 2016.83473, 0.03895, 0.00659}};
  for (const auto& r : refs) {
    const LineList l = single_line(r.file, r.nu);
    const auto d = LblLineData::build(l, tips());
    GasState s{1500.0, 1.0, 0.1, 0.1, 0.1};
    LblLineArrays a;
    lbl_line_arrays(d, tips(), s, LblOptions{}, a);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_NEAR(a.gamma_l[0], r.gl, 6e-6) << r.file;
    EXPECT_NEAR(a.gamma_d[0], r.gd, 6e-6) << r.file;
  }
}

// kappa_nu of CO (iso 1) at 1500 K, 1 atm against RADIS (PROVENANCE §3c): same line list, Voigt, 5 cm^-1
// truncation, S(T) < 1e-25 dropped, same grid, x_CO = 0.01 and 0.5.
// RADIS (that version) placed every line centre on the first grid point at or above its pressure-shifted
// centre (its reference peaks sit exactly on grid points, e.g. the 2221.748306 cm^-1 line, shifted to
// 2221.7455, peaks at 2221.750391). Point-wise comparisons are therefore made (a) after moving our line
// centres the same way ("RADIS grid") — then they agree to ~1 % — and the band integral (0.5 %) is checked
// for both. With exact centres the 0.0025 cm^-1 mean displacement gives up to 15 % of the peak locally.
namespace {
struct Cmp {
  double integral_rel, max_abs_over_peak, rms_over_peak, max_rel_strong, bin_max_rel;
};
Cmp compare(const std::vector<double>& nu, const std::vector<double>& k, const std::vector<double>& kr) {
  Cmp c{};
  const double ir = trapz(nu, kr), ik = trapz(nu, k);
  c.integral_rel = ik / ir - 1;
  const double kmax = *std::max_element(kr.begin(), kr.end());
  double rms = 0;
  for (std::size_t i = 0; i < k.size(); ++i) {
    const double d = k[i] - kr[i];
    c.max_abs_over_peak = std::max(c.max_abs_over_peak, std::abs(d) / kmax);
    rms += d * d;
    if (kr[i] > 0.01 * kmax) c.max_rel_strong = std::max(c.max_rel_strong, std::abs(d) / kr[i]);
  }
  c.rms_over_peak = std::sqrt(rms / k.size()) / kmax;
  const std::size_t bin = 200;  // 1 cm^-1
  double bmax = 0;
  std::vector<double> ba, bb;
  for (std::size_t i = 0; i + bin <= k.size(); i += bin) {
    double a = 0, b = 0;
    for (std::size_t q = i; q < i + bin; ++q) {
      a += k[q];
      b += kr[q];
    }
    ba.push_back(a / bin);
    bb.push_back(b / bin);
    bmax = std::max(bmax, b / bin);
  }
  for (std::size_t i = 0; i < ba.size(); ++i) {
    if (bb[i] > 0.01 * bmax) c.bin_max_rel = std::max(c.bin_max_rel, std::abs(ba[i] - bb[i]) / bb[i]);
  }
  return c;
}
}  // namespace

TEST(Lbl, RadisCO1500K) {
  const RadisRef ref = read_radis();
  ASSERT_EQ(ref.nu.size(), 37870u);
  ParFilter f;
  f.isotopologues = {1};
  const LineList lines = read_par_files({kFrag + "hitran_co_3iso_2000_2300cm.par"}, f);
  // RADIS-style grid projection: move each line so that its shifted centre is the next grid point.
  LineList snapped = lines;
  const double nu0 = ref.nu.front(), step = 0.005;
  for (std::size_t i = 0; i < snapped.size(); ++i) {
    const double c = snapped.nu[i] + snapped.delta_air[i] * 1.0;
    const double g = nu0 + std::ceil((c - nu0) / step - 1e-9) * step;
    snapped.nu[i] = g - snapped.delta_air[i] * 1.0;
  }
  LblOptions opt;
  opt.wing_cutoff = 5.0;
  opt.min_intensity = 1e-25;
  for (int c = 0; c < 2; ++c) {
    const double x = c == 0 ? 0.01 : 0.5;
    const auto& kr = c == 0 ? ref.k001 : ref.k05;
    GasState s{1500.0, 1.0, 0.0, 0.0, x};
    for (int mode = 0; mode < 2; ++mode) {
      const auto kappa = compute_absorption_spectrum(mode == 0 ? lines : snapped, tips(), s, ref.nu, opt);  // 1/m
      std::vector<double> k(kappa.size());
      for (std::size_t i = 0; i < k.size(); ++i) k[i] = kappa[i] / 100.0;  // 1/cm
      const Cmp r = compare(ref.nu, k, kr);
      std::printf("[lbl radis] x=%.2f %s: band integral rel err %.3e; max |dk|/k_peak %.3e; rms/k_peak %.3e; "
                  "max rel err where k > 1%% peak %.3e; 1 cm-1 bins: max rel err %.3e\n",
                  x, mode == 0 ? "exact centres" : "RADIS grid  ", r.integral_rel, r.max_abs_over_peak,
                  r.rms_over_peak, r.max_rel_strong, r.bin_max_rel);
      EXPECT_LT(std::abs(r.integral_rel), 5e-3);
      if (mode == 1) {
        EXPECT_LT(r.bin_max_rel, 0.02);
        EXPECT_LT(r.max_abs_over_peak, 0.02);
        EXPECT_LT(r.max_rel_strong, 0.03);
      }
    }
  }
}

TEST(Lbl, ModelWeightsAndCache) {
  ParFilter f;
  const LineList lines = read_par_files({kFrag + "hitran_co_3iso_2000_2300cm.par"}, f);
  std::vector<double> grid;
  for (double nu = 2050; nu <= 2250; nu += 0.05) grid.push_back(nu);
  LblModel model(lines, tips(), grid, LblOptions{}, 10'000'000);
  ASSERT_EQ(model.num_spectral_points(), static_cast<int>(grid.size()) + 1);
  std::vector<GasState> medium = {{1500, 1, 0, 0, 0.1}, {1000, 1, 0, 0, 0.2}, {1500, 1, 0, 0, 0.1}};
  std::vector<double> tsrc = {1500, 1000, 300};
  std::vector<double> sum(3, 0.0), a(3);
  for (int j = 0; j < model.num_spectral_points(); ++j) {
    model.emission_weight(j, medium, tsrc, a);
    for (int i = 0; i < 3; ++i) {
      EXPECT_GE(a[i], 0.0);
      sum[i] += a[i];
    }
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(sum[i], 1.0, 1e-12);
  // cached (prepare) vs direct summation
  std::vector<double> k_direct(3), k_cached(3);
  for (int j : {0, 1000, 2000, 2457, 3999}) {
    model.absorption(j, medium, k_direct);
    model.prepare(medium);
    model.absorption(j, medium, k_cached);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(k_cached[i], k_direct[i], 1e-10 * (1 + k_direct[i]));
    model.prepare({});
  }
  std::vector<double> k(3);
  model.absorption(model.num_spectral_points() - 1, medium, k);
  EXPECT_EQ(k[0], 0.0);
  // spectrum() at the grid equals the per-point values
  std::vector<double> spec(grid.size());
  ASSERT_TRUE(model.spectrum(medium[1], grid, spec));
  std::vector<double> one(1);
  for (int j : {10, 1234, 3000}) {
    model.absorption(j, std::span<const GasState>(&medium[1], 1), one);
    EXPECT_NEAR(spec[j], one[0], 1e-10 * (1 + one[0]));
  }
}

TEST(Lbl, KDistributionReduction) {
  // the sorted per-band k-distribution: weights, quantiles, homogeneous emissivity against every wavenumber
  ParFilter f;
  const LineList lines = read_par_files({kFrag + "hitran_co_3iso_2000_2300cm.par"}, f);
  std::vector<double> grid;
  for (double nu = 2025; nu < 2275; nu += 0.01) grid.push_back(nu);
  LblModel every(lines, tips(), grid);
  LblReduction red;
  red.kdistribution = true;
  LblModel kd(lines, tips(), grid, LblOptions{}, 50'000'000, red);
  ASSERT_EQ(kd.num_bands(), 10);
  EXPECT_EQ(kd.num_spectral_points(), 10 * 16 + 1);
  EXPECT_EQ(kd.name(), "lbl-kdistribution-25cm-g16");
  const GasState s{1500, 1, 0, 0, 0.1};
  const std::vector<GasState> one(1, s);
  every.prepare(one);
  kd.prepare(one);
  // k(g) ascending in g within a band; cached equals on-the-spot evaluation
  std::vector<double> k(1), prev(1, -1.0);
  const auto direct = kd.band_kdistribution(3, s);
  for (int i = 0; i < 16; ++i) {
    kd.absorption(3 * 16 + i, one, k);
    EXPECT_GE(k[0], prev[0]);
    EXPECT_NEAR(k[0], direct[static_cast<std::size_t>(i)], 1e-12 * (1 + k[0]));
    prev = k;
  }
  // weights sum to one; emissivities of homogeneous paths agree with every wavenumber
  auto emissivity = [&](const LblModel& m, double length) {
    EXPECT_NEAR(emission_weight_sum(m, s, s.temperature), 1.0, 1e-12);
    return homogeneous_emissivity(m, s, length);
  };
  for (double length : {0.01, 0.1, 1.0, 10.0}) {
    const double e_every = emissivity(every, length), e_kd = emissivity(kd, length);
    EXPECT_NEAR(e_kd / e_every, 1.0, 5e-3) << "L = " << length << " m: " << e_kd << " vs " << e_every;
  }
}

TEST(Lbl, KDistributionInNonUniformSlab) {
  // wall fluxes of the exact slab solver, every wavenumber vs the k-distribution reduction, CO 2025-2275 cm^-1
  auto run = [](const std::string& temperature, const std::string& x_co, const std::string& reduction) {
    const std::string text = "slab: {length: 1.0, points: 21, refine: 2, pressure: 1.0, temperature: '" + temperature +
                             "', x_h2o: '0', x_co2: '0', x_co: '" + x_co + "',"
                             " walls: {left: {temperature: 0, emissivity: 1}, right: {temperature: 0, emissivity: 1}}}\n"
                             "model: {type: lbl, par_files: ['" + kFrag + "hitran_co_3iso_2000_2300cm.par'], nu_min: 2025, "
                             "nu_max: 2275, dnu: 0.05, reduction: " + reduction + "}\n";
    auto c = parse_slab_case(YAML::Load(text), "test");
    c.gasdata = kData;
    return solve_slab(c);
  };
  // isothermal, CO varying 0.02..0.2 along x: kappa_nu scales with x_co (up to self-broadening), the
  // case where the correlated-k assumption holds, so the reduction must match every wavenumber
  const std::string x_co = "0.02 + 0.18*x";
  const SlabResult every = run("1500", x_co, "every"), kd = run("1500", x_co, "kdistribution");
  EXPECT_EQ(kd.spectral_points, 11 * 16 + 1);  // 2025..2275 inclusive: 10 full bands + one holding 2275 alone
  EXPECT_NEAR(kd.q_right / every.q_right, 1.0, 0.01) << kd.q_right << " vs " << every.q_right;
  EXPECT_NEAR(kd.q_left / every.q_left, 1.0, 0.01) << kd.q_left << " vs " << every.q_left;
  // hot layer (1500 K) next to a cold one (500 K): the hot-side flux (emission of the hot layer) agrees;
  // the flux through the cold layer shows the correlated-k error (hot lines absent at 500 K are
  // paired with cold-gas line centres), reported, documented in docs/gas-lbl.md
  const SlabResult every2 = run("x < 0.5 ? 1500 : 500", "0.1", "every"), kd2 = run("x < 0.5 ? 1500 : 500", "0.1", "kdistribution");
  EXPECT_NEAR(kd2.q_left / every2.q_left, 1.0, 0.02) << kd2.q_left << " vs " << every2.q_left;
  std::printf("[ note ] scaled CO slab: q_left %+.3f %%, q_right %+.3f %%; hot/cold CO slab: q_left %+.2f %%, q_right %+.2f %% "
              "(k-distribution vs every wavenumber)\n",
              100 * (kd.q_left / every.q_left - 1), 100 * (kd.q_right / every.q_right - 1),
              100 * (kd2.q_left / every2.q_left - 1), 100 * (kd2.q_right / every2.q_right - 1));
}
