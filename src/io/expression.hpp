#pragma once
// A compiled muparser expression of named double variables (x, y, z, sx, sy, sz, ...).
// The constants pi and sigma (Stefan-Boltzmann) are defined; see docs/case-file.md. Not
// thread-safe per object (muparser binds variables by address): copy it per thread.
#include "common/constants.hpp"
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace dgrte::io {

class Expression {
 public:
  // Compiles `text` with the given variable names. Throws InputError naming `where` (the case-file
  // key path) if the expression does not parse or uses a variable that is not allowed there.
  Expression(std::string text, std::vector<std::string> variables, std::string where);
  Expression(const Expression& other);
  Expression& operator=(const Expression& other);
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  // Evaluates with values in the order of the variable names given at construction. A result
  // that is not finite is an InputError naming `where` and the variable values.
  double operator()(std::span<const double> values) const;
  double operator()(double v) const { return (*this)(std::span<const double>(&v, 1)); }
  // Shorthands for expressions of (x, y, z) and of (x, y, z, sx, sy, sz).
  double operator()(const std::array<double, 3>& x) const { return (*this)(std::span<const double>(x)); }
  double operator()(const std::array<double, 3>& x, const std::array<double, 3>& s) const {
    const std::array<double, 6> v{x[0], x[1], x[2], s[0], s[1], s[2]};
    return (*this)(std::span<const double>(v));
  }
  const std::string& text() const { return text_; }
  const std::string& where() const { return where_; }
  // True if the expression does not depend on any variable (then evaluated once).
  bool is_constant() const { return constant_; }

 private:
  struct Impl;
  std::string text_, where_;
  std::vector<std::string> variables_;
  std::unique_ptr<Impl> impl_;
  bool constant_ = false;
  double constant_value_ = 0;
};

using dgrte::kStefanBoltzmann;  // common/constants.hpp
using dgrte::kPi;

}  // namespace dgrte::io
