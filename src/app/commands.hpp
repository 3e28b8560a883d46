#pragma once
// Sub-commands of the dgrte executable.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace dgrte::app {

// Splits argv for `dgrte run`: the first argument after `run` that starts with a single '-' and is
// longer than two characters (e.g. -ksp_monitor) begins the PETSc options; they and everything
// after go to PETSc, the rest to CLI11.
struct CommandLine {
  CommandLine(int argc, char** argv);
  int own_argc() const { return static_cast<int>(own.size()); }
  char** own_argv() { return own.data(); }
  std::vector<char*> own, petsc;  // petsc[0] is the program name
  int exit_code = 0;
};

void add_run_command(CLI::App& app, CommandLine& cmd);
void add_mesh_info_command(CLI::App& app);
// Commands of other modules (gas properties, 1-D slab solver).
void add_extra_commands(CLI::App& app);
// `dgrte devices` and `dgrte export CASE -o FILE` (device_commands.cpp).
void add_device_commands(CLI::App& app);

}  // namespace dgrte::app
