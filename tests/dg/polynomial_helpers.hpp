#pragma once
// Test helpers: monomials on the reference tet/triangle and their exact integrals, computed
// independently of the DG code via the Dirichlet formula on the unit simplex
// (int x^p y^q z^m = p! q! m! / (p+q+m+3)!). The binomial expansion of (2x-1)^a alternates in
// sign, so the sums are carried in quad precision where the compiler has it.
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "dg/reference_tet.hpp"

namespace dgrte::dg::testing {

#ifdef __SIZEOF_FLOAT128__
using ExactReal = __float128;
#else
using ExactReal = long double;
#endif

using Exponents = std::array<int, 3>;

// All (a,b,c) with a+b+c <= degree.
inline std::vector<Exponents> monomials_up_to(int degree) {
  std::vector<Exponents> out;
  for (int a = 0; a <= degree; ++a)
    for (int b = 0; b + a <= degree; ++b)
      for (int c = 0; a + b + c <= degree; ++c) out.push_back({a, b, c});
  return out;
}

// All (a,b,c) with a+b+c == degree.
inline std::vector<Exponents> monomials_of_degree(int degree) {
  std::vector<Exponents> out;
  for (const auto& e : monomials_up_to(degree))
    if (e[0] + e[1] + e[2] == degree) out.push_back(e);
  return out;
}

inline ExactReal factorial(int n) {
  ExactReal f = 1;
  for (int k = 2; k <= n; ++k) f *= k;
  return f;
}

// Coefficients of (2x-1)^a = sum_p coeff[p] x^p (the map from [0,1] to [-1,1]).
inline std::vector<ExactReal> shifted_power_coefficients(int a) {
  std::vector<ExactReal> coeff(a + 1);
  for (int p = 0; p <= a; ++p) {
    ExactReal power_of_two = 1;
    for (int k = 0; k < p; ++k) power_of_two *= 2;
    const ExactReal binomial = factorial(a) / (factorial(p) * factorial(a - p));
    coeff[p] = binomial * power_of_two * ((a - p) % 2 ? -1 : 1);
  }
  return coeff;
}

// Exact integral of r^a s^b t^c over the reference tetrahedron (volume 4/3).
inline double exact_tet_integral(const Exponents& e) {
  const auto ca = shifted_power_coefficients(e[0]);
  const auto cb = shifted_power_coefficients(e[1]);
  const auto cc = shifted_power_coefficients(e[2]);
  ExactReal sum = 0;
  for (int p = 0; p <= e[0]; ++p)
    for (int q = 0; q <= e[1]; ++q)
      for (int m = 0; m <= e[2]; ++m)
        sum += ca[p] * cb[q] * cc[m] * factorial(p) * factorial(q) * factorial(m) /
               factorial(p + q + m + 3);
  return static_cast<double>(8 * sum);  // Jacobian of (x,y,z) -> (r,s,t)
}

// Exact integral of x^a y^b over the reference triangle {x,y >= -1, x+y <= 0} (area 2).
inline double exact_triangle_integral(int a, int b) {
  const auto ca = shifted_power_coefficients(a);
  const auto cb = shifted_power_coefficients(b);
  ExactReal sum = 0;
  for (int p = 0; p <= a; ++p)
    for (int q = 0; q <= b; ++q)
      sum += ca[p] * cb[q] * factorial(p) * factorial(q) / factorial(p + q + 2);
  return static_cast<double>(4 * sum);  // Jacobian of (x,y) -> (r,s)
}

inline Eigen::VectorXd evaluate_monomial(const Points& rst, const Exponents& e) {
  Eigen::VectorXd v(rst.rows());
  for (Eigen::Index i = 0; i < rst.rows(); ++i)
    v(i) = std::pow(rst(i, 0), e[0]) * std::pow(rst(i, 1), e[1]) * std::pow(rst(i, 2), e[2]);
  return v;
}

// Uniformly random points strictly inside the reference tetrahedron.
inline Points random_points_in_tet(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Points points(count, 3);
  for (int i = 0; i < count;) {
    const double r = uniform(rng), s = uniform(rng), t = uniform(rng);
    if (r + s + t <= -1.0) points.row(i++) << r, s, t;
  }
  return points;
}

}  // namespace dgrte::dg::testing
