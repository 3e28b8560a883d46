#include "gas/expression.hpp"

#include <muParser.h>

#include <cmath>
#include <fmt/format.h>

#include "common/error.hpp"
#include "gas/gas_common.hpp"

namespace dgrte::gas {

struct Expression::Impl {
  mu::Parser parser;
  std::vector<double> values;
};

Expression::Expression(std::string text, std::vector<std::string> variables, std::string where)
    : text_(std::move(text)), where_(std::move(where)), variables_(std::move(variables)) {
  compile();
}

void Expression::compile() {
  impl_ = std::make_unique<Impl>();
  impl_->values.assign(variables_.size(), 0.0);
  try {
    impl_->parser.DefineConst("pi", kPi);
    impl_->parser.DefineConst("sigma", kSigma);
    for (std::size_t i = 0; i < variables_.size(); ++i) impl_->parser.DefineVar(variables_[i], &impl_->values[i]);
    impl_->parser.SetExpr(text_);
    // Parse now (Eval compiles) so that syntax errors and unknown names surface at load time.
    (void)impl_->parser.Eval();
    constant_ = impl_->parser.GetUsedVar().empty();
  } catch (const mu::Parser::exception_type& e) {
    std::string vars;
    for (const auto& v : variables_) vars += (vars.empty() ? "" : ", ") + v;
    throw InputError(fmt::format("{}: cannot parse expression \"{}\": {}. Allowed variables: {}{}; constants pi, sigma.",
                                 where_, text_, e.GetMsg(), vars.empty() ? "none" : vars, ""));
  }
}

Expression::Expression(const Expression& o) : text_(o.text_), where_(o.where_), variables_(o.variables_) { compile(); }
Expression& Expression::operator=(const Expression& o) {
  if (this != &o) {
    text_ = o.text_;
    where_ = o.where_;
    variables_ = o.variables_;
    compile();
  }
  return *this;
}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

double Expression::operator()(std::span<const double> values) const {
  for (std::size_t i = 0; i < impl_->values.size() && i < values.size(); ++i) impl_->values[i] = values[i];
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
    throw InputError(fmt::format("{}: expression \"{}\" is not finite at {}; fix the expression.", where_, text_, at));
  }
  return r;
}

}  // namespace dgrte::gas
