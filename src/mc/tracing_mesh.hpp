#pragma once
// The tet mesh as a ray tracer sees it: per element face its plane (outward unit normal n and offset
// c, n.x = c on the face) and what lies across it (an element, or a boundary face of problem::Walls).
// Plain arrays, no host-only types in the stepping code, so the same loop ports to an OpenCL kernel.
//
// Robustness: each face plane is computed once from the face's three vertices in ascending global
// vertex order, and the two elements sharing the face store it with opposite signs, bit for bit. A
// ray leaving element A through face f therefore meets, in neighbour B, the same plane with a
// negative n.d, and can never step back; a ray through an edge or a vertex takes the nearest exit
// (on exact ties the face crossed most squarely) and goes on with zero-length steps through the elements around
// the edge. Positions that drift a round-off outside an element are clamped to zero-length steps.
#include "common/vec3.hpp"
#include "mesh/tet_mesh.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace dgrte::mc {

using dgrte::Vec3;

struct FacePlane {
  double n[3];
  double offset;
};

// Elements are renumbered along a Morton (Z-order) curve of their centroids, so that a ray's next
// element is usually close in memory: on a 179k-tet mesh the random order of the mesh file made
// every crossing a cache miss. Tracer index t <-> mesh element: original[t], tracer_index[e].
struct TracingMesh {
  std::vector<int> original;       // tracer index -> mesh element
  std::vector<int> tracer_index;   // mesh element -> tracer index
  std::vector<FacePlane> plane;    // t * 4 + f
  std::vector<int> across;         // t * 4 + f: neighbour (tracer index), or -(1 + boundary face index) on the boundary
  std::vector<double> volume;      // per tracer element [m^3]
  std::vector<std::array<int, 4>> tets;  // per tracer element
  std::vector<Vec3> vertices;
  double diameter = 0;             // bounding-box diagonal [m]
  std::size_t num_elements() const { return volume.size(); }
};

// boundary_face_of[e * 4 + f] (mesh element e): index of that boundary face (problem::Walls order), -1 inside.
TracingMesh make_tracing_mesh(const mesh::TetMesh& mesh, const std::vector<long>& boundary_face_of);

// The face through which a ray at x along d leaves the element whose 4 planes start at p, and the
// distance to it (>= 0). face = -1 only for a degenerate direction (zero or NaN): a lost ray.
struct Exit {
  int face;
  double distance;
};
inline Exit exit_face(const FacePlane* p, const double* x, const double* d) {
  int best = -1;
  double t_best = std::numeric_limits<double>::infinity(), dn_best = 0;
  for (int f = 0; f < 4; ++f) {
    const double dn = p[f].n[0] * d[0] + p[f].n[1] * d[1] + p[f].n[2] * d[2];
    if (!(dn > 0)) continue;  // the ray does not leave through this face
    const double t = (p[f].offset - (p[f].n[0] * x[0] + p[f].n[1] * x[1] + p[f].n[2] * x[2])) / dn;
    // Exact ties (through an edge or vertex): the face the ray crosses most squarely.
    if (t < t_best || (t == t_best && dn > dn_best)) t_best = t, best = f, dn_best = dn;
  }
  return {best, best < 0 ? 0.0 : std::max(t_best, 0.0)};
}

// Walks a ray from x (in tracer element `element`) along unit d to the boundary: the chord per element and the
// boundary face reached. For tests and tools (the estimators step inline).
struct Walk {
  std::vector<std::pair<int, double>> segments;  // element, length
  long boundary_face = -1;                       // Walls index where the ray leaves
  bool lost = false;
};
Walk walk_to_boundary(const TracingMesh& tm, int element, const Vec3& x, const Vec3& d);

}  // namespace dgrte::mc
