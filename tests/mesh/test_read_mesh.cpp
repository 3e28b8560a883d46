// read_mesh on small hand-written .msh 2.2 files: valid ones, and each kind of bad input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mesh/tet_mesh.hpp"
#include "test_support.hpp"

namespace dgrte::mesh {
namespace {

using testing::expect_input_error;
using testing::ScratchDir;

// An ASCII .msh 2.2 file. Element lines are "tag type ntags phys elem nodes...".
std::string msh22(const std::vector<std::string>& names, const std::vector<std::string>& nodes,
                  const std::vector<std::string>& elements) {
  std::string s = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
  if (!names.empty()) {
    s += "$PhysicalNames\n" + std::to_string(names.size()) + "\n";
    for (const auto& n : names) s += n + "\n";
    s += "$EndPhysicalNames\n";
  }
  s += "$Nodes\n" + std::to_string(nodes.size()) + "\n";
  for (const auto& n : nodes) s += n + "\n";
  s += "$EndNodes\n$Elements\n" + std::to_string(elements.size()) + "\n";
  for (const auto& e : elements) s += e + "\n";
  s += "$EndElements\n";
  return s;
}

const std::vector<std::string> kNames{"3 1 \"medium\"", "2 2 \"wall\""};
// Unit tet 1-2-3-4 and a second tet 2-3-4-5 across the face x+y+z=1.
const std::vector<std::string> kNodes{"1 0 0 0", "2 1 0 0", "3 0 1 0", "4 0 0 1", "5 1 1 1"};
// The four faces of tet 1-2-3-4 (wall), as triangles.
const std::vector<std::string> kTetWalls{"1 2 2 2 1 1 2 3", "2 2 2 2 1 1 2 4", "3 2 2 2 1 1 3 4"};
const std::string kLastWall = "4 2 2 2 1 2 3 4";

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ReadMesh, SingleTet) {
  ScratchDir dir;
  const auto file = dir.write("one.msh", msh22(kNames, kNodes, concat(kTetWalls, {kLastWall, "10 4 2 1 1 1 2 3 4"})));
  const TetMesh m = read_mesh(file);
  EXPECT_EQ(m.source, file.string());
  ASSERT_EQ(m.num_elements(), 1u);
  EXPECT_EQ(m.vertices.size(), 4u);  // node 5 is used by no tet
  EXPECT_EQ(m.tet_tags, std::vector<std::size_t>{10});
  EXPECT_EQ(m.tet_group, std::vector<int>{0});
  ASSERT_EQ(m.volume_groups.size(), 1u);
  EXPECT_EQ(m.volume_groups[0].name, "medium");
  ASSERT_EQ(m.surface_groups.size(), 1u);
  EXPECT_EQ(m.surface_groups[0].name, "wall");
  EXPECT_EQ(m.surface_groups[0].tag, 2);
  EXPECT_DOUBLE_EQ(tet_volume(m, 0), 1.0 / 6.0);
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(m.neighbour[0][f], -1);
    EXPECT_EQ(m.boundary_group[0][f], 0);
  }
}

TEST(ReadMesh, TwoTetsSparseNodeTagsAndUnusedNodes) {
  ScratchDir dir;
  // Node tags far apart (sparse map path); node 77 is unused; the shared face is interior.
  const std::vector<std::string> nodes{"1000 0 0 0", "2000 1 0 0", "3000 0 1 0",
                                       "4000 0 0 1", "77 3 3 3",   "5000000 1 1 1"};
  const std::vector<std::string> elems{"1 2 2 2 1 1000 2000 3000",       "2 2 2 2 1 1000 2000 4000",
                                       "3 2 2 2 1 1000 3000 4000",       "4 2 2 2 1 2000 3000 5000000",
                                       "5 2 2 2 1 2000 4000 5000000",    "6 2 2 2 1 3000 4000 5000000",
                                       "7 2 2 2 1 2000 3000 4000",  // internal surface: ignored
                                       "11 4 2 1 1 1000 2000 3000 4000", "12 4 2 1 1 2000 3000 4000 5000000"};
  const TetMesh m = read_mesh(dir.write("two.msh", msh22(kNames, nodes, elems)));
  ASSERT_EQ(m.num_elements(), 2u);
  EXPECT_EQ(m.vertices.size(), 5u);
  EXPECT_EQ((std::vector<std::size_t>{11, 12}), m.tet_tags);
  // Face 2 of tet 0 is (v1,v2,v3) = nodes 2000,3000,4000 = face 0 (v0,v1,v2) of tet 1.
  EXPECT_EQ(m.neighbour[0][2], 1);
  EXPECT_EQ(m.neighbour_face[0][2], 0);
  EXPECT_EQ(m.neighbour[1][0], 0);
  EXPECT_EQ(m.neighbour_face[1][0], 2);
  EXPECT_EQ(m.boundary_group[0][2], -1);
  EXPECT_NEAR(tet_volume(m, 0) + tet_volume(m, 1), 1.0 / 6.0 + 1.0 / 3.0, 1e-15);
  const auto q = mesh_quality(m);
  EXPECT_EQ(q.boundary_faces, 6u);
  EXPECT_EQ(q.interior_faces, 1u);
  // The internal triangle 7 of group "wall" is counted (for the warning and mesh-info), at its centroid.
  ASSERT_EQ(m.interior_tagged_faces.size(), 1u);
  EXPECT_EQ(m.interior_tagged_faces[0], 1u);
  EXPECT_NEAR(m.first_interior_tagged[0][0], 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(m.first_interior_tagged[0][1], 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(m.first_interior_tagged[0][2], 1.0 / 3.0, 1e-15);
}

TEST(ReadMesh, TetInNoVolumeGroupHasGroupMinusOne) {
  ScratchDir dir;
  // Elements of physical tag 0 (none): Gmsh keeps them, the tet is in no volume group.
  const auto file =
      dir.write("nogroup.msh", msh22({"2 2 \"wall\""}, kNodes, concat(kTetWalls, {kLastWall, "10 4 2 0 1 1 2 3 4"})));
  const TetMesh m = read_mesh(file);
  ASSERT_EQ(m.num_elements(), 1u);
  EXPECT_TRUE(m.volume_groups.empty());
  EXPECT_EQ(m.tet_group[0], -1);
}

TEST(ReadMeshErrors, NonexistentFile) {
  ScratchDir dir;
  const auto file = dir.path() / "missing_mesh.msh";
  expect_input_error([&] { read_mesh(file); }, {file.string(), "does not exist"});
}

TEST(ReadMeshErrors, Directory) {
  ScratchDir dir;
  expect_input_error([&] { read_mesh(dir.path()); }, {dir.path().string(), "not a regular file"});
}

TEST(ReadMeshErrors, TruncatedInNodes) {
  ScratchDir dir;
  const std::string full = msh22(kNames, kNodes, concat(kTetWalls, {kLastWall, "10 4 2 1 1 1 2 3 4"}));
  const auto file = dir.write("cut_nodes.msh", full.substr(0, full.find("3 0 1 0")));
  expect_input_error([&] { read_mesh(file); }, {"cut_nodes.msh", "truncated"});
}

TEST(ReadMeshErrors, TruncatedInElements) {
  ScratchDir dir;
  const std::string full = msh22(kNames, kNodes, concat(kTetWalls, {kLastWall, "10 4 2 1 1 1 2 3 4"}));
  const auto file = dir.write("cut_elements.msh", full.substr(0, full.find("$EndElements")));
  expect_input_error([&] { read_mesh(file); }, {"cut_elements.msh", "truncated"});
}

TEST(ReadMeshErrors, TruncatedNodeCountReportedByGmsh) {
  ScratchDir dir;
  // Ends with a $End line (passes the tail check) but the node section is short: Gmsh's error.
  const auto file =
      dir.write("short_nodes.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n$EndNodes\n");
  expect_input_error([&] { read_mesh(file); }, {"short_nodes.msh", "Gmsh"});
}

TEST(ReadMeshErrors, NotAMeshFile) {
  ScratchDir dir;
  const auto file = dir.write("notes.msh", "These are my notes, not a mesh.\n");
  expect_input_error([&] { read_mesh(file); }, {"notes.msh", "Gmsh"});
  // A later read works: the Gmsh session was finalized after the error.
  const auto good = dir.write("good.msh", msh22(kNames, kNodes, concat(kTetWalls, {kLastWall, "10 4 2 1 1 1 2 3 4"})));
  EXPECT_EQ(read_mesh(good).num_elements(), 1u);
}

// Found by fuzzing: a file Gmsh would take for a post-processing view ("$View", "$NodeData" ...) crashed
// Gmsh's view reader; anything but a .msh 2.2/4.x mesh is refused before Gmsh sees it.
TEST(ReadMeshErrors, ViewsAndOtherFormatsNeverReachGmsh) {
  expect_input_error([&] { read_mesh(DGRTE_SOURCE_DIR "/tests/fuzz/corpus/mesh_msh/crash_view_header.msh"); },
                     {"crash_view_header.msh", "not a Gmsh mesh file", "$MeshFormat"});
  ScratchDir dir;
  const auto old = dir.write("old.msh", "$MeshFormat\n1.0 0 8\n$EndMeshFormat\n");
  expect_input_error([&] { read_mesh(old); }, {"old.msh", "line 2", "version 1", "4.1"});
  const auto with_data = dir.write("data.msh", msh22(kNames, kNodes, concat(kTetWalls, {kLastWall, "10 4 2 1 1 1 2 3 4"})) +
                                                   "$NodeData\n1\n\"T\"\n1\n0.0\n3\n0\n1\n1\n1 300\n$EndNodeData\n");
  expect_input_error([&] { read_mesh(with_data); }, {"data.msh", "post-processing data", "$NodeData"});
}

// Found by fuzzing: Gmsh 4.8 trusts the count of $PhysicalNames and crashed on a section that breaks its
// format; dgrte checks the section first and names the line.
TEST(ReadMeshErrors, MalformedPhysicalNamesNeverReachGmsh) {
  ScratchDir dir;
  const std::string head = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n";
  const auto short_section = dir.write("short.msh", head + "3\n3 1 \"medium\"\n2 2 \"walls\"\n$EndPhysicalNames\n$Nodes\n0\n$EndNodes\n");
  expect_input_error([&] { read_mesh(short_section); }, {"short.msh", "line 8", "$PhysicalNames"});
  const auto bad_dim = dir.write("dim.msh", head + "1\n4 11 \"xmin\"\n$EndPhysicalNames\n$Nodes\n0\n$EndNodes\n");
  expect_input_error([&] { read_mesh(bad_dim); }, {"dim.msh", "line 6", "dimension 0-3"});
  const auto unquoted = dir.write("name.msh", head + "1\n2 11 xmin\n$EndPhysicalNames\n$Nodes\n0\n$EndNodes\n");
  expect_input_error([&] { read_mesh(unquoted); }, {"name.msh", "line 6", "quoted name"});
  for (const char* f : {"crash_physical_names_count.msh", "crash_physical_names_dimension.msh"})
    expect_input_error([&] { read_mesh(std::string(DGRTE_SOURCE_DIR "/tests/fuzz/corpus/mesh_msh/") + f); }, {f, "$PhysicalNames"});
}

// Found by fuzzing: a file whose counts make Gmsh allocate several GB. Gmsh reads in a child process
// whose memory is capped, so the run gets an input error at once instead of swapping.
TEST(ReadMeshErrors, HugeDeclaredCountIsAnInputError) {
  const std::string f = DGRTE_SOURCE_DIR "/tests/fuzz/corpus/mesh_msh/oom_declared_count.msh";
  expect_input_error([&] { read_mesh(f); }, {"oom_declared_count.msh"});
}

TEST(ReadMeshErrors, NoTetrahedra) {
  ScratchDir dir;
  const auto file = dir.write("surface_only.msh", msh22(kNames, kNodes, concat(kTetWalls, {kLastWall})));
  expect_input_error([&] { read_mesh(file); }, {"no tetrahedra in", "surface_only.msh", "Physical Volume", "3-D"});
}

TEST(ReadMeshErrors, InvertedTet) {
  ScratchDir dir;
  // Tet 21 lists 2-4-3-5: negative orientation.
  const auto file = dir.write("inverted.msh", msh22(kNames, kNodes, {"20 4 2 1 1 1 2 3 4", "21 4 2 1 1 2 4 3 5"}));
  const auto msg = expect_input_error([&] { read_mesh(file); }, {"inverted.msh", "element 21", "inverted", "centroid"});
  EXPECT_NE(msg.find("(0.5, 0.5, 0.5)"), std::string::npos) << msg;  // centroid of nodes 2,3,4,5
}

TEST(ReadMeshErrors, ZeroVolumeTet) {
  ScratchDir dir;
  const std::vector<std::string> nodes{"1 0 0 0", "2 1 0 0", "3 0 1 0", "4 1 1 0"};
  const auto file = dir.write("flat.msh", msh22(kNames, nodes, {"7 4 2 1 1 1 2 3 4"}));
  expect_input_error([&] { read_mesh(file); },
                     {"flat.msh", "element 7", "degenerate", "zero volume", "centroid (0.5, 0.5, 0)"});
}

TEST(ReadMeshErrors, Hexahedron) {
  ScratchDir dir;
  const std::vector<std::string> nodes{"1 0 0 0", "2 1 0 0", "3 1 1 0", "4 0 1 0",
                                       "5 0 0 1", "6 1 0 1", "7 1 1 1", "8 0 1 1"};
  const auto file = dir.write("hex.msh", msh22(kNames, nodes, {"3 5 2 1 1 1 2 3 4 5 6 7 8"}));
  expect_input_error([&] { read_mesh(file); }, {"hex.msh", "Hexahedron", "1 x", "element 3", "tetrahedra"});
}

TEST(ReadMeshErrors, MixedTetsAndPrisms) {
  ScratchDir dir;
  const std::vector<std::string> nodes{"1 0 0 0", "2 1 0 0", "3 0 1 0", "4 0 0 1", "5 1 0 1",
                                       "6 0 1 1", "7 0 0 2", "8 1 0 2", "9 0 1 2"};
  const auto file = dir.write(
      "prisms.msh", msh22(kNames, nodes, {"1 6 2 1 1 1 2 3 4 5 6", "2 6 2 1 1 4 5 6 7 8 9", "3 4 2 1 1 1 2 3 4"}));
  expect_input_error([&] { read_mesh(file); }, {"prisms.msh", "Prism", "2 x"});
}

TEST(ReadMeshErrors, SecondOrderTet) {
  ScratchDir dir;
  const std::vector<std::string> nodes{"1 0 0 0",     "2 1 0 0",   "3 0 1 0",   "4 0 0 1",     "5 0.5 0 0",
                                       "6 0.5 0.5 0", "7 0 0.5 0", "8 0 0 0.5", "9 0 0.5 0.5", "10 0.5 0 0.5"};
  const auto file = dir.write("tet10.msh", msh22(kNames, nodes, {"1 11 2 1 1 1 2 3 4 5 6 7 8 9 10"}));
  expect_input_error([&] { read_mesh(file); }, {"tet10.msh", "Tetrahedron 10", "1 x"});
}

TEST(ReadMeshErrors, SecondOrderTriangleInSurfaceGroup) {
  ScratchDir dir;
  const std::vector<std::string> nodes{"1 0 0 0",   "2 1 0 0",     "3 0 1 0",  "4 0 0 1",
                                       "5 0.5 0 0", "6 0.5 0.5 0", "7 0 0.5 0"};
  const auto file = dir.write("tri6.msh", msh22(kNames, nodes, {"1 9 2 2 1 1 2 3 5 6 7", "2 4 2 1 1 1 2 3 4"}));
  expect_input_error([&] { read_mesh(file); }, {"tri6.msh", "\"wall\"", "Triangle 6", "element 1"});
}

TEST(ReadMeshErrors, UnlabelledBoundary) {
  ScratchDir dir;
  // Only three of the four faces are in the "wall" group; the face x+y+z=1 is unlabelled.
  const auto file = dir.write("open.msh", msh22(kNames, kNodes, concat(kTetWalls, {"10 4 2 1 1 1 2 3 4"})));
  const auto msg =
      expect_input_error([&] { read_mesh(file); }, {"open.msh", "1 boundary face", "Physical Surface", "element 10"});
  EXPECT_NE(msg.find("(0.333333, 0.333333, 0.333333)"), std::string::npos) << msg;
}

TEST(ReadMesh, UnlabelledBoundaryIsKeptWhenLabelsAreOptional) {
  // mesh-info describes such a mesh instead of refusing it.
  ScratchDir dir;
  const auto file = dir.write("open.msh", msh22(kNames, kNodes, concat(kTetWalls, {"10 4 2 1 1 1 2 3 4"})));
  const TetMesh m = read_mesh(file, BoundaryLabels::optional);
  const auto u = unlabelled_boundary_faces(m);
  EXPECT_EQ(u.count, 1u);
  EXPECT_NEAR(u.first_centroid[0], 1.0 / 3.0, 1e-15);
  EXPECT_EQ(u.first_element, 0u);
}

TEST(ReadMeshErrors, NoSurfaceGroupsAtAll) {
  ScratchDir dir;
  const auto file = dir.write("bare.msh", msh22({"3 1 \"medium\""}, kNodes, {"1 4 2 1 1 1 2 3 4"}));
  expect_input_error([&] { read_mesh(file); }, {"bare.msh", "4 boundary face", "Physical Surface"});
}

TEST(ReadMeshErrors, ThreeTetsShareAFace) {
  ScratchDir dir;
  const auto nodes = concat(kNodes, {"6 0.6 0.6 0.6"});
  const auto file =
      dir.write("fin.msh", msh22(kNames, nodes, {"31 4 2 1 1 1 2 3 4", "32 4 2 1 1 2 3 4 5", "33 4 2 1 1 2 3 4 6"}));
  expect_input_error([&] { read_mesh(file); }, {"fin.msh", "shared by 3", "31", "32", "33"});
}

TEST(ReadMeshErrors, DuplicatedTet) {
  ScratchDir dir;
  const auto file = dir.write("dup.msh", msh22(kNames, kNodes, {"41 4 2 1 1 1 2 3 4", "42 4 2 1 1 1 2 3 4"}));
  expect_input_error([&] { read_mesh(file); }, {"dup.msh", "41", "42", "same four vertices"});
}

TEST(ReadMeshErrors, OverlappingTets) {
  ScratchDir dir;
  // Tets 1-2-3-4 and 2-3-4-6 with node 6 on the same side of face 2-3-4 as node 1.
  const auto nodes = concat(kNodes, {"6 0.1 0.1 0.1"});
  const auto file = dir.write("overlap.msh", msh22(kNames, nodes, {"51 4 2 1 1 1 2 3 4", "52 4 2 1 1 2 4 3 6"}));
  expect_input_error([&] { read_mesh(file); }, {"overlap.msh", "51", "52", "overlap"});
}

TEST(ReadMeshErrors, TetInTwoVolumeGroups) {
  ScratchDir dir;
  // In .msh 2.2 an element listed under two physical tags belongs to both groups.
  const auto file =
      dir.write("twovol.msh", msh22({"3 1 \"medium\"", "3 5 \"other\"", "2 2 \"wall\""}, kNodes,
                                    concat(kTetWalls, {kLastWall, "10 4 2 1 1 1 2 3 4", "10 4 2 5 1 1 2 3 4"})));
  expect_input_error([&] { read_mesh(file); },
                     {"twovol.msh", "element 10", "\"medium\"", "\"other\"", "Physical Volume"});
}

TEST(ReadMeshErrors, BoundaryFaceInTwoSurfaceGroups) {
  ScratchDir dir;
  const auto file =
      dir.write("twosurf.msh", msh22({"3 1 \"medium\"", "2 2 \"wall\"", "2 3 \"inlet\""}, kNodes,
                                     concat(kTetWalls, {kLastWall, "5 2 2 3 2 2 3 4", "10 4 2 1 1 1 2 3 4"})));
  expect_input_error([&] { read_mesh(file); },
                     {"twosurf.msh", "two surface groups", "\"wall\"", "\"inlet\"", "element 10"});
}

TEST(ReadMeshErrors, UndefinedNode) {
  ScratchDir dir;
  const auto file = dir.write("undef.msh", msh22(kNames, kNodes, {"1 4 2 1 1 1 2 3 9"}));
  expect_input_error([&] { read_mesh(file); }, {"undef.msh"});
}

TEST(ReadMesh, Msh41HandWritten) {
  ScratchDir dir;
  // One tet in volume entity 1 (physical 1 "medium"); its 4 faces on surface entity 1 (physical 2 "wall").
  const std::string text =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
      "$PhysicalNames\n2\n3 1 \"medium\"\n2 2 \"wall\"\n$EndPhysicalNames\n"
      "$Entities\n0 0 1 1\n"
      "1 0 0 0 1 1 1 1 2 0\n"
      "1 0 0 0 1 1 1 1 1 0\n"
      "$EndEntities\n"
      "$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n"
      "$Elements\n2 5 1 5\n"
      "2 1 2 4\n1 1 2 3\n2 1 2 4\n3 1 3 4\n4 2 3 4\n"
      "3 1 4 1\n5 1 2 3 4\n"
      "$EndElements\n";
  const TetMesh m = read_mesh(dir.write("v41.msh", text));
  ASSERT_EQ(m.num_elements(), 1u);
  EXPECT_EQ(m.tet_tags[0], 5u);
  EXPECT_EQ(m.tet_group[0], 0);
  ASSERT_EQ(m.surface_groups.size(), 1u);
  for (int f = 0; f < 4; ++f) EXPECT_EQ(m.boundary_group[0][f], 0);
}

}  // namespace
}  // namespace dgrte::mesh
