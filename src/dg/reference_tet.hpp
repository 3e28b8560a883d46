#pragma once
// Nodal reference tetrahedron of order N (Hesthaven & Warburton, "Nodal Discontinuous Galerkin
// Methods", 2008, ch. 6 and 10): warp-and-blend nodes, orthonormal-basis Vandermonde, mass,
// differentiation and face-lift matrices.
//
// Reference tetrahedron: vertices v0=(-1,-1,-1), v1=(1,-1,-1), v2=(-1,1,-1), v3=(-1,-1,1).
// Faces (same numbering as the mesh module): face 0 = (v0,v1,v2) [t=-1], face 1 = (v0,v1,v3)
// [s=-1], face 2 = (v1,v2,v3) [r+s+t=-1], face 3 = (v0,v2,v3) [r=-1].
#include <Eigen/Dense>

#include <array>
#include <vector>

namespace dgrte::dg {

using Matrix = Eigen::MatrixXd;  // column-major
using Points = Eigen::Matrix<double, Eigen::Dynamic, 3>;  // one point (r,s,t) per row

inline constexpr int kMinOrder = 1;
inline constexpr int kMaxOrder = 8;

// The barycentric coordinates of reference point (r, s, t) w.r.t. the tet's vertices v0..v3
// (v0 at r = s = t = -1, v1 at r = 1, v2 at s = 1, v3 at t = 1).
constexpr std::array<double, 4> vertex_barycentrics(double r, double s, double t) {
  return {-(1 + r + s + t) / 2, (1 + r) / 2, (1 + s) / 2, (1 + t) / 2};
}

constexpr int tet_num_nodes(int order) { return (order + 1) * (order + 2) * (order + 3) / 6; }
constexpr int tri_num_nodes(int order) { return (order + 1) * (order + 2) / 2; }

struct ReferenceTet {
  int order = 0;
  int num_nodes = 0;       // N_p = (N+1)(N+2)(N+3)/6
  int num_face_nodes = 0;  // N_fp = (N+1)(N+2)/2
  Points nodes;            // N_p x 3 warp-and-blend nodes (r,s,t)
  Matrix vandermonde;      // V_ij = psi_j(r_i), psi orthonormal on the reference tet
  Matrix mass;             // M = (V V^T)^{-1}
  Matrix Dr, Ds, Dt;       // nodal differentiation matrices, N_p x N_p
  // face_nodes[f][j]: volume-node index of the j-th node on face f (ascending volume index).
  std::array<std::vector<int>, 4> face_nodes;
  // face_mass[f]: N_fp x N_fp mass matrix of face f, in the order of face_nodes[f], on the 2-D
  // reference triangle (area 2) the face is parametrised by; a physical face integral is
  // sJ * face_mass with sJ = (physical face area) / 2, for every face including face 2.
  std::array<Matrix, 4> face_mass;
  // lift = M^{-1} E, N_p x (4 N_fp): column f*N_fp + j lifts face node j of face f.
  Matrix lift;

  // Builds every matrix above; throws std::invalid_argument for order outside [1, 8].
  static ReferenceTet build(int order);

  // Interpolation matrix from the nodal values to arbitrary reference points: rows = points.
  Matrix interpolation_matrix(const Points& rst) const;
  // Interpolation from the N_fp node values of face f (face_nodes order) to points of that face
  // given by the barycentrics (l1, l2) of the face's 2nd and 3rd vertices (mesh face-vertex
  // order (v_a, v_b, v_c): x = (1 - l1 - l2) v_a + l1 v_b + l2 v_c); rows = points.
  Matrix face_interpolation_matrix(int f, const std::vector<std::array<double, 2>>& points) const;
  // The (l1, l2) of face f's nodes in that parametrisation (face_nodes order).
  std::vector<std::array<double, 2>> face_node_coordinates(int f) const;
};

// Quadrature on the reference tetrahedron exact for polynomials of total degree <= degree
// (collapsed-coordinate Gauss-Jacobi product rule). Weights sum to the reference volume 4/3.
struct QuadratureRule {
  Points points;
  Eigen::VectorXd weights;
};
QuadratureRule tet_quadrature(int degree);

// Orthonormal Proriol-Koornwinder-Dubiner basis on the reference tet and its gradient, evaluated
// at points; columns ordered by (i,j,k) with i+j+k <= order (same order as the Vandermonde).
Matrix orthonormal_basis(int order, const Points& rst);
std::array<Matrix, 3> orthonormal_basis_gradient(int order, const Points& rst);

// Warp-and-blend nodes of order N on the reference tetrahedron (Hesthaven & Warburton, sec. 10.1).
Points warp_blend_nodes(int order);

}  // namespace dgrte::dg
