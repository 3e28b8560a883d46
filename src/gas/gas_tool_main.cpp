// Standalone driver exposing the gas commands exactly as the dgrte executable does:
//   dgrte_gas_tool gas emissivity --T 1000 --xh2o 0.2 --xco2 0.1 --L 1 --model snbck
//   dgrte_gas_tool slab case.yaml -o out
#include "common/error.hpp"
#include "gas/gas_cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dgrte gas tools (standalone driver)", "dgrte"};
  app.require_subcommand(1);
  dgrte::gas::add_gas_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception&) {
    return dgrte::report_exception("dgrte_gas_tool");
  }
  return 0;
}
