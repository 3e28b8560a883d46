#pragma once
// Monte Carlo ray tracing on the tetrahedral mesh: an independent second method for the gray RTE
// (Modest 2013, ch. 8 and 21), built from the same problem layer as the DG solver (problem::Medium,
// problem::Walls, the collimated beams of the case).
//
// Forward estimator: bundles of equal power P/N are emitted by the medium (4 pi kappa I_b per
// element), the walls (eps sigma T^4 and prescribed irradiation per face) and the beams, in
// proportion to their power; absorption is continuous along each segment (the bundle keeps
// w exp(-kappa l) and deposits the rest in the element), scattering events are sampled from sigma_s
// and the phase function, walls absorb their absorptivity and reflect the rest diffusely or
// specularly, and Russian roulette ends bundles below 1e-3 of their power. Track lengths give G
// and q per element, deposits the absorbed power, wall hits the incident and absorbed power per
// face. Properties are element means of the nodal fields (the P0 part of the DG projection):
// sharp gradients inside an element are averaged.
//
// Backward (reverse) estimator: the radiance reaching a probe point from a direction is the
// emission and wall leaving-intensity along the path traced backward (scattering sampled with the
// same phase function, reciprocity); G and q at volume points (directions uniform over the
// sphere), q_in at wall points (cosine-weighted). Point values, not element means.
//
// Every output has a standard error from `batches` independent batches. Path i draws from a
// counter-based stream keyed by (seed, i), and the tallies are summed in fixed point (128-bit sums), so the
// results are bit-identical for any thread count.
#include "io/case_file.hpp"
#include "mc/phase_sampler.hpp"
#include "mc/tracing_mesh.hpp"
#include "problem/problem.hpp"
#include "transport/discretization.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

namespace dgrte::mc {

// Russian roulette and lost-ray limits of every tracer (host loop and device kernel).
inline constexpr double kRouletteBelow = 1e-3;   // bundles below this weight play Russian roulette
inline constexpr double kRouletteWeight = 1e-2;  // and survive with this weight (probability w / 1e-2)
inline constexpr long kMaxSegments = 10'000'000;  // per path: a longer path is counted lost
inline constexpr int kMaxZeroSteps = 64;          // consecutive zero-length crossings: a ray stuck on an edge

struct McModel;
// Another tracer of forward paths than the host loop (the OpenCL kernel, backend/device_tracer_data.hpp):
// traces paths [first_id, last_id) of the stream (seed, kForwardStream) through `model` and returns
// their tallies in weight units: per element absorbed weight, track, track x, y, z [m] (5 each), per
// boundary face incident and absorbed weight (2 each), as the host loop sums them.
struct BatchTallies {
  std::vector<double> element, face;
  std::uint64_t segments = 0, scatters = 0, reflections = 0, lost = 0;
};
using BatchTracer = std::function<BatchTallies(const McModel& model, std::uint64_t seed, std::uint64_t first_id, std::uint64_t last_id)>;

struct McOptions {
  std::uint64_t paths = 1'000'000;   // forward bundles
  int batches = 20;                  // independent batches for the standard errors (>= 2)
  std::uint64_t seed = 1;
  std::uint64_t probe_rays = 100'000;  // backward rays per probe point
  std::uint64_t first_path = 0;        // path (and probe ray) ids start here: distinct streams per spectral point
  std::function<void(const std::string&)> progress;  // one line per batch, or empty
  BatchTracer tracer;  // forward paths elsewhere (a device); empty: the host loop (OpenMP)
};

// Mean over batches and its standard error (sample standard deviation / sqrt(batches)).
struct Estimate {
  std::vector<double> mean, error;
};
struct ScalarEstimate {
  double mean = 0, error = 0;
};

// What the tracer reads, built from the problem layer (properties again per spectral point): mesh planes, element properties, wall
// behaviour per boundary face and the emitting sources.
struct McModel {
  TracingMesh mesh;
  // Per element, in the tracer's order (mesh.original maps to mesh elements): mean kappa and sigma_s [1/m]; emitted power 4 pi integral kappa I_b dV [W]; the
  // source radiance mean(kappa I_b) / mean(kappa) [W/(m^2 sr)] the backward estimator integrates;
  // the phase function (index into phase, -1 where sigma_s = 0).
  std::vector<double> kappa, sigma_s, emission, source_radiance;
  std::vector<int> phase_of_element;
  // What a step reads, packed per element (a walk touches one record per crossing, not four arrays).
  struct alignas(64) Cell {
    FacePlane plane[4];
    int across[4];  // as TracingMesh::across
    double kappa, sigma_s;
  };
  std::vector<Cell> cells;
  std::vector<PhaseSampler> phase;
  // Per boundary face (problem::Walls order).
  struct Face {
    int element, local;
    Vec3 inward;             // unit normal into the domain
    double area;
    double absorptivity;     // 1 - rho_d - rho_s
    double specular_share;   // rho_s / (rho_d + rho_s)
    double emission;         // eps sigma T_w^4 [W/m^2] (face mean)
    double irradiation;      // prescribed diffuse irradiation leaving into the domain [W/m^2]
    double beam;             // collimated power entering through this face, per area [W/m^2]
    double leaving() const { return emission + irradiation; }  // diffuse sources of the face
    int group;               // index into group_names
  };
  std::vector<Face> faces;
  std::vector<std::string> group_names;  // surface groups with boundary faces
  // Sources, sampled in proportion to their power.
  struct Source {
    enum class Kind { element, wall, beam } kind;
    std::size_t index;  // element or boundary face
    int beam = -1;
  };
  std::vector<Source> sources;
  std::vector<double> source_cdf;  // cumulative power [W]
  std::size_t clamped_elements = 0;  // element means of kappa, sigma_s or kappa I_b below 0, set to 0
  // Collimated beams: unit direction, flux normal to the beam [W/m^2], surface group it enters by.
  std::vector<Vec3> beam_direction;
  std::vector<double> beam_flux;
  std::vector<int> beam_group;
  double total_power() const { return source_cdf.empty() ? 0.0 : source_cdf.back(); }
  std::uint64_t revision = 0;  // set_properties counts: a device copy of the properties is stale when it differs
  // A per-element field of the tracer's order in mesh order.
  std::vector<double> in_mesh_order(const std::vector<double>& tracer_order) const {
    std::vector<double> out(tracer_order.size());
    for (std::size_t t = 0; t < out.size(); ++t) out[static_cast<std::size_t>(mesh.original[t])] = tracer_order[t];
    return out;
  }
};

// InputError for what the tracer does not model (inflow walls, user sources), naming the entry.
// A shadow ray against collimated beam i from x (tracer cell t): walked back along the beam to the
// first wall, tau accumulated by depth(cell, x, d, length) over each crossing. The wall reached goes
// to *wall (-1: the walk was lost); the result is exp(-tau) if that wall is the beam's entry (a face
// of its group facing the beam), 0 otherwise (x lies in the beam's shadow).
template <class Depth>
double shadow_transmission(const McModel& m, std::size_t i, std::size_t t, Vec3 x, Depth&& depth, long& wall) {
  const Vec3& b = m.beam_direction[i];
  const Vec3 d{-b[0], -b[1], -b[2]};
  double tau = 0;
  int zero_steps = 0;
  wall = -1;
  for (long seg = 0; seg <= kMaxSegments && zero_steps <= kMaxZeroSteps; ++seg) {
    const Exit ex = exit_face(m.cells[t].plane, x.data(), d.data());
    if (ex.face < 0) return 0.0;
    tau += depth(t, x, d, ex.distance);
    zero_steps = ex.distance > 0 ? 0 : zero_steps + 1;
    for (int k = 0; k < 3; ++k) x[static_cast<std::size_t>(k)] += ex.distance * d[static_cast<std::size_t>(k)];
    const int next = m.cells[t].across[ex.face];
    if (next >= 0) {
      t = static_cast<std::size_t>(next);
      continue;
    }
    wall = -1 - next;
    const auto& face = m.faces[static_cast<std::size_t>(wall)];
    const double facing = b[0] * face.inward[0] + b[1] * face.inward[1] + b[2] * face.inward[2];
    return face.group == m.beam_group[i] && facing > 0 ? std::exp(-tau) : 0.0;
  }
  return 0.0;
}

// What the tracer is for: Monte Carlo (user sources refused: it traces emission only) or the DG's
// final gather (which integrates user sources itself).
enum class Tracing { montecarlo, final_gather };
McModel build_model(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Medium& medium,
                    const problem::Walls& walls, Tracing use = Tracing::montecarlo);
// The properties and sources from a (new) medium and walls on the same mesh: element means of
// kappa, sigma_s, kappa I_b; wall emission; the source distribution. For each spectral point of a
// nongray run.
void set_properties(McModel& model, const transport::Discretization& disc, const problem::Medium& medium,
                    const problem::Walls& walls);

struct McResult {
  // Per mesh element (element means): G, q [W/m^2]; div q = emitted - absorbed per volume [W/m^3].
  Estimate G, qx, qy, qz, divq;
  // Per boundary face (problem::Walls order) [W/m^2]: incident, and net = incident - leaving =
  // absorbed - emitted - irradiation - beams entering there (positive into the wall).
  Estimate q_in, q_net;
  // Per surface group (McModel::group_names order) [W]: integral q_in dA, integral q_net dA.
  Estimate group_q_in, group_q_net;
  ScalarEstimate volume_divq;  // integral div q dV [W]
  ScalarEstimate walls_q_net, walls_q_in;  // over all walls [W] (groups are correlated: not their sum)
  ScalarEstimate imbalance;  // volume_divq - walls_q_net, per batch [W]: lost rays and roulette noise
  double source_power = 0;     // emitted by medium, walls and beams [W]
  std::uint64_t paths = 0, segments = 0, scattering_events = 0, wall_reflections = 0, lost_rays = 0;
  double seconds = 0;
};

McResult solve_forward(const McModel& model, const McOptions& options);

// Adds an independent part (another spectral point's paths) to a result: means add, standard
// errors add in quadrature, counts add.
void accumulate(McResult& total, const McResult& part);

// Backward estimates at points. Collimated beams enter exactly: the uncollided beam at the point
// (and on walls the backward path reaches) by a shadow ray toward the beam's entry faces, and its
// first-scattering source along every backward segment by a shadow ray from a point sampled on the
// segment (next-event estimation). Beam images in specular walls are not followed: their count is
// reported (unfollowed_specular_beam_hits) and is zero where beams never meet a mirror. A volume point gives G and q; a wall point (face >= 0, x on that
// face) gives q_in and q_net = absorptivity q_in - emitted.
struct ProbePoint {
  Vec3 x{};
  int element = -1;  // containing mesh element (volume points)
  long face = -1;    // boundary face (wall points)
  // Final gather of a volume point: the sphere is sampled in antipodal pairs about this axis, a
  // wall's normal for a point on a wall (the radiance jumps across the wall's plane: there the
  // jump falls on the boundary of each half, not inside it).
  Vec3 axis{0, 0, 1};
  // Final gather of a wall point on an edge: the inward normal of the other wall through the point
  // (zero: none). Directions into that wall leave the medium at once; the hemisphere is sampled in
  // its open and blocked parts separately, so that the radiance's jump at their border is on the
  // border of each part's samples.
  Vec3 adjacent_wall{0, 0, 0};
};
struct ProbeEstimate {
  ScalarEstimate G, qx, qy, qz, divq, q_in, q_net;
};
struct ProbeRun {
  std::vector<ProbeEstimate> values;
  // unfollowed_specular_beam_hits: backward paths that met a mirror lit by a beam, plus shadow
  // rays that ended on a mirror (a beam image could arrive that way): those contributions are
  // missing from the probes.
  std::uint64_t rays = 0, segments = 0, lost_rays = 0, shadow_rays = 0, unfollowed_specular_beam_hits = 0;
  double seconds = 0;
};
ProbeRun trace_probes(const McModel& model, const std::vector<ProbePoint>& points, const McOptions& options);

// Nongray runs, spectral sampling by path (solver.spectral_sampling: per_path): each batch is an
// independent systematic sample of the spectral points in proportion to the power each emits
// (positions (k + U_b) / N_b on the cumulative power, k < N_b, U_b uniform per batch; Modest 2013,
// sec. 21.9), so a point gets paths only where its share of the power falls: of a line-by-line grid
// most points get none and are neither evaluated nor traced. Every path carries P_total / N_b; the
// batches span the points, so the standard errors include the sampling of the spectrum.
// Probe rays are placed the same way on a defensive mixture q_j = (p_j + b_j) / 2 of the power
// share p_j and the blackbody share b_j (the point's Planck weight of what the sources would emit
// at kappa = 1): a backward ray of point j estimates L_j / q_j, and with q_j proportional to kappa_j
// alone that ratio spans the orders of magnitude of kappa across a line (thick line centres
// oversampled, thin wings starved); b_j keeps it bounded by about 2 I_b. Each ray is weighted
// 1 / (R_b q_j), unbiased because q_j > 0 wherever anything emits.
// Use: construct with every point's emitted power and blackbody power; for each point with
// paths(j) + probe_rays(j) > 0 call trace_point with the model holding j's properties (and the same
// geometry); then the results, given the emission per element [W] and per face [W/m^2] summed over
// all points.
class SpectralSampler {
 public:
  SpectralSampler(const std::vector<double>& point_power, const std::vector<double>& blackbody_power, const McOptions& options,
                  const McModel& geometry, std::size_t probe_points);
  std::uint64_t paths(int j) const { return count(j, false); }       // forward paths of point j, all batches
  std::uint64_t probe_rays(int j) const { return count(j, true); }   // rays per probe point
  std::uint64_t forward_paths_traced() const { return counts_.paths; }
  void trace_point(int j, const McModel& model, const std::vector<ProbePoint>& probes);
  McResult forward_result(const McModel& geometry, const std::vector<double>& element_emission,
                          const std::vector<double>& face_emission) const;
  ProbeRun probe_result(const McModel& geometry, const std::vector<ProbePoint>& probes, const std::vector<double>& element_emission,
                        const std::vector<double>& face_emission) const;

 private:
  std::pair<std::uint64_t, std::uint64_t> positions(int j, int b, bool probe) const;  // [first, last) of batch b
  std::uint64_t count(int j, bool probe) const;
  void trace_point_on_host(int j, const McModel& model, std::chrono::steady_clock::time_point start);
  void trace_probes_of_point(int j, const McModel& model, const std::vector<ProbePoint>& probes);
  struct Scratch;  // per-thread tallies, kept between points
  std::shared_ptr<Scratch> scratch_;
  McOptions opt_;
  int B_;
  std::vector<double> cumulative_, probe_cumulative_;  // normalised cumulative power (p_j) and mixture (q_j), end at 1
  double total_power_ = 0;
  std::vector<double> offset_, probe_offset_;  // U_b
  std::vector<std::vector<double>> element_, face_;  // per batch: K x 5, F x 2 weight units (as solve_forward's tallies)
  std::vector<double> probe_sums_;                  // (point * B + b) * 5: G (or q_in), qx, qy, qz, kappa G
  McResult counts_;
  ProbeRun probe_counts_;
};
void accumulate(ProbeRun& total, const ProbeRun& part);

}  // namespace dgrte::mc
