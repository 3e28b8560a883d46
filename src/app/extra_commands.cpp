#include "app/commands.hpp"
#include "gas/gas_cli.hpp"

namespace dgrte::app {
// Commands of other modules: gas properties (`dgrte gas ...`) and the exact 1-D slab solver.
void add_extra_commands(CLI::App& app) { gas::add_gas_commands(app); }
}  // namespace dgrte::app
