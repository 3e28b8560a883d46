#pragma once
// Angular moments of a quadrature, against the exact values over the sphere:
//   sum w = 4 pi,  sum w s = 0,  sum w s s^T = (4 pi/3) I,  half-range flux sum_{s.n>0} w s.n = pi.
// Weighting::control_angle uses s_bar (the integral of s over the ordinate's control angle) in place of
// w s, as the solver does for fluxes; for point sets s_bar = w s and both weightings agree.
// The solver renormalises diffuse wall emission/reflection by pi / half_range_flux(q, n) per face normal.
#include "angular/quadrature.hpp"

#include <array>
#include <string>

namespace dgrte::angular {

enum class Weighting { point, control_angle };

double weight_sum(const Quadrature& q);
// sum w s (point) or sum s_bar (control_angle).
Vec3 first_moment(const Quadrature& q, Weighting how = Weighting::control_angle);
// sum w s s^T (point) or sum s_bar s^T (control_angle; symmetric since s_bar is parallel to s).
std::array<Vec3, 3> second_moment(const Quadrature& q, Weighting how = Weighting::control_angle);
// Flux of a unit isotropic intensity through a plane with normal n (normalised here) from the ordinates
// with s.n > 0: sum w s.n (point) or sum s_bar.n (control_angle). Exact value pi.
double half_range_flux(const Quadrature& q, const Vec3& n, Weighting how = Weighting::control_angle);
// One-paragraph summary of the errors of the moments above (for logs and reports).
std::string describe_moments(const Quadrature& q);

}  // namespace dgrte::angular
