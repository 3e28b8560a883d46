#include "app/commands.hpp"
#include "gas/gas_cli.hpp"

namespace dgrte::app {
// Commands of other modules: gas properties (`dgrte gas ...`), the exact 1-D slab solver, and the
// OpenCL device commands (`dgrte devices`, `dgrte export`).
void add_extra_commands(CLI::App& app) {
  gas::add_gas_commands(app);
  add_device_commands(app);
}
}  // namespace dgrte::app
