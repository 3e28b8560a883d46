// Values on the walls (docs/case-file.md, "Values on the walls"): at a wall point each direction entering
// the medium takes the wall's outgoing intensity, the upwind value the DG flux imposes, not the
// interior trace; at edges and corners the directions entering through the neighbouring wall take
// that wall's value. Checked against the discrete-ordinates solution of an isothermal cube with cold
// black walls, I(p, s) = Ib (1 - exp(-kappa L(p, -s))), whose intensity jumps at the walls.
#include "dgrte/dgrte.hpp"
#include "../common/case_runner.hpp"
#include "angular/quadrature.hpp"
#include "io/case_file.hpp"
#include "mesh/tet_mesh.hpp"
#include "problem/problem.hpp"
#include "transport/discretization.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>

namespace dgrte::app {
namespace {

using test_support::read_csv;
using Vec3 = std::array<double, 3>;

const std::string kCube = "mesh: {geo: " DGRTE_SOURCE_DIR "/validation/isothermal_cube/cube.geo, size: 0.25}\n";

// Distance from p along u to the boundary of the unit cube.
double chord(const Vec3& p, const Vec3& u) {
  double t = std::numeric_limits<double>::infinity();
  for (int c = 0; c < 3; ++c) {
    if (u[c] > 1e-300) t = std::min(t, (1 - p[c]) / u[c]);
    if (u[c] < -1e-300) t = std::min(t, -p[c] / u[c]);
  }
  return t;
}

struct Set {
  std::vector<Vec3> s;
  std::vector<double> w;
};

Set read_set(const std::filesystem::path& csv) {
  auto q = read_csv(csv);
  Set set;
  for (std::size_t m = 0; m < q["w"].size(); ++m) {
    set.s.push_back({q["sx"][m], q["sy"][m], q["sz"][m]});
    set.w.push_back(q["w"][m]);
  }
  return set;
}

// The discrete-ordinates G and the incident flux on the wall z = 0 (inward normal +z) at p.
std::pair<double, double> do_limit(const Set& set, const Vec3& p, double kappa) {
  double G = 0, q_in = 0;
  for (std::size_t m = 0; m < set.w.size(); ++m) {
    const Vec3 u{-set.s[m][0], -set.s[m][1], -set.s[m][2]};
    const double L = chord(p, u);
    const double I = std::isfinite(L) ? -std::expm1(-kappa * L) : 0.0;
    G += set.w[m] * I;
    if (set.s[m][2] < 0) q_in += set.w[m] * -set.s[m][2] * I;
  }
  return {G, q_in};
}

struct Errors {
  double edges = 0, wall = 0;  // relative to the largest reference value: end points, all points
};

Errors cube_errors(double kappa, int order, const std::string& name) {
  const auto r = test_support::run_yaml(
      "dgrte_wall_value_tests", name,
      kCube + fmt::format("order: {}\nangular: {{quadrature: tn, order: 4}}\nmedia: {{\"*\": {{kappa: \"{}\", Ib: \"1\"}}}}\n"
                          "boundaries: {{\"*\": {{type: black, temperature: 0}}}}\n"
                          "solver: {{outer_tolerance: 1.0e-10}}\n"
                          "output: {{vtk: false, probes: [{{name: q, from: [0, 0.5, 0], to: [1, 0.5, 0], points: 9, wall: zmin}},"
                          " {{name: G, from: [0, 0.5, 0], to: [1, 0.5, 0], points: 9}}]}}\n",
                          order, kappa));
  const auto set = read_set(r.out / "quadrature.csv");
  auto q = read_csv(r.out / "probes" / "q.csv");
  auto G = read_csv(r.out / "probes" / "G.csv");
  std::vector<double> eq, eG, refq, refG;
  for (std::size_t i = 0; i < q["x"].size(); ++i) {
    const auto [Gx, qx] = do_limit(set, {q["x"][i], q["y"][i], q["z"][i]}, kappa);
    refq.push_back(qx), refG.push_back(Gx);
    eq.push_back(std::abs(q["q_in"][i] - qx)), eG.push_back(std::abs(G["G"][i] - Gx));
  }
  const double sq = *std::max_element(refq.begin(), refq.end()), sG = *std::max_element(refG.begin(), refG.end());
  Errors e;
  for (std::size_t i = 0; i < eq.size(); ++i) {
    const double rel = std::max(eq[i] / sq, eG[i] / sG);
    e.wall = std::max(e.wall, rel);
    if (i == 0 || i + 1 == eq.size()) e.edges = std::max(e.edges, rel);
  }
  return e;
}

// kappa h = 0.25: the wall fluxes and G on the wall within 0.5 % of the discrete-ordinates solution,
// edges included (measured 0.39 %; with the DG traces instead of the walls' values, 1.36 %).
TEST(WallValues, ResolvedCubeWallFluxAndGOnTheWall) {
  const auto e = cube_errors(1.0, 3, "kappa1");
  std::printf("kappa 1: wall %.4f %%, edges %.4f %%\n", 100 * e.wall, 100 * e.edges);
  EXPECT_LT(e.wall, 0.005);
  EXPECT_LT(e.edges, 0.002);
}

// kappa h = 2.5: the boundary layer is not resolved inside the wall faces. At the edges a direction
// entering through the neighbouring wall takes that wall's value where the same element has a face on
// it (measured 3.2 % at the edges; 0.003 % if every element touching the edge is used, which a
// distributed run cannot do yet; with the DG traces, 11.3 %).
TEST(WallValues, UnresolvedCubeEdgesTakeTheNeighbouringWallsValue) {
  const auto e = cube_errors(10.0, 3, "kappa10");
  std::printf("kappa 10: wall %.4f %%, edges %.4f %%\n", 100 * e.wall, 100 * e.edges);
  EXPECT_LT(e.edges, 0.04);
}

// The coincident wall face nodes: every pair of wall face nodes at the same point, and only those
// (brute force over all pairs of a small cube mesh, P3: vertex, edge and face-interior nodes).
TEST(WallValues, CoincidentFaceNodesAreExactlyThoseAtTheSamePoint) {
  const auto file = std::filesystem::temp_directory_path() / "dgrte_coincident.yaml";
  const auto cs = io::parse_case(kCube + "order: 3\nangular: {quadrature: tn, order: 2}\nmedia: {\"*\": {kappa: \"1\", Ib: \"1\"}}\n"
                                         "boundaries: {\"*\": {type: black}}\n",
                                 file);
  const auto mesh = mesh::mesh_geo(cs.mesh.geo, 0.5);
  const auto disc = transport::make_discretization(mesh, 3);
  const auto quad = problem::build_quadrature(*cs.angular);
  std::vector<std::string> warnings;
  const problem::Walls walls(cs, disc, &quad, warnings);
  const std::size_t nfp = walls.face_nodes(), np = static_cast<std::size_t>(disc.num_nodes()), nb = walls.num_faces() * nfp;
  std::vector<Vec3> x(nb);
  for (std::size_t b = 0; b < walls.num_faces(); ++b)
    for (std::size_t j = 0; j < nfp; ++j) {
      const std::size_t ef = walls.element_face(b);
      x[b * nfp + j] = disc.node_position[ef / 4 * np + static_cast<std::size_t>(disc.ref.face_nodes[ef % 4][j])];
    }
  std::size_t pairs = 0;
  for (std::size_t a = 0; a < nb; ++a) {
    const auto c = walls.coincident(a);
    for (std::size_t b = 0; b < nb; ++b) {
      if (a == b) continue;
      const double d = std::hypot(x[a][0] - x[b][0], x[a][1] - x[b][1], x[a][2] - x[b][2]);
      const auto at = std::find(c.begin(), c.end(), b);
      const bool listed = at != c.end();
      EXPECT_EQ(listed, d < 1e-12) << "face nodes " << a << " and " << b << " at distance " << d;
      pairs += listed;
      // The cube's edges are convex; two faces in one plane are not.
      if (listed) {
        const auto &na = walls.normal(a / nfp), &nb2 = walls.normal(b / nfp);
        EXPECT_EQ(walls.convex(a, static_cast<std::size_t>(at - c.begin())), na[0] * nb2[0] + na[1] * nb2[1] + na[2] * nb2[2] < 0.5);
      }
    }
  }
  EXPECT_GT(pairs, nb);  // the cube's edges and corners, and the mesh edges on each wall
}

}  // namespace
}  // namespace dgrte::app
