#pragma once
// Test helpers: run a case given as YAML text through run_case, and read a probe CSV by column.
#include "dgrte/dgrte.hpp"
#include "common/error.hpp"
#include "io/case_file.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dgrte::test_support {

struct Run {
  nlohmann::json summary;
  std::filesystem::path out;
};

// Writes <tmp>/<folder>/<name>.yaml and runs it quietly into out_<name> (emptied first).
inline Run run_yaml(const std::string& folder, const std::string& name, const std::string& body) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / folder;
  fs::create_directories(dir);
  const auto file = dir / (name + ".yaml");
  std::ofstream(file) << body;
  dgrte::RunOptions opt;
  opt.case_file = file;
  opt.output_directory = dir / ("out_" + name);
  opt.quiet = true;
  fs::remove_all(*opt.output_directory);
  return {dgrte::run_case(opt), *opt.output_directory};
}

// The InputError message of parsing a case given as YAML text ("" if it parses).
inline std::string parse_error(const std::string& yaml) {
  try {
    io::parse_case(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Columns of a probe CSV by header name ('#' lines skipped).
inline std::map<std::string, std::vector<double>> read_csv(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line, header;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') {
      header = line;
      break;
    }
  std::vector<std::string> names;
  std::stringstream hs(header);
  for (std::string h; std::getline(hs, h, ',');) names.push_back(h);
  std::map<std::string, std::vector<double>> cols;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::string v;
    for (std::size_t i = 0; std::getline(ls, v, ','); ++i) cols[names[i]].push_back(std::stod(v));
  }
  return cols;
}

}  // namespace dgrte::test_support
