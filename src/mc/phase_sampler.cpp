#include "mc/phase_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace dgrte::mc {
namespace {

constexpr int kTable = 2048;

// (1/2) integral_{-1}^{mu} sum_n a_n P_n: Bonnet's recursion for P_n, and
// integral_{-1}^{mu} P_n = (P_{n+1} - P_{n-1}) / (2n + 1) for n >= 1.
double legendre_cdf(const std::vector<double>& a, double mu) {
  const std::size_t N = a.size();
  std::array<double, 64> fixed{};  // no allocation in the sampling loop for the usual series
  std::vector<double> heap(N + 1 > fixed.size() ? N + 1 : 0);
  double* P = N + 1 > fixed.size() ? heap.data() : fixed.data();
  P[0] = 1;
  if (N >= 1) P[1] = mu;
  for (std::size_t n = 1; n + 1 <= N; ++n)
    P[n + 1] = ((2.0 * static_cast<double>(n) + 1) * mu * P[n] - static_cast<double>(n) * P[n - 1]) / static_cast<double>(n + 1);
  double s = mu + 1;
  for (std::size_t n = 1; n < N; ++n) s += a[n] * (P[n + 1] - P[n - 1]) / (2.0 * static_cast<double>(n) + 1);
  return 0.5 * s;
}

}  // namespace

PhaseSampler::PhaseSampler(const angular::PhaseFunction& phase) : phase_(phase) {
  using T = angular::PhaseFunction::Type;
  if (phase_.type == T::linear || phase_.type == T::legendre) {
    table_.resize(kTable + 1);
    for (int k = 0; k <= kTable; ++k) table_[static_cast<std::size_t>(k)] = cdf(-1.0 + 2.0 * k / kTable);
  }
}

double PhaseSampler::cdf(double mu) const {
  using T = angular::PhaseFunction::Type;
  switch (phase_.type) {
    case T::isotropic: return 0.5 * (mu + 1);
    case T::henyey_greenstein: {
      const double g = phase_.g;
      if (std::abs(g) < 1e-12) return 0.5 * (mu + 1);
      // (1 - g^2)/(2g) [ (1 + g^2 - 2 g mu)^(-1/2) - 1/(1 + g) ]
      return (1 - g * g) / (2 * g) * (1 / std::sqrt(1 + g * g - 2 * g * mu) - 1 / (1 + g));
    }
    case T::linear:
    case T::legendre: return legendre_cdf(phase_.a, mu);
  }
  return 0;
}

double PhaseSampler::cosine(double u) const {
  using T = angular::PhaseFunction::Type;
  switch (phase_.type) {
    case T::isotropic: return 2 * u - 1;
    case T::henyey_greenstein: {
      const double g = phase_.g;
      if (std::abs(g) < 1e-12) return 2 * u - 1;
      const double f = (1 - g * g) / (1 - g + 2 * g * u);
      return std::clamp((1 + g * g - f * f) / (2 * g), -1.0, 1.0);
    }
    case T::linear:
    case T::legendre: break;
  }
  // Bracket from the table, then Newton on cdf(mu) = u safeguarded by bisection.
  const auto it = std::upper_bound(table_.begin(), table_.end(), u);
  const auto k = static_cast<int>(std::clamp<std::ptrdiff_t>(it - table_.begin() - 1, 0, kTable - 1));
  double lo = -1.0 + 2.0 * k / kTable, hi = -1.0 + 2.0 * (k + 1) / kTable;
  double mu = 0.5 * (lo + hi);
  for (int iter = 0; iter < 60; ++iter) {
    const double r = cdf(mu) - u;
    if (r > 0) hi = mu; else lo = mu;
    const double pdf = 0.5 * phase_(mu);
    double next = pdf > 0 ? mu - r / pdf : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - mu) <= 1e-15 || hi - lo <= 1e-15) return next;
    mu = next;
  }
  return mu;
}

std::array<double, 3> scatter_direction(const std::array<double, 3>& d, double mu, double u) {
  const double phi = 2 * std::numbers::pi * u;
  const double st = std::sqrt(std::max(0.0, 1 - mu * mu));
  // Orthonormal frame (t1, t2, d) (Duff et al. 2017, "Building an orthonormal basis, revisited").
  const double sign = std::copysign(1.0, d[2]);
  const double a = -1.0 / (sign + d[2]);
  const double b = d[0] * d[1] * a;
  const std::array<double, 3> t1{1 + sign * d[0] * d[0] * a, sign * b, -sign * d[0]};
  const std::array<double, 3> t2{b, sign + d[1] * d[1] * a, -d[1]};
  const double c = st * std::cos(phi), s = st * std::sin(phi);
  return {c * t1[0] + s * t2[0] + mu * d[0], c * t1[1] + s * t2[1] + mu * d[1], c * t1[2] + s * t2[2] + mu * d[2]};
}

}  // namespace dgrte::mc
