#include "output/vtk_output.hpp"
#include "common/tet_topology.hpp"

#include "common/error.hpp"
#include "io/atomic_file.hpp"

#include <fmt/format.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkIdTypeArray.h>
#include <vtkFieldData.h>
#include <vtkLagrangeTetra.h>
#include <vtkLagrangeTriangle.h>
#include <vtkStringArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include <array>
#include <cmath>

namespace dgrte::output {
namespace {

// Equispaced lattice (i,j,k), i+j+k <= p, in our own order; and its split into p^3 tets.
struct Lattice {
  dg::Points rst;
  std::vector<std::array<int, 4>> tets;
};

Lattice linear_lattice(int p) {
  Lattice L;
  std::vector<std::array<int, 3>> ijk;
  auto index = [&](int i, int j, int k) {
    for (std::size_t n = 0; n < ijk.size(); ++n)
      if (ijk[n] == std::array<int, 3>{i, j, k}) return static_cast<int>(n);
    return -1;
  };
  for (int k = 0; k <= p; ++k)
    for (int j = 0; j + k <= p; ++j)
      for (int i = 0; i + j + k <= p; ++i) ijk.push_back({i, j, k});
  L.rst.resize(static_cast<Eigen::Index>(ijk.size()), 3);
  for (std::size_t n = 0; n < ijk.size(); ++n)
    for (int d = 0; d < 3; ++d) L.rst(static_cast<Eigen::Index>(n), d) = -1.0 + 2.0 * ijk[n][d] / p;
  auto add = [&](std::array<std::array<int, 3>, 4> q) {
    // Keep positive orientation in (r,s,t): swap two vertices if the lattice tet is inverted.
    auto d = [&](int a, int c) { return q[a][c] - q[0][c]; };
    const int det = d(1, 0) * (d(2, 1) * d(3, 2) - d(2, 2) * d(3, 1)) - d(1, 1) * (d(2, 0) * d(3, 2) - d(2, 2) * d(3, 0)) +
                    d(1, 2) * (d(2, 0) * d(3, 1) - d(2, 1) * d(3, 0));
    if (det < 0) std::swap(q[2], q[3]);
    L.tets.push_back({index(q[0][0], q[0][1], q[0][2]), index(q[1][0], q[1][1], q[1][2]), index(q[2][0], q[2][1], q[2][2]),
                      index(q[3][0], q[3][1], q[3][2])});
  };
  for (int k = 0; k < p; ++k)
    for (int j = 0; j + k < p; ++j)
      for (int i = 0; i + j + k < p; ++i) {
        const std::array<int, 3> p0{i, j, k}, p1{i + 1, j, k}, p2{i, j + 1, k}, p3{i, j, k + 1};
        add({p0, p1, p2, p3});
        if (i + j + k <= p - 2) {
          const std::array<int, 3> p4{i + 1, j + 1, k}, p5{i + 1, j, k + 1}, p6{i, j + 1, k + 1};
          add({p1, p6, p2, p4});
          add({p1, p6, p4, p5});
          add({p1, p6, p5, p3});
          add({p1, p6, p3, p2});
          if (i + j + k <= p - 3) add({p4, p5, p6, {i + 1, j + 1, k + 1}});
        }
      }
  return L;
}

void add_field_data(vtkUnstructuredGrid* grid, const std::vector<StringData>& field_data) {
  for (const auto& d : field_data) {
    vtkNew<vtkStringArray> arr;
    arr->SetName(d.name.c_str());
    arr->SetNumberOfValues(static_cast<vtkIdType>(d.values.size()));
    for (std::size_t i = 0; i < d.values.size(); ++i) arr->SetValue(static_cast<vtkIdType>(i), d.values[i]);
    grid->GetFieldData()->AddArray(arr);
  }
}

void write_grid(const std::filesystem::path& file, vtkUnstructuredGrid* grid) {
  io::write_atomically(file, [&](const std::filesystem::path& tmp) {
    vtkNew<vtkXMLUnstructuredGridWriter> writer;
    writer->SetFileName(tmp.c_str());
    writer->SetInputData(grid);
    writer->SetDataModeToAppended();
    writer->EncodeAppendedDataOff();
    if (writer->Write() != 1)
      throw InputError(fmt::format("{}: VTK could not write the file (check the folder is writable and the disk not full)",
                                   file.string()));
  });
}

}  // namespace

dg::Points vtk_lagrange_points(int order) {
  const int n = dg::tet_num_nodes(order);
  vtkNew<vtkLagrangeTetra> cell;
  cell->GetPointIds()->SetNumberOfIds(n);
  cell->GetPoints()->SetNumberOfPoints(n);
  cell->Initialize();
  const double* pc = cell->GetParametricCoords();
  dg::Points rst(n, 3);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) rst(i, d) = -1.0 + 2.0 * pc[3 * i + d];  // unit tet [0,1] -> [-1,1]
  return rst;
}

void write_solution_vtu(const std::filesystem::path& file, const transport::Discretization& disc,
                        const std::vector<PointField>& point_fields, const std::vector<CellField>& cell_fields,
                        bool linear, const std::vector<StringData>& field_data) {
  const int p = disc.ref.order;
  const auto K = static_cast<vtkIdType>(disc.num_elements());
  const Lattice lattice = linear ? linear_lattice(p) : Lattice{vtk_lagrange_points(p), {}};
  const Eigen::MatrixXd P = disc.ref.interpolation_matrix(lattice.rst);
  const auto npc = static_cast<vtkIdType>(lattice.rst.rows());  // points per element
  const auto cells_per_element = linear ? static_cast<vtkIdType>(lattice.tets.size()) : 1;
  const auto np = static_cast<Eigen::Index>(disc.ref.num_nodes);

  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(K * npc);
  for (vtkIdType e = 0; e < K; ++e) {
    const auto v = disc.element_vertices(static_cast<std::size_t>(e));
    for (vtkIdType i = 0; i < npc; ++i) {
      const auto x = dg::map_to_physical(v, lattice.rst(i, 0), lattice.rst(i, 1), lattice.rst(i, 2));
      points->SetPoint(e * npc + i, x.data());
    }
  }
  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(points);
  vtkNew<vtkCellArray> cells;
  cells->AllocateExact(K * cells_per_element, K * cells_per_element * (linear ? 4 : npc));
  std::vector<vtkIdType> ids(static_cast<std::size_t>(npc));
  for (vtkIdType e = 0; e < K; ++e) {
    if (linear) {
      for (const auto& t : lattice.tets) {
        const vtkIdType q[4] = {e * npc + t[0], e * npc + t[1], e * npc + t[2], e * npc + t[3]};
        cells->InsertNextCell(4, q);
      }
    } else {
      for (vtkIdType i = 0; i < npc; ++i) ids[static_cast<std::size_t>(i)] = e * npc + i;
      cells->InsertNextCell(npc, ids.data());
    }
  }
  grid->SetCells(linear ? VTK_TETRA : VTK_LAGRANGE_TETRAHEDRON, cells);

  Eigen::VectorXd values;
  for (const auto& f : point_fields) {
    vtkNew<vtkDoubleArray> arr;
    arr->SetName(f.name.c_str());
    arr->SetNumberOfTuples(K * npc);
    for (vtkIdType e = 0; e < K; ++e) {
      values.noalias() = P * Eigen::Map<const Eigen::VectorXd>(f.nodal.data() + e * np, np);
      for (vtkIdType i = 0; i < npc; ++i) arr->SetValue(e * npc + i, values[i]);
    }
    grid->GetPointData()->AddArray(arr);
  }
  for (const auto& f : cell_fields) {
    vtkNew<vtkDoubleArray> arr;
    arr->SetName(f.name.c_str());
    arr->SetNumberOfTuples(K * cells_per_element);
    for (vtkIdType e = 0; e < K; ++e)
      for (vtkIdType c = 0; c < cells_per_element; ++c) arr->SetValue(e * cells_per_element + c, f.values[static_cast<std::size_t>(e)]);
    grid->GetCellData()->AddArray(arr);
  }

  add_field_data(grid, field_data);
  write_grid(file, grid);
}

void write_faces_vtu(const std::filesystem::path& file, const transport::Discretization& disc,
                     const std::vector<std::size_t>& faces, const std::vector<PointField>& face_node_fields,
                     const std::vector<CellField>& cell_fields, const std::vector<StringData>& field_data) {
  const int p = disc.ref.order;
  const int nfp = disc.ref.num_face_nodes;
  // VTK's Lagrange-triangle points (u, v) on the unit triangle.
  vtkNew<vtkLagrangeTriangle> cell;
  cell->GetPointIds()->SetNumberOfIds(nfp);
  cell->GetPoints()->SetNumberOfPoints(nfp);
  cell->Initialize();
  const double* pc = cell->GetParametricCoords();
  std::vector<std::array<double, 2>> vtk_points;
  for (int i = 0; i < nfp; ++i) vtk_points.push_back({pc[3 * i], pc[3 * i + 1]});
  std::array<Eigen::MatrixXd, 4> interp;
  for (int f = 0; f < 4; ++f) interp[f] = disc.ref.face_interpolation_matrix(f, vtk_points);
  const auto F = static_cast<vtkIdType>(faces.size());
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(F * nfp);
  for (vtkIdType b = 0; b < F; ++b) {
    const auto [e, f] = ElementFace::unpack(faces[static_cast<std::size_t>(b)]);
    const auto v = disc.element_vertices(e);
    const auto& A = v[dgrte::kFaceVertices[f][0]];
    const auto& B = v[dgrte::kFaceVertices[f][1]];
    const auto& C = v[dgrte::kFaceVertices[f][2]];
    for (int i = 0; i < nfp; ++i) {
      const double u = pc[3 * i], w = pc[3 * i + 1];
      double x[3];
      for (int d = 0; d < 3; ++d) x[d] = (1 - u - w) * A[d] + u * B[d] + w * C[d];
      points->SetPoint(b * nfp + i, x);
    }
  }
  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(points);
  vtkNew<vtkCellArray> cells;
  cells->AllocateExact(F, F * nfp);
  std::vector<vtkIdType> ids(static_cast<std::size_t>(nfp));
  for (vtkIdType b = 0; b < F; ++b) {
    for (int i = 0; i < nfp; ++i) ids[static_cast<std::size_t>(i)] = b * nfp + i;
    cells->InsertNextCell(nfp, ids.data());
  }
  grid->SetCells(p == 1 ? VTK_TRIANGLE : VTK_LAGRANGE_TRIANGLE, cells);
  Eigen::VectorXd values;
  for (const auto& fld : face_node_fields) {
    vtkNew<vtkDoubleArray> arr;
    arr->SetName(fld.name.c_str());
    arr->SetNumberOfTuples(F * nfp);
    for (vtkIdType b = 0; b < F; ++b) {
      const int f = ElementFace::unpack(faces[static_cast<std::size_t>(b)]).face;
      values.noalias() = interp[f] * Eigen::Map<const Eigen::VectorXd>(fld.nodal.data() + b * nfp, nfp);
      for (int i = 0; i < nfp; ++i) arr->SetValue(b * nfp + i, values[i]);
    }
    grid->GetPointData()->AddArray(arr);
  }
  for (const auto& fld : cell_fields) {
    vtkNew<vtkDoubleArray> arr;
    arr->SetName(fld.name.c_str());
    arr->SetNumberOfTuples(F);
    for (vtkIdType b = 0; b < F; ++b) arr->SetValue(b, fld.values[static_cast<std::size_t>(b)]);
    grid->GetCellData()->AddArray(arr);
  }
  add_field_data(grid, field_data);
  write_grid(file, grid);
}

}  // namespace dgrte::output