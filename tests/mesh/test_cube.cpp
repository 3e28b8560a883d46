// The cube [-1,1]^3 meshed from meshes/cube.geo: geometry, connectivity, groups, file round trips.
#include <gmsh.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "mesh/tet_mesh.hpp"
#include "test_support.hpp"

namespace dgrte::mesh {
namespace {

const std::filesystem::path kCubeGeo = std::filesystem::path(DGRTE_SOURCE_DIR) / "meshes" / "cube.geo";
const std::filesystem::path kCubeOneGroupGeo =
    std::filesystem::path(DGRTE_SOURCE_DIR) / "meshes" / "cube_one_group.geo";

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Outward (away from the opposite vertex) area vector of face f of element e: |n| = area.
Vec3 outward_area_vector(const TetMesh& m, std::size_t e, int f) {
  const auto& t = m.tets[e];
  const auto& k = kFaceVertices[f];
  const Vec3 p0 = m.vertices[t[k[0]]];
  Vec3 n = cross(sub(m.vertices[t[k[1]]], p0), sub(m.vertices[t[k[2]]], p0));
  for (double& x : n) x *= 0.5;
  const int opp = t[6 - k[0] - k[1] - k[2]];
  if (dot(n, sub(m.vertices[opp], p0)) > 0)
    for (double& x : n) x = -x;
  return n;
}

// Per-group boundary area and face count; checks normals against the expected direction.
struct GroupStats {
  double area = 0;
  std::size_t faces = 0;
};
std::map<std::string, GroupStats> boundary_stats(const TetMesh& m) {
  std::map<std::string, GroupStats> stats;
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      if (m.neighbour[e][f] >= 0) continue;
      const int g = m.boundary_group[e][f];
      EXPECT_GE(g, 0) << "unlabelled boundary face";
      if (g < 0) continue;
      const Vec3 n = outward_area_vector(m, e, f);
      auto& s = stats[m.surface_groups[g].name];
      s.area += std::sqrt(dot(n, n));
      ++s.faces;
    }
  return stats;
}

void check_cube(const TetMesh& mesh) {
  ASSERT_GT(mesh.num_elements(), 0u);
  ASSERT_EQ(mesh.tet_tags.size(), mesh.num_elements());
  ASSERT_EQ(mesh.tet_group.size(), mesh.num_elements());
  ASSERT_EQ(mesh.neighbour.size(), mesh.num_elements());
  ASSERT_EQ(mesh.volume_groups.size(), 1u);
  EXPECT_EQ(mesh.volume_groups[0].name, "medium");
  EXPECT_EQ(mesh.volume_groups[0].tag, 1);
  EXPECT_EQ(mesh.volume_groups[0].dim, 3);

  double volume = 0;
  for (std::size_t e = 0; e < mesh.num_elements(); ++e) {
    const double v = tet_volume(mesh, e);
    EXPECT_GT(v, 0) << "element " << mesh.tet_tags[e];
    volume += v;
    EXPECT_EQ(mesh.tet_group[e], 0);
  }
  EXPECT_NEAR(volume, 8.0, 1e-10);

  // Reciprocal neighbours; boundary faces carry a group, interior faces none.
  std::size_t boundary = 0, interior_sides = 0;
  for (std::size_t e = 0; e < mesh.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      const int n = mesh.neighbour[e][f];
      if (n < 0) {
        ++boundary;
        EXPECT_EQ(mesh.neighbour_face[e][f], -1);
        EXPECT_GE(mesh.boundary_group[e][f], 0);
        continue;
      }
      ++interior_sides;
      const int nf = mesh.neighbour_face[e][f];
      ASSERT_GE(nf, 0);
      ASSERT_LT(nf, 4);
      EXPECT_EQ(mesh.neighbour[n][nf], static_cast<int>(e));
      EXPECT_EQ(mesh.neighbour_face[n][nf], f);
      EXPECT_EQ(mesh.boundary_group[e][f], -1);
      // The shared face has the same three vertices, and opposite outward normals.
      std::array<int, 3> a{}, b{};
      for (int i = 0; i < 3; ++i) {
        a[i] = mesh.tets[e][kFaceVertices[f][i]];
        b[i] = mesh.tets[n][kFaceVertices[nf][i]];
      }
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b);
      const Vec3 na = outward_area_vector(mesh, e, f), nb = outward_area_vector(mesh, n, nf);
      EXPECT_NEAR(dot(na, nb), -dot(na, na), 1e-12);
    }
  EXPECT_EQ(interior_sides % 2, 0u);

  const auto stats = boundary_stats(mesh);
  double total_area = 0;
  for (const auto& [name, s] : stats) total_area += s.area;
  EXPECT_NEAR(total_area, 24.0, 1e-10);

  const auto q = mesh_quality(mesh);
  EXPECT_NEAR(q.total_volume, 8.0, 1e-10);
  EXPECT_GT(q.min_volume, 0);
  EXPECT_GE(q.max_volume, q.min_volume);
  EXPECT_GT(q.min_edge, 0);
  EXPECT_GE(q.max_edge, q.min_edge);
  EXPECT_GT(q.min_radius_ratio, 0.05);
  EXPECT_LE(q.mean_radius_ratio, 1.0 + 1e-12);
  EXPECT_GT(q.mean_radius_ratio, q.min_radius_ratio);
  EXPECT_GT(q.min_dihedral_deg, 0);
  EXPECT_LT(q.max_dihedral_deg, 180);
  EXPECT_EQ(q.boundary_faces, boundary);
  EXPECT_EQ(q.interior_faces, interior_sides / 2);
  EXPECT_EQ(4 * mesh.num_elements(), 2 * q.interior_faces + q.boundary_faces);
}

class CubeGeo : public ::testing::TestWithParam<double> {};

TEST_P(CubeGeo, VolumeConnectivityAndSixFaceGroups) {
  const double size = GetParam();
  const TetMesh mesh = mesh_geo(kCubeGeo, size);
  EXPECT_EQ(mesh.source, kCubeGeo.string());
  check_cube(mesh);
  EXPECT_LE(mesh_quality(mesh).max_edge, 2.2 * size);  // the size controls the mesh

  ASSERT_EQ(mesh.surface_groups.size(), 6u);
  const std::map<std::string, std::pair<int, double>> expected{{"xmin", {0, -1}}, {"xmax", {0, 1}},  {"ymin", {1, -1}},
                                                               {"ymax", {1, 1}},  {"zmin", {2, -1}}, {"zmax", {2, 1}}};
  for (const auto& g : mesh.surface_groups) {
    EXPECT_EQ(g.dim, 2);
    EXPECT_TRUE(expected.count(g.name)) << g.name;
  }
  const auto stats = boundary_stats(mesh);
  ASSERT_EQ(stats.size(), 6u);
  for (const auto& [name, s] : stats) EXPECT_NEAR(s.area, 4.0, 1e-10) << name;

  for (std::size_t e = 0; e < mesh.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      if (mesh.neighbour[e][f] >= 0) continue;
      const auto& name = mesh.surface_groups[mesh.boundary_group[e][f]].name;
      const auto [axis, sign] = expected.at(name);
      Vec3 n = outward_area_vector(mesh, e, f);
      const double len = std::sqrt(dot(n, n));
      for (int d = 0; d < 3; ++d) EXPECT_NEAR(n[d] / len, d == axis ? sign : 0.0, 1e-12) << name;
      for (int k : kFaceVertices[f]) EXPECT_NEAR(mesh.vertices[mesh.tets[e][k]][axis], sign, 1e-12) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CubeGeo, ::testing::Values(0.5, 0.3));

TEST(CubeGeo, SmallerSizeGivesMoreElements) {
  EXPECT_GT(mesh_geo(kCubeGeo, 0.3).num_elements(), 2 * mesh_geo(kCubeGeo, 0.5).num_elements());
}

TEST(CubeOneGroupGeo, AllWallsInOneGroup) {
  const TetMesh mesh = mesh_geo(kCubeOneGroupGeo, 0.5);
  check_cube(mesh);
  ASSERT_EQ(mesh.surface_groups.size(), 1u);
  EXPECT_EQ(mesh.surface_groups[0].name, "walls");
  const auto stats = boundary_stats(mesh);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_NEAR(stats.at("walls").area, 24.0, 1e-10);
}

// Writes the cube mesh with the Gmsh SDK (same options as mesh_geo) in the given .msh version.
void write_cube_msh(const std::filesystem::path& out, double size, double version) {
  gmsh::initialize(0, nullptr, false);
  gmsh::option::setNumber("General.Terminal", 0);
  gmsh::open(kCubeGeo.string());
  gmsh::option::setNumber("Mesh.MeshSizeFromPoints", 0);
  gmsh::option::setNumber("Mesh.MeshSizeFromCurvature", 0);
  gmsh::option::setNumber("Mesh.MeshSizeExtendFromBoundary", 1);
  gmsh::option::setNumber("Mesh.MeshSizeMin", 0);
  gmsh::option::setNumber("Mesh.MeshSizeMax", size);
  gmsh::model::mesh::generate(3);
  gmsh::option::setNumber("Mesh.MshFileVersion", version);
  gmsh::write(out.string());
  gmsh::finalize();
}

class CubeMshRoundTrip : public ::testing::TestWithParam<double> {};

TEST_P(CubeMshRoundTrip, SameMeshAsFromGeo) {
  testing::ScratchDir dir;
  const double version = GetParam();
  const auto file = dir.path() / (version < 3 ? "cube22.msh" : "cube41.msh");
  write_cube_msh(file, 0.4, version);
  const TetMesh from_geo = mesh_geo(kCubeGeo, 0.4);
  const TetMesh from_msh = read_mesh(file);
  EXPECT_EQ(from_msh.source, file.string());
  check_cube(from_msh);
  EXPECT_EQ(from_msh.vertices.size(), from_geo.vertices.size());
  EXPECT_EQ(from_msh.num_elements(), from_geo.num_elements());
  EXPECT_EQ(from_msh.tet_tags, from_geo.tet_tags);
  ASSERT_EQ(from_msh.surface_groups.size(), 6u);
  std::map<std::string, int> tags;
  for (const auto& g : from_geo.surface_groups) tags[g.name] = g.tag;
  for (const auto& g : from_msh.surface_groups) EXPECT_EQ(tags.at(g.name), g.tag) << g.name;
  const auto a = boundary_stats(from_geo), b = boundary_stats(from_msh);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, s] : a) {
    EXPECT_EQ(b.at(name).faces, s.faces) << name;
    EXPECT_NEAR(b.at(name).area, 4.0, 1e-10) << name;
  }
  for (std::size_t e = 0; e < from_msh.num_elements(); ++e)
    for (int k = 0; k < 4; ++k)
      for (int d = 0; d < 3; ++d)
        ASSERT_NEAR(from_msh.vertices[from_msh.tets[e][k]][d], from_geo.vertices[from_geo.tets[e][k]][d], 1e-14);
}

INSTANTIATE_TEST_SUITE_P(Versions, CubeMshRoundTrip, ::testing::Values(2.2, 4.1));

TEST(MeshGeo, RejectsNonPositiveSize) {
  for (double size : {0.0, -0.5, std::nan("")})
    testing::expect_input_error([&] { mesh_geo(kCubeGeo, size); }, {"cube.geo", "size"});
}

TEST(MeshGeo, MissingFile) {
  testing::ScratchDir dir;
  const auto missing = dir.path() / "no_such_geometry.geo";
  testing::expect_input_error([&] { mesh_geo(missing, 0.5); }, {"no_such_geometry.geo", "does not exist"});
}

TEST(MeshGeo, ScriptErrorIsInputError) {
  testing::ScratchDir dir;
  const auto geo = dir.write("broken.geo", "Point(1) = {0, 0, 0, 1};\nLine(1) = {1, 2, 3;\n");
  testing::expect_input_error([&] { mesh_geo(geo, 0.5); }, {"broken.geo", "line 2", "Gmsh"});
  // Gmsh is usable again after a parse error. (With General.AbortOnError=2, Gmsh 4.8 throws from
  // inside its parser and leaves the rest of the bad file in the lexer, where the next parse,
  // even after finalize/initialize, reads it: ", not a mesh." would be a syntax error in cube.geo.)
  const auto notes = dir.write("notes.geo", "These are my notes, not a mesh.\n");
  testing::expect_input_error([&] { mesh_geo(notes, 0.5); }, {"notes.geo", "syntax error"});
  EXPECT_EQ(mesh_geo(kCubeGeo, 0.5).volume_groups.size(), 1u);
  EXPECT_EQ(mesh_geo(kCubeGeo, 0.5).surface_groups.size(), 6u);
}

TEST(MeshGeo, GeometryWithoutVolumeHasNoTetrahedra) {
  testing::ScratchDir dir;
  const auto geo = dir.write("square.geo",
                             "Point(1) = {0, 0, 0, 1}; Point(2) = {1, 0, 0, 1}; Point(3) = {1, 1, 0, 1};\n"
                             "Point(4) = {0, 1, 0, 1};\n"
                             "Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};\n"
                             "Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};\n");
  testing::expect_input_error([&] { mesh_geo(geo, 0.5); }, {"no tetrahedra in", "square.geo", "Physical Volume"});
}

}  // namespace
}  // namespace dgrte::mesh
