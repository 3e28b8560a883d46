#pragma once
// Exception types of dgrte. Every user-facing failure is one of these, caught once in main().
#include <stdexcept>
#include <string>

namespace dgrte {

// Bad input: a case file, mesh or data file that cannot be used as given. The message names the
// file and the key, line or entity, and says what to do.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A numerical failure: non-convergence, breakdown, NaN.
class SolverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dgrte
