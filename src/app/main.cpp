// dgrte: discontinuous-Galerkin radiative transfer. Command-line entry point; every error is
// caught here once and printed as one message. Exit codes: 0 success, 1 bad input, 2 usage,
// 3 solver failure, 4 internal error.
#include "app/commands.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"dgrte — radiative transfer in 3-D participating media (nodal DG on tetrahedra)", "dgrte"};
  app.set_version_flag("--version", std::string("dgrte ") + dgrte::kVersion);
  app.require_subcommand(1);
  dgrte::app::CommandLine cmd{argc, argv};
  dgrte::app::add_run_command(app, cmd);
  dgrte::app::add_mesh_info_command(app);
  dgrte::app::add_extra_commands(app);
  try {
    app.parse(cmd.own_argc(), cmd.own_argv());
    return cmd.exit_code;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help / --version exit 0; usage errors 2
  } catch (const std::exception&) {
    return dgrte::report_exception("dgrte");
  }
}
