#pragma once
// DG fields to VTK XML (.vtu) through the VTK library: each element becomes one
// VTK_LAGRANGE_TETRAHEDRON of the run's order (its own points: the field is discontinuous), with
// nodal values interpolated to VTK's equispaced Lagrange points; or, with `linear`, p^3 linear
// tets on the same lattice (for tools without Lagrange-cell support).
#include "transport/discretization.hpp"

#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace dgrte::io {

struct PointField {
  std::string name;
  std::span<const double> nodal;  // e * N_p + i
};
struct CellField {
  std::string name;
  std::vector<double> values;  // one per element
};

void write_solution_vtu(const std::filesystem::path& file, const transport::Discretization& disc,
                        const std::vector<PointField>& point_fields, const std::vector<CellField>& cell_fields,
                        bool linear);

// Reference coordinates (r,s,t) of VTK's Lagrange-tetrahedron points of the given order, in VTK's
// point order.
dg::Points vtk_lagrange_points(int order);

}  // namespace dgrte::io
