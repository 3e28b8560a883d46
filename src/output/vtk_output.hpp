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

namespace dgrte::output {

struct PointField {
  std::string name;
  std::span<const double> nodal;  // e * N_p + i
};
struct CellField {
  std::string name;
  std::vector<double> values;  // one per element
};

// Strings attached to the whole file (VTK field data), e.g. group names by tag, or the
// direction of each intensity array.
struct StringData {
  std::string name;
  std::vector<std::string> values;
};

void write_solution_vtu(const std::filesystem::path& file, const transport::Discretization& disc,
                        const std::vector<PointField>& point_fields, const std::vector<CellField>& cell_fields,
                        bool linear, const std::vector<StringData>& field_data = {});

// Boundary faces (element * 4 + local face) as Lagrange triangles of the run's order, with fields
// given at the face nodes (b * N_fp + j, in the order of `faces` and ReferenceTet::face_nodes).
void write_faces_vtu(const std::filesystem::path& file, const transport::Discretization& disc,
                     const std::vector<std::size_t>& faces, const std::vector<PointField>& face_node_fields,
                     const std::vector<CellField>& cell_fields, const std::vector<StringData>& field_data);

// Reference coordinates (r,s,t) of VTK's Lagrange-tetrahedron points of the given order, in VTK's
// point order.
dg::Points vtk_lagrange_points(int order);

}  // namespace dgrte::output
