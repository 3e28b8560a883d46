#pragma once
// Discrete-ordinates sets: directions s_m with solid-angle weights w_m (sum 4 pi). For
// finite-volume sets s_bar_m = integral of s over the control angle (w_m s_m for point sets).
#include <array>
#include <filesystem>
#include <string>
#include <vector>

namespace dgrte::angular {

using Vec3 = std::array<double, 3>;

struct Quadrature {
  std::string name;
  std::vector<Vec3> s;       // unit directions
  std::vector<double> w;     // solid angles [sr], sum 4 pi
  std::vector<Vec3> s_bar;   // integral of s over the ordinate's control angle
  std::size_t size() const { return s.size(); }
  // Index of the ordinate equal to the mirror image s_m - 2 (s_m.n) n (n unit), or -1.
  int reflect(int m, const Vec3& n, double tol = 1e-10) const;
};

// Level-symmetric LQ_N, N = 2, 4, ..., 16 (tabulated; N(N+2) ordinates).
Quadrature level_symmetric(int n);
// The heat-transfer "S_N" sets of combustion codes, N = 4, 6, 8 (exact half-range flux).
Quadrature heat_transfer_sn(int n);
// Thurgood T_N, any N >= 1: 8 N^2 ordinates, centroids of the N^2 sub-triangles of each octant
// face, weights their exact spherical solid angles (Thurgood, Pollard & Becker 1995).
Quadrature thurgood(int n);
// Finite-volume control angles: n_polar uniform in theta about `axis` (0 x, 1 y, 2 z) times
// n_azimuthal uniform in phi; exact solid angles and s_bar.
Quadrature finite_volume(int n_polar, int n_azimuthal, int axis);
// Product set: half-range Gauss-Legendre in the cosine about `axis` (n_polar/2 per hemisphere,
// n_polar even) times uniform azimuth phi_k = (k + 1/2) 2 pi / n_azimuthal.
Quadrature product_gauss(int n_polar, int n_azimuthal, int axis);
// CSV file `sx,sy,sz,w` (header line, '#' comments).
Quadrature from_file(const std::filesystem::path& file);

// Moments, for tests and reports: sum w, sum w s, sum w s s^T, and the half-range flux
// sum over s_bar.n > 0 of s_bar.n (= pi for an exact set).
double weight_sum(const Quadrature& q);
Vec3 first_moment(const Quadrature& q);
std::array<Vec3, 3> second_moment(const Quadrature& q);
double half_range_flux(const Quadrature& q, const Vec3& n);

}  // namespace dgrte::angular
