#include "adapt/refinement.hpp"

#include "common/parallel.hpp"
#include "transport/field_evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace dgrte::adapt {

std::vector<bool> doerfler_marking(const std::vector<double>& eta, double theta) {
  std::vector<std::size_t> order(eta.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return eta[a] > eta[b]; });
  double total = 0;
  for (double e : eta) total += e * e;
  std::vector<bool> marked(eta.size(), false);
  double sum = 0;
  for (std::size_t k : order) {
    if (sum >= theta * total || eta[k] <= 0) break;
    marked[k] = true;
    sum += eta[k] * eta[k];
  }
  return marked;
}

double relative_estimate(const ErrorIndicator& ind, io::RefineQuantity q, io::RefineNorm norm) {
  if (norm == io::RefineNorm::probes) switch (q) {
      case io::RefineQuantity::G: return ind.probe_relative_G();
      case io::RefineQuantity::wall_flux: return ind.probe_relative_wall_flux();
      case io::RefineQuantity::both: return std::max(ind.probe_relative_G(), ind.probe_relative_wall_flux());
      case io::RefineQuantity::divq: return ind.probe_relative_divq();
    }
  if (norm == io::RefineNorm::max) switch (q) {
      case io::RefineQuantity::G: return ind.max_relative_G();
      case io::RefineQuantity::wall_flux: return ind.max_relative_wall_flux();
      case io::RefineQuantity::both: return std::max(ind.max_relative_G(), ind.max_relative_wall_flux());
      case io::RefineQuantity::divq: return ind.max_relative_divq();
    }
  switch (q) {
    case io::RefineQuantity::G: return ind.relative_G();
    case io::RefineQuantity::wall_flux: return ind.relative_wall_flux();
    case io::RefineQuantity::both: return std::max(ind.relative_G(), ind.relative_wall_flux());
    case io::RefineQuantity::divq: return ind.relative_divq();
  }
  return ind.relative_G();
}

std::vector<double> marking_indicator(const ErrorIndicator& ind, io::RefineQuantity q) {
  const double g = ind.G_norm > 0 ? 1 / ind.G_norm : 1, w = ind.wall_flux_norm > 0 ? 1 / ind.wall_flux_norm : 1;
  const double d = ind.divq_norm > 0 ? 1 / ind.divq_norm : 1;
  std::vector<double> eta(ind.element_G.size());
  for (std::size_t e = 0; e < eta.size(); ++e) {
    const double a = ind.element_G[e] * g, b = ind.element_wall_flux[e] * w;
    switch (q) {
      case io::RefineQuantity::G: eta[e] = a; break;
      case io::RefineQuantity::wall_flux: eta[e] = b; break;
      case io::RefineQuantity::both: eta[e] = std::hypot(a, b); break;
      case io::RefineQuantity::divq: eta[e] = ind.element_divq[e] * d; break;
    }
  }
  return eta;
}

std::vector<bool> mark_elements(const ErrorIndicator& ind, const io::RefineSpec& spec) {
  if (spec.norm == io::RefineNorm::l2) return doerfler_marking(marking_indicator(ind, spec.quantity));
  const auto q = spec.quantity;
  const bool G = q == io::RefineQuantity::G || q == io::RefineQuantity::both, wall = q == io::RefineQuantity::wall_flux || q == io::RefineQuantity::both;
  std::vector<bool> marked(ind.element_G.size(), false);
  auto mark_above = [&](const std::vector<double>& peak, double scale) {
    for (std::size_t e = 0; e < peak.size(); ++e)
      if (peak[e] > spec.target * scale) marked[e] = true;
  };
  if (spec.norm == io::RefineNorm::probes) {
    // The error on a line is mostly carried in from upstream along the ordinates: the elements that
    // hold it (Doerfler on the L2 indicator) and the line's own elements above the target.
    marked = doerfler_marking(marking_indicator(ind, q));
    if (G) mark_above(ind.element_probe_G, 1.0);
    if (wall) mark_above(ind.element_probe_wall_flux, 1.0);
    if (q == io::RefineQuantity::divq) mark_above(ind.element_probe_divq, 1.0);
    return marked;
  }
  if (G) mark_above(ind.element_peak_G, ind.G_max);
  if (wall) mark_above(ind.element_peak_wall_flux, ind.wall_flux_max);
  if (q == io::RefineQuantity::divq) mark_above(ind.element_peak_divq, ind.divq_max);
  return marked;
}

namespace {

// x located in `locator`'s mesh; a point just outside it (a curved wall meshed anew) is moved
// towards `inside` (a point of the element it belongs to) until it is in.
std::optional<transport::PointLocator::Location> locate_near(const transport::PointLocator& locator, const Vec3& x, const Vec3& inside) {
  std::optional<transport::PointLocator::Location> loc = locator.locate(x);
  for (double t = 1e-6; !loc && t <= 1; t *= 10) {
    const Vec3 y{x[0] + t * (inside[0] - x[0]), x[1] + t * (inside[1] - x[1]), x[2] + t * (inside[2] - x[2])};
    loc = locator.locate(y);
  }
  return loc;
}

Vec3 centroid(const mesh::TetMesh& mesh, std::size_t e) {
  Vec3 c{};
  for (int v : mesh.tets[e])
    for (int d = 0; d < 3; ++d) c[static_cast<std::size_t>(d)] += 0.25 * mesh.vertices[static_cast<std::size_t>(v)][static_cast<std::size_t>(d)];
  return c;
}

}  // namespace

std::vector<double> requested_sizes(const mesh::TetMesh& mesh, const mesh::SizeField* previous, double size) {
  std::vector<double> out(mesh.vertices.size(), size);
  if (!previous) return out;
  const auto& pm = *previous->mesh;
  if (previous->vertex_size.size() != pm.vertices.size()) throw std::logic_error("requested_sizes: one size per vertex");
  const auto disc = transport::make_discretization(pm, 1);
  const transport::PointLocator locator(disc);
  std::vector<bool> done(mesh.vertices.size(), false);
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
    const Vec3 c = centroid(mesh, e);
    for (int v : mesh.tets[e]) {
      const auto k = static_cast<std::size_t>(v);
      if (done[k]) continue;
      done[k] = true;
      const auto loc = locate_near(locator, mesh.vertices[k], c);
      if (!loc) continue;  // not in the previous mesh at all: the uniform size
      // Linear in the previous tet.
      const auto lam = dg::vertex_barycentrics(loc->rst(0, 0), loc->rst(0, 1), loc->rst(0, 2));
      double h = 0;
      for (std::size_t i = 0; i < 4; ++i) h += lam[i] * previous->vertex_size[static_cast<std::size_t>(pm.tets[loc->element][i])];
      out[k] = std::min(h, size);
    }
  }
  return out;
}

mesh::SizeField refined_size_field(const mesh::TetMesh& mesh, const std::vector<bool>& marked, std::span<const double> requested) {
  if (marked.size() != mesh.tets.size()) throw std::logic_error("refined_size_field: one mark per element");
  if (requested.size() != mesh.vertices.size()) throw std::logic_error("refined_size_field: one requested size per vertex");
  mesh::SizeField f{&mesh, std::vector<double>(mesh.vertices.size(), std::numeric_limits<double>::infinity())};
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
    const auto& t = mesh.tets[e];
    double h = 0;
    for (int v : t) h += 0.25 * requested[static_cast<std::size_t>(v)];
    if (marked[e]) h *= 0.5;
    for (int v : t) f.vertex_size[static_cast<std::size_t>(v)] = std::min(f.vertex_size[static_cast<std::size_t>(v)], h);
  }
  return f;
}

std::vector<std::vector<double>> transfer_fields(const transport::Discretization& from, const transport::Discretization& to,
                                                 const std::vector<std::vector<double>>& fields) {
  const transport::PointLocator locator(from);
  const auto np_to = static_cast<std::size_t>(to.num_nodes()), np_from = static_cast<std::size_t>(from.num_nodes());
  std::vector<std::vector<double>> out(fields.size(), std::vector<double>(to.num_dofs(), 0.0));
  parallel_for(static_cast<long>(to.num_elements()), 2, [&](long ei) {
    const auto e = static_cast<std::size_t>(ei);
    const Vec3 c = centroid(*to.mesh, e);
    for (std::size_t i = 0; i < np_to; ++i) {
      const auto loc = locate_near(locator, to.node_position[e * np_to + i], c);
      if (!loc) continue;  // not in `from` at all: no guess (zero) for this node
      const Eigen::RowVectorXd row = from.ref.interpolation_matrix(loc->rst);
      for (std::size_t m = 0; m < fields.size(); ++m) {
        const Eigen::Map<const Eigen::VectorXd> ue(fields[m].data() + loc->element * np_from, static_cast<Eigen::Index>(np_from));
        out[m][e * np_to + i] = row.dot(ue);
      }
    }
  });
  return out;
}

}  // namespace dgrte::adapt
