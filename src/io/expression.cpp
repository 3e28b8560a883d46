#include "io/expression.hpp"

#include "common/error.hpp"

#include <fmt/format.h>
#include <muParser.h>

#include <algorithm>
#include <cmath>

namespace dgrte::io {

struct Expression::Impl {
  mu::Parser parser;
  mutable std::vector<double> values;  // muparser binds variables by address
};

namespace {
void compile(mu::Parser& parser, std::vector<double>& values, const std::string& text,
             const std::vector<std::string>& variables, const std::string& where) {
  values.assign(variables.size(), 0.0);
  try {
    parser.DefineConst("pi", kPi);
    parser.DefineConst("sigma", kStefanBoltzmann);
    for (std::size_t i = 0; i < variables.size(); ++i) parser.DefineVar(variables[i], &values[i]);
    parser.SetExpr(text);
    parser.Eval();  // forces parsing so that errors surface here, not at the first evaluation
  } catch (const mu::Parser::exception_type& e) {
    std::string allowed;
    for (const auto& v : variables) allowed += (allowed.empty() ? "" : ", ") + v;
    throw InputError(fmt::format("{}: cannot use expression \"{}\": {} (variables allowed here: {}; constants pi, sigma)",
                                 where, text, e.GetMsg(), allowed.empty() ? "none" : allowed));
  }
}
}  // namespace

Expression::Expression(std::string text, std::vector<std::string> variables, std::string where)
    : text_(std::move(text)), where_(std::move(where)), variables_(std::move(variables)), impl_(std::make_unique<Impl>()) {
  compile(impl_->parser, impl_->values, text_, variables_, where_);
  const bool constant = impl_->parser.GetUsedVar().empty();
  if (constant) constant_value_ = (*this)(std::vector<double>(variables_.size(), 0.0));  // checks finiteness
  constant_ = constant;
}

Expression::Expression(const Expression& other) : Expression(other.text_, other.variables_, other.where_) {}
Expression& Expression::operator=(const Expression& other) {
  if (this != &other) *this = Expression(other);
  return *this;
}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

double Expression::operator()(std::span<const double> values) const {
  if (constant_) return constant_value_;
  std::copy_n(values.begin(), std::min(values.size(), impl_->values.size()), impl_->values.begin());
  double r;
  try {
    r = impl_->parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    throw InputError(fmt::format("{}: cannot evaluate expression \"{}\": {}", where_, text_, e.GetMsg()));
  }
  if (!std::isfinite(r)) {
    std::string at;
    for (std::size_t i = 0; i < variables_.size() && i < values.size(); ++i)
      at += fmt::format("{}{}={}", at.empty() ? "" : ", ", variables_[i], values[i]);
    throw InputError(fmt::format("{}: expression \"{}\" is not finite{}{}; fix the expression", where_, text_,
                                 at.empty() ? "" : " at ", at));
  }
  return r;
}

}  // namespace dgrte::io
