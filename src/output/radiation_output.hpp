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

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace dgrte::output {

struct RadiationFields {
  std::vector<double> divq, divq_from_q;  // nodal [W/m^3]
  std::vector<double> q_net, q_emitted;   // per boundary face node [W/m^2], positive into the wall
  std::vector<double> face_area;          // per boundary face
};

RadiationFields radiation_fields(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                                 const solver::GrayResult& result);

// Integral of a nodal field over the domain (exact for the DG polynomial); over elements
// [0, elements) only when given (a rank's owned elements).
double volume_integral(const transport::Discretization& disc, std::span<const double> f,
                       std::size_t elements = static_cast<std::size_t>(-1));

// summary.json blocks: "walls" (per group: area, q_net_W, q_in_W, emitted_W, q_net_mean) and
// "energy_balance" (volume_W = integral of div q, walls_W = integral of q_net, relative_imbalance: the
// imbalance over the largest of integral |div q|, integral |q_net|, the incident wall power integral q_in
// and the emitted volume power integral |4 pi kappa I_b + sources|, so that an enclosure at equilibrium,
// where div q and q_net vanish, is still measured against the power in play).
nlohmann::json wall_summary(const transport::Discretization& disc, const problem::Walls& walls, const RadiationFields& fields,
                            const solver::GrayResult& result);
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
std::vector<std::vector<WallPoint>> locate_wall_probe(const io::ProbeSpec& probe, const transport::Discretization& disc,
                                         const problem::Walls& walls);

// The points of a probe line: `points` evenly spaced from `from` to `to`, with their distance from `from`.
std::vector<std::pair<io::Vec3, double>> probe_points(const io::ProbeSpec& probe);

// probes/<name>.csv: volume probes `x,y,z,distance,G,qx,qy,qz,divq,divq_from_q`; wall probes
// (`wall: GROUP`) `x,y,z,distance,q_in,q_net` on that group's faces (a point off the group is an
// InputError naming the probe and the point).
// The final gather's probe values (optional): per probe, per point (G, qx, qy, qz) replacing the DG
// values of volume probes, whose DG values then go to G_dg, qx_dg, qy_dg, qz_dg; for wall probes
// (q_in, 0, 0, 0), the gathered point value (q_net follows with the wall's absorptivity); kappa at
// the nodes for div q.
struct GatheredProbes {
  std::vector<std::vector<std::array<double, 4>>> values;
  std::span<const double> kappa;
};
void write_probes(const std::filesystem::path& dir, const io::CaseSpec& cs, const transport::Discretization& disc,
                  const problem::Walls& walls, const solver::GrayResult& result, const RadiationFields& fields,
                  std::vector<std::string>& warnings, const GatheredProbes* gathered = nullptr);

}  // namespace dgrte::output
