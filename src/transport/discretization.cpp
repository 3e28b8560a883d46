#include "transport/discretization.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dgrte::transport {
namespace {

using FaceBary = std::vector<std::array<double, 3>>;

// Barycentric coordinates of each face node w.r.t. the face's three local vertices
// (dgrte::kFaceVertices order). lambda of vertex v0..v3 at (r,s,t): (-(1+r+s+t), 1+r, 1+s, 1+t)/2.
std::array<FaceBary, 4> face_barycentrics(const dg::ReferenceTet& ref) {
  std::array<FaceBary, 4> out;
  for (int f = 0; f < 4; ++f) {
    for (int node : ref.face_nodes[f]) {
      const auto lam = dg::vertex_barycentrics(ref.nodes(node, 0), ref.nodes(node, 1), ref.nodes(node, 2));
      out[f].push_back({lam[dgrte::kFaceVertices[f][0]], lam[dgrte::kFaceVertices[f][1]], lam[dgrte::kFaceVertices[f][2]]});
    }
  }
  return out;
}

// match[f][g][p][j]: face node of face g that coincides with face node j of face f when the
// k-th vertex of face f is vertex perm[p][k] of face g. Reference-level only: O(N_fp^2) once.
constexpr std::array<std::array<int, 3>, 6> kPerms{{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};

using MatchTable = std::array<std::array<std::array<std::vector<int>, 6>, 4>, 4>;

MatchTable face_match_table(const dg::ReferenceTet& ref) {
  const auto bary = face_barycentrics(ref);
  MatchTable m;
  const int nfp = ref.num_face_nodes;
  for (int f = 0; f < 4; ++f)
    for (int g = 0; g < 4; ++g)
      for (int p = 0; p < 6; ++p) {
        auto& tab = m[f][g][p];
        tab.assign(nfp, -1);
        for (int j = 0; j < nfp; ++j) {
          std::array<double, 3> target{};
          for (int k = 0; k < 3; ++k) target[kPerms[p][k]] = bary[f][j][k];
          double best = 1e300;
          for (int i = 0; i < nfp; ++i) {
            double d = 0;
            for (int k = 0; k < 3; ++k) d += std::abs(bary[g][i][k] - target[k]);
            if (d < best) best = d, tab[j] = i;
          }
          if (best > 1e-10) throw std::logic_error("face node sets are not symmetric: no matching neighbour node");
        }
      }
  return m;
}

}  // namespace

std::array<Vec3, 4> Discretization::element_vertices(std::size_t e) const {
  std::array<Vec3, 4> v;
  for (int i = 0; i < 4; ++i) v[i] = mesh->vertices[mesh->tets[e][i]];
  return v;
}

PropertyRule make_property_rule(const dg::ReferenceTet& ref) {
  PropertyRule p;
  p.rule = dg::tet_quadrature(2 * ref.order + 1);
  p.interpolation = ref.interpolation_matrix(p.rule.points);
  // M^{-1} = V V^T (orthonormal modal basis).
  p.projection = ref.vandermonde * ref.vandermonde.transpose() * p.interpolation.transpose() * p.rule.weights.asDiagonal();
  return p;
}

std::vector<Vec3> Discretization::property_points(std::size_t e) const {
  const auto v = element_vertices(e);
  const auto& pts = property.rule.points;
  std::vector<Vec3> x(property.size());
  for (Eigen::Index q = 0; q < pts.rows(); ++q) x[static_cast<std::size_t>(q)] = dg::map_to_physical(v, pts(q, 0), pts(q, 1), pts(q, 2));
  return x;
}

Discretization make_discretization(const mesh::TetMesh& mesh, int order) {
  Discretization d;
  d.mesh = &mesh;
  d.ref = dg::ReferenceTet::build(order);
  d.property = make_property_rule(d.ref);
  const std::size_t K = mesh.num_elements();
  const int np = d.ref.num_nodes, nfp = d.ref.num_face_nodes;
  d.geometry.resize(K);
  d.node_position.resize(K * np);
  d.neighbour_node.assign(K * 4 * nfp, -1);
  const auto match = face_match_table(d.ref);

#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < static_cast<std::ptrdiff_t>(K); ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    const auto v = d.element_vertices(e);
    d.geometry[e] = dg::element_geometry(v);
    for (int i = 0; i < np; ++i)
      d.node_position[e * np + i] = dg::map_to_physical(v, d.ref.nodes(i, 0), d.ref.nodes(i, 1), d.ref.nodes(i, 2));
    for (int f = 0; f < 4; ++f) {
      const int nb = mesh.neighbour[e][f];
      if (nb < 0) continue;
      const int g = mesh.neighbour_face[e][f];
      // Vertex k of our face f is vertex perm[k] of the neighbour's face g.
      std::array<int, 3> perm{};
      for (int k = 0; k < 3; ++k) {
        const int gv = mesh.tets[e][dgrte::kFaceVertices[f][k]];
        for (int m = 0; m < 3; ++m)
          if (mesh.tets[nb][dgrte::kFaceVertices[g][m]] == gv) perm[k] = m;
      }
      const auto p = static_cast<std::size_t>(std::find(kPerms.begin(), kPerms.end(), perm) - kPerms.begin());
      const auto& tab = match[f][g][p];
      for (int j = 0; j < nfp; ++j)
        d.neighbour_node[(e * 4 + f) * nfp + j] = static_cast<int>(nb * np + d.ref.face_nodes[g][tab[j]]);
    }
  }
  return d;
}

}  // namespace dgrte::transport
