#pragma once
// Discrete-ordinates sets: unit directions s_m with solid-angle weights w_m (sum 4 pi). Finite-volume
// sets also carry s_bar_m = integral of s over the ordinate's control angle; point sets have s_bar = w s.
// Moments of a set (sum w, sum w s, half-range fluxes, ...) are in angular/moments.hpp.
//
// Reflection closure (what Quadrature::reflect finds for the coordinate planes):
//  * level_symmetric, heat_transfer_sn, thurgood: one tabulated/constructed octant expanded to the 8
//    octants by sign flips, in the octant order (sx,sy,sz) = (+++), (++-), (+-+), (+--), (-++), (-+-),
//    (--+), (---), the octant's own order inside each: closed under all three coordinate planes.
//  * finite_volume, product_gauss about `axis`: polar index outer (theta from 0 to pi, i.e. from +axis
//    to -axis), azimuth inner. Closed under the plane normal to the axis for any counts (the theta
//    grid/Gauss cosines are symmetric), under one plane containing the axis for any n_azimuthal
//    (phi -> -phi), and under the other one (phi -> pi - phi) only for even n_azimuthal. A multiple of 4
//    additionally makes the two transverse axes equivalent (rotation by 90 degrees maps the set onto
//    itself). Local azimuth frame: axis z: phi from x towards y; axis x: from y towards z; axis y: from
//    z towards x (cyclic, right-handed).
#include "common/vec3.hpp"

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace dgrte::angular {

using dgrte::Vec3;

// The control angle of an ordinate, where the set is built from one: polar cosine in [mu_lo, mu_hi]
// about `axis` (mu_lo == mu_hi: a Gauss level of a product set, no polar extent) times azimuth in
// [phi_lo, phi_hi] in the axis frame (see below). The scattering matrix averages the phase function
// over it (scattering_matrix.hpp).
struct ControlAngle {
  int axis = 2;
  double mu_lo = 0, mu_hi = 0, phi_lo = 0, phi_hi = 0;
};

struct Quadrature {
  std::string name;          // which set, e.g. "LQ_N S8 (level-symmetric, libdetran tables)", "T4 (Thurgood)"
  std::vector<Vec3> s;       // unit directions
  std::vector<double> w;     // solid angles [sr], sum 4 pi
  std::vector<Vec3> s_bar;   // integral of s over the ordinate's control angle (= w s for point sets)
  std::vector<ControlAngle> cells;  // finite-volume and product sets: one per ordinate; empty for point sets
  std::size_t size() const { return s.size(); }
  // Index of the ordinate equal (within tol, each component) to the mirror image s_m - 2 (s_m.n) n of
  // s_m about the plane with normal n (normalised here), or -1 if the set has none.
  int reflect(int m, const Vec3& n, double tol = 1e-10) const;
};

// The unit vector with cosine mu about `axis` (0 x, 1 y, 2 z) and azimuth phi in the axis frame above.
Vec3 axis_frame_direction(double mu, double phi, int axis);

// Level-symmetric LQ_N, N = 2, 4, ..., 16: N(N+2) ordinates from the libdetran tables (tables.cpp).
// Exact half-range flux is NOT a property of LQ_N: sum_{mu>0} w mu exceeds pi by 1.70 % for S8.
Quadrature level_symmetric(int n);
// The heat-transfer S_N sets of code_saturne (= CFFC's "Carlson and Lathrop" S8), N = 4, 6, 8:
// N(N+2) ordinates, built to give the exact half-range flux pi.
Quadrature heat_transfer_sn(int n);
// Thurgood T_N, any N >= 1: 8 N^2 ordinates, the normalised centroids of the N^2 planar sub-triangles of
// each octant face x+y+z = 1, weights the exact solid angles of the spherical triangles.
Quadrature thurgood(int n);
// Finite-volume control angles about `axis` (0 x, 1 y, 2 z): n_polar uniform in theta (pi/n_polar) times
// n_azimuthal uniform in phi (2 pi/n_azimuthal); exact solid angles, exact s_bar, s = s_bar/|s_bar|.
Quadrature finite_volume(int n_polar, int n_azimuthal, int axis);
// Product set about `axis`: half-range Gauss-Legendre in the cosine (n_polar/2 nodes on (0,1), mirrored
// to (-1,0); n_polar even) times the uniform azimuths phi_k = (k + 1/2) 2 pi/n_azimuthal.
Quadrature product_gauss(int n_polar, int n_azimuthal, int axis);
// CSV file: header line `sx,sy,sz,w`, then one ordinate per line; '#' starts a comment. Directions
// within 1e-6 of unit length and weight sums within 1e-6 (relative) of 4 pi are normalised silently
// (to |s| = 1 and sum 4 pi exactly); anything else is an InputError naming the file and line.
Quadrature from_file(const std::filesystem::path& file);

}  // namespace dgrte::angular
