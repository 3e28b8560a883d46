#pragma once
// Everything about the spatial DG discretisation that does not depend on the direction:
// reference element, per-element geometry, physical node positions, and the face-node map to
// the neighbour's matching node (precomputed once; never searched at apply time).
//
// Field layout (one direction): value of node i of element e at index e * N_p + i (node fastest),
// so that the volume term of all elements is one GEMM  D * U  with U of shape N_p x K.
#include "common/vec3.hpp"
#include "dg/geometric_factors.hpp"
#include "dg/reference_tet.hpp"
#include "mesh/tet_mesh.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace dgrte::transport {

using dgrte::Vec3;

// The points where the medium's properties are evaluated (docs/architecture.md, "Properties at
// quadrature points"): a tet rule of degree 2p + 1 (the mass matrix needs 2p; the user's fields are
// not polynomials, so one degree more), the interpolation from an element's nodal values to them,
// and the L2 projection of point values back onto the element's nodal basis,
//   projection = M^{-1} V_q^T diag(w)  (the Jacobian of the affine map cancels).
struct PropertyRule {
  dg::QuadratureRule rule;
  Eigen::MatrixXd interpolation;  // Q x N_p
  Eigen::MatrixXd projection;     // N_p x Q
  std::size_t size() const { return static_cast<std::size_t>(rule.weights.size()); }
};
PropertyRule make_property_rule(const dg::ReferenceTet& ref);

struct Discretization {
  const mesh::TetMesh* mesh = nullptr;
  dg::ReferenceTet ref;
  PropertyRule property;
  std::vector<dg::ElementGeometry> geometry;  // per element
  std::vector<Vec3> node_position;            // e * N_p + i
  // For face node j of face f of element e, at [(e*4 + f) * N_fp + j]: the field index of the
  // neighbour's coincident node, or -1 on the domain boundary. Neighbour traces are read only
  // through this map: a distributed mesh points it into a ghost block appended after the local
  // field (see exchange_traces in the backend).
  std::vector<int> neighbour_node;

  std::size_t num_elements() const { return geometry.size(); }
  int num_nodes() const { return ref.num_nodes; }
  std::size_t num_dofs() const { return num_elements() * static_cast<std::size_t>(ref.num_nodes); }
  std::array<Vec3, 4> element_vertices(std::size_t e) const;
  // The physical positions of element e's property points (property.rule).
  std::vector<Vec3> property_points(std::size_t e) const;
};

Discretization make_discretization(const mesh::TetMesh& mesh, int order);

}  // namespace dgrte::transport
