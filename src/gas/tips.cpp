#include "gas/tips.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "gas/gas_common.hpp"

namespace dgrte::gas {
namespace {
// Rows of a staged CSV table without its header line (the column names).
std::vector<DataRow> csv_body(const std::string& file, std::size_t columns, const char* names) {
  auto rows = read_data_rows(file, ',');
  if (!rows.empty()) rows.erase(rows.begin());
  for (const auto& r : rows) {
    if (r.fields.size() < columns)
      throw InputError(fmt::format("{}:{}: expected {} columns ({})", file, r.line, columns, names));
  }
  return rows;
}

int to_int(const DataRow& r, std::size_t i, const std::string& file, const char* what) {
  return static_cast<int>(parse_number(r.fields[i], file, r.line, what));
}
}  // namespace

TipsTable TipsTable::load(const std::string& tips_csv, const std::string& iso_csv) {
  TipsTable tab;
  std::map<std::pair<int, int>, int> idx;
  for (const auto& r : csv_body(iso_csv, 7, "M,I,global_id,name,abundance,mass,molecule")) {
    Isotopologue iso;
    iso.molecule = to_int(r, 0, iso_csv, "M");
    iso.local_id = to_int(r, 1, iso_csv, "I");
    iso.name = r.fields[3];
    iso.abundance = parse_number(r.fields[4], iso_csv, r.line, "abundance");
    iso.molar_mass = parse_number(r.fields[5], iso_csv, r.line, "molar mass");
    idx[{iso.molecule, iso.local_id}] = static_cast<int>(tab.isos_.size());
    tab.isos_.push_back(iso);
  }
  tab.t_.resize(tab.isos_.size());
  tab.q_.resize(tab.isos_.size());
  for (const auto& r : csv_body(tips_csv, 4, "M,I,T,Q")) {
    const int m = to_int(r, 0, tips_csv, "M");
    const int i = to_int(r, 1, tips_csv, "I");
    auto it = idx.find({m, i});
    if (it == idx.end()) {
      throw InputError(fmt::format("{}:{}: isotopologue M={} I={} is not in {}", tips_csv, r.line, m, i, iso_csv));
    }
    const double t = parse_number(r.fields[2], tips_csv, r.line, "T");
    const double q = parse_number(r.fields[3], tips_csv, r.line, "Q");
    auto& tv = tab.t_[it->second];
    if (!tv.empty() && t <= tv.back()) {
      throw InputError(fmt::format("{}:{}: temperatures of M={} I={} must increase", tips_csv, r.line, m, i));
    }
    tv.push_back(t);
    tab.q_[it->second].push_back(q);
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
