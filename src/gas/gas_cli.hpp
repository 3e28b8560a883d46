#pragma once
// Command-line front end of the gas library. add_gas_commands() adds to a CLI11 app:
//   gas emissivity | planck-mean | kdistribution | spectrum   (state options --T --P --xh2o --xco2
//       --xco --L --model --model-option KEY=VALUE --gasdata --json)
//   slab CASE.yaml [-o DIR]                                    (exact 1-D nongray slab solver)
// Callbacks throw dgrte::InputError on bad input; the application's main catches and prints it.
#include <CLI/CLI.hpp>

namespace dgrte::gas {

void add_gas_commands(CLI::App& app);

}  // namespace dgrte::gas
