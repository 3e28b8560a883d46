#include "mc/tracing_mesh.hpp"

#include "common/error.hpp"
#include "common/tet_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace dgrte::mc {
namespace {

}  // namespace

TracingMesh make_tracing_mesh(const mesh::TetMesh& mesh, const std::vector<long>& boundary_face_of) {
  const std::size_t K = mesh.num_elements();
  TracingMesh tm;
  tm.plane.resize(4 * K);
  tm.across.resize(4 * K);
  tm.volume.resize(K);
  tm.vertices = mesh.vertices;
  Vec3 lo = mesh.vertices.front(), hi = lo;
  for (const auto& v : mesh.vertices)
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], v[k]), hi[k] = std::max(hi[k], v[k]);
  tm.diameter = std::sqrt(dot(sub(hi, lo), sub(hi, lo)));
  // Morton order of the centroids (21 bits per axis, interleaved).
  auto spread = [](std::uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
  };
  std::vector<std::pair<std::uint64_t, int>> key(K);
  for (std::size_t e = 0; e < K; ++e) {
    std::uint64_t code = 0;
    for (int k = 0; k < 3; ++k) {
      double c = 0;
      for (int v : mesh.tets[e]) c += 0.25 * mesh.vertices[static_cast<std::size_t>(v)][static_cast<std::size_t>(k)];
      const double span = hi[static_cast<std::size_t>(k)] - lo[static_cast<std::size_t>(k)];
      const double u = span > 0 ? (c - lo[static_cast<std::size_t>(k)]) / span : 0.0;
      code |= spread(static_cast<std::uint64_t>(std::clamp(u, 0.0, 1.0) * 2097151.0)) << k;
    }
    key[e] = {code, static_cast<int>(e)};
  }
  std::sort(key.begin(), key.end());
  tm.original.resize(K), tm.tracer_index.resize(K), tm.tets.resize(K);
  for (std::size_t t = 0; t < K; ++t) {
    tm.original[t] = key[t].second;
    tm.tracer_index[static_cast<std::size_t>(key[t].second)] = static_cast<int>(t);
  }
  for (std::size_t ti = 0; ti < K; ++ti) {
    const std::size_t e = static_cast<std::size_t>(tm.original[ti]);
    const auto& t = mesh.tets[e];
    tm.tets[ti] = t;
    const auto& v = mesh.vertices;
    const std::size_t a = static_cast<std::size_t>(t[0]);
    tm.volume[ti] = dot(sub(v[static_cast<std::size_t>(t[1])], v[a]),
                       cross(sub(v[static_cast<std::size_t>(t[2])], v[a]), sub(v[static_cast<std::size_t>(t[3])], v[a]))) / 6.0;
    for (int f = 0; f < 4; ++f) {
      std::array<int, 3> fv{};
      for (int k = 0; k < 3; ++k) fv[static_cast<std::size_t>(k)] = t[static_cast<std::size_t>(dgrte::kFaceVertices[static_cast<std::size_t>(f)][static_cast<std::size_t>(k)])];
      std::sort(fv.begin(), fv.end());
      const Vec3& p0 = v[static_cast<std::size_t>(fv[0])];
      Vec3 n = cross(sub(v[static_cast<std::size_t>(fv[1])], p0), sub(v[static_cast<std::size_t>(fv[2])], p0));
      const double len = std::sqrt(dot(n, n));
      if (!(len > 0)) throw InputError(fmt::format("{}: element {} (Gmsh tag {}) has a degenerate face {}: it cannot be ray traced",
                                                   mesh.source, e, mesh.tet_tags[e], f));
      for (auto& c : n) c /= len;
      double offset = dot(n, p0);
      // Outward: the opposite vertex lies on the negative side. The sign flip is exact, so the
      // neighbour's plane is this one negated bit for bit.
      int opposite = 0;
      for (int k = 0; k < 4; ++k)
        if (std::find(fv.begin(), fv.end(), t[static_cast<std::size_t>(k)]) == fv.end()) opposite = t[static_cast<std::size_t>(k)];
      if (dot(n, v[static_cast<std::size_t>(opposite)]) - offset > 0) {
        for (auto& c : n) c = -c;
        offset = -offset;
      }
      auto& pl = tm.plane[ti * 4 + static_cast<std::size_t>(f)];
      pl = {{n[0], n[1], n[2]}, offset};
      const int nb = mesh.neighbour[e][static_cast<std::size_t>(f)];
      const long b = boundary_face_of[e * 4 + static_cast<std::size_t>(f)];
      if (nb < 0 && b < 0) throw SolverError(fmt::format("tracing mesh: boundary face {} of element {} has no wall", f, e));
      tm.across[ti * 4 + static_cast<std::size_t>(f)] = nb >= 0 ? tm.tracer_index[static_cast<std::size_t>(nb)] : static_cast<int>(-1 - b);
    }
  }
  return tm;
}

Walk walk_to_boundary(const TracingMesh& tm, int element, const Vec3& x0, const Vec3& d) {
  Walk w;
  double x[3] = {x0[0], x0[1], x0[2]};
  int e = element;
  int zero_steps = 0;
  for (long steps = 0; steps < 100'000'000; ++steps) {
    const Exit ex = exit_face(&tm.plane[static_cast<std::size_t>(e) * 4], x, d.data());
    if (ex.face < 0 || zero_steps > 64) {
      w.lost = true;
      return w;
    }
    zero_steps = ex.distance > 0 ? 0 : zero_steps + 1;
    w.segments.push_back({e, ex.distance});
    for (int k = 0; k < 3; ++k) x[k] += ex.distance * d[static_cast<std::size_t>(k)];
    const int next = tm.across[static_cast<std::size_t>(e) * 4 + static_cast<std::size_t>(ex.face)];
    if (next < 0) {
      w.boundary_face = -1 - next;
      return w;
    }
    e = next;
  }
  w.lost = true;
  return w;
}

}  // namespace dgrte::mc
