#include "gas/gas_common.hpp"
#include "gas/soot.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>

#include "common/error.hpp"

#ifndef DGRTE_GASDATA_DIR
#define DGRTE_GASDATA_DIR ""
#endif

namespace dgrte::gas {

double planck_emissive_power(double nu, double t) {
  const double x = kC2 * nu / t;
  if (x > 700) return 0.0;
  return kC1nu * nu * nu * nu / std::expm1(x);
}

double planck_fraction_above(double nu, double t) {
  if (nu <= 0) return 1.0;
  if (std::isinf(nu)) return 0.0;  // nothing above an infinite wavenumber (open intervals [lo, inf))
  const double x = kC2 * nu / t;
  constexpr double c = 15.0 / (kPi * kPi * kPi * kPi);
  if (x < 2.0) {
    // 1 - (15/pi^4) x^3 (1/3 - x/8 + x^2/60 - x^4/5040 + x^6/272160 - x^8/13305600 + x^10/622702080)
    const double x2 = x * x;
    const double s = 1.0 / 3.0 - x / 8.0 + x2 / 60.0 - x2 * x2 / 5040.0 + x2 * x2 * x2 / 272160.0 -
                     x2 * x2 * x2 * x2 / 13305600.0 + x2 * x2 * x2 * x2 * x2 / 622702080.0;
    return 1.0 - c * x * x2 * s;
  }
  // (15/pi^4) sum_n e^{-nx}/n (x^3 + 3x^2/n + 6x/n^2 + 6/n^3), summed from the small terms up
  const int nterms = std::min(200, 2 + static_cast<int>(40.0 / x));
  double sum = 0;
  for (int n = nterms; n >= 1; --n) {
    const double dn = n;
    sum += std::exp(-dn * x) / dn * (x * x * x + 3.0 * x * x / dn + 6.0 * x / (dn * dn) + 6.0 / (dn * dn * dn));
  }
  return c * sum;
}

double planck_fraction_below(double nu, double t) {
  if (nu <= 0) return 0.0;
  const double x = kC2 * nu / t;
  if (x < 2.0) {
    const double x2 = x * x;
    const double s = 1.0 / 3.0 - x / 8.0 + x2 / 60.0 - x2 * x2 / 5040.0 + x2 * x2 * x2 / 272160.0 -
                     x2 * x2 * x2 * x2 / 13305600.0 + x2 * x2 * x2 * x2 * x2 / 622702080.0;
    return 15.0 / (kPi * kPi * kPi * kPi) * x * x2 * s;
  }
  return 1.0 - planck_fraction_above(nu, t);
}

std::filesystem::path gasdata_directory(const std::string& explicit_dir) {
  std::string dir, origin;
  if (!explicit_dir.empty()) {
    dir = explicit_dir;
    origin = "the gasdata option/key";
  } else if (const char* env = std::getenv("DGRTE_GASDATA"); env && *env) {
    dir = env;
    origin = "environment variable DGRTE_GASDATA";
  } else {
    dir = DGRTE_GASDATA_DIR;
    origin = "the built-in default (CMake cache variable DGRTE_GASDATA_DIR)";
  }
  if (dir.empty() || !std::filesystem::is_directory(dir))
    throw InputError(fmt::format("gas data directory '{}' (from {}) does not exist; pass --gasdata DIR, set the case key "
                                 "'gasdata:' or the environment variable DGRTE_GASDATA to the repository's gasdata/ folder.",
                                 dir, origin));
  return dir;
}

std::filesystem::path gasdata_file(const std::filesystem::path& dir, const std::string& relative) {
  auto p = dir / relative;
  if (!std::filesystem::is_regular_file(p))
    throw InputError(fmt::format("gas data file '{}' not found; the data directory '{}' must contain {} (see "
                                 "gasdata/PROVENANCE.md); set --gasdata / 'gasdata:' / DGRTE_GASDATA.",
                                 p.string(), dir.string(), relative));
  return p;
}

static std::ifstream open_or_throw(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("cannot read gas data file '{}'; check that it exists and is readable.", file.string()));
  return in;
}

std::vector<DataRow> read_data_rows(const std::filesystem::path& file, char sep) {
  auto in = open_or_throw(file);
  std::vector<DataRow> rows;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    DataRow r;
    r.line = n;
    if (sep == ' ') {
      std::istringstream ss(line);
      std::string f;
      while (ss >> f) r.fields.push_back(f);
    } else {
      std::string f;
      std::istringstream ss(line);
      while (std::getline(ss, f, sep)) {
        auto a = f.find_first_not_of(" \t"), b = f.find_last_not_of(" \t");
        r.fields.push_back(a == std::string::npos ? std::string() : f.substr(a, b - a + 1));
      }
      if (!line.empty() && line.back() == sep) r.fields.emplace_back();
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

double parse_number(std::string_view text, const std::filesystem::path& file, int line, std::string_view what) {
  std::string s(text);
  for (char& c : s)
    if (c == 'D' || c == 'd') c = 'E';
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    throw InputError(fmt::format("{}:{}: malformed number '{}' for {}; the file is corrupt or not in the expected format "
                                 "(see gasdata/PROVENANCE.md).",
                                 file.string(), line, text, what));
  return v;
}

std::vector<double> read_number_stream(const std::filesystem::path& file) {
  auto rows = read_data_rows(file, ' ');
  std::vector<double> v;
  for (const auto& r : rows)
    for (const auto& f : r.fields) v.push_back(parse_number(f, file, r.line, "a data value"));
  return v;
}

void validate_state(const GasState& s, const std::string& where) {
  auto bad = [&](const std::string& msg) { throw InputError(fmt::format("{}: {}", where, msg)); };
  if (!std::isfinite(s.temperature) || s.temperature <= 0) bad(fmt::format("temperature {} K must be positive", s.temperature));
  if (!std::isfinite(s.pressure) || s.pressure <= 0) bad(fmt::format("pressure {} atm must be positive", s.pressure));
  const double xs[3] = {s.x_h2o, s.x_co2, s.x_co};
  const char* names[3] = {"x_h2o", "x_co2", "x_co"};
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(xs[k]) || xs[k] < 0 || xs[k] > 1) bad(fmt::format("mole fraction {} = {} must lie in [0, 1]", names[k], xs[k]));
  if (!valid_soot_fv(s.soot_fv))
    bad(fmt::format("soot volume fraction soot_fv = {} must lie in [0, 1) (flames: 1e-8 to 1e-5)", s.soot_fv));
  const double sum = s.x_h2o + s.x_co2 + s.x_co;
  if (sum > 1 + 1e-9)
    bad(fmt::format("mole fractions sum to {} > 1 (x_h2o={}, x_co2={}, x_co={}); the remainder is N2, so the sum must not exceed 1",
                    sum, s.x_h2o, s.x_co2, s.x_co));
}

void warn_once(std::atomic<bool>& flag, const std::string& message) {
  if (!flag.exchange(true)) {
    static std::mutex m;
    std::lock_guard lock(m);
    std::cerr << "warning: " << message << "\n";
  }
}

void TemperatureRange::out_of_range(double t) const {
  if (strict || !std::isfinite(t) || t <= 0)
    throw InputError(fmt::format("temperature {} K is outside the validity range [{}, {}] K of model '{}'{}", t, lo, hi, model,
                                 strict ? "; set the model option 'out_of_range: clamp' to clamp instead" : ""));
  warn_once(warned, fmt::format("model '{}': temperature {} K is outside its validity range [{}, {}] K; properties are "
                                "clamped to the range end (further out-of-range values are clamped silently).",
                                model, t, lo, hi));
}

// Newton on the Legendre recurrence from Tricomi-like initial guesses; nodes to ~1e-16.
void gauss_legendre_01(int n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(n, 0);
  w.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), pp = 0;
    for (int it = 0; it < 100; ++it) {
      double p1 = 1, p2 = 0;
      for (int j = 0; j < n; ++j) {
        const double p3 = p2;
        p2 = p1;
        p1 = ((2 * j + 1) * z * p2 - j * p3) / (j + 1);
      }
      pp = n * (z * p1 - p2) / (z * z - 1);
      const double dz = p1 / pp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    // ascending order on [0,1]
    x[n - 1 - i] = 0.5 * (1 + z);
    w[n - 1 - i] = 1.0 / ((1 - z * z) * pp * pp);
  }
}

double homogeneous_emissivity(const SpectralModel& m, const GasState& s, double length) {
  double e = 0, k = 0, a = 0;
  const double t = s.temperature;
  for (int j = 0; j < m.num_spectral_points(); ++j) {
    m.absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&k, 1));
    m.emission_weight(j, std::span<const GasState>(&s, 1), std::span<const double>(&t, 1), std::span<double>(&a, 1));
    e += a * -std::expm1(-k * length);
  }
  return e;
}

double emission_weight_sum(const SpectralModel& m, const GasState& s, double t) {
  double sum = 0, a = 0;
  for (int j = 0; j < m.num_spectral_points(); ++j) {
    m.emission_weight(j, std::span<const GasState>(&s, 1), std::span<const double>(&t, 1), std::span<double>(&a, 1));
    sum += a;
  }
  return sum;
}

}  // namespace dgrte::gas
