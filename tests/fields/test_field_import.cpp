// Field files sampled at points: VTK point data is linear in the source tets (a linear field is
// reproduced to round-off), cell data gives the containing cell's value, CSV clouds are
// inverse-distance weighted (exact on source points and for constants); outside points and bad
// files are errors naming the file and the array.
#include "common/error.hpp"
#include "fields/field_import.hpp"

#include <gtest/gtest.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

namespace dgrte::fields {
namespace {

namespace fs = std::filesystem;

double linear(const Vec3& x) { return 1000.0 + 100.0 * x[0] + 50.0 * x[1] - 30.0 * x[2]; }

fs::path dir() {
  const auto d = fs::temp_directory_path() / "dgrte_field_tests";
  fs::create_directories(d);
  return d;
}

// [0, 1]^3 cut into n^3 cubes, each into 6 tets around its main diagonal (Kuhn), with point data
// T = linear(x), a constant-per-cell array "cellT" = linear(centroid) and a two-component array.
vtkNew<vtkUnstructuredGrid> box_grid(int n, double nan_at = -1) {
  vtkNew<vtkUnstructuredGrid> g;
  vtkNew<vtkPoints> pts;
  pts->SetDataTypeToDouble();
  auto id = [n](int i, int j, int k) { return static_cast<vtkIdType>((k * (n + 1) + j) * (n + 1) + i); };
  vtkNew<vtkDoubleArray> t, two, cellt;
  t->SetName("T");
  two->SetName("velocity2");
  two->SetNumberOfComponents(2);
  cellt->SetName("cellT");
  for (int k = 0; k <= n; ++k)
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) {
        const Vec3 x{double(i) / n, double(j) / n, double(k) / n};
        pts->InsertNextPoint(x.data());
        t->InsertNextValue(linear(x));
        two->InsertNextTuple2(1.0, 2.0);
      }
  if (nan_at >= 0) t->SetValue(static_cast<vtkIdType>(nan_at), std::nan(""));
  g->SetPoints(pts);
  const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        for (const auto& p : perm) {
          int c[3] = {i, j, k};
          vtkIdType ids[4];
          ids[0] = id(c[0], c[1], c[2]);
          Vec3 centroid{0, 0, 0};
          for (int s = 0; s < 3; ++s) {
            ++c[p[s]];
            ids[s + 1] = id(c[0], c[1], c[2]);
          }
          for (int s = 0; s < 4; ++s) {
            double x[3];
            pts->GetPoint(ids[s], x);
            for (int d = 0; d < 3; ++d) centroid[static_cast<std::size_t>(d)] += 0.25 * x[d];
          }
          g->InsertNextCell(VTK_TETRA, 4, ids);
          cellt->InsertNextValue(linear(centroid));
        }
  g->GetPointData()->AddArray(t);
  g->GetPointData()->AddArray(two);
  g->GetCellData()->AddArray(cellt);
  return g;
}

fs::path write_vtu(const std::string& name, vtkUnstructuredGrid* g) {
  const auto f = dir() / name;
  vtkNew<vtkXMLUnstructuredGridWriter> w;
  w->SetFileName(f.c_str());
  w->SetInputData(g);
  w->Write();
  return f;
}

std::vector<Vec3> random_points(int count, double lo, double hi, unsigned seed = 7) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<Vec3> p(static_cast<std::size_t>(count));
  for (auto& x : p) x = {u(gen), u(gen), u(gen)};
  return p;
}

std::string error_of(const FieldRequest& r, const std::vector<Vec3>& pts) {
  try {
    sample_fields(r, pts);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(FieldImport, VtuPointDataIsLinearInTets) {
  const auto f = write_vtu("box.vtu", box_grid(4));
  auto pts = random_points(300, 0.0, 1.0);
  pts.push_back({0, 0, 0});  // on the source's corner and faces
  pts.push_back({1, 0.3, 0.7});
  const auto s = sample_fields({f, {"T"}, false, 0, "test"}, pts);
  ASSERT_EQ(s.values.size(), 1u);
  for (std::size_t i = 0; i < pts.size(); ++i) EXPECT_NEAR(s.values[0][i], linear(pts[i]), 1e-9) << i;
  EXPECT_EQ(s.source_kind, "point data");
  EXPECT_EQ(s.outside, 0u);
  EXPECT_DOUBLE_EQ(s.ranges[0].source_min, 1000.0 - 30.0);
  EXPECT_DOUBLE_EQ(s.ranges[0].source_max, 1150.0);
  EXPECT_GE(s.ranges[0].sampled_min, s.ranges[0].source_min - 1e-9);
}

TEST(FieldImport, LegacyVtkAndCellData) {
  const auto grid = box_grid(3);
  const auto f = dir() / "box.vtk";
  vtkNew<vtkUnstructuredGridWriter> w;
  w->SetFileTypeToBinary();  // ASCII legacy files round coordinates to ~6 digits
  w->SetFileName(f.c_str());
  w->SetInputData(grid);
  w->Write();
  const auto pts = random_points(100, 0.01, 0.99);
  const auto s = sample_fields({f, {"cellT", "T"}, false, 0, "test"}, pts);
  EXPECT_EQ(s.source_kind, "point and cell data");
  // Cell data: the containing tet's centroid value, within the field's variation over one tet.
  const double h = 1.0 / 3.0, variation = h * (100 + 50 + 30);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_NEAR(s.values[0][i], linear(pts[i]), variation) << i;
    EXPECT_NEAR(s.values[1][i], linear(pts[i]), 1e-9) << i;
  }
}

TEST(FieldImport, OutsidePointsAreAnErrorOrTakeTheClosestValue) {
  const auto f = write_vtu("box_outside.vtu", box_grid(2));
  std::vector<Vec3> pts{{0.5, 0.5, 0.5}, {1.2, 0.5, 0.5}, {-0.1, 0.2, 0.3}};
  const auto msg = error_of({f, {"T"}, false, 0, "case.yaml: media.*.field"}, pts);
  EXPECT_NE(msg.find("case.yaml: media.*.field"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 of 3 points lie outside"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(1.2, 0.5, 0.5)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside: nearest"), std::string::npos) << msg;
  const auto s = sample_fields({f, {"T"}, true, 0, "test"}, pts);
  EXPECT_EQ(s.outside, 2u);
  EXPECT_NEAR(s.values[0][1], linear({1.0, 0.5, 0.5}), 1e-9);
  EXPECT_NEAR(s.values[0][2], linear({0.0, 0.2, 0.3}), 1e-9);
}

TEST(FieldImport, BadVtkFilesNameFileAndArray) {
  const auto f = write_vtu("box_bad.vtu", box_grid(2));
  const std::vector<Vec3> pts{{0.5, 0.5, 0.5}};
  auto msg = error_of({f, {"Temperature"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("box_bad.vtu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no point or cell array named 'Temperature'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("T (point)"), std::string::npos) << msg;  // lists what the file has
  msg = error_of({f, {"velocity2"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("2 components"), std::string::npos) << msg;
  const auto fn = write_vtu("box_nan.vtu", box_grid(2, 5));
  msg = error_of({fn, {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("box_nan.vtu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'T' holds nan at point 5"), std::string::npos) << msg;
  const auto garbage = dir() / "garbage.vtu";
  std::ofstream(garbage) << "this is not xml\n";
  msg = error_of({garbage, {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("not a VTK XML unstructured grid"), std::string::npos) << msg;
  msg = error_of({dir() / "missing.vtu", {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
  std::ofstream(dir() / "fields.dat") << "1\n";
  msg = error_of({dir() / "fields.dat", {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("unknown field file type"), std::string::npos) << msg;
}

fs::path write_cloud(const std::string& name, int n) {
  const auto f = dir() / name;
  std::ofstream out(f);
  out << "# a regular point cloud\nx, y, z, T, c\n";
  for (int k = 0; k <= n; ++k)
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) {
        const Vec3 x{double(i) / n, double(j) / n, double(k) / n};
        out << x[0] << "," << x[1] << "," << x[2] << "," << linear(x) << ",42\n";
      }
  return f;
}

TEST(FieldImport, CsvCloudIsInverseDistanceWeighted) {
  const auto f = write_cloud("cloud.csv", 5);
  std::vector<Vec3> pts{{0.2, 0.4, 0.6}, {0.1, 0.1, 0.1}, {0.5, 0.5, 0.5}};  // two on source points, one at a cell centre
  for (const auto& p : random_points(200, 0.0, 1.0)) pts.push_back(p);
  const auto s = sample_fields({f, {"T", "c"}, false, 0, "test"}, pts);
  EXPECT_EQ(s.source_kind, "point cloud");
  EXPECT_EQ(s.source_points, 216u);
  EXPECT_NEAR(s.max_distance, 2.0 * 0.2, 1e-12);
  EXPECT_NEAR(s.values[0][0], linear(pts[0]), 1e-9);
  EXPECT_NEAR(s.values[0][1], linear(pts[1]), 1e-9);
  EXPECT_NEAR(s.values[0][2], linear(pts[2]), 1e-9);  // 8 equidistant corners: their mean
  double worst = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_DOUBLE_EQ(s.values[1][i], 42.0);
    worst = std::max(worst, std::abs(s.values[0][i] - linear(pts[i])));
  }
  // IDW smooths a linear field by at most its change over about one spacing (0.2 m x 187 K/m).
  EXPECT_LT(worst, 0.2 * std::sqrt(100.0 * 100 + 50 * 50 + 30 * 30));
  EXPECT_GT(worst, 0.0);
}

TEST(FieldImport, CsvErrorsNameFileLineAndColumn) {
  const auto f = dir() / "bad.csv";
  const std::vector<Vec3> pts{{0.5, 0.5, 0.5}};
  std::ofstream(f) << "x,y,z,T\n0,0,0,300\n1,0,0\n";
  auto msg = error_of({f, {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("bad.csv (line 3)"), std::string::npos) << msg;
  std::ofstream(f) << "x,y,z,T\n0,0,0,300\n1,0,0,hot\n";
  msg = error_of({f, {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("column 'T' holds 'hot'"), std::string::npos) << msg;
  std::ofstream(f) << "x,y,z,T\n0,0,0,nan\n";
  msg = error_of({f, {"T"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("not a finite number"), std::string::npos) << msg;
  std::ofstream(f) << "x,y,z,T\n0,0,0,300\n";
  msg = error_of({f, {"X_H2O"}, false, 0, "w"}, pts);
  EXPECT_NE(msg.find("no column 'X_H2O'"), std::string::npos) << msg;
  // A point far from the cloud: outside unless max_distance allows it.
  const auto cloud = write_cloud("cloud_small.csv", 2);
  const std::vector<Vec3> far{{3.0, 0.5, 0.5}};
  msg = error_of({cloud, {"T"}, false, 0, "w"}, far);
  EXPECT_NE(msg.find("1 of 1 points lie outside the point cloud"), std::string::npos) << msg;
  const auto s = sample_fields({cloud, {"T"}, false, 5.0, "w"}, far);
  EXPECT_EQ(s.outside, 0u);
}

// Found by fuzzing (tests/fuzz/corpus/field_import/crash_point_out_of_range.vtu.bin): a cell naming a
// point the file does not have crashed VTK's probe filter; it is an input error naming the point.
TEST(FieldImport, CellsNamingMissingPointsAreInputErrors) {
  std::ifstream in(DGRTE_SOURCE_DIR "/tests/fuzz/corpus/field_import/crash_point_out_of_range.vtu.bin", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 1u);
  const auto f = std::filesystem::temp_directory_path() / "dgrte_out_of_range.vtu";
  std::ofstream(f, std::ios::binary) << text.substr(1);  // the first byte picks the fuzz target's format
  const auto msg = error_of({f, {"T"}, false, 0, "case.yaml: media.*.field"}, {{0.1, 0.1, 0.1}});
  EXPECT_NE(msg.find("dgrte_out_of_range.vtu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("names point 3"), std::string::npos) << msg;
  std::filesystem::remove(f);
}

// Found by fuzzing: files whose declared sizes disagree with their data crash VTK 9.1's own readers
// (the XML one dereferences null, the legacy one frees memory it did not allocate). They are read in a
// child process first, so the crash is an input error naming the file; the XML one crashes there.
TEST(FieldImport, FilesThatCrashVtksReadersAreInputErrors) {
  for (const std::string name : {"crash_vtk91_xml_read_piece_data.vtu", "crash_vtk91_legacy_cells_count.vtk"}) {
    std::ifstream in(DGRTE_SOURCE_DIR "/tests/fuzz/corpus/field_import/" + name + ".bin", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(text.size(), 1u) << name;
    const auto f = dir() / name;
    std::ofstream(f, std::ios::binary) << text.substr(1);  // the first byte picks the fuzz target's format
    const auto msg = error_of({f, {"T"}, false, 0, "case.yaml: media.*.field"}, {{0.1, 0.1, 0.1}});
    EXPECT_NE(msg.find("case.yaml: media.*.field: " + f.string()), std::string::npos) << msg;
    if (name.ends_with(".vtu")) {
      EXPECT_NE(msg.find("VTK's reader crashed reading this file"), std::string::npos) << msg;
      EXPECT_NE(msg.find("File > Save Data"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace dgrte::fields
