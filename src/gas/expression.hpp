#pragma once
// A small compiled muparser expression of named double variables, for the gas library's case
// keys (profiles T(x), x_H2O(x), ... and gray-model kappa(T, P, ...)). Constants pi and sigma
// (Stefan-Boltzmann) are defined. Not thread-safe per object (muparser keeps state); copy it per
// thread.
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace dgrte::gas {

class Expression {
 public:
  // Compiles `text` with the variables `variables`. Throws InputError naming `where` (key path)
  // when the text does not parse or uses an unknown name.
  Expression(std::string text, std::vector<std::string> variables, std::string where);
  Expression(const Expression& other);
  Expression& operator=(const Expression& other);
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  // Values in the order of the variable names given at construction. Throws InputError (naming
  // the key) when the result is not finite.
  double operator()(std::span<const double> values) const;
  double operator()(double v) const { return (*this)(std::span<const double>(&v, 1)); }
  const std::string& text() const { return text_; }
  const std::string& where() const { return where_; }
  bool is_constant() const { return constant_; }

 private:
  struct Impl;
  void compile();
  std::string text_, where_;
  std::vector<std::string> variables_;
  std::unique_ptr<Impl> impl_;
  bool constant_ = false;
};

}  // namespace dgrte::gas
