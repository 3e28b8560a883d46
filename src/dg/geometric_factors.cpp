#include "dg/geometric_factors.hpp"

#include <cmath>

namespace dgrte::dg {
namespace {
}  // namespace

ElementGeometry element_geometry(const std::array<Vec3, 4>& v) {
  // Columns of dx/d(r,s,t) for the affine map.
  Vec3 xr = sub(v[1], v[0]), xs = sub(v[2], v[0]), xt = sub(v[3], v[0]);
  for (auto* c : {&xr, &xs, &xt})
    for (auto& x : *c) x *= 0.5;
  ElementGeometry g;
  g.jacobian = dot(xr, cross(xs, xt));
  // Rows of the inverse Jacobian: grad r = (xs x xt)/J, etc.
  const auto gr = cross(xs, xt), gs = cross(xt, xr), gt = cross(xr, xs);
  for (int i = 0; i < 3; ++i) {
    g.grad_rst[0][i] = gr[i] / g.jacobian;
    g.grad_rst[1][i] = gs[i] / g.jacobian;
    g.grad_rst[2][i] = gt[i] / g.jacobian;
  }
  // Outward (unnormalised) normals: face 0 t=-1, face 1 s=-1, face 2 r+s+t=-1, face 3 r=-1.
  std::array<Vec3, 4> n;
  for (int i = 0; i < 3; ++i) {
    n[0][i] = -g.grad_rst[2][i];
    n[1][i] = -g.grad_rst[1][i];
    n[2][i] = g.grad_rst[0][i] + g.grad_rst[1][i] + g.grad_rst[2][i];
    n[3][i] = -g.grad_rst[0][i];
  }
  for (int f = 0; f < 4; ++f) {
    const double len = norm(n[f]);
    g.face_scale[f] = len;  // sJ / J (Hesthaven: sJ = |n| J)
    for (int i = 0; i < 3; ++i) g.normal[f][i] = n[f][i] / len;
  }
  return g;
}

Vec3 map_to_physical(const std::array<Vec3, 4>& v, double r, double s, double t) {
  const double l0 = -(1 + r + s + t) / 2, l1 = (1 + r) / 2, l2 = (1 + s) / 2, l3 = (1 + t) / 2;
  Vec3 x;
  for (int i = 0; i < 3; ++i) x[i] = l0 * v[0][i] + l1 * v[1][i] + l2 * v[2][i] + l3 * v[3][i];
  return x;
}

}  // namespace dgrte::dg
