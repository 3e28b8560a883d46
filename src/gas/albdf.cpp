#include "gas/albdf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace dgrte::gas {
namespace {

constexpr double kR = 8.31446261815324;  // J/(mol K)
constexpr double kAtmPa = 101325.0;
const double kLnCmin = std::log(AlbdfTables::kCmin);
const double kDlnC = std::log(1e7) / 70.0;

std::size_t table_size(AlbdfSpecies s) {
  const std::size_t n = static_cast<std::size_t>(AlbdfTables::kNT) * AlbdfTables::kNT * AlbdfTables::kNC;
  return s == AlbdfSpecies::H2O ? n * AlbdfTables::kNY : n;
}

std::vector<float> read_text_table(const std::string& file, std::size_t expected) {
  std::ifstream in(file);
  if (!in) {
    throw InputError(fmt::format("{}: cannot open ALBDF table; copy gasdata/slw/pearson2014_albdf_tables from the shared "
                                 "data set or set the gas data directory",
                                 file));
  }
  std::vector<float> v;
  v.reserve(expected);
  std::string line;
  long no = 0;
  while (std::getline(in, line)) {
    ++no;
    const char* b = line.data();
    const char* e = b + line.size();
    while (b < e && (*b == ' ' || *b == '\t')) ++b;
    while (e > b && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t')) --e;
    if (b == e) continue;
    double x = 0;
    auto [ptr, ec] = std::from_chars(b, e, x);
    if (ec != std::errc() || ptr != e || !(x >= 0 && x <= 1.0 + 1e-6)) {
      throw InputError(fmt::format("{}:{}: '{}' is not an ALBDF value in [0, 1]; the file must be the unmodified "
                                   "Pearson et al. (2014) table (one value per line)",
                                   file, no, std::string(b, e)));
    }
    v.push_back(static_cast<float>(x));
  }
  if (v.size() != expected) {
    throw InputError(fmt::format("{}: {} values, expected {} (28 Tg x 28 Tb x 71 C)", file, v.size(), expected));
  }
  return v;
}

std::vector<float> read_bin_table(const std::string& file, std::size_t expected) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open ALBDF table (raw float32)", file));
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<std::size_t>(in.tellg());
  if (bytes != expected * 4) {
    throw InputError(fmt::format("{}: {} bytes, expected {} (raw little-endian float32, 9 Y x 28 Tg x 28 Tb x 71 C)",
                                 file, bytes, expected * 4));
  }
  in.seekg(0);
  std::vector<float> v(expected);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
  if constexpr (std::endian::native == std::endian::big) {
    for (auto& f : v) {
      auto u = std::bit_cast<std::uint32_t>(f);
      u = (u >> 24) | ((u >> 8) & 0xff00u) | ((u << 8) & 0xff0000u) | (u << 24);
      f = std::bit_cast<float>(u);
    }
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] >= 0.0f && v[i] <= 1.000001f)) {
      throw InputError(fmt::format("{}: value {} at float index {} is not in [0, 1]", file, v[i], i));
    }
  }
  return v;
}

// Linear interpolation position in the T grid: index i (0..26) and fraction t.
inline void t_pos(double temp, int& i, double& t) {
  double u = (temp - AlbdfTables::kTmin) / AlbdfTables::kDT;
  u = std::clamp(u, 0.0, static_cast<double>(AlbdfTables::kNT - 1));
  i = std::min(static_cast<int>(u), AlbdfTables::kNT - 2);
  t = u - i;
}

inline void y_pos(double y, int& i, double& t) {
  y = std::clamp(y, 0.0, 1.0);
  i = 0;
  while (i < AlbdfTables::kNY - 2 && y > AlbdfTables::kY[i + 1]) ++i;
  t = (y - AlbdfTables::kY[i]) / (AlbdfTables::kY[i + 1] - AlbdfTables::kY[i]);
}

inline double clamp_t(double t) { return std::clamp(t, AlbdfTables::kTmin, AlbdfTables::kTmax); }

}  // namespace

double molar_concentration(double pressure_atm, double temperature) { return pressure_atm * kAtmPa / (kR * temperature); }

const std::array<double, AlbdfTables::kNY> AlbdfTables::kY = {0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0};

double AlbdfTables::c_node(int j) { return kCmin * std::pow(1e7, j / 70.0); }

AlbdfTables AlbdfTables::load(const std::string& dir) {
  AlbdfTables t;
  t.co2_ = read_text_table(dir + "/co2_p1_0.txt", table_size(AlbdfSpecies::CO2));
  t.co_ = read_text_table(dir + "/co_p1_0.txt", table_size(AlbdfSpecies::CO));
  t.h2o_ = read_bin_table(dir + "/h2o_p1_0.bin", table_size(AlbdfSpecies::H2O));
  return t;
}

AlbdfTables AlbdfTables::load_default(const std::string& gasdata_dir) {
  return load(gasdata_dir + "/slw/pearson2014_albdf_tables");
}

double AlbdfTables::grid_value(AlbdfSpecies s, int iy, int itg, int itb, int ic) const {
  const std::size_t base = (static_cast<std::size_t>(itg) * kNT + itb) * kNC + ic;
  if (s == AlbdfSpecies::H2O) return h2o_[static_cast<std::size_t>(iy) * kNT * kNT * kNC + base];
  return (s == AlbdfSpecies::CO2 ? co2_ : co_)[base];
}

double AlbdfTables::species_f(AlbdfSpecies s, double c, double tg, double tb, double y_h2o) const {
  int ig, ib;
  double tgw, tbw;
  t_pos(tg, ig, tgw);
  t_pos(tb, ib, tbw);
  const float* d = data(s);
  int iy = 0;
  double yw = 0;
  int ny = 1;
  if (s == AlbdfSpecies::H2O) {
    y_pos(y_h2o, iy, yw);
    ny = 2;
  }
  double u = (std::log(c) - kLnCmin) / kDlnC;
  u = std::clamp(u, 0.0, 70.0);
  const int ic = std::min(static_cast<int>(u), 69);
  const double cw = u - ic;
  double f = 0;
  for (int a = 0; a < ny; ++a) {
    for (int bg = 0; bg < 2; ++bg) {
      for (int bb = 0; bb < 2; ++bb) {
        const double w = (ny == 2 ? (a ? yw : 1 - yw) : 1.0) * (bg ? tgw : 1 - tgw) * (bb ? tbw : 1 - tbw);
        const std::size_t off = ((static_cast<std::size_t>(iy + a) * kNT + ig + bg) * kNT + ib + bb) * kNC + ic;
        f += w * (d[off] + cw * (d[off + 1] - d[off]));
      }
    }
  }
  return f;
}

// --------------------------------------------------------------------------------------------

AlbdfCorrelation AlbdfCorrelation::load(const std::string& csv) {
  std::ifstream in(csv);
  if (!in) throw InputError(fmt::format("{}: cannot open the ALBDF correlation coefficients", csv));
  AlbdfCorrelation c;
  std::array<std::array<bool, 64>, 3> seen{};
  std::string line;
  long no = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++no;
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = true;
      continue;
    }
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream is(line);
    std::string sp;
    int idx = -1, l = 0, m = 0, n = 0;
    double b = 0, p = 0;
    if (!(is >> sp >> idx >> l >> m >> n >> b >> p) || idx < 0 || idx > 63 || idx != 16 * l + 4 * m + n) {
      throw InputError(fmt::format("{}:{}: expected 'species,index,l,m,n,b,p' with index = 16 l + 4 m + n in 0..63", csv, no));
    }
    int s = sp == "H2O" ? 0 : sp == "CO2" ? 1 : sp == "CO" ? 2 : -1;
    if (s < 0) throw InputError(fmt::format("{}:{}: unknown species '{}' (H2O, CO2, CO)", csv, no, sp));
    c.b_[s][idx] = b;
    c.p_[s][idx] = p;
    seen[s][idx] = true;
  }
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < 64; ++i) {
      if (!seen[s][i]) throw InputError(fmt::format("{}: coefficient {} of species {} missing", csv, i, s));
    }
  }
  return c;
}

AlbdfCorrelation AlbdfCorrelation::load_default(const std::string& gasdata_dir) {
  return load(gasdata_dir + "/slw/pearson2014_correlation/albdf_correlation_coefficients.csv");
}

namespace {
// Collapses the correlation to polynomials in xi = ln C at fixed (Tg, Tb, P, Y).
void collapse(const AlbdfCorrelation& corr, AlbdfSpecies s, double tg, double tb, double pressure, double y,
              std::array<double, 4>& A, std::array<double, 4>& B) {
  tg = clamp_t(tg);
  tb = clamp_t(tb);
  double peff = pressure;
  if (s == AlbdfSpecies::H2O) peff = (1.0 + 8.17 * std::clamp(y, 0.0, 1.0)) * pressure;
  const double q = std::log(100.0 * peff) / 10.0;
  const double r = tg * tb / (2500.0 * 2500.0);
  const double g = tg / 2500.0, h = tb / 2500.0;
  const auto& b = corr.b(s);
  const auto& p = corr.p(s);
  A.fill(0);
  B.fill(0);
  double ql = q;  // q^(l+1)
  for (int l = 0; l < 4; ++l) {
    for (int m = 0; m < 4; ++m) {
      double rn = 1, gn = 1;
      const double hm = std::pow(h, m);
      for (int n = 0; n < 4; ++n) {
        A[m] += p[16 * l + 4 * m + n] * rn * ql;
        B[l] += b[16 * l + 4 * m + n] * gn * hm;
        rn *= r;
        gn *= g;
      }
    }
    ql *= q;
  }
}

inline double poly3(const std::array<double, 4>& a, double x) { return a[0] + x * (a[1] + x * (a[2] + x * a[3])); }
}  // namespace

double AlbdfCorrelation::species_f(AlbdfSpecies s, double c, double tg, double tb, double pressure, double y) const {
  std::array<double, 4> A, B;
  collapse(*this, s, tg, tb, pressure, y, A, B);
  const double xi = std::log(c);
  const double xp = poly3(A, xi);
  const double P = s == AlbdfSpecies::CO ? poly3(B, xi) - xp : poly3(B, xi - xp);
  return 0.5 * std::tanh(P) + 0.5;
}

// --------------------------------------------------------------------------------------------

double AlbdfEval::species_f(const Species& s, double c) const {
  if (s.table) {
    double u = (std::log(c * s.inv_x) - kLnCmin) / kDlnC;
    u = std::clamp(u, 0.0, 70.0);
    const int ic = std::min(static_cast<int>(u), 69);
    const double cw = u - ic;
    double f = 0;
    for (int k = 0; k < s.ncorner; ++k) {
      const float* r = s.row[k];
      f += s.w[k] * (r[ic] + cw * (r[ic + 1] - r[ic]));
    }
    return f;
  }
  const double xi = std::log(c * s.inv_x);
  const double xp = poly3(s.A, xi);
  const double P = s.co ? poly3(s.B, xi) - xp : poly3(s.B, xi - xp);
  return 0.5 * std::tanh(P) + 0.5;
}

double AlbdfEval::f(double c) const {
  double f = 1.0;
  for (int k = 0; k < nsp_; ++k) f *= species_f(sp_[k], c);
  return f;
}

double AlbdfEval::inverse(double target, double c_lo, double c_hi) const {
  double lo = std::log(c_lo), hi = std::log(c_hi);
  double flo = f(c_lo) - target;
  if (flo >= 0) return c_lo;
  double fhi = f(c_hi) - target;
  if (fhi <= 0) return c_hi;
  int side = 0;
  for (int it = 0; it < 200; ++it) {
    double m = (lo * fhi - hi * flo) / (fhi - flo);
    if (!(m > lo && m < hi)) m = 0.5 * (lo + hi);
    const double fm = f(std::exp(m)) - target;
    if (fm > 0) {
      hi = m;
      fhi = fm;
      if (side == 1) flo *= 0.5;
      side = 1;
    } else if (fm < 0) {
      lo = m;
      flo = fm;
      if (side == -1) fhi *= 0.5;
      side = -1;
    } else {
      return std::exp(m);
    }
    if (std::abs(fm) < 1e-15) return std::exp(m);
    if (hi - lo < 1e-12 * (1.0 + std::abs(lo))) break;
  }
  return std::exp(0.5 * (lo + hi));
}

// --------------------------------------------------------------------------------------------

Albdf::Albdf(AlbdfTables tables, AlbdfCorrelation corr, Source source)
    : tables_(std::move(tables)), corr_(std::move(corr)), source_(source) {}

Albdf Albdf::load_default(const std::string& gasdata_dir, Source source) {
  return Albdf(AlbdfTables::load_default(gasdata_dir), AlbdfCorrelation::load_default(gasdata_dir), source);
}

AlbdfEval Albdf::at(const GasState& gas, double tb) const {
  AlbdfEval e;
  const bool use_table = source_ == Source::Table || (source_ == Source::Auto && std::abs(gas.pressure - 1.0) <= 1e-3);
  const double xs[3] = {gas.x_h2o, gas.x_co2, gas.x_co};
  int ig = 0, ib = 0;
  double tgw = 0, tbw = 0;
  if (use_table) {
    t_pos(gas.temperature, ig, tgw);
    t_pos(tb, ib, tbw);
  }
  for (int s = 0; s < 3; ++s) {
    if (!(xs[s] > 0)) continue;
    auto& sp = e.sp_[e.nsp_++];
    sp.inv_x = 1.0 / xs[s];
    sp.table = use_table;
    const auto spec = static_cast<AlbdfSpecies>(s);
    if (use_table) {
      const float* d = tables_.data(spec);
      int iy = 0, ny = 1;
      double yw = 0;
      if (spec == AlbdfSpecies::H2O) {
        y_pos(gas.x_h2o, iy, yw);
        ny = 2;
      }
      sp.ncorner = 0;
      for (int a = 0; a < ny; ++a) {
        for (int bg = 0; bg < 2; ++bg) {
          for (int bb = 0; bb < 2; ++bb) {
            const double w = (ny == 2 ? (a ? yw : 1 - yw) : 1.0) * (bg ? tgw : 1 - tgw) * (bb ? tbw : 1 - tbw);
            const std::size_t off = ((static_cast<std::size_t>(iy + a) * AlbdfTables::kNT + ig + bg) * AlbdfTables::kNT +
                                     ib + bb) *
                                    AlbdfTables::kNC;
            sp.row[sp.ncorner] = d + off;
            sp.w[sp.ncorner] = w;
            ++sp.ncorner;
          }
        }
      }
    } else {
      collapse(corr_, spec, gas.temperature, tb, gas.pressure, gas.x_h2o, sp.A, sp.B);
      sp.co = spec == AlbdfSpecies::CO;
    }
  }
  return e;
}

}  // namespace dgrte::gas
