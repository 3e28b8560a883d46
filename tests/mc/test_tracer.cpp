// The ray tracer on a tet mesh against exact chords, including rays through mesh vertices and
// along mesh edges (where exits tie); the phase-function sampler against its exact distribution.
#include "angular/phase_function.hpp"
#include "mc/phase_sampler.hpp"
#include "mc/random.hpp"
#include "mc/tracing_mesh.hpp"
#include "mesh/tet_mesh.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dgrte::mc {
namespace {

const char* kCube = DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo";

TracingMesh cube_tracer(const mesh::TetMesh& m) {
  std::vector<long> boundary(4 * m.num_elements(), -1);
  long b = 0;
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    for (int f = 0; f < 4; ++f)
      if (m.neighbour[e][static_cast<std::size_t>(f)] < 0) boundary[e * 4 + static_cast<std::size_t>(f)] = b++;
  return make_tracing_mesh(m, boundary);
}

// Distance from x along d to the boundary of the unit cube.
double cube_chord(const Vec3& x, const Vec3& d) {
  double t = 1e300;
  for (int k = 0; k < 3; ++k) {
    const auto c = static_cast<std::size_t>(k);
    if (d[c] > 0) t = std::min(t, (1 - x[c]) / d[c]);
    if (d[c] < 0) t = std::min(t, -x[c] / d[c]);
  }
  return t;
}

Vec3 unit(Vec3 v) {
  const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return {v[0] / n, v[1] / n, v[2] / n};
}

// e: the mesh element containing x.
void expect_exact_walk(const TracingMesh& tm, int e, const Vec3& x, const Vec3& d, const std::string& what) {
  const auto w = walk_to_boundary(tm, tm.tracer_index[static_cast<std::size_t>(e)], x, d);
  ASSERT_FALSE(w.lost) << what;
  double total = 0;
  for (const auto& [el, l] : w.segments) total += l;
  EXPECT_NEAR(total, cube_chord(x, d), 1e-12) << what;
  EXPECT_GE(w.boundary_face, 0) << what;
}

// The Morton renumbering is a permutation, and neighbours see each other across the same face plane
// with opposite signs, bit for bit.
TEST(Tracer, RenumberedNeighboursShareTheirFacePlanes) {
  const auto m = mesh::mesh_geo(kCube, 0.2);
  const auto tm = cube_tracer(m);
  std::vector<int> seen(m.num_elements(), 0);
  for (std::size_t t = 0; t < m.num_elements(); ++t) {
    ++seen[static_cast<std::size_t>(tm.original[t])];
    EXPECT_EQ(tm.tracer_index[static_cast<std::size_t>(tm.original[t])], static_cast<int>(t));
    for (std::size_t f = 0; f < 4; ++f) {
      const int n = tm.across[t * 4 + f];
      if (n < 0) continue;
      int back = -1;
      for (std::size_t g = 0; g < 4; ++g)
        if (tm.across[static_cast<std::size_t>(n) * 4 + g] == static_cast<int>(t)) back = static_cast<int>(g);
      ASSERT_GE(back, 0);
      const auto& a = tm.plane[t * 4 + f];
      const auto& b = tm.plane[static_cast<std::size_t>(n) * 4 + static_cast<std::size_t>(back)];
      for (int k = 0; k < 3; ++k) EXPECT_EQ(a.n[k], -b.n[k]);
      EXPECT_EQ(a.offset, -b.offset);
    }
  }
  for (int c : seen) EXPECT_EQ(c, 1);
}

TEST(Tracer, ChordsFromCentroidsInRandomDirections) {
  const auto m = mesh::mesh_geo(kCube, 0.2);
  const auto tm = cube_tracer(m);
  PathRandom rng(7, 0, 0);
  for (std::size_t e = 0; e < m.num_elements(); ++e) {
    Vec3 c{0, 0, 0};
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 3; ++i) c[static_cast<std::size_t>(i)] += 0.25 * m.vertices[static_cast<std::size_t>(m.tets[e][static_cast<std::size_t>(k)])][static_cast<std::size_t>(i)];
    for (int r = 0; r < 8; ++r) {
      const double mu = 2 * rng.uniform() - 1, phi = 6.283185307179586 * rng.uniform(), s = std::sqrt(1 - mu * mu);
      expect_exact_walk(tm, static_cast<int>(e), c, {s * std::cos(phi), s * std::sin(phi), mu}, "random");
    }
  }
}

// Rays that start on a mesh vertex and pass through other vertices, or run along the axes through
// rows of vertices (a structured corner of the mesh): exits tie between faces there.
TEST(Tracer, RaysThroughVerticesAndAlongEdgesAreNotLost) {
  const auto m = mesh::mesh_geo(kCube, 0.25);
  const auto tm = cube_tracer(m);
  std::vector<int> element_of_vertex(m.vertices.size(), -1);
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    for (int v : m.tets[e]) element_of_vertex[static_cast<std::size_t>(v)] = static_cast<int>(e);
  int tested = 0;
  for (std::size_t a = 0; a < m.vertices.size(); a += 3) {
    const auto& x = m.vertices[a];
    // Every element containing the start vertex, toward other vertices and along the axes.
    for (std::size_t e = 0; e < m.num_elements(); ++e) {
      bool has = false;
      for (int v : m.tets[e]) has = has || static_cast<std::size_t>(v) == a;
      if (!has) continue;
      for (std::size_t b = 1; b < m.vertices.size(); b += 17) {
        if (b == a) continue;
        const auto& y = m.vertices[b];
        expect_exact_walk(tm, static_cast<int>(e), x, unit({y[0] - x[0], y[1] - x[1], y[2] - x[2]}), "vertex to vertex");
        ++tested;
      }
      for (const Vec3 d : {Vec3{1, 0, 0}, Vec3{-1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, -1}, unit({1, 1, 0}), unit({1, 1, 1})}) {
        if (cube_chord(x, d) < 1e-12) continue;  // already on the wall it points to
        expect_exact_walk(tm, static_cast<int>(e), x, d, "along axes and diagonals");
        ++tested;
      }
    }
  }
  EXPECT_GT(tested, 5000);
}

TEST(PhaseSampler, InvertsTheExactDistribution) {
  for (const auto& phase : {angular::isotropic(), angular::linear_anisotropic(0.5), angular::henyey_greenstein(0.8),
                            angular::henyey_greenstein(-0.4), angular::kim_lee("F2"), angular::kim_lee("B1")}) {
    const PhaseSampler s(phase);
    EXPECT_NEAR(s.cdf(-1), 0.0, 1e-14) << phase.name;
    EXPECT_NEAR(s.cdf(1), 1.0, 1e-12) << phase.name;
    const int n = 200000;
    double mean = 0;
    for (int i = 0; i < n; ++i) {
      const double u = (i + 0.5) / n;
      const double mu = s.cosine(u);
      ASSERT_GE(mu, -1.0);
      ASSERT_LE(mu, 1.0);
      if (i % 997 == 0) {
        EXPECT_NEAR(s.cdf(mu), u, 1e-11) << phase.name << " u = " << u;
      }
      mean += mu / n;
    }
    // Stratified samples: the mean cosine is the asymmetry factor g to the midpoint-rule error.
    EXPECT_NEAR(mean, phase.asymmetry(), 2e-5) << phase.name;
  }
}

TEST(PhaseSampler, ScatteredDirectionsHaveTheRequestedCosine) {
  PathRandom rng(3, 0, 1);
  for (const Vec3 d : {Vec3{0, 0, 1}, Vec3{0, 0, -1}, unit({0.3, -0.2, 0.9}), unit({1, 1e-9, -1e-9})}) {
    for (int i = 0; i < 100; ++i) {
      const double mu = 2 * rng.uniform() - 1;
      const auto s = scatter_direction(d, mu, rng.uniform());
      EXPECT_NEAR(s[0] * s[0] + s[1] * s[1] + s[2] * s[2], 1.0, 1e-14);
      EXPECT_NEAR(s[0] * d[0] + s[1] * d[1] + s[2] * d[2], mu, 1e-14);
    }
  }
}

TEST(PathRandom, StreamsDependOnSeedStreamAndPathOnly) {
  PathRandom a(1, 0, 42), b(1, 0, 42), c(1, 0, 43), d(2, 0, 42), e(1, 1, 42);
  for (int i = 0; i < 10; ++i) {
    const double x = a.uniform();
    EXPECT_EQ(x, b.uniform());
    EXPECT_NE(x, c.uniform());
    EXPECT_NE(x, d.uniform());
    EXPECT_NE(x, e.uniform());
    EXPECT_GT(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
}

}  // namespace
}  // namespace dgrte::mc
