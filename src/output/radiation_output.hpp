#pragma once
// What a radiation engineer reads from a gray solve: G, q and div q at the nodes (div q twice: from
// the balance sum w (emission) - kappa G, and as the DG divergence of q), wall fluxes per face node
// and per surface group, the energy balance, probes, and the files (solution.vtu, walls.vtu,
// quadrature.csv, probes/*.csv).
#include "angular/quadrature.hpp"
#include "io/case_file.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"
#include "transport/field_evaluation.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dgrte::output {

struct RadiationFields {
  // Nodal [W/m^3]: div q = sum w (emission) - kappa G with the properties at each node (the balance
  // form), and the DG divergence of q.
  std::vector<double> divq, divq_from_q;
  // Per element: the integral of div q [W] as the discrete equations see it (emission and absorption
  // with the properties at the property points: the Galerkin terms of problem::Medium), so that the
  // volume and wall totals balance to round-off.
  std::vector<double> divq_element;
  // At the medium's output points (problem::Medium::output_points; the volume probes): div q with
  // kappa and Ib at the point itself and the DG polynomial of G (NaN outside the mesh; empty
  // without output points).
  std::vector<double> output_divq;
  std::vector<double> q_net, q_emitted;   // per boundary face node [W/m^2], positive into the wall
  std::vector<double> face_area;          // per boundary face
  // The DG solution's own (conservative) fluxes, without the walls' values at edges and corners
  // (solver::GrayResult::wall_delta_q_in), per boundary face node: the wall totals integrate them, and
  // the discrete energy balance closes on them. (A change at an edge point is a change on a set of
  // zero area: spread over the face by its nodal polynomial it would only add an O(h) error to the
  // totals.)
  std::vector<double> balance_q_in, balance_q_out, balance_q_net;
  // div q (balance form, emission - kappa G) with the walls' G (solver::GrayResult::wall_G), per
  // boundary face node.
  std::vector<double> wall_divq;
};

// A nodal field with the walls' values at the nodes of boundary faces (what solution.vtu shows): at
// a node on several walls (an edge or corner), their mean. wall_values per boundary face node; empty:
// the nodal field unchanged.
std::vector<double> with_wall_values(const problem::Walls& walls, std::span<const double> nodal,
                                     std::span<const double> wall_values);

RadiationFields radiation_fields(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                                 const solver::GrayResult& result);

// The sum of a per-element field over elements [0, elements) (all when not given).
double element_sum(std::span<const double> per_element, std::size_t elements = static_cast<std::size_t>(-1));

// Integral of a nodal field over the domain (exact for the DG polynomial); over elements
// [0, elements) only when given (a rank's owned elements).
double volume_integral(const transport::Discretization& disc, std::span<const double> f,
                       std::size_t elements = static_cast<std::size_t>(-1));

// summary.json blocks: "walls" (per group, from the conservative fluxes balance_*: area, q_net_W,
// q_in_W, emitted_W, q_net_mean) and
// "energy_balance" of the DG solution (with balance_q_net: the upwind scheme conserves energy exactly;
// the walls' values at edges and corners differ from it by the boundary layer the mesh does not
// resolve) (volume_W = integral of div q, walls_W = integral of q_net, relative_imbalance: the
// imbalance over the largest of integral |div q|, integral |q_net|, the incident wall power integral q_in
// and the emitted volume power integral |4 pi kappa I_b + sources|, so that an enclosure at equilibrium,
// where div q and q_net vanish, is still measured against the power in play).
nlohmann::json wall_summary(const transport::Discretization& disc, const problem::Walls& walls, const RadiationFields& fields);
// Per surface group: the integral over its faces of a per-boundary-face-node field (a flux gives W).
std::map<std::string, double> group_integrals(const transport::Discretization& disc, const problem::Walls& walls,
                                              std::span<const double> per_face_node);
nlohmann::json energy_balance(const transport::Discretization& disc, const problem::Walls& walls, const RadiationFields& fields,
                              const solver::GrayResult& result);

// quadrature.csv: sx,sy,sz,w (the set actually solved).
void write_quadrature_csv(const std::filesystem::path& file, const angular::Quadrature& quad);

// A wall probe's points located on its group's boundary faces: every face containing the point, as face
// index b (Walls order) and face barycentrics (l1, l2). The wall fluxes are DG traces, discontinuous
// across face edges: a point on an edge or corner shared by several faces of the group gets the mean
// of their values, so that the result does not depend on which face is found first. A point off the
// group is an InputError naming probe and point.
struct WallPoint {
  std::size_t face;
  double l1, l2;
};
// The boundary faces among `faces` (Walls indices) that contain point x, edges and corners included.
std::vector<WallPoint> wall_faces_at(const io::Vec3& x, const transport::Discretization& disc, const problem::Walls& walls,
                                     std::span<const std::size_t> faces);
std::vector<std::vector<WallPoint>> locate_wall_probe(const io::ProbeSpec& probe, const transport::Discretization& disc,
                                         const problem::Walls& walls);

// The points of a probe line: `points` evenly spaced from `from` to `to`, with their distance from `from`.
std::vector<std::pair<io::Vec3, double>> probe_points(const io::ProbeSpec& probe);

// probes/<name>.csv (probe_tables): volume probes `x,y,z,distance,G,qx,qy,qz,divq,divq_from_q` (divq with the
// properties at the point, RadiationFields::output_divq, where the medium has output points; a point on
// a wall: G, q and divq with the walls' values, GrayResult::wall_G; on an edge or corner, the mean of its
// walls'); wall probes
// (`wall: GROUP`) `x,y,z,distance,q_in,q_net` on that group's faces (a point off the group is an
// InputError naming the probe and the point).
// The final gather's probe values (optional): per probe, per point (G, qx, qy, qz) replacing the DG
// values of volume probes, whose DG values then go to G_dg, qx_dg, qy_dg, qz_dg; for wall probes
// (q_in, 0, 0, 0), the gathered point value (q_net follows with the wall's absorptivity).
struct GatheredProbes {
  std::vector<std::vector<std::array<double, 4>>> values;
  // Per probe and point: the collimated beams' G, qx, qy, qz as the gather evaluated them (written
  // as the *_collimated columns; empty: the DG's).
  std::vector<std::vector<std::array<double, 4>>> collimated;
  // Per probe and point: added to the DG div q = emission - kappa G: kappa (G_dg - G_gathered),
  // summed over the spectral points of a nongray run (kappa_j, G_j).
  std::vector<std::vector<double>> divq_shift;
};

// The mean over the wall faces at a point (hits) of a field given per boundary face node, interpolated on each face.
double wall_value(const transport::Discretization& disc, const problem::Walls& walls, const std::vector<WallPoint>& hits,
                  std::span<const double> values);

// A nodal field's value at a located probe point: on a wall (hits non-empty) and where the walls'
// values exist (wall: per boundary face node), theirs (GrayResult::wall_G; the mean of an edge's
// walls), else the element's polynomial.
double point_value(const transport::Discretization& disc, const problem::Walls& walls, const transport::PointLocator& locator,
                   const transport::PointLocator::Location& loc, const std::vector<WallPoint>& hits, std::span<const double> nodal,
                   std::span<const double> wall);
// One probe's CSV file: its name (probes/<name>.csv) and text.
struct ProbeTable {
  std::string name, text;
};
std::vector<ProbeTable> probe_tables(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Walls& walls,
                                     const solver::GrayResult& result, const RadiationFields& fields, std::vector<std::string>& warnings,
                                     const GatheredProbes* gathered = nullptr);

}  // namespace dgrte::output
