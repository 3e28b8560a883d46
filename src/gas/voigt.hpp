#pragma once
// Voigt line profile via the Faddeeva function w(z) = exp(-z^2) erfc(-iz), Im z >= 0.
//
// Algorithm (the "hum1wei"-type split used in atmospheric LBL codes, cf. Schreier, JQSRT 2011/2018):
//   * |x| + y >= kVoigtAsymptoticS (= 8): Humlicek (1982) region-II rational approximation
//       w(z) ~= t (1.410474 + 0.5641896 u) / (0.75 + u (3 + u)),  t = y - i x, u = t^2,
//     which is the 2-pole Laplace continued fraction and reproduces the asymptotic series of w up to
//     z^-7 (error ~1.5/(sqrt(pi) |z|^9)).
//   * otherwise: Weideman (1994) rational series with N = 32 terms,
//       w(z) = 2 sum_n a_n Z^n / (L - i z)^2 + 1/(sqrt(pi) (L - i z)),  Z = (L + i z)/(L - i z),
//     L = sqrt(N / sqrt(2)); the a_n are computed once from a 4N-point DFT.
// Measured accuracy of Re w (the Voigt function K) against a high-accuracy reference (Fourier-integral
// quadrature / 400-level continued fraction, tests/gas/test_voigt.cpp), 9102 points with
// 1e-6 <= y <= 1e3, 0 <= x <= 1e4: max relative error 2.1e-6 (at x = 7.4, y = 1e-6, just inside the
// Weideman region), mean 4.8e-8. Test bound: 5e-6.
#include <complex>
#include <vector>

namespace dgrte::gas {

inline constexpr double kVoigtAsymptoticS = 8.0;

// Faddeeva function w(x + i y) for y >= 0.
std::complex<double> faddeeva(double x, double y);

// Voigt function K(x, y) = Re w(x + i y), y >= 0 (real arithmetic; the hot-path routine).
double voigt_k(double x, double y);

// The Weideman series' constants: L and a[0..N] (a[0] unused), for kernels that evaluate voigt_k
// elsewhere with the same arithmetic (opencl/lbl_line_sum.cl).
struct WeidemanCoefficients {
  double L = 0;
  std::vector<double> a;
};
WeidemanCoefficients weideman_coefficients();

// Area-normalised Voigt profile [1/cm^-1] at detuning dnu [cm^-1] from the line centre, for Doppler
// HWHM gamma_d > 0 and Lorentz HWHM gamma_l >= 0 (both cm^-1).
double voigt_profile(double dnu, double gamma_d, double gamma_l);

}  // namespace dgrte::gas
