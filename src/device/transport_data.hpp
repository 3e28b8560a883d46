#pragma once
// Everything a device transport solve needs, as plain arrays: what `dgrte export` writes on the
// CPU machine and dgrte-bench-device reads on a GPU node (which often lacks PETSc, VTK, Gmsh and
// Eigen: the device core needs only the C++ standard library and OpenCL). The reference element and
// geometry are computed by dgrte (src/dg) and arrive here as numbers.
#include <cstdint>
#include <string>
#include <vector>

namespace dgrte::device {

// Per-element geometry values (transport_common.cl reads the same layout):
// [0, 9) grad r, grad s, grad t; [9, 21) outward unit normals of faces 0..3; [21, 25) sJ/J of each face.
inline constexpr int kGeometryStride = 25;
// |s.n| below this: tangent face, no upwind coupling (transport::kTangentTolerance, double precision).
inline constexpr double kTangentTolerance = 1e-12;

struct TransportData {
  int order = 0, np = 0, nfp = 0;
  std::int64_t K = 0;  // elements
  std::vector<double> d_ref;        // Dr | Ds | Dt, each np x np, column-major
  std::vector<double> lift;         // np x 4 nfp, column-major (column f nfp + j lifts face node j of face f)
  std::vector<int> face_nodes;      // 4 x nfp: volume node of face node j of face f
  std::vector<double> geometry;     // K x kGeometryStride
  std::vector<int> neighbour_node;  // K x 4 x nfp: field index of the neighbour's coincident node, -1 on the boundary
  std::vector<double> sigma_t;      // K x np: extinction coefficient at the nodes [1/m]
  // Elements whose sigma_t varies (transport::ReactionTerm): per element the index of its Galerkin
  // block M^-1 M_sigma (np x np, column-major, in sigma_blocks), -1 where sigma_t u is taken at the
  // nodes. Both empty: every element diagonal.
  std::vector<int> sigma_block_of;
  std::vector<double> sigma_blocks;
  // The case's directions and, per direction, the right-hand side (sources + boundary inflow lift)
  // and the sweep plan (plan_order: the elements in upwind order; plan_level_begin: level_stride
  // entries per direction, padded with the last value; plan_lagged: bit f = inflow face f lagged).
  std::vector<double> directions;  // M x 3
  std::vector<double> rhs;         // M x K np (may be empty)
  int level_stride = 0;            // max levels + 1 (0 without plans)
  std::vector<int> plan_order;     // M x K (may be empty)
  std::vector<int> plan_level_begin;
  std::vector<std::uint8_t> plan_lagged;
  std::string description;  // what was exported, for the reports

  std::int64_t num_dofs() const { return K * np; }
  // Element e's extinction block, or null where sigma_t is taken at the nodes.
  const double* sigma_block(std::int64_t e) const {
    const int b = sigma_block_of.empty() ? -1 : sigma_block_of[static_cast<std::size_t>(e)];
    return b < 0 ? nullptr : sigma_blocks.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(np * np);
  }
  std::size_t num_directions() const { return directions.size() / 3; }
  bool has_plans() const { return !plan_order.empty(); }
  // Throws DeviceError naming the first inconsistent array (sizes, index ranges).
  void validate() const;
};

// Binary dump (little-endian, format version 1). Written to a temporary file, then renamed.
void write_transport_data(const std::string& path, const TransportData& data);
// Throws DeviceError naming the file and what is wrong (not a dump, other version, truncated, inconsistent).
TransportData read_transport_data(const std::string& path);

}  // namespace dgrte::device
