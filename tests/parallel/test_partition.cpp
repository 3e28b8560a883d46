// The first layer of distributed memory on one process: PETSc's partitioner splits a box evenly, and
// every rank's local mesh (owned elements, then the ghost layer) reproduces the global mesh's
// connectivity, walls and partition faces.
#include "mesh/tet_mesh.hpp"
#include "parallel/local_mesh.hpp"

#include <gtest/gtest.h>

#include <set>

namespace dgrte::parallel {
namespace {

const mesh::TetMesh& box() {
  static const mesh::TetMesh m = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.35);
  return m;
}

TEST(Partition, SplitsTheMeshEvenlyWithFewCutFaces) {
  const auto& m = box();
  for (const int parts : {1, 2, 3, 4}) {
    const auto p = partition_elements(m, parts);
    ASSERT_EQ(p.owner.size(), m.num_elements());
    const auto b = balance(m, p);
    EXPECT_LE(b.imbalance, 1.1) << parts << " parts (" << p.partitioner << ")";
    EXPECT_GT(b.min, 0u);
    if (parts == 1) {
      EXPECT_EQ(p.partitioner, "single");
    }
    // A graph partitioner cuts far fewer faces than the contiguous split of the mesh's numbering.
    if (parts > 1 && p.partitioner == "ptscotch") {
      const auto simple = balance(m, partition_elements(m, parts, "simple"));
      EXPECT_LT(b.cut_faces, simple.cut_faces) << parts;
      std::printf("[ note ] %d parts: ptscotch cuts %zu faces (imbalance %.3f), simple %zu (%.3f) of %zu elements\n", parts, b.cut_faces,
                  b.imbalance, simple.cut_faces, simple.imbalance, m.num_elements());
    }
  }
}

TEST(Partition, IsTheSameEveryTime) {
  // PT-Scotch's random seed is fixed before each partition: the same mesh gives the same parts.
  const auto a = partition_elements(box(), 3), b = partition_elements(box(), 3);
  EXPECT_EQ(a.owner, b.owner);
}

TEST(LocalMesh, PiecesCoverTheMeshAndKeepItsConnectivity) {
  const auto& g = box();
  for (const int parts : {1, 2, 3}) {
    const auto p = partition_elements(g, parts);
    std::vector<int> owned_by(g.num_elements(), 0);
    for (int r = 0; r < parts; ++r) {
      const auto l = build_local_mesh(g, p, r);
      ASSERT_EQ(l.mesh.num_elements(), l.global_element.size());
      ASSERT_EQ(l.ghost_owner.size(), l.num_ghosts());
      for (std::size_t i = 0; i < l.num_owned; ++i) ++owned_by[static_cast<std::size_t>(l.global_element[i])];
      for (std::size_t i = 0; i < l.mesh.num_elements(); ++i) {
        const auto e = static_cast<std::size_t>(l.global_element[i]);
        EXPECT_NEAR(mesh::tet_volume(l.mesh, i), mesh::tet_volume(g, e), 1e-15) << "element " << e;
        const bool owned = i < l.num_owned;
        EXPECT_EQ(p.owner[e] == r, owned);
        for (std::size_t f = 0; f < 4; ++f) {
          const int gn = g.neighbour[e][f], ln = l.mesh.neighbour[i][f];
          if (gn < 0) {  // a wall stays a wall with its group
            EXPECT_EQ(ln, -1);
            EXPECT_EQ(l.mesh.boundary_group[i][f], g.boundary_group[e][f]);
          } else if (ln >= 0) {  // a local neighbour is the global one, across the same face
            EXPECT_EQ(l.global_element[static_cast<std::size_t>(ln)], gn);
            EXPECT_EQ(l.mesh.neighbour_face[i][f], g.neighbour_face[e][f]);
          } else {  // only ghosts have faces toward other ranks, and they are not walls
            EXPECT_FALSE(owned) << "owned element " << e << " lost its neighbour " << gn;
            EXPECT_EQ(l.mesh.boundary_group[i][f], kPartitionFace);
          }
        }
      }
      // Every ghost neighbours an owned element and belongs to another rank, at its owner's index.
      for (std::size_t k = 0; k < l.num_ghosts(); ++k) {
        const auto e = static_cast<std::size_t>(l.global_element[l.num_owned + k]);
        EXPECT_EQ(l.ghost_owner[k], p.owner[e]);
        EXPECT_NE(l.ghost_owner[k], r);
        const auto owner = build_local_mesh(g, p, l.ghost_owner[k]);
        EXPECT_EQ(owner.global_element[static_cast<std::size_t>(l.ghost_owner_index[k])], static_cast<long>(e));
        break;  // one ghost per rank checked against its owner's numbering (each check builds a mesh)
      }
    }
    for (std::size_t e = 0; e < g.num_elements(); ++e) ASSERT_EQ(owned_by[e], 1) << "element " << e << ", " << parts << " parts";
  }
}

}  // namespace
}  // namespace dgrte::parallel
