// solution.vtu read back through VTK: Lagrange cells of the run's order carrying the DG polynomial,
// and the --linear subdivision.
#include "output/vtk_output.hpp"

#include <gtest/gtest.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cmath>
#include <fstream>

namespace dgrte::output {
namespace {

const mesh::TetMesh& cube() {
  static const auto m = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 1.0);
  return m;
}

vtkSmartPointer<vtkUnstructuredGrid> read_back(const std::filesystem::path& f) {
  auto r = vtkSmartPointer<vtkXMLUnstructuredGridReader>::New();
  r->SetFileName(f.c_str());
  r->Update();
  return r->GetOutput();
}

// A polynomial of degree min(p, 3): representable exactly by the order-p field.
double poly(const transport::Vec3& x, int p) {
  if (p == 1) return 1 + x[0] - 2 * x[2];
  if (p == 2) return 1 + x[0] * x[1] - x[2] * x[2];
  return 1 + x[0] * x[1] - x[2] * x[2] * x[2] + 0.5 * x[1] * x[1] * x[2];
}

class VtkOrders : public ::testing::TestWithParam<int> {};

TEST_P(VtkOrders, LagrangeCellsCarryThePolynomial) {
  const int p = GetParam();
  const auto disc = transport::make_discretization(cube(), p);
  std::vector<double> u(disc.num_dofs());
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = poly(disc.node_position[i], p);
  const auto dir = std::filesystem::temp_directory_path() / ("dgrte_vtk_test_" + std::to_string(p));
  std::filesystem::create_directories(dir);
  write_solution_vtu(dir / "s.vtu", disc, {{"I_0", u}}, {{"element_id", std::vector<double>(disc.num_elements(), 7.0)}}, false);
  const auto grid = read_back(dir / "s.vtu");
  ASSERT_EQ(grid->GetNumberOfCells(), static_cast<vtkIdType>(disc.num_elements()));
  EXPECT_EQ(grid->GetCellType(0), 71);  // VTK_LAGRANGE_TETRAHEDRON
  EXPECT_EQ(grid->GetCell(0)->GetNumberOfPoints(), dg::tet_num_nodes(p));
  auto* arr = grid->GetPointData()->GetArray("I_0");
  ASSERT_NE(arr, nullptr);
  double max_err = 0;
  for (vtkIdType i = 0; i < grid->GetNumberOfPoints(); ++i) {
    double x[3];
    grid->GetPoint(i, x);
    max_err = std::max(max_err, std::abs(arr->GetTuple1(i) - poly({x[0], x[1], x[2]}, p)));
  }
  EXPECT_LT(max_err, 1e-10);
  EXPECT_EQ(grid->GetCellData()->GetArray("element_id")->GetTuple1(0), 7.0);
  // Cell vertices are the element's vertices (VTK puts the corners first).
  double x0[3];
  grid->GetPoint(grid->GetCell(0)->GetPointId(1), x0);
  const auto& v1 = cube().vertices[cube().tets[0][1]];
  EXPECT_NEAR(x0[0], v1[0], 1e-12);
  EXPECT_NEAR(x0[2], v1[2], 1e-12);
  std::filesystem::remove_all(dir);
}
INSTANTIATE_TEST_SUITE_P(Orders, VtkOrders, ::testing::Values(1, 2, 3, 5, 8));

TEST(VtkOutput, LinearSubdivisionHasPCubedTetsOfPositiveVolume) {
  const int p = 3;
  const auto disc = transport::make_discretization(cube(), p);
  std::vector<double> u(disc.num_dofs(), 1.0);
  const auto f = std::filesystem::temp_directory_path() / "dgrte_vtk_linear.vtu";
  write_solution_vtu(f, disc, {{"I_0", u}}, {}, true);
  const auto grid = read_back(f);
  ASSERT_EQ(grid->GetNumberOfCells(), static_cast<vtkIdType>(disc.num_elements() * p * p * p));
  EXPECT_EQ(grid->GetCellType(0), 10);  // VTK_TETRA
  double total = 0;
  for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
    double a[4][3];
    for (int k = 0; k < 4; ++k) grid->GetPoint(grid->GetCell(c)->GetPointId(k), a[k]);
    double d[3][3];
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j) d[k][j] = a[k + 1][j] - a[0][j];
    const double vol = (d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                        d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0])) / 6;
    EXPECT_GT(vol, 0);
    total += vol;
  }
  EXPECT_NEAR(total, 8.0, 1e-10);
  std::filesystem::remove(f);
}

}  // namespace
}  // namespace dgrte::output
