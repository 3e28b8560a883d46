#pragma once
// `dgrte run`: one case file from mesh to outputs (solution.vtu, probes/*.csv, summary.json).
#include "mc/final_gather.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dgrte::app {

struct RunOptions {
  std::filesystem::path case_file;
  std::optional<std::filesystem::path> output_directory;  // -o overrides output.directory
  std::optional<bool> linear_vtk;                         // --linear
  bool progress = false;                                  // progress line on a terminal
  bool quiet = false;
  std::optional<std::string> backend;                     // --backend overrides solver.backend
  // The final gather's arrays, each gather's (dgrte export of a case with output.final_gather).
  std::function<void(const mc::GatherArrays&, const std::string& host_only)> gather_arrays = {};
};

// Runs the case and returns the summary that was written to summary.json.
nlohmann::json run_case(const RunOptions& options);

}  // namespace dgrte::app
