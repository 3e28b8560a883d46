#include "gas/snb_data.hpp"

#include <cmath>
#include <fmt/format.h>

#include "common/error.hpp"

namespace dgrte::gas {

SnbDataSet parse_snb_dataset(const std::string& t, const std::string& where) {
  if (t == "soufiani1997" || t == "1997" || t == "soufiani-taine-1997") return SnbDataSet::Soufiani1997;
  if (t == "riviere2012" || t == "2012" || t == "riviere-soufiani-2012") return SnbDataSet::Riviere2012;
  throw InputError(fmt::format("{}: unknown SNB data set '{}'; use soufiani1997 or riviere2012", where, t));
}

std::string SnbData::dataset_name() const { return set_ == SnbDataSet::Soufiani1997 ? "soufiani1997" : "riviere2012"; }

namespace {
// Reads a data-stream file of nbands bands x nt values (kbar block then 1/delta block).
void load_1997(const std::filesystem::path& f, int nbands, int nt, std::vector<double>& kbar, std::vector<double>& invd) {
  auto v = read_number_stream(f);
  const std::size_t n = static_cast<std::size_t>(nbands) * nt;
  if (v.size() != 2 * n)
    throw InputError(fmt::format("{}: expected {} numbers ({} bands x {} temperatures, k and 1/delta blocks), found {}; the "
                                 "SNB file is truncated or corrupt",
                                 f.string(), 2 * n, nbands, nt, v.size()));
  kbar.assign(v.begin(), v.begin() + n);
  invd.assign(v.begin() + n, v.end());
}

void load_2012(const std::filesystem::path& f, int nt, std::vector<double>& centers, std::vector<double>& kbar,
               std::vector<double>& invd) {
  auto rows = read_data_rows(f, ' ');
  if (rows.size() % 2 != 0)
    throw InputError(fmt::format("{}: expected an even number of lines (k block then 1/delta block), found {}", f.string(), rows.size()));
  const std::size_t nb = rows.size() / 2;
  centers.clear();
  kbar.clear();
  invd.clear();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.fields.size() != static_cast<std::size_t>(nt + 1))
      throw InputError(fmt::format("{}:{}: expected {} values (band centre and {} temperatures), found {}", f.string(), row.line,
                                   nt + 1, nt, row.fields.size()));
    const double c = parse_number(row.fields[0], f, row.line, "band centre");
    if (r < nb) centers.push_back(c);
    else if (std::abs(c - centers[r - nb]) > 1e-6)
      throw InputError(fmt::format("{}:{}: band centre {} of the 1/delta block does not match {} of the k block", f.string(),
                                   row.line, c, centers[r - nb]));
    if (r > 0 && r < nb && std::abs(c - centers[r - 1] - 25.0) > 1e-6)
      throw InputError(fmt::format("{}:{}: band centres must be contiguous 25 cm^-1 apart", f.string(), row.line));
    auto& dst = r < nb ? kbar : invd;
    for (int i = 0; i < nt; ++i) dst.push_back(parse_number(row.fields[1 + i], f, row.line, "SNB parameter"));
  }
}
}  // namespace

SnbData::SnbData(SnbDataSet set, const std::filesystem::path& dir, bool strict) : set_(set) {
  double nu_lo, nu_hi;
  std::array<std::vector<double>, 3> species_centers;
  if (set == SnbDataSet::Soufiani1997) {
    nt_ = 14;
    t0_ = 300;
    dt_ = 200;
    range_ = TemperatureRange(300, 2900, "snb-soufiani1997");
    const char* files[3] = {"snb/soufiani_taine_1997/snbh2o.dat", "snb/soufiani_taine_1997/snbco2.dat",
                            "snb/soufiani_taine_1997/snbco.dat"};
    const int nb[3] = {367, 96, 48};
    for (int s = 0; s < 3; ++s) load_1997(gasdata_file(dir, files[s]), nb[s], nt_, kbar_[s], invd_[s]);
    for (int i = 0; i < 367; ++i) species_centers[kH2O].push_back(150 + 25.0 * i);
    auto add = [](std::vector<double>& v, double a, double b) {
      for (double c = a; c <= b + 1e-9; c += 25) v.push_back(c);
    };
    add(species_centers[kCO2], 450, 1200);
    add(species_centers[kCO2], 1950, 2450);
    add(species_centers[kCO2], 3300, 3800);
    add(species_centers[kCO2], 4700, 5250);
    add(species_centers[kCO], 1750, 2325);
    add(species_centers[kCO], 3775, 4350);
    // snbwn.dat lists the H2O band centres: check consistency.
    const auto wn = gasdata_file(dir, "snb/soufiani_taine_1997/snbwn.dat");
    int i = 0;
    for (const auto& r : read_data_rows(wn, ' ')) {
      const double c = parse_number(r.fields[0], wn, r.line, "band centre");
      if (c < 0) break;
      if (i >= 367 || std::abs(c - species_centers[kH2O][i]) > 1e-6)
        throw InputError(fmt::format("{}:{}: unexpected band centre {} (expected 150 + 25 i, 367 bands)", wn.string(), r.line, c));
      ++i;
    }
    nu_lo = 150;
    nu_hi = 9300;
  } else {
    nt_ = 48;
    t0_ = 300;
    dt_ = 100;
    range_ = TemperatureRange(300, 5000, "snb-riviere2012");
    const char* files[3] = {"snb/riviere_soufiani_2012/SNBH2O", "snb/riviere_soufiani_2012/SNBCO2", "snb/riviere_soufiani_2012/SNBCO"};
    for (int s = 0; s < 3; ++s) load_2012(gasdata_file(dir, files[s]), nt_, species_centers[s], kbar_[s], invd_[s]);
    nu_lo = 1e9;
    nu_hi = -1;
    for (int s = 0; s < 3; ++s) {
      nu_lo = std::min(nu_lo, species_centers[s].front());
      nu_hi = std::max(nu_hi, species_centers[s].back());
    }
  }
  range_.strict = strict;
  for (double c = nu_lo; c <= nu_hi + 1e-9; c += 25) centers_.push_back(c);
  for (int s = 0; s < 3; ++s) {
    index_[s].assign(centers_.size(), -1);
    for (std::size_t k = 0; k < species_centers[s].size(); ++k) {
      const double c = species_centers[s][k];
      const long b = std::lround((c - nu_lo) / 25.0);
      if (b < 0 || b >= static_cast<long>(centers_.size()) || std::abs(centers_[b] - c) > 1e-6)
        throw InputError(fmt::format("SNB data: band centre {} not on the 25 cm^-1 grid", c));
      index_[s][b] = static_cast<int>(k);
    }
  }
}

SnbData::TIndex SnbData::t_index(double temperature) const {
  const double t = range_.clamp(temperature);
  const double u = (t - t0_) / dt_;
  TIndex r;
  r.i = static_cast<int>(u);
  if (r.i >= nt_ - 1) {
    r.i = nt_ - 1;
    r.w = 0;
  } else {
    r.w = u - r.i;
  }
  return r;
}

double SnbData::gamma(int s, const GasState& st) const {
  const double tr = 296.0 / st.temperature;
  const double p = st.pressure, xw = st.x_h2o, xc = st.x_co2;
  switch (s) {
    case kH2O:
      if (set_ == SnbDataSet::Soufiani1997)
        return p * (0.462 * xw * tr + std::sqrt(tr) * (0.079 * (1 - xc) + 0.106 * xc));
      return 0.066 * p * (7 * std::sqrt(tr) * xw + 1.2 * (1 - xc) + 1.6 * xc) * std::sqrt(tr);
    case kCO2: return p * std::pow(tr, 0.7) * (0.07 * xc + 0.058 * (1 - xc - xw) + 0.10 * xw);
    default:
      return p * (0.075 * xc * std::pow(tr, 0.6) + 0.12 * xw * std::pow(tr, 0.82) + 0.06 * std::pow(tr, 0.7) * (1 - xc - xw));
  }
}

double malkmus_transmissivity(double kbar, double beta, double x) {
  if (kbar <= 0 || x <= 0) return 1.0;
  if (beta <= 0) return std::exp(-kbar * x);
  const double z = kbar * x / beta;
  // 2 beta (sqrt(1+z) - 1) = 2 beta z / (sqrt(1+z) + 1): no cancellation for small z
  return std::exp(-2.0 * beta * z / (std::sqrt(1.0 + z) + 1.0));
}

}  // namespace dgrte::gas
