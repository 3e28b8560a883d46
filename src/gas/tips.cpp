#include "gas/tips.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include "common/error.hpp"

namespace dgrte::gas {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(line);
  while (std::getline(is, cur, ',')) {
    while (!cur.empty() && (cur.back() == '\r' || cur.back() == ' ')) cur.pop_back();
    out.push_back(cur);
  }
  return out;
}

double to_double(const std::string& s, const std::string& file, long line_no, const char* what) {
  double v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  while (b < e && *b == ' ') ++b;
  if (b < e && *b == '+') ++b;
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || ptr != e) {
    throw InputError(fmt::format("{}:{}: cannot read {} from '{}'; the file must be the CSV staged in gasdata/lbl/tips",
                                 file, line_no, what, s));
  }
  return v;
}

}  // namespace

TipsTable TipsTable::load(const std::string& tips_csv, const std::string& iso_csv) {
  TipsTable tab;
  std::map<std::pair<int, int>, int> idx;
  {
    std::ifstream in(iso_csv);
    if (!in) throw InputError(fmt::format("{}: cannot open the HITRAN isotopologue table; check the gasdata directory", iso_csv));
    std::string line;
    long no = 0;
    bool header_seen = false;
    while (std::getline(in, line)) {
      ++no;
      if (line.empty() || line[0] == '#') continue;
      if (!header_seen) {
        header_seen = true;  // column names
        continue;
      }
      auto f = split_csv(line);
      if (f.size() < 7) throw InputError(fmt::format("{}:{}: expected 7 columns (M,I,global_id,name,abundance,mass,molecule)", iso_csv, no));
      Isotopologue iso;
      iso.molecule = static_cast<int>(to_double(f[0], iso_csv, no, "M"));
      iso.local_id = static_cast<int>(to_double(f[1], iso_csv, no, "I"));
      iso.name = f[3];
      iso.abundance = to_double(f[4], iso_csv, no, "abundance");
      iso.molar_mass = to_double(f[5], iso_csv, no, "molar mass");
      idx[{iso.molecule, iso.local_id}] = static_cast<int>(tab.isos_.size());
      tab.isos_.push_back(iso);
    }
  }
  tab.t_.resize(tab.isos_.size());
  tab.q_.resize(tab.isos_.size());
  {
    std::ifstream in(tips_csv);
    if (!in) throw InputError(fmt::format("{}: cannot open the TIPS partition-sum table; check the gasdata directory", tips_csv));
    std::string line;
    long no = 0;
    bool header_seen = false;
    while (std::getline(in, line)) {
      ++no;
      if (line.empty() || line[0] == '#') continue;
      if (!header_seen) {
        header_seen = true;
        continue;
      }
      auto f = split_csv(line);
      if (f.size() < 4) throw InputError(fmt::format("{}:{}: expected 4 columns M,I,T,Q", tips_csv, no));
      const int m = static_cast<int>(to_double(f[0], tips_csv, no, "M"));
      const int i = static_cast<int>(to_double(f[1], tips_csv, no, "I"));
      auto it = idx.find({m, i});
      if (it == idx.end()) {
        throw InputError(fmt::format("{}:{}: isotopologue M={} I={} is not in {}", tips_csv, no, m, i, iso_csv));
      }
      const double t = to_double(f[2], tips_csv, no, "T");
      const double q = to_double(f[3], tips_csv, no, "Q");
      auto& tv = tab.t_[it->second];
      if (!tv.empty() && t <= tv.back()) {
        throw InputError(fmt::format("{}:{}: temperatures of M={} I={} must increase", tips_csv, no, m, i));
      }
      tv.push_back(t);
      tab.q_[it->second].push_back(q);
    }
  }
  for (std::size_t k = 0; k < tab.isos_.size(); ++k) {
    if (tab.t_[k].size() < 4) {
      throw InputError(fmt::format("{}: isotopologue M={} I={} has fewer than 4 partition-sum values", tips_csv,
                                   tab.isos_[k].molecule, tab.isos_[k].local_id));
    }
  }
  return tab;
}

TipsTable TipsTable::load_default(const std::string& gasdata_dir) {
  return load(gasdata_dir + "/lbl/tips/tips2021_H2O_CO2_CO.csv", gasdata_dir + "/lbl/tips/hitran_isotopologues_H2O_CO2_CO.csv");
}

int TipsTable::index(int molecule, int local_id) const {
  for (std::size_t k = 0; k < isos_.size(); ++k) {
    if (isos_[k].molecule == molecule && isos_[k].local_id == local_id) return static_cast<int>(k);
  }
  return -1;
}

double TipsTable::q(int molecule, int local_id, double temperature) const {
  const int k = index(molecule, local_id);
  if (k < 0) throw InputError(fmt::format("TIPS: no partition sum for molecule {} isotopologue {}", molecule, local_id));
  return q(k, temperature);
}

double TipsTable::q(int k, double temperature) const {
  const auto& t = t_[k];
  const auto& q = q_[k];
  if (!(temperature >= t.front() && temperature <= t.back())) {
    throw InputError(fmt::format("TIPS: temperature {} K outside the partition-sum table [{}, {}] K of molecule {} isotopologue {}",
                                 temperature, t.front(), t.back(), isos_[k].molecule, isos_[k].local_id));
  }
  // interval i: t[i] <= T < t[i+1]; 4-point stencil i-1..i+2 shifted inside the table
  auto it = std::upper_bound(t.begin(), t.end(), temperature);
  long i = static_cast<long>(it - t.begin()) - 1;
  const long n = static_cast<long>(t.size());
  long s = std::clamp(i - 1, 0L, n - 4);
  double r = 0;
  for (long a = s; a < s + 4; ++a) {
    double l = 1;
    for (long b = s; b < s + 4; ++b) {
      if (b != a) l *= (temperature - t[b]) / (t[a] - t[b]);
    }
    r += l * q[a];
  }
  return r;
}

}  // namespace dgrte::gas
