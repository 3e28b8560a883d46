// The line-by-line sum on OpenCL (opencl/lbl_line_sum.cl, run on PoCL in CI) against its host twin
// gas::lbl_accumulate_voigt on HITRAN lines, the LBL model with its line sums on the device, and the
// line-sum dump's round trip. Without an OpenCL platform the tests skip, unless DGRTE_REQUIRE_OPENCL=1.
#include "dgrte/device_backend.hpp"
#include "device/device_line_sum.hpp"
#include "gas/hitran.hpp"
#include "gas/lbl.hpp"
#include "gas/tips.hpp"
#include "gas/voigt.hpp"
#include "opencl_required.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace dgrte {
namespace {

using test_support::opencl_missing;

const std::string kData = std::string(DGRTE_SOURCE_DIR) + "/gasdata";

device::VoigtConstants voigt() {
  const auto w = gas::weideman_coefficients();
  return {w.L, gas::kVoigtAsymptoticS, w.a};
}

gas::LineList h2o_lines() {
  gas::ParFilter f;
  return gas::read_par_files({kData + "/lbl/hitran_fragments/hitran_2016_H2O_2iso_2000_2100cm.par"}, f);
}

std::vector<double> grid(double from, double to, double step) {
  std::vector<double> g;
  for (double nu = from; nu <= to; nu += step) g.push_back(nu);
  return g;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

TEST(DeviceLineSum, MatchesTheHostTwinOnHitranLines) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform: the device line sum not tested";
  const auto tips = gas::TipsTable::load_default(kData);
  const auto lines = h2o_lines();
  const auto data = gas::LblLineData::build(lines, tips);
  device::DeviceLineSum sum("auto", voigt(), "none");
  // Grids inside, across the end of and beyond the fragment (1990-2110 cm-1: wings only at the ends),
  // coarse and fine (points per group and lines per tile both partial).
  for (const auto& [state, g] : {std::pair{gas::GasState{1500, 1, 0.2, 0, 0}, grid(1990, 2110, 0.013)},
                                 std::pair{gas::GasState{600, 2, 0.05, 0, 0}, grid(2049.5, 2051.5, 0.001)}}) {
    gas::LblLineArrays a;
    gas::lbl_line_arrays(data, tips, state, gas::LblOptions{}, a);
    ASSERT_GT(a.size(), 100u);
    std::vector<double> host(g.size(), 0.0), dev(g.size(), 0.0);
    gas::lbl_accumulate_voigt(a.size(), a.key.data(), a.center.data(), a.strength.data(), a.gamma_d.data(), a.gamma_l.data(),
                              a.center_margin, g.size(), g.data(), 25.0, host.data());
    sum.accumulate({a.key, a.center, a.strength, a.gamma_d, a.gamma_l, a.center_margin, g, 25.0}, dev);
    double worst = 0;
    for (std::size_t p = 0; p < g.size(); ++p) worst = std::max(worst, std::abs(dev[p] - host[p]));
    EXPECT_GT(max_abs(host), 0.0);
    EXPECT_LE(worst, 1e-12 * max_abs(host)) << "T " << state.temperature << ": largest difference " << worst << " of " << max_abs(host);
  }
}

TEST(DeviceLineSum, LblModelOnTheDeviceMatchesTheCpuAndSaysSo) {
  if (opencl_missing()) GTEST_SKIP() << "no OpenCL platform: the device line sum not tested";
  const auto tips = gas::TipsTable::load_default(kData);
  gas::LblModel cpu(h2o_lines(), tips, grid(2000, 2100, 0.02));
  gas::LblModel dev(h2o_lines(), tips, grid(2000, 2100, 0.02));
  gas::LoadedModel loaded;
  loaded.lbl = &dev;
  runner::BackendChoice choice;
  choice.opencl = true;
  choice.options.device = "auto";
  choice.options.cache_dir = "none";
  EXPECT_FALSE(runner::move_line_sums_to_device(loaded, choice).empty());
  EXPECT_EQ(runner::property_backend(loaded), "opencl");
  EXPECT_EQ(cpu.property_backend(), "cpu");
  const std::vector<gas::GasState> states{{1200, 1, 0.1, 0, 0}, {1800, 1, 0.25, 0, 0}};
  cpu.prepare(states);
  dev.prepare(states);
  double worst = 0, top = 0;
  for (int j = 0; j < cpu.num_spectral_points(); ++j) {
    std::vector<double> kc(2), kd(2);
    cpu.absorption(j, states, kc);
    dev.absorption(j, states, kd);
    for (int i = 0; i < 2; ++i) worst = std::max(worst, std::abs(kc[i] - kd[i])), top = std::max(top, std::abs(kc[i]));
  }
  EXPECT_GT(top, 0.0);
  EXPECT_LE(worst, 1e-12 * top);
}

TEST(DeviceLineSum, DumpRoundTripAndBadFiles) {
  device::LineSumDump d;
  d.key = d.center = {2000.0, 2000.5};
  d.strength = {1.0, 2.0};
  d.gamma_d = {0.01, 0.01};
  d.gamma_l = {0.05, 0.06};
  d.grid = grid(1999, 2001, 0.5);
  d.voigt = voigt();
  d.description = "two lines";
  const auto path = (std::filesystem::temp_directory_path() / "dgrte_line_sum_dump.bin").string();
  device::write_line_sum_dump(path, d);
  EXPECT_TRUE(device::is_line_sum_dump(path));
  const auto r = device::read_line_sum_dump(path);
  EXPECT_EQ(r.strength, d.strength);
  EXPECT_EQ(r.voigt.a, d.voigt.a);
  EXPECT_EQ(r.description, "two lines");
  EXPECT_EQ(device::DeviceLineSum::pairs_within_cutoff(r.input()), 10u);  // every point within 25 cm-1 of both lines
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  EXPECT_THROW(device::read_line_sum_dump(path), device::DeviceError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace dgrte
