#pragma once
// A-posteriori error indicator per element for angular DG runs (issue 32, item 1): the difference
// between the solution of order p and transport sweeps of order p + 1 on the same mesh, started
// from it (a hierarchical, "p-enriched" estimate; Bank & Smith 1993 for elliptic problems). Why not
// a local estimate (face jumps, a patch reconstruction): in transport the error of an element is
// mostly carried in from upstream along the ordinates, which only a sweep sees; and one sweep costs
// about what the solve costs per sweep, without a tuned constant. Where the solution is smooth,
// the p + 1 error is an order of h smaller, so the estimate tends to the true error (effectivity
// -> 1, tests/adapt).
//
//   eta_K(G)    = || G_{p+1} - G_p ||_{L2(K)}                      (the G the run writes)
//   eta_K(divq) = || kappa (G_{p+1} - G_p) ||_{L2(K)}              (div q = kappa (4 pi I_b - G))
//   eta_K(wall) = || q_in,{p+1} - q_in,p ||_{L2(faces of K on walls)}, q_in = sum_m w_m max(0, s_m.n) I_m
//
// Scattering and diffusely reflecting walls couple the ordinates: the p + 1 sweeps iterate from the
// p solution's moments until what they would still change is below a tenth of the estimate
// (solver::sweep_from).
#include "angular/quadrature.hpp"
#include "io/case_file.hpp"
#include "output/radiation_output.hpp"
#include "problem/problem.hpp"
#include "solver/gray_solver.hpp"
#include "transport/discretization.hpp"

#include <span>
#include <string>
#include <vector>

namespace dgrte::adapt {

struct ErrorIndicator {
  int order = 0;                  // p + 1: the order of the enriched sweeps
  std::vector<double> element_G;  // eta_K(G) per element [W/m^2 m^{3/2}]
  std::vector<double> element_wall_flux;  // eta_K(wall) per element (0 off the walls) [W/m^2 m]
  double G = 0, G_norm = 0;       // sqrt(sum eta_K(G)^2) and ||G_p||_L2 over the domain
  double wall_flux = 0, wall_flux_norm = 0;  // the same over the walls, with ||q_in,p||_L2
  // div q = kappa (4 pi I_b - G) moves with kappa dG: in an optically thick medium G is close to
  // 4 pi I_b, and a small relative error of G is a large one of div q. eta_K(div q) = ||kappa dG||_{L2(K)}.
  std::vector<double> element_divq;
  double divq = 0, divq_norm = 0;  // sqrt(sum eta_K(div q)^2) and ||div q_p||_L2
  // For pointwise targets (refine.norm: max): per element the largest |G_{p+1} - G_p|, |kappa dG| at
  // its order p + 1 nodes and |dq_in| at its wall face nodes (0 off the walls), and the largest
  // |value| of the run's G, div q and q_in.
  std::vector<double> element_peak_G, element_peak_divq, element_peak_wall_flux;
  double G_max = 0, divq_max = 0, wall_flux_max = 0;
  // For refine.norm: probes: per element, the largest |difference| at the case's probe points inside
  // it (G and div q at volume probe points, q_in at wall probe points), each relative to the largest
  // |value| on that point's line; 0 where the element holds no such point. has_*_probes: the case
  // has a line of that kind.
  std::vector<double> element_probe_G, element_probe_divq, element_probe_wall_flux;
  bool has_volume_probes = false, has_wall_probes = false;
  int sweeps = 0;                 // transport sweeps of order p + 1 (the most of any problem)
  double remaining = 0;           // their last remaining-change ratio (0 when exact after one; the largest)
  int problems = 0;               // gray problems swept: 1, or a nongray run's spectral points
  double seconds = 0;
  double relative_G() const { return G_norm > 0 ? G / G_norm : G; }
  double relative_wall_flux() const { return wall_flux_norm > 0 ? wall_flux / wall_flux_norm : wall_flux; }
  double relative_divq() const { return divq_norm > 0 ? divq / divq_norm : divq; }
  // The largest nodal difference relative to the largest |value|: an estimate of the pointwise error
  // (what the max over a probe line sees).
  double max_relative_G() const;
  double max_relative_wall_flux() const;
  double max_relative_divq() const;
  // The largest relative difference on any probe line (refine.norm: probes; 0 without such lines).
  double probe_relative_G() const;
  double probe_relative_wall_flux() const;
  double probe_relative_divq() const;
};

// The sweeps' stopping fraction (solver::sweep_from): what they leave is below this share of the
// estimate, so it shifts the estimate by at most about that much.
inline constexpr double kSweepStopFraction = 0.1;

// The estimate summed over gray problems on one mesh: a gray run's one, or a nongray run's spectral
// points (spectral::SpectralCompanion builds each point's problem at order p + 1 from the same
// properties). The differences dG_j, kappa_j dG_j and dq_in,j are summed over the points before
// the norms are taken: the indicator of the summed G, div q and wall flux the run writes.
class ErrorEstimator {
 public:
  // enriched: order p + 1 on disc's mesh; enriched_walls: the walls on it (any point's: the sweep
  // plans and the wall norms need only their faces and streaming directions; kept by reference). options: the solve's (the p + 1 sweeps
  // run on the CPU, on one process).
  ErrorEstimator(const transport::Discretization& disc, const transport::Discretization& enriched, const angular::Quadrature& quad,
                 const problem::Walls& enriched_walls, const solver::GrayOptions& options);
  // One problem at order p + 1 and its order p solution (with every ordinate's intensity).
  void add(const problem::Medium& enriched_medium, const problem::Walls& enriched_walls, const solver::GrayResult& solution,
           const solver::Collimated* beams = nullptr);
  // run, fields: the run's (summed) result and fields on disc, which the norms are relative to (G,
  // div q; on walls the walls' G and div q, what the run writes at points there); probes: the case's
  // probe lines, where the differences are also measured (element_probe_*).
  ErrorIndicator finish(const solver::GrayResult& run, const output::RadiationFields& fields, std::span<const io::ProbeSpec> probes = {}) const;

 private:
  const transport::Discretization& disc_;
  const transport::Discretization& enriched_;
  const angular::Quadrature& quad_;
  const problem::Walls& walls_;  // the wall faces of every problem added (their emission may differ)
  solver::GrayOptions options_;
  std::vector<transport::SweepPlan> plans_;
  std::vector<double> dG_, kappa_dG_;  // summed G_{p+1} - G_p and kappa (G_{p+1} - G_p) at the p + 1 nodes
  std::vector<double> dq_in_, q_in_;   // summed q_in differences and q_in,p at the p + 1 wall face nodes
  // Summed differences of the walls' G (GrayResult::wall_G: the wall's own intensity for the
  // directions entering the medium, what the run writes at wall points) and kappa times them, at
  // the p + 1 wall face nodes: the probe points on walls.
  std::vector<double> wall_dG_, wall_kappa_dG_;
  std::array<dg::Matrix, 4> wall_prolongation_;  // per face f: its order p face nodes to its order p + 1 ones
  int sweeps_ = 0, problems_ = 0;
  double remaining_ = 0, seconds_ = 0;
};

// Throws an InputError naming the case when order + 1 is above the highest order.
void check_indicator_order(const io::CaseSpec& cs, int order);

// The case at order p + 1 on the run's mesh, what the indicator sweeps: the discretisation, the
// medium (a nongray case's gas states at its own nodes and property points) and the walls, built
// from the case file as the run's are. Not movable: the members refer to each other.
struct EnrichedProblem {
  EnrichedProblem(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad);
  EnrichedProblem(const EnrichedProblem&) = delete;
  EnrichedProblem& operator=(const EnrichedProblem&) = delete;
  std::vector<std::string> repeated;  // the set-up's warnings, given already by the run's
  transport::Discretization disc;     // order p + 1
  problem::Medium medium;
  problem::Walls walls;
};

// The indicator of a gray angular solve: solution must hold every ordinate's intensity (solved
// with GrayOptions::keep_intensities). Builds the order p + 1 discretisation, medium, walls and
// beams from cs (order p = disc's; p <= 7). options: the solve's (device, plans and a distributed
// mesh are not used: the p + 1 sweeps run on the CPU, on one process).
// fields: the solution's (div q, the walls' values: what the norms are relative to). The differences
// are also measured on cs.output.probes (ErrorIndicator::element_probe_*).
ErrorIndicator estimate_gray_error(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad,
                                   const solver::GrayResult& solution, const output::RadiationFields& fields, const solver::GrayOptions& options);

// The prolongation of nodal fields of order `from` to order `to` >= from (exact: interpolation of
// each element's polynomial at the higher order's nodes), element by element.
std::vector<double> prolong(const dg::ReferenceTet& from, const dg::ReferenceTet& to, std::span<const double> u);

// Per element, the L2 norm of the nodal field u (|| u ||_{L2(K)}, with the element's mass matrix).
std::vector<double> element_l2(const transport::Discretization& disc, std::span<const double> u);

}  // namespace dgrte::adapt
