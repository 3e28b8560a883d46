#include "angular/moments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dgrte::angular {
namespace {

constexpr double kPi = std::numbers::pi;

// The vector that multiplies the intensity of ordinate m in a flux: w s or s_bar.
Vec3 flux_vector(const Quadrature& q, std::size_t m, Weighting how) {
  if (how == Weighting::control_angle) return q.s_bar[m];
  return {q.w[m] * q.s[m][0], q.w[m] * q.s[m][1], q.w[m] * q.s[m][2]};
}

}  // namespace

double weight_sum(const Quadrature& q) {
  double sum = 0;
  for (double w : q.w) sum += w;
  return sum;
}

Vec3 first_moment(const Quadrature& q, Weighting how) {
  Vec3 m1{};
  for (std::size_t m = 0; m < q.size(); ++m) {
    const Vec3 f = flux_vector(q, m, how);
    for (std::size_t d = 0; d < 3; ++d) m1[d] += f[d];
  }
  return m1;
}

std::array<Vec3, 3> second_moment(const Quadrature& q, Weighting how) {
  std::array<Vec3, 3> m2{};
  for (std::size_t m = 0; m < q.size(); ++m) {
    const Vec3 f = flux_vector(q, m, how);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) m2[i][j] += f[i] * q.s[m][j];
  }
  return m2;
}

double half_range_flux(const Quadrature& q, const Vec3& n, Weighting how) {
  const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double flux = 0;
  for (std::size_t m = 0; m < q.size(); ++m) {
    if (q.s[m][0] * n[0] + q.s[m][1] * n[1] + q.s[m][2] * n[2] <= 0) continue;
    const Vec3 f = flux_vector(q, m, how);
    flux += (f[0] * n[0] + f[1] * n[1] + f[2] * n[2]) / len;
  }
  return flux;
}

std::string describe_moments(const Quadrature& q) {
  const Vec3 m1 = first_moment(q);
  const auto m2 = second_moment(q);
  double second = 0;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) second = std::max(second, std::abs(m2[i][j] - (i == j ? 4 * kPi / 3 : 0.0)) / (4 * kPi / 3));
  std::string half;
  for (int d = 0; d < 3; ++d)
    for (double sign : {1.0, -1.0}) {
      Vec3 n{};
      n[static_cast<std::size_t>(d)] = sign;
      half += fmt::format(" {}{} {:+.3e}", sign > 0 ? '+' : '-', "xyz"[d], half_range_flux(q, n) / kPi - 1);
    }
  return fmt::format("{}: {} ordinates; sum w/4pi - 1 = {:.2e}; |sum s_bar|/4pi = {:.2e}; max |sum s_bar s^T - (4pi/3) I| / (4pi/3) = "
                     "{:.2e}; half-range flux/pi - 1:{}",
                     q.name, q.size(), weight_sum(q) / (4 * kPi) - 1, std::hypot(m1[0], m1[1], m1[2]) / (4 * kPi), second, half);
}

}  // namespace dgrte::angular
