#pragma once
// Ray-traced final gather for the DG solver: wall fluxes and probe values recomputed by
// integrating the converged DG source along deterministic rays from each receiver point, which
// removes the ray effects a discrete-ordinates set leaves in them.
//
// Along a ray from receiver x in direction d (radiation travelling along s = -d towards x):
//   I(x, s) = integral_0^L S(y, s) exp(-tau(x, y)) dl + exp(-tau(x, y_w)) I_w,  tau with kappa + sigma_s,
//   S(y, s) = kappa I_b + sigma_s / (4 pi) sum_m w_m Phi(s_m . s) I_m(y)       (the DG source)
//             + S_user(y, s) + sigma_s sum_beams F_c(y) Phi(s_c . s) / 4 pi  (user sources, collimated beams)
// with sigma_t, kappa I_b and the DG intensities evaluated by the element polynomials (exact DG
// fields, not element means). Along each element's chord the source and sigma_t are polynomials:
// the optical depth is integrated exactly, and the source against exp(-tau) by exact moments, on
// sub-intervals short enough that tau stays close to linear on each (exact where sigma_t is uniform
// in the element). Where the ray meets a wall: I_w = (eps sigma T_w^4 +
// irradiation) / pi + rho_d d q_in^DG (the face mean of the DG incident flux with the DG's factor d
// for the diffuse reflection, a second-order term), and the specular part followed along the
// mirrored ray.
// Directions: the 2-D Sobol' sequence mapped to the sphere (volume points, antipodal pairs) or to
// the cosine-weighted hemisphere (wall points): deterministic, no noise, and nested, so that doubling
// a point's rays keeps the earlier ones. Each point starts with min_rays and doubles until its value
// and the value from the first half of its rays differ by at most tolerance x max(|value|, floor)
// at two doublings in a row (floor: 1 % of the largest DG value of the kind), or max_rays. Walls are
// gathered at the points of a triangle rule exact to degree 2p (3 per face at P1, 6 at P2, (p + 1)^2
// above) and projected (L2) onto the face nodes; perfect mirrors (symmetry planes) keep the DG q_in.
#include "angular/quadrature.hpp"
#include "io/case_file.hpp"
#include "mc/monte_carlo.hpp"
#include "problem/problem.hpp"
#include "transport/discretization.hpp"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace dgrte::mc {

struct GatherInput {
  const transport::Discretization& disc;
  const problem::Medium& medium;
  const problem::Walls& walls;
  const angular::Quadrature& quad;
  std::span<const double> G;                             // DG G at the nodes (isotropic scattering source)
  const std::vector<std::vector<double>>* intensities;   // DG I_m at the nodes: needed for anisotropic scattering
  std::span<const double> q_in;                          // DG diffuse q_in per boundary face node (no beams)
  // Collimated beams: their scattering sigma_s F_c Phi(s . s_c) / 4 pi is a source of the diffuse
  // radiance (the continuous phase function). The case's beams (the tracer's beam_direction,
  // beam_flux, beam_group) are attenuated exactly, F_c = F exp(-tau), along shadow rays from each
  // node and point; `beams` holds their images in specular walls (solver::Collimated generations
  // >= 1) with the DG's nodal F_c.
  struct Beam {
    Vec3 direction{};
    std::span<const double> F;
  };
  std::vector<Beam> beams = {};
};

// The gather as plain arrays, for another tracer than the host loop (an OpenCL device:
// backend/device_gather_data.hpp; the layouts are device::GatherGeometry, GatherFields and
// GatherReceivers'): the tracer's mesh, what the rays integrate, and the receivers.
struct GatherArrays {
  std::vector<double> planes;  // per tracer cell 4 x (n, offset)
  std::vector<int> across, original;
  int order = 1, terms = 0, thin_points = 2, fit_points = 3;
  std::vector<int> exponents;
  std::vector<double> element, sigma_t, source, rules, faces;
  std::vector<double> receivers;
  std::vector<int> receiver_int;
};
// Traces tasks (receiver, first sample, last sample: 3 each) of `arrays` with the scrambling; returns
// 4 sums per task and adds the segments walked. fresh: the first call for these arrays (a new gather).
using GatherTracer = std::function<std::vector<double>(const GatherArrays& arrays, const std::vector<std::uint32_t>& tasks,
                                                       std::uint32_t scramble, bool fresh, std::uint64_t& segments)>;

// Rays per receiver point: adaptive (min_rays, doubled to max_rays until the point's estimate meets
// tolerance), or a fixed count (min_rays = max_rays, tolerance 0). The defaults are the case file's.
struct GatherControl {
  int min_rays = io::OutputSpec{}.final_gather_min_rays;
  int max_rays = io::OutputSpec{}.final_gather_max_rays;
  double tolerance = io::OutputSpec{}.final_gather_tolerance;
  // Selects the Owen scrambling of the directions: the gathers of a nongray run's spectral points
  // take different ones, so that their quadrature errors do not line up in the sum.
  std::uint32_t scramble = 0;
  // Another tracer for the rays (a device); empty: the host loop. Gathers it does not integrate
  // (anisotropic scattering, user sources, the case's collimated beams) stay on the host.
  GatherTracer tracer = {};
  std::string tracer_name = {};  // what GatherResult::traced_by says when it is used
  // Receives the gather's arrays and, where a device would not take them, why (`dgrte export` of a
  // case with the gather writes them for dgrte-bench-device).
  std::function<void(const GatherArrays& arrays, const std::string& host_only)> arrays_out = {};
};

struct GatherResult {
  std::vector<double> q_in;  // per boundary face node (Walls order) [W/m^2]
  std::vector<std::array<double, 4>> probe;  // per probe point: G, qx, qy, qz (volume) or q_in, 0, 0, 0 (wall)
  // The same from the first half of each point's rays (a net of half the size): the
  // difference to the full result estimates the gather's own quadrature error (that of the half
  // set, so an overestimate for a lattice whose error falls as 1/rays).
  std::vector<double> q_in_half;
  std::vector<std::array<double, 4>> probe_half;
  std::uint64_t points = 0, rays = 0, segments = 0;  // receiver points: face quadrature points + probe points
  std::uint64_t points_at_max = 0;  // points that reached max_rays before meeting the tolerance
  // The case's beams, exactly attenuated: their flux into the walls per boundary face node (projected
  // like q_in) and per probe point G, qx, qy, qz (volume) or q_in, 0, 0, 0 (wall). Not in q_in, probe.
  std::vector<double> beam_q_in;
  std::vector<std::array<double, 4>> probe_beam;
  double seconds = 0;
  std::string traced_by = "host";  // the host loop, or control.tracer_name (and why not, where it was refused)
};

// model: the tracer (build_model) of the same mesh and walls.
GatherResult final_gather(const McModel& model, const GatherInput& in, const std::vector<ProbePoint>& probes, const GatherControl& control);

// Adds another spectral point's gather (same receivers) to total: values, halves and beams add,
// counts and seconds add; points stays that of one gather.
void accumulate(GatherResult& total, const GatherResult& part);

}  // namespace dgrte::mc
