// build_connectivity, tet_volume and mesh_quality on hand-built meshes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "mesh/tet_mesh.hpp"
#include "test_support.hpp"

namespace dgrte::mesh {
namespace {

// The unit cube [0,1]^3 split into n^3 cubes of 6 tets each (Kuhn/Freudenthal split, conforming).
TetMesh kuhn_cube(int n) {
  TetMesh m;
  m.source = "kuhn_cube";
  auto id = [n](int i, int j, int k) { return (k * (n + 1) + j) * (n + 1) + i; };
  for (int k = 0; k <= n; ++k)
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) m.vertices.push_back({double(i) / n, double(j) / n, double(k) / n});
  // Paths from corner 000 to 111 through the cube, one tet per permutation of the axes.
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        for (const auto& p : perms) {
          int c[3] = {i, j, k};
          std::array<int, 4> t{};
          t[0] = id(c[0], c[1], c[2]);
          for (int s = 0; s < 3; ++s) {
            ++c[p[s]];
            t[s + 1] = id(c[0], c[1], c[2]);
          }
          m.tets.push_back(t);
          if (tet_volume(m, m.tets.size() - 1) < 0) std::swap(m.tets.back()[2], m.tets.back()[3]);
          m.tet_tags.push_back(m.tets.size());
          m.tet_group.push_back(0);
        }
  return m;
}

TEST(TetVolume, UnitTetAndOrientation) {
  TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.tets = {{0, 1, 2, 3}, {0, 2, 1, 3}};
  EXPECT_DOUBLE_EQ(tet_volume(m, 0), 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(tet_volume(m, 1), -1.0 / 6.0);
}

TEST(MeshQuality, RegularTet) {
  TetMesh m;
  m.vertices = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
  m.tets = {{0, 1, 2, 3}};
  if (tet_volume(m, 0) < 0) std::swap(m.tets[0][2], m.tets[0][3]);
  const auto q = mesh_quality(m);
  EXPECT_NEAR(q.total_volume, 8.0 / 3.0, 1e-14);
  EXPECT_NEAR(q.min_edge, std::sqrt(8.0), 1e-14);
  EXPECT_NEAR(q.max_edge, std::sqrt(8.0), 1e-14);
  EXPECT_NEAR(q.min_radius_ratio, 1.0, 1e-12);
  EXPECT_NEAR(q.mean_radius_ratio, 1.0, 1e-12);
  const double dihedral = std::acos(1.0 / 3.0) * 180.0 / M_PI;  // 70.5288 degrees
  EXPECT_NEAR(q.min_dihedral_deg, dihedral, 1e-10);
  EXPECT_NEAR(q.max_dihedral_deg, dihedral, 1e-10);
  EXPECT_EQ(q.boundary_faces, 0u);  // no connectivity built
}

TEST(MeshQuality, RightCornerTet) {
  TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.tets = {{0, 1, 2, 3}};
  const auto q = mesh_quality(m);
  EXPECT_NEAR(q.min_dihedral_deg, std::acos(1.0 / std::sqrt(3.0)) * 180.0 / M_PI, 1e-10);  // 54.7 degrees
  EXPECT_NEAR(q.max_dihedral_deg, 90.0, 1e-10);
  // r_in = 1 / (3 + sqrt 3), R = sqrt(3) / 2
  EXPECT_NEAR(q.min_radius_ratio, 3.0 / (3.0 + std::sqrt(3.0)) / (std::sqrt(3.0) / 2.0), 1e-12);
}

TEST(BuildConnectivity, KuhnCube) {
  const int n = 4;
  TetMesh m = kuhn_cube(n);
  build_connectivity(m, {});
  std::size_t boundary = 0;
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      const int nb = m.neighbour[e][f];
      EXPECT_EQ(m.boundary_group[e][f], -1);
      if (nb < 0) {
        ++boundary;
        continue;
      }
      EXPECT_EQ(m.neighbour[nb][m.neighbour_face[e][f]], static_cast<int>(e));
      EXPECT_EQ(m.neighbour_face[nb][m.neighbour_face[e][f]], f);
    }
  EXPECT_EQ(boundary, static_cast<std::size_t>(6 * 2 * n * n));
  EXPECT_NEAR(mesh_quality(m).total_volume, 1.0, 1e-12);
}

TEST(BuildConnectivity, BoundaryTrianglesAssignGroupsInternalOnesIgnored) {
  TetMesh m = kuhn_cube(2);
  m.surface_groups = {{1, "bottom", 2}, {2, "internal", 2}};
  // All boundary faces on z = 0 (vertex order shuffled) into group 0; an interior face into group 1.
  std::vector<std::vector<std::array<int, 3>>> tris(2);
  int interior_e = -1, interior_f = -1;
  build_connectivity(m, {});
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      std::array<int, 3> t{m.tets[e][kFaceVertices[f][2]], m.tets[e][kFaceVertices[f][0]],
                           m.tets[e][kFaceVertices[f][1]]};
      bool bottom = true;
      for (int v : t) bottom = bottom && m.vertices[v][2] == 0.0;
      if (m.neighbour[e][f] < 0 && bottom) tris[0].push_back(t);
      if (m.neighbour[e][f] >= 0 && interior_e < 0) {
        interior_e = static_cast<int>(e);
        interior_f = f;
        tris[1].push_back(t);
      }
    }
  ASSERT_EQ(tris[0].size(), 8u);
  build_connectivity(m, tris);
  std::size_t in_bottom = 0;
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    for (int f = 0; f < 4; ++f) {
      if (m.boundary_group[e][f] == 0) ++in_bottom;
      EXPECT_NE(m.boundary_group[e][f], 1);
    }
  EXPECT_EQ(in_bottom, 8u);
  EXPECT_EQ(m.boundary_group[interior_e][interior_f], -1);

  // The same bottom face in a second group is an error naming both groups.
  tris[1].push_back(tris[0][3]);
  testing::expect_input_error([&] { build_connectivity(m, tris); },
                              {"kuhn_cube", "two surface groups", "\"bottom\"", "\"internal\""});
}

TEST(BuildConnectivity, VertexIndexOutOfRange) {
  TetMesh m;
  m.source = "by hand";
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  m.tets = {{0, 1, 2, 3}};
  testing::expect_input_error([&] { build_connectivity(m, {}); }, {"by hand", "vertex index 3"});
}

TEST(BuildConnectivity, ShuffledLargeMeshIsFast) {
  // 6 * 40^3 = 384k tets with the vertex numbering shuffled (worst case for locality).
  TetMesh m = kuhn_cube(40);
  std::vector<int> perm(m.vertices.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(42));
  std::vector<Vec3> v(m.vertices.size());
  for (std::size_t i = 0; i < perm.size(); ++i) v[perm[i]] = m.vertices[i];
  m.vertices = v;
  for (auto& t : m.tets)
    for (int& x : t) x = perm[x];
  build_connectivity(m, {});
  std::size_t boundary = 0;
  for (const auto& nb : m.neighbour)
    for (int x : nb) boundary += x < 0;
  EXPECT_EQ(boundary, static_cast<std::size_t>(6 * 2 * 40 * 40));
}

}  // namespace
}  // namespace dgrte::mesh
