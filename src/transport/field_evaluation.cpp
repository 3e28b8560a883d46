#include "transport/field_evaluation.hpp"

#include <nanoflann.hpp>

#include <algorithm>
#include <cmath>

namespace dgrte::transport {

ErrorNorms error_norms(const Discretization& disc, std::span<const double> u,
                       const std::function<double(const Vec3&)>& exact) {
  const auto& ref = disc.ref;
  const auto rule = dg::tet_quadrature(2 * ref.order + 2);
  const Eigen::MatrixXd Q = ref.interpolation_matrix(rule.points);
  const std::size_t K = disc.num_elements(), np = ref.num_nodes;
  ErrorNorms out;
  out.element_l2.resize(K);
  double err2 = 0, ex2 = 0;
  Eigen::VectorXd uq;
  for (std::size_t e = 0; e < K; ++e) {
    const Eigen::Map<const Eigen::VectorXd> ue(u.data() + e * np, static_cast<Eigen::Index>(np));
    uq.noalias() = Q * ue;
    const auto v = disc.element_vertices(e);
    const double J = disc.geometry[e].jacobian;
    double ee = 0;
    for (Eigen::Index q = 0; q < rule.weights.size(); ++q) {
      const double ref_value = exact(dg::map_to_physical(v, rule.points(q, 0), rule.points(q, 1), rule.points(q, 2)));
      const double d = uq[q] - ref_value;
      ee += rule.weights[q] * J * d * d;
      ex2 += rule.weights[q] * J * ref_value * ref_value;
      out.linf = std::max(out.linf, std::abs(d));
    }
    for (std::size_t i = 0; i < np; ++i)
      out.linf = std::max(out.linf, std::abs(ue[static_cast<Eigen::Index>(i)] - exact(disc.node_position[e * np + i])));
    out.element_l2[e] = std::sqrt(ee);
    err2 += ee;
  }
  out.l2 = std::sqrt(err2);
  out.exact_l2 = std::sqrt(ex2);
  out.relative_l2 = out.exact_l2 > 0 ? out.l2 / out.exact_l2 : out.l2;
  return out;
}

struct PointLocator::Tree {
  struct Cloud {
    const std::vector<Vec3>* pts;
    std::size_t kdtree_get_point_count() const { return pts->size(); }
    double kdtree_get_pt(std::size_t i, std::size_t d) const { return (*pts)[i][d]; }
    template <class BBox>
    bool kdtree_get_bbox(BBox&) const { return false; }
  };
  using Index = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 3, std::size_t>;
  Cloud cloud;
  Index index;
  explicit Tree(const std::vector<Vec3>& pts) : cloud{&pts}, index(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16)) {
    index.buildIndex();
  }
};

PointLocator::PointLocator(const Discretization& disc) : disc_(disc) {
  const std::size_t K = disc.num_elements();
  centroid_.resize(K);
  for (std::size_t e = 0; e < K; ++e) {
    const auto v = disc.element_vertices(e);
    for (int d = 0; d < 3; ++d) centroid_[e][d] = 0.25 * (v[0][d] + v[1][d] + v[2][d] + v[3][d]);
  }
  tree_ = std::make_unique<Tree>(centroid_);
}

PointLocator::~PointLocator() = default;

dg::Points reference_coordinates(const Discretization& disc, std::size_t e, const Vec3& x) {
  const auto& g = disc.geometry[e];
  const auto& v0 = disc.mesh->vertices[disc.mesh->tets[e][0]];
  const Vec3 dx{x[0] - v0[0], x[1] - v0[1], x[2] - v0[2]};
  dg::Points rst(1, 3);
  for (int d = 0; d < 3; ++d) rst(0, d) = -1 + g.grad_rst[d][0] * dx[0] + g.grad_rst[d][1] * dx[1] + g.grad_rst[d][2] * dx[2];
  return rst;
}

std::optional<PointLocator::Location> PointLocator::locate(const Vec3& x) const {
  constexpr double tol = 1e-10;
  auto try_element = [&](std::size_t e) -> std::optional<Location> {
    const dg::Points rst = reference_coordinates(disc_, e, x);
    const double l0 = -(1 + rst(0, 0) + rst(0, 1) + rst(0, 2)) / 2;
    if (l0 < -tol || (1 + rst(0, 0)) / 2 < -tol || (1 + rst(0, 1)) / 2 < -tol || (1 + rst(0, 2)) / 2 < -tol) return std::nullopt;
    return Location{e, rst};
  };
  const std::size_t k = std::min<std::size_t>(32, centroid_.size());
  std::vector<std::size_t> idx(k);
  std::vector<double> dist(k);
  tree_->index.knnSearch(x.data(), k, idx.data(), dist.data());
  for (std::size_t i = 0; i < k; ++i)
    if (auto loc = try_element(idx[i])) return loc;
  for (std::size_t e = 0; e < centroid_.size(); ++e)  // slivers or points outside: exhaustive
    if (auto loc = try_element(e)) return loc;
  return std::nullopt;
}

double PointLocator::evaluate(const Location& loc, std::span<const double> u) const {
  const auto np = static_cast<Eigen::Index>(disc_.ref.num_nodes);
  const Eigen::Map<const Eigen::VectorXd> ue(u.data() + loc.element * np, np);
  return (disc_.ref.interpolation_matrix(loc.rst) * ue)(0);
}

}  // namespace dgrte::transport
