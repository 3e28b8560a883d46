#pragma once
// Evaluating a DG field away from its nodes: at quadrature points (error norms against an exact
// solution, degree >= 2p+2) and at arbitrary physical points (probes).
#include "transport/discretization.hpp"

#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace dgrte::transport {

struct ErrorNorms {
  double l2 = 0, linf = 0, relative_l2 = 0, exact_l2 = 0;
  std::vector<double> element_l2;  // per element
};

// L2 and max errors of the nodal field u against exact(x) with a tet quadrature of degree
// 2p + 2; linf is the maximum over the quadrature points (and nodes).
ErrorNorms error_norms(const Discretization& disc, std::span<const double> u,
                       const std::function<double(const Vec3&)>& exact);

// Locates points in the mesh (k-d tree over element centroids, then a barycentric test) and
// evaluates fields by the DG polynomial of the containing element.
// The reference coordinates (r, s, t) of the physical point x under element e's affine map (x need
// not lie inside the element).
dg::Points reference_coordinates(const Discretization& disc, std::size_t e, const Vec3& x);

class PointLocator {
 public:
  explicit PointLocator(const Discretization& disc);
  ~PointLocator();
  struct Location {
    std::size_t element;
    dg::Points rst;  // 1 x 3 reference coordinates
  };
  std::optional<Location> locate(const Vec3& x) const;
  double evaluate(const Location& loc, std::span<const double> u) const;

 private:
  struct Tree;
  const Discretization& disc_;
  std::vector<Vec3> centroid_;
  std::unique_ptr<Tree> tree_;
};

}  // namespace dgrte::transport
