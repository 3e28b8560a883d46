#include "gas/wsgg.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "common/error.hpp"

namespace dgrte::gas {

namespace {
[[noreturn]] void bad_row(const std::filesystem::path& f, int line, const std::string& msg) {
  throw InputError(fmt::format("{}:{}: {}; the WSGG coefficient file is corrupt (see gasdata/PROVENANCE.md)", f.string(), line, msg));
}
void need_fields(const DataRow& r, std::size_t n, const std::filesystem::path& f) {
  if (r.fields.size() < n) bad_row(f, r.line, fmt::format("expected {} comma-separated fields, found {}", n, r.fields.size()));
}
}  // namespace

WsggModel::WsggModel(Variant v, const std::filesystem::path& dir, bool strict, std::string smith_set) : variant_(v) {
  if (v == Variant::Smith1982) {
    range_ = TemperatureRange(600, 2400, "wsgg-smith1982");
    const auto f = gasdata_file(dir, "wsgg/smith_shen_friedman_1982.csv");
    auto rows = read_data_rows(f, ',');
    std::array<int, 5> count{};
    for (const auto& r : rows) {
      need_fields(r, 8, f);
      if (r.fields[0] == "species") continue;
      const std::string key = r.fields[0] + "/" + r.fields[1];
      int set = key == "CO2/pc->0" ? 0 : key == "H2O/pw->0" ? 1 : key == "H2O/pw=1atm" ? 2 : key == "MIX/MR=1" ? 3 : key == "MIX/MR=2" ? 4 : -1;
      if (set < 0) bad_row(f, r.line, "unknown species/condition '" + key + "'");
      const int i = static_cast<int>(parse_number(r.fields[2], f, r.line, "gas index")) - 1;
      if (i < 0 || i > 2) bad_row(f, r.line, "gas index must be 1..3");
      smith_[set].kp[i] = parse_number(r.fields[3], f, r.line, "kappa_p");
      for (int j = 0; j < 4; ++j) smith_[set].b[i][j] = parse_number(r.fields[4 + j], f, r.line, "b coefficient");
      ++count[set];
    }
    for (int s = 0; s < 5; ++s)
      if (count[s] != 3) throw InputError(fmt::format("{}: expected 3 gray gases for each of the 5 sets; the file is incomplete", f.string()));
    const std::array<std::string, 5> names{"co2", "h2o-thin", "h2o-1atm", "mr1", "mr2"};
    if (smith_set != "auto") {
      auto it = std::find(names.begin(), names.end(), smith_set);
      if (it == names.end())
        throw InputError(fmt::format("model.set: unknown Smith WSGG set '{}'; use auto, co2, h2o-thin, h2o-1atm, mr1 or mr2", smith_set));
      smith_fixed_ = static_cast<int>(it - names.begin());
    }
  } else if (v == Variant::Bordbar2014) {
    range_ = TemperatureRange(300, 2400, "wsgg-bordbar2014");
    const auto f = gasdata_file(dir, "wsgg/bordbar_2014.csv");
    int nc = 0, nd = 0;
    for (const auto& r : read_data_rows(f, ',')) {
      need_fields(r, 5, f);
      if (r.fields[0] == "kind") continue;
      const int i = static_cast<int>(parse_number(r.fields[1], f, r.line, "i")) - 1;
      const int k = static_cast<int>(parse_number(r.fields[3], f, r.line, "k"));
      const double val = parse_number(r.fields[4], f, r.line, "value");
      if (i < 0 || i > 3 || k < 0 || k > 4) bad_row(f, r.line, "index out of range");
      if (r.fields[0] == "c") {
        const int j = static_cast<int>(parse_number(r.fields[2], f, r.line, "j"));
        if (j < 0 || j > 4) bad_row(f, r.line, "j out of range");
        bc_[i][j][k] = val;
        ++nc;
      } else if (r.fields[0] == "d") {
        bd_[i][k] = val;
        ++nd;
      } else {
        bad_row(f, r.line, "kind must be c or d");
      }
    }
    if (nc != 100 || nd != 20) throw InputError(fmt::format("{}: expected 100 c and 20 d coefficients, found {} and {}", f.string(), nc, nd));
    const auto f2 = gasdata_file(dir, "wsgg/bordbar_2020_pure_species_limits.csv");
    int np = 0;
    for (const auto& r : read_data_rows(f2, ',')) {
      need_fields(r, 3, f2);
      if (r.fields[0] == "species") continue;
      const int i = static_cast<int>(parse_number(r.fields[1], f2, r.line, "i"));
      if (i == 0) continue;
      need_fields(r, 8, f2);
      if (i < 1 || i > 4) bad_row(f2, r.line, "i out of range");
      auto& kk = r.fields[0] == "CO2" ? pure_k_co2_ : pure_k_h2o_;
      auto& bb = r.fields[0] == "CO2" ? pure_b_co2_ : pure_b_h2o_;
      if (r.fields[0] != "CO2" && r.fields[0] != "H2O") bad_row(f2, r.line, "species must be CO2 or H2O");
      kk[i - 1] = parse_number(r.fields[2], f2, r.line, "kappa");
      for (int j = 0; j < 5; ++j) bb[i - 1][j] = parse_number(r.fields[3 + j], f2, r.line, "b");
      ++np;
    }
    if (np != 8) throw InputError(fmt::format("{}: expected 4 gray gases per species", f2.string()));
  } else {
    range_ = TemperatureRange(400, 2500, "wsgg-cassol2014");
    const auto f = gasdata_file(dir, "wsgg/cassol_2014.csv");
    int n = 0;
    for (const auto& r : read_data_rows(f, ',')) {
      need_fields(r, 9, f);
      if (r.fields[0] == "species" || r.fields[0] == "soot") continue;
      const int i = static_cast<int>(parse_number(r.fields[2], f, r.line, "i")) - 1;
      if (i < 0 || i > 3) bad_row(f, r.line, "i out of range");
      if (r.fields[0] != "CO2" && r.fields[0] != "H2O") bad_row(f, r.line, "species must be CO2, H2O or soot");
      auto& kk = r.fields[0] == "CO2" ? cas_k_co2_ : cas_k_h2o_;
      auto& bb = r.fields[0] == "CO2" ? cas_b_co2_ : cas_b_h2o_;
      kk[i] = parse_number(r.fields[3], f, r.line, "kappa");
      for (int j = 0; j < 5; ++j) bb[i][j] = parse_number(r.fields[4 + j], f, r.line, "b");
      ++n;
    }
    if (n != 8) throw InputError(fmt::format("{}: expected 4 gray gases each for CO2 and H2O", f.string()));
  }
  range_.strict = strict;
}

std::string WsggModel::name() const {
  switch (variant_) {
    case Variant::Smith1982: return "wsgg-smith1982";
    case Variant::Bordbar2014: return "wsgg-bordbar2014";
    default: return "wsgg-cassol2014";
  }
}

int WsggModel::num_spectral_points() const { return variant_ == Variant::Smith1982 ? 4 : variant_ == Variant::Bordbar2014 ? 5 : 25; }

int WsggModel::smith_select(const GasState& s, double& pa) const {
  const double pw = s.x_h2o * s.pressure, pc = s.x_co2 * s.pressure;
  int set;
  if (smith_fixed_ >= 0) set = smith_fixed_;
  else if (pw <= 0) set = 0;
  else if (pc <= 0) set = pw < 0.5 ? 1 : 2;
  else set = pw / pc < 1.5 ? 3 : 4;
  pa = set == 0 ? pc : set <= 2 ? pw : pw + pc;
  return set;
}

void WsggModel::smith(const GasState& s, double t, std::span<double> kappa, std::span<double> a) const {
  double pa;
  const auto& set = smith_[smith_select(s, pa)];
  double sum = 0;
  for (int i = 0; i < 3; ++i) {
    const auto& b = set.b[i];
    a[i + 1] = b[0] + t * (b[1] + t * (b[2] + t * b[3]));
    kappa[i + 1] = set.kp[i] * pa;
    sum += a[i + 1];
  }
  a[0] = 1 - sum;
  kappa[0] = 0;
}

void WsggModel::bordbar(const GasState& s, double t, std::span<double> kappa, std::span<double> a) const {
  const double pw = s.x_h2o * s.pressure, pc = s.x_co2 * s.pressure;
  const double tr = t / 1200.0;
  const double mr = pc > 0 ? pw / pc : 1e30;
  const double m = std::clamp(mr, 0.01, 4.0);
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double ai = 0, trp = 1;
    for (int j = 0; j < 5; ++j) {
      double cij = 0, mp = 1;
      for (int k = 0; k < 5; ++k, mp *= m) cij += bc_[i][j][k] * mp;
      ai += cij * trp;
      trp *= tr;
    }
    double kp = 0, mp = 1;
    for (int k = 0; k < 5; ++k, mp *= m) kp += bd_[i][k] * mp;
    double ki = kp * (pw + pc);
    if (mr < 0.01) {  // blend towards pure CO2 (Bordbar, Fraga & Hostikka 2020, as radlib)
      const double f = (0.01 - mr) / 0.01;
      const auto& b = pure_b_co2_[i];
      const double ap = b[0] + tr * (b[1] + tr * (b[2] + tr * (b[3] + tr * b[4])));
      ki = f * pure_k_co2_[i] * pc + (1 - f) * ki;
      ai = f * ap + (1 - f) * ai;
    } else if (mr > 4.0) {  // blend towards pure H2O
      const double f = std::clamp((1e8 - mr) / (1e8 - 4.0), 0.0, 1.0);
      const auto& b = pure_b_h2o_[i];
      const double ap = b[0] + tr * (b[1] + tr * (b[2] + tr * (b[3] + tr * b[4])));
      ki = f * ki + (1 - f) * pure_k_h2o_[i] * pw;
      ai = f * ai + (1 - f) * ap;
    }
    a[i + 1] = ai;
    kappa[i + 1] = ki;
    sum += ai;
  }
  a[0] = 1 - sum;
  kappa[0] = 0;
}

void WsggModel::cassol(const GasState& s, double t, std::span<double> kappa, std::span<double> a) const {
  const double pw = s.x_h2o * s.pressure, pc = s.x_co2 * s.pressure;
  double aw[5], ac[5], kw[5], kc[5];
  aw[0] = ac[0] = 1;
  kw[0] = kc[0] = 0;
  for (int i = 0; i < 4; ++i) {
    const auto& bw = cas_b_h2o_[i];
    const auto& bc = cas_b_co2_[i];
    aw[i + 1] = bw[0] + t * (bw[1] + t * (bw[2] + t * (bw[3] + t * bw[4])));
    ac[i + 1] = bc[0] + t * (bc[1] + t * (bc[2] + t * (bc[3] + t * bc[4])));
    aw[0] -= aw[i + 1];
    ac[0] -= ac[i + 1];
    kw[i + 1] = cas_k_h2o_[i] * pw;
    kc[i + 1] = cas_k_co2_[i] * pc;
  }
  // Species absent: its gray gases carry no absorption; keep the weight structure (sum stays 1).
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      a[i * 5 + j] = (pw > 0 ? aw[i] : (i == 0 ? 1.0 : 0.0)) * (pc > 0 ? ac[j] : (j == 0 ? 1.0 : 0.0));
      kappa[i * 5 + j] = kw[i] + kc[j];
    }
}

void WsggModel::coefficients(const GasState& s, double tsource, std::span<double> kappa, std::span<double> a) const {
  const double t = range_.clamp(tsource);
  switch (variant_) {
    case Variant::Smith1982: smith(s, t, kappa, a); break;
    case Variant::Bordbar2014: bordbar(s, t, kappa, a); break;
    default: cassol(s, t, kappa, a); break;
  }
}

void WsggModel::absorption(int j, std::span<const GasState> states, std::span<double> kappa) const {
  double k[25], a[25];
  for (std::size_t i = 0; i < states.size(); ++i) {
    coefficients(states[i], states[i].temperature, std::span<double>(k, 25), std::span<double>(a, 25));
    kappa[i] = k[j];
  }
}

void WsggModel::emission_weight(int j, std::span<const GasState> states, std::span<const double> ts,
                                std::span<double> out) const {
  double k[25], a[25];
  for (std::size_t i = 0; i < states.size(); ++i) {
    coefficients(states[i], ts[i], std::span<double>(k, 25), std::span<double>(a, 25));
    out[i] = a[j];
  }
}

}  // namespace dgrte::gas
