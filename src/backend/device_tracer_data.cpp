#include "backend/device_tracer_data.hpp"

#include "mc/random.hpp"
#include "common/tet_topology.hpp"

namespace dgrte::backend {

device::TracerGeometry tracer_geometry(const mc::McModel& m) {
  device::TracerGeometry g;
  const std::size_t K = m.mesh.num_elements();
  g.planes.reserve(16 * K), g.across.reserve(4 * K), g.tets.reserve(4 * K);
  for (std::size_t t = 0; t < K; ++t)
    for (std::size_t f = 0; f < 4; ++f) {
      const auto& p = m.mesh.plane[4 * t + f];
      g.planes.insert(g.planes.end(), {p.n[0], p.n[1], p.n[2], p.offset});
      g.across.push_back(m.mesh.across[4 * t + f]);
      g.tets.push_back(m.mesh.tets[t][f]);
    }
  for (const auto& v : m.mesh.vertices) g.vertices.insert(g.vertices.end(), v.begin(), v.end());
  for (const auto& face : m.faces) {
    const auto t = static_cast<std::size_t>(face.element);
    const auto& fv = dgrte::kFaceVertices[static_cast<std::size_t>(face.local)];
    g.face_int.insert(g.face_int.end(), {face.element, m.mesh.tets[t][static_cast<std::size_t>(fv[0])],
                                         m.mesh.tets[t][static_cast<std::size_t>(fv[1])], m.mesh.tets[t][static_cast<std::size_t>(fv[2])]});
    g.face_real.insert(g.face_real.end(), {face.inward[0], face.inward[1], face.inward[2], face.absorptivity, face.specular_share});
  }
  for (const auto& d : m.beam_direction) g.beam_direction.insert(g.beam_direction.end(), d.begin(), d.end());
  using T = angular::PhaseFunction::Type;
  for (const auto& ph : m.phase) {
    const auto& p = ph.phase();
    const int type = p.type == T::isotropic ? 0 : p.type == T::henyey_greenstein ? 1 : 2;
    g.phase_int.insert(g.phase_int.end(), {type, static_cast<int>(g.coefficients.size()), static_cast<int>(type == 2 ? p.a.size() : 0),
                                           static_cast<int>(g.tables.size())});
    g.phase_g.push_back(p.g);
    if (type == 2) {
      g.coefficients.insert(g.coefficients.end(), p.a.begin(), p.a.end());
      g.tables.insert(g.tables.end(), ph.table().begin(), ph.table().end());
      g.table_size = static_cast<int>(ph.table().size());
    }
  }
  g.diameter = m.mesh.diameter;
  g.roulette_below = mc::kRouletteBelow, g.roulette_weight = mc::kRouletteWeight;
  g.max_segments = mc::kMaxSegments, g.max_zero_steps = mc::kMaxZeroSteps;
  return g;
}

device::TracerMedium tracer_medium(const mc::McModel& m) {
  device::TracerMedium d;
  const std::size_t K = m.mesh.num_elements();
  for (std::size_t t = 0; t < K; ++t) d.properties.insert(d.properties.end(), {m.kappa[t], m.sigma_s[t]});
  d.phase_of_element = m.phase_of_element;
  for (const auto& s : m.sources)
    d.source_int.insert(d.source_int.end(), {static_cast<int>(s.kind), static_cast<int>(s.index), s.beam});
  d.source_cdf = m.source_cdf;
  return d;
}

mc::BatchTracer device_batch_tracer(std::shared_ptr<device::DeviceTracer> tracer) {
  auto revision = std::make_shared<std::uint64_t>(0);
  return [tracer, revision](const mc::McModel& m, std::uint64_t seed, std::uint64_t first, std::uint64_t last) {
    if (*revision != m.revision) {
      tracer->set_medium(tracer_medium(m));
      *revision = m.revision;
    }
    auto t = tracer->trace(seed, mc::kForwardStream, first, last);
    return mc::BatchTallies{std::move(t.element), std::move(t.face), t.segments, t.scatters, t.reflections, t.lost};
  };
}

mc::GatherTracer device_gather_tracer(const std::string& device, const std::string& cache_dir,
                                      std::shared_ptr<std::shared_ptr<device::DeviceGather>> opened) {
  if (!opened) opened = std::make_shared<std::shared_ptr<device::DeviceGather>>();
  return [device, cache_dir, opened](const mc::GatherArrays& a, const std::vector<std::uint32_t>& tasks, std::uint32_t scramble, bool fresh,
                                     std::uint64_t& segments) {
    auto& gather = *opened;
    if (!gather) gather = std::make_shared<device::DeviceGather>(device::GatherGeometry{a.planes, a.across, a.original}, device, cache_dir);
    if (fresh) {
      gather->set_fields({a.order, a.terms, a.thin_points, a.fit_points, a.exponents, a.element, a.sigma_t, a.source, a.rules, a.faces});
      gather->set_receivers({a.receivers, a.receiver_int});
    }
    return gather->trace(tasks, scramble, &segments);
  };
}

}  // namespace dgrte::backend
