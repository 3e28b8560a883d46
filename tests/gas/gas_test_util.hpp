#pragma once
// Helpers for the gas tests: exponential integrals E_n (Numerical Recipes expint) and paths.
#include <cmath>
#include <cstdlib>
#include <string>

namespace gastest {

inline double expint(int n, double x) {
  const double euler = 0.5772156649015329, eps = 1e-15;
  const int nm1 = n - 1;
  if (x == 0) return 1.0 / nm1;
  if (x > 1.0) {
    double b = x + n, c = 1.0 / 1e-300, d = 1.0 / b, h = d;
    for (int i = 1; i <= 500; ++i) {
      const double an = -i * (nm1 + i);
      b += 2.0;
      d = 1.0 / (an * d + b);
      c = b + an / c;
      const double del = c * d;
      h *= del;
      if (std::abs(del - 1.0) < eps) break;
    }
    return h * std::exp(-x);
  }
  double ans = nm1 != 0 ? 1.0 / nm1 : -std::log(x) - euler, fact = 1.0;
  for (int i = 1; i <= 500; ++i) {
    fact *= -x / i;
    double del;
    if (i != nm1) del = -fact / (i - nm1);
    else {
      double psi = -euler;
      for (int ii = 1; ii <= nm1; ++ii) psi += 1.0 / ii;
      del = fact * (-std::log(x) + psi);
    }
    ans += del;
    if (std::abs(del) < std::abs(ans) * eps) break;
  }
  return ans;
}

inline std::string gasdata_dir() { return std::string(DGRTE_SOURCE_DIR) + "/gasdata"; }

}  // namespace gastest
