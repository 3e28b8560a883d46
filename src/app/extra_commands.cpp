#include "app/commands.hpp"

namespace dgrte::app {
// The gas-property commands are registered here once src/gas provides them.
void add_extra_commands(CLI::App&) {}
}  // namespace dgrte::app
