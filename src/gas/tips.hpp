#pragma once
// TIPS-2021 total internal partition sums Q(T) and the HITRAN isotopologue table (abundance, molar
// mass) for H2O (M=1), CO2 (M=2), CO (M=5), read from gasdata/lbl/tips/ (see PROVENANCE.md §3b).
// Q(T) is interpolated with 4-point Lagrange interpolation on the tabulated grid (as HAPI does).
#include <string>
#include <vector>

namespace dgrte::gas {

struct Isotopologue {
  int molecule = 0;       // HITRAN molecule number (1 H2O, 2 CO2, 5 CO)
  int local_id = 0;       // HITRAN local isotopologue number (1..12)
  std::string name;       // e.g. "(12C)(16O)"
  double abundance = 0;   // terrestrial abundance (already included in HITRAN S)
  double molar_mass = 0;  // g/mol
};

class TipsTable {
 public:
  // tips_csv: columns M, I, T, Q; iso_csv: M, I, global_iso_id, isotopologue, abundance, molar_mass, molecule.
  // Throws dgrte::InputError naming file and line on bad content.
  static TipsTable load(const std::string& tips_csv, const std::string& iso_csv);
  // Loads <gasdata_dir>/lbl/tips/tips2021_H2O_CO2_CO.csv and hitran_isotopologues_H2O_CO2_CO.csv.
  static TipsTable load_default(const std::string& gasdata_dir);

  // Dense index of (molecule, local isotopologue) in this table, or -1 if unknown.
  int index(int molecule, int local_id) const;
  int size() const { return static_cast<int>(isos_.size()); }
  const Isotopologue& isotopologue(int idx) const { return isos_[idx]; }

  // Q(T) of the isotopologue with dense index idx; throws InputError outside the tabulated range.
  double q(int idx, double temperature) const;
  double q(int molecule, int local_id, double temperature) const;
  double t_min(int idx) const { return t_[idx].front(); }
  double t_max(int idx) const { return t_[idx].back(); }

 private:
  std::vector<Isotopologue> isos_;
  std::vector<std::vector<double>> t_, q_;  // per isotopologue, ascending T
};

}  // namespace dgrte::gas
