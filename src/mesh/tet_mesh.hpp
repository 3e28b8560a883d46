#pragma once
// Linear tetrahedral mesh with physical groups and face connectivity, read through the Gmsh SDK.
//
// Local face numbering of a tet with vertices (v0,v1,v2,v3) matches dg::ReferenceTet:
// face 0 = (v0,v1,v2), face 1 = (v0,v1,v3), face 2 = (v1,v2,v3), face 3 = (v0,v2,v3).
#include "common/vec3.hpp"
#include "common/tet_topology.hpp"

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace dgrte::mesh {

using dgrte::Vec3;


struct PhysicalGroup {
  int tag = 0;       // Gmsh physical tag
  std::string name;  // Gmsh physical name ("" if unnamed; then shown as "#<tag>")
  int dim = 0;       // 2 or 3
};

// boundary_group of a face that lies on another rank's part of a distributed mesh (a ghost
// element's face toward an element that is not local): not a wall, no boundary condition.
inline constexpr int kPartitionFace = -2;

struct TetMesh {
  std::string source;                   // file the mesh came from (for messages)
  std::vector<Vec3> vertices;           // coordinates in metres
  std::vector<std::array<int, 4>> tets; // 0-based vertex indices, positive orientation
  std::vector<std::size_t> tet_tags;    // Gmsh element tag of each tet (for error messages)
  std::vector<int> tet_group;           // index into volume_groups, -1 if in no volume group
  std::vector<PhysicalGroup> volume_groups;
  std::vector<PhysicalGroup> surface_groups;

  // Connectivity, filled by build_connectivity():
  // neighbour[e][f]: element across face f (-1 on the boundary);
  // neighbour_face[e][f]: local face index of that face in the neighbour (-1 on the boundary);
  // boundary_group[e][f]: surface group index of a boundary face (-1 for interior faces).
  std::vector<std::array<int, 4>> neighbour;
  std::vector<std::array<int, 4>> neighbour_face;
  std::vector<std::array<int, 4>> boundary_group;
  // Per surface group: how many of its triangles are interior faces (a .geo using Boundary{} where it
  // meant CombinedBoundary{}, or an internal surface), which boundary conditions ignore, and the
  // centroid of the first one.
  std::vector<std::size_t> interior_tagged_faces;
  std::vector<Vec3> first_interior_tagged;

  std::size_t num_elements() const { return tets.size(); }
};

// Boundary faces in no surface group: their count and the first one's centroid and element.
struct UnlabelledFaces {
  std::size_t count = 0;
  Vec3 first_centroid{};
  std::size_t first_element = 0;
};
UnlabelledFaces unlabelled_boundary_faces(const TetMesh& mesh);

// Whether read_mesh/mesh_geo reject boundary faces in no surface group (the solver needs a boundary
// condition on each) or keep them (`dgrte mesh-info`, which describes such meshes).
enum class BoundaryLabels { required, optional };

// Reads a Gmsh .msh (2.2 or 4.1) file through the Gmsh SDK, validates it and builds connectivity.
// Throws dgrte::InputError naming the file and the offending entity on any problem.
// Gmsh parses the file in a child process first (isolation/isolated_read.hpp): a file that crashes
// Gmsh or makes it allocate without bound is an InputError, not a crash of the run.
TetMesh read_mesh(const std::filesystem::path& file, BoundaryLabels labels = BoundaryLabels::required);
// read_mesh without the child process: what the child (dgrte-read-check) runs.
TetMesh read_mesh_in_process(const std::filesystem::path& file, BoundaryLabels labels);
// Meshes a .geo file in 3-D through the Gmsh SDK with a target element size (m), then as read_mesh.
// `size` sets Mesh.MeshSizeMax and alone controls the size (point sizes and curvature are ignored).
TetMesh mesh_geo(const std::filesystem::path& geo_file, double size, BoundaryLabels labels = BoundaryLabels::required);
// Adaptive refinement (issue 32): a target element size at each vertex of a previous mesh of the
// same geometry, linear inside its tets; mesh_geo then sizes the elements by it (a Gmsh background
// field, "PostView" of a list-based view), capped by `size`. Where the new mesh reaches outside the
// previous one (curved walls), `size` applies.
struct SizeField {
  const TetMesh* mesh = nullptr;
  std::vector<double> vertex_size;  // per vertex of *mesh [m]
};
TetMesh mesh_geo(const std::filesystem::path& geo_file, double size, const SizeField& field,
                 BoundaryLabels labels = BoundaryLabels::required);
// Both initialize and finalize Gmsh around the call (serialized by a process-wide mutex), so they
// must not be called while the caller itself holds an initialized Gmsh API session.

// Face connectivity and boundary-group assignment (called by read_mesh; exposed for tests).
// boundary_triangles: the surface triangles of each surface group (0-based vertex indices);
// boundary_triangles[g] belongs to surface_groups[g]. Triangles that are not boundary faces
// (internal surfaces) are ignored. Boundary faces matched by no triangle keep boundary_group -1
// (read_mesh/mesh_geo reject such meshes; a hand-built mesh may keep them).
// Throws InputError for a face shared by more than two tets, two tets overlapping across a face
// (e.g. duplicated elements; tets must be positively oriented), or a boundary face in two groups.
void build_connectivity(TetMesh& mesh, const std::vector<std::vector<std::array<int, 3>>>& boundary_triangles);

// Signed volume of element e (positive for a valid tet).
double tet_volume(const TetMesh& mesh, std::size_t e);

struct MeshQuality {
  double total_volume = 0;
  double min_volume = 0, max_volume = 0;
  double min_edge = 0, max_edge = 0;
  // radius ratio 3 r_in / r_circ (1 for the regular tet, 0 for a degenerate one)
  double min_radius_ratio = 0, mean_radius_ratio = 0;
  double min_dihedral_deg = 0, max_dihedral_deg = 0;
  std::size_t boundary_faces = 0, interior_faces = 0;  // counted only if connectivity is built
};
MeshQuality mesh_quality(const TetMesh& mesh);

}  // namespace dgrte::mesh
