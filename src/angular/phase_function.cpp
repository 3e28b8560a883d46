#include "angular/phase_function.hpp"

#include "common/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace dgrte::angular {
namespace {

double legendre_series(const std::vector<double>& a, double mu) {
  double p0 = 1, p1 = mu, s = a[0];
  if (a.size() > 1) s += a[1] * mu;
  for (std::size_t n = 2; n < a.size(); ++n) {
    const double p2 = ((2.0 * n - 1) * mu * p1 - (n - 1.0) * p0) / static_cast<double>(n);
    s += a[n] * p2;
    p0 = p1;
    p1 = p2;
  }
  return s;
}

}  // namespace

double PhaseFunction::operator()(double mu) const {
  switch (type) {
    case Type::isotropic: return 1.0;
    case Type::henyey_greenstein: return (1 - g * g) / std::pow(1 + g * g - 2 * g * mu, 1.5);
    case Type::linear:
    case Type::legendre: return legendre_series(a, mu);
  }
  return 1.0;
}

double PhaseFunction::asymmetry() const {
  if (type == Type::henyey_greenstein) return g;
  if ((type == Type::linear || type == Type::legendre) && a.size() > 1) return a[1] / 3;
  return 0;
}

bool PhaseFunction::is_isotropic() const {
  if (type == Type::isotropic) return true;
  if (type == Type::henyey_greenstein) return g == 0;
  for (std::size_t n = 1; n < a.size(); ++n)
    if (a[n] != 0) return false;
  return true;
}

PhaseFunction isotropic() { return {}; }

PhaseFunction linear_anisotropic(double a1) {
  if (!(std::abs(a1) <= 1)) throw InputError(fmt::format("linear phase function 1 + a1 mu with a1 = {} is negative; need |a1| <= 1", a1));
  PhaseFunction p;
  p.type = PhaseFunction::Type::linear;
  p.name = fmt::format("linear a1={}", a1);
  p.a = {1.0, a1};
  return p;
}

PhaseFunction henyey_greenstein(double g) {
  if (!(std::abs(g) < 1)) throw InputError(fmt::format("Henyey-Greenstein asymmetry g = {} must satisfy |g| < 1", g));
  PhaseFunction p;
  p.type = PhaseFunction::Type::henyey_greenstein;
  p.name = fmt::format("Henyey-Greenstein g={}", g);
  p.g = g;
  return p;
}

PhaseFunction legendre(std::vector<double> a, std::string name) {
  if (a.empty() || std::abs(a[0] - 1) > 1e-12)
    throw InputError(fmt::format("Legendre phase function: a0 = {} but the normalisation needs a0 = 1", a.empty() ? 0.0 : a[0]));
  PhaseFunction p;
  p.type = PhaseFunction::Type::legendre;
  p.name = std::move(name);
  p.a = std::move(a);
  double worst = 1e300, at = 0;
  for (int i = 0; i <= 20000; ++i) {
    const double mu = -1 + i / 10000.0, v = p(mu);
    if (v < worst) worst = v, at = mu;
  }
  if (worst < -1e-12)
    throw InputError(fmt::format("{}: the phase function is negative (min {:.4g} at cos(angle) = {:.4g}); check the coefficients", p.name,
                                 worst, at));
  return p;
}

PhaseFunction kim_lee(const std::string& name) {
  static const std::map<std::string, std::vector<double>> kCoefficients{
      {"F1", {1.0, 2.53602, 3.56549, 3.97976, 4.00292, 3.66401, 3.01601, 2.23304, 1.30351, 0.53463, 0.20136, 0.05480, 0.01099}},
      {"F2", {1.0, 2.00917, 1.56339, 0.67407, 0.22215, 0.04725, 0.00671, 0.00068, 0.00005}},
      {"F3", {1.0, 1.20000, 0.50000}},
      {"B1", {1.0, -0.56524, 0.29783, 0.08571, 0.01003, 0.00063}},
      {"B2", {1.0, -1.20000, 0.50000}}};
  const auto it = kCoefficients.find(name);
  if (it == kCoefficients.end()) throw InputError(fmt::format("unknown Kim & Lee phase function '{}'; use F1, F2, F3, B1 or B2", name));
  return legendre(it->second, fmt::format("Kim & Lee (1988) {}", name));
}

}  // namespace dgrte::angular
