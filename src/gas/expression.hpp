#pragma once
// The gas library's case keys (profiles T(x), x_H2O(x), ..., gray-model kappa(T, P, ...)) use the
// project's one muparser expression class.
#include "io/expression.hpp"

namespace dgrte::gas {
using io::Expression;
}  // namespace dgrte::gas
