#pragma once
// Exception types of dgrte. Every user-facing failure is one of these, caught once in main().
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

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

// Call inside a catch block in main(): prints the current exception once, prefixed by `program`,
// and returns the exit code of the CLI contract (1 bad input, 3 solver failure, 4 internal error;
// 2, usage, is CLI11's).
inline int report_exception(std::string_view program) {
  try {
    throw;
  } catch (const InputError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  } catch (const SolverError& e) {
    std::cerr << program << ": solver failed: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << "\n(please report this with the case file)\n";
    return 4;
  }
}

}  // namespace dgrte
