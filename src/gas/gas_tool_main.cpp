// Standalone driver exposing the gas commands exactly as the dgrte executable does:
//   dgrte_gas_tool gas emissivity --T 1000 --xh2o 0.2 --xco2 0.1 --L 1 --model snbck
//   dgrte_gas_tool slab case.yaml -o out
#include <iostream>

#include "common/error.hpp"
#include "gas/gas_cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dgrte gas tools (standalone driver)", "dgrte"};
  app.require_subcommand(1);
  dgrte::gas::add_gas_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const dgrte::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const dgrte::SolverError& e) {
    std::cerr << "solver error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
