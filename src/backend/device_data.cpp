#include "backend/device_data.hpp"

#include <algorithm>
#include <stdexcept>

namespace dgrte::backend {

device::TransportData device_data(const transport::Discretization& disc, const transport::ReactionTerm& sigma_t) {
  const auto& ref = disc.ref;
  device::TransportData d;
  d.order = ref.order;
  d.np = ref.num_nodes;
  d.nfp = ref.num_face_nodes;
  d.K = static_cast<std::int64_t>(disc.num_elements());
  for (const auto* m : {&ref.Dr, &ref.Ds, &ref.Dt}) d.d_ref.insert(d.d_ref.end(), m->data(), m->data() + m->size());  // column-major
  d.lift.assign(ref.lift.data(), ref.lift.data() + ref.lift.size());
  for (const auto& f : ref.face_nodes) d.face_nodes.insert(d.face_nodes.end(), f.begin(), f.end());
  d.geometry.reserve(disc.num_elements() * device::kGeometryStride);
  for (const auto& g : disc.geometry) {
    for (const auto& v : g.grad_rst) d.geometry.insert(d.geometry.end(), v.begin(), v.end());
    for (const auto& v : g.normal) d.geometry.insert(d.geometry.end(), v.begin(), v.end());
    d.geometry.insert(d.geometry.end(), g.face_scale.begin(), g.face_scale.end());
  }
  d.neighbour_node = disc.neighbour_node;
  if (sigma_t.nodal().size() != disc.num_dofs()) throw std::invalid_argument("device_data: sigma_t must have one value per node");
  d.sigma_t.assign(sigma_t.nodal().begin(), sigma_t.nodal().end());
  d.sigma_block_of.assign(sigma_t.block_of_element().begin(), sigma_t.block_of_element().end());
  d.sigma_blocks.assign(sigma_t.block_data().begin(), sigma_t.block_data().end());
  return d;
}

void add_directions(device::TransportData& d, std::span<const transport::Vec3> directions,
                    std::span<const std::vector<double>> rhs, std::span<const transport::SweepPlan> plans) {
  const std::size_t M = directions.size(), K = static_cast<std::size_t>(d.K), n = static_cast<std::size_t>(d.num_dofs());
  d.directions.clear();
  for (const auto& s : directions) d.directions.insert(d.directions.end(), s.begin(), s.end());
  d.rhs.clear();
  if (!rhs.empty()) {
    if (rhs.size() != M) throw std::invalid_argument("add_directions: one right-hand side per direction");
    for (const auto& r : rhs) {
      if (r.size() != n) throw std::invalid_argument("add_directions: right-hand side of the wrong size");
      d.rhs.insert(d.rhs.end(), r.begin(), r.end());
    }
  }
  d.plan_order.clear();
  d.plan_level_begin.clear();
  d.plan_lagged.clear();
  d.level_stride = 0;
  if (plans.empty()) return;
  if (plans.size() != M) throw std::invalid_argument("add_directions: one sweep plan per direction");
  std::size_t levels = 0;
  for (const auto& p : plans) levels = std::max(levels, p.num_levels());
  d.level_stride = static_cast<int>(levels + 1);
  for (const auto& p : plans) {
    if (p.order.size() != K) throw std::invalid_argument("add_directions: sweep plan of another mesh");
    d.plan_order.insert(d.plan_order.end(), p.order.begin(), p.order.end());
    std::vector<int> begin(p.level_begin.begin(), p.level_begin.end());
    begin.resize(levels + 1, begin.empty() ? 0 : begin.back());  // empty levels past the plan's last
    d.plan_level_begin.insert(d.plan_level_begin.end(), begin.begin(), begin.end());
    d.plan_lagged.insert(d.plan_lagged.end(), p.lagged_faces.begin(), p.lagged_faces.end());
  }
}

}  // namespace dgrte::backend
