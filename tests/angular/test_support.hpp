#pragma once
// Helpers shared by the angular tests: the reference tables under tests/angular/data.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dgrte::angular::testing {

inline std::filesystem::path data_dir() {
#ifdef DGRTE_SOURCE_DIR
  return std::filesystem::path(DGRTE_SOURCE_DIR) / "tests" / "angular" / "data";
#else
  return std::filesystem::path(__FILE__).parent_path() / "data";
#endif
}

// A CSV table with a header line, as rows of column name -> number (non-numeric cells are skipped).
inline std::vector<std::map<std::string, double>> read_table(const std::string& name) {
  std::ifstream in(data_dir() / name);
  if (!in)
    throw std::runtime_error("cannot open test table " + (data_dir() / name).string() +
                             " (run from the source root, or compile with -DDGRTE_SOURCE_DIR=\"<root>\")");
  std::string line, cell;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream ss(line); std::getline(ss, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, double>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::map<std::string, double> row;
    std::stringstream ss(line);
    for (std::size_t k = 0; k < header.size() && std::getline(ss, cell, ','); ++k) try {
        std::size_t used = 0;
        const double v = std::stod(cell, &used);
        if (used == cell.size()) row[header[k]] = v;
      } catch (const std::exception&) {
      }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace dgrte::angular::testing
