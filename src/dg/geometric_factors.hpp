#pragma once
// Geometric factors of affine tetrahedra (Hesthaven & Warburton 2008, sec. 6.1 and 10.2,
// GeometricFactors3D / Normals3D): the map x(r,s,t) = -(1+r+s+t)/2 v0 + (1+r)/2 v1 + (1+s)/2 v2
// + (1+t)/2 v3 has constant Jacobian, so each element needs 1 + 9 + 4*(3+1) numbers.
#include "common/vec3.hpp"

#include <array>

namespace dgrte::dg {

using dgrte::Vec3;

struct ElementGeometry {
  double jacobian = 0;                 // det(dx/dr) = 6 vol / 8
  std::array<Vec3, 3> grad_rst{};      // grad r, grad s, grad t (rows of the inverse Jacobian)
  std::array<Vec3, 4> normal{};        // outward unit normals of faces 0..3
  std::array<double, 4> face_scale{};  // sJ / J: lift scaling of each face (sJ = face area / 2)
};

ElementGeometry element_geometry(const std::array<Vec3, 4>& vertices);

// Physical position of the reference point (r,s,t) in the element with these vertices.
Vec3 map_to_physical(const std::array<Vec3, 4>& vertices, double r, double s, double t);

}  // namespace dgrte::dg
