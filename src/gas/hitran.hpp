#pragma once
// Reader for HITRAN / HITEMP line lists in the 160-character fixed-column ".par" format (HITRAN2004+).
// Files of any size are streamed line by line; lines outside the wavenumber window, of unwanted
// molecules/isotopologues or below the intensity cut-off are skipped before they are stored.
// A malformed record throws dgrte::InputError naming the file and the 1-based line number.
//
// Columns used (0-based character offsets): molecule 0-1 (I2), isotopologue 2 (I1; '0' = 10, 'A' = 11,
// 'B' = 12), nu 3-14 (F12.6, cm^-1), S 15-24 (E10.3, cm^-1/(molecule cm^-2) at 296 K, includes the
// isotopic abundance), A 25-34, gamma_air 35-39 (F5.4, cm^-1/atm HWHM at 296 K), gamma_self 40-44
// (F5.3), E'' 45-54 (F10.4, cm^-1), n_air 55-58 (F4.2), delta_air 59-66 (F8.6, cm^-1/atm).
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace dgrte::gas {

struct ParFilter {
  double nu_min = 0;                                        // cm^-1, inclusive
  double nu_max = std::numeric_limits<double>::infinity();  // cm^-1, inclusive
  double min_intensity_296 = 0;   // drop lines with HITRAN S(296 K) below this [cm^-1/(molecule cm^-2)]
  std::vector<int> molecules;     // HITRAN molecule numbers to keep; empty = all
  std::vector<int> isotopologues; // local isotopologue numbers to keep; empty = all
};

// One transition, as in the .par record.
struct HitranLine {
  int molecule = 0;
  int isotopologue = 0;  // local id 1..12
  double nu = 0;         // cm^-1
  double intensity = 0;  // S(296 K), cm^-1/(molecule cm^-2)
  double einstein_a = 0;
  double gamma_air = 0;  // cm^-1/atm
  double gamma_self = 0; // cm^-1/atm
  double elower = 0;     // cm^-1
  double n_air = 0;
  double delta_air = 0;  // cm^-1/atm
};

// Parses one record; throws InputError("<file>:<line_no>: ...") if it is malformed.
HitranLine parse_par_record(const std::string& record, const std::string& file, long line_no);

// Line list in structure-of-arrays form, sorted by nu after finalize().
struct LineList {
  std::vector<int> molecule, isotopologue;
  std::vector<double> nu, intensity, gamma_air, gamma_self, elower, n_air, delta_air;

  std::size_t size() const { return nu.size(); }
  void push_back(const HitranLine& l);
  void append(const LineList& other);
  void sort_by_wavenumber();
};

// Streams `path` and appends the records passing `filter` to `out`; returns the number kept.
std::size_t read_par_file(const std::string& path, const ParFilter& filter, LineList& out);

// Reads several files, then sorts by wavenumber.
LineList read_par_files(const std::vector<std::string>& paths, const ParFilter& filter);

}  // namespace dgrte::gas
