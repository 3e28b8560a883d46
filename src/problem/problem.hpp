#pragma once
// The physical set-up of a gray run: the medium (kappa, sigma_s, phase function, emission, user
// source; evaluated where the user gave them, docs/architecture.md "Properties at quadrature points") and the walls (every boundary condition, in one place). Built once from
// the case file and the mesh; the solvers read it and never look at the case file.
#include "common/vec3.hpp"
#include "angular/phase_function.hpp"
#include "angular/quadrature.hpp"
#include "angular/scattering_matrix.hpp"
#include "fields/field_import.hpp"
#include "gas/spectral_model.hpp"
#include "common/tet_topology.hpp"
#include "io/case_file.hpp"
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"

#include <span>
#include <string>
#include <vector>

namespace dgrte::problem {

using dgrte::Vec3;

std::string group_label(const mesh::PhysicalGroup& g);

struct Medium {
  // The user's fields at the DG nodes, index e * N_p + i: the point values outputs read (divq at a
  // node is kappa (4 pi Ib - G) there); the solve does not interpolate them.
  std::vector<double> kappa, sigma_s, blackbody_intensity;
  std::vector<double> temperature;  // K; NaN where the case gives Ib instead
  std::vector<double> soot_fv;      // soot volume fraction at the nodes; empty = no soot in the case
  // What the solve integrates, from the fields at the property points (disc.property, e * Q + q):
  // the extinction term sigma_t u and the scattering term sigma_s phi (Galerkin blocks where the
  // coefficient varies on an element), and the emission kappa Ib as the nodal coefficients of its
  // L2 projection.
  transport::ReactionTerm extinction, scattering_term;
  std::vector<double> emission;
  // solver.properties: nodes — the terms above (and user sources) from the nodal values instead, in
  // the collocated form (no property points).
  bool properties_at_nodes = false;
  // With a spectral gas model (`model:`): the gas state at every node and at every property point,
  // and sigma_s and Ib at the property points; kappa, Ib and the solve's terms are then those of one
  // spectral point at a time (set by the spectral loop), 0 as built.
  std::vector<gas::GasState> gas, point_gas;
  std::vector<double> point_sigma_s, point_blackbody_intensity;
  // Points where outputs evaluate div q = kappa (4 pi Ib - G) with the properties at the point itself
  // (the volume probes; attach_output_points): the element containing each (-1: outside the mesh),
  // its nodal interpolation weights (N_p per point), kappa and Ib there (with a gas model: those of
  // the current spectral point, and the gas state).
  struct OutputPoints {
    std::vector<Vec3> position;
    std::vector<long> element;
    std::vector<double> weights;
    std::vector<double> kappa, blackbody_intensity;
    std::vector<gas::GasState> gas;
    std::size_t size() const { return element.size(); }
  } output_points;
  bool has_gas_model() const { return !gas.empty(); }
  // Whether build_medium made the solve's terms (extinction, scattering, emission) for `elements`
  // elements of `nodes` nodes each: what the tracers read.
  bool has_solve_terms(std::size_t elements, std::size_t nodes) const {
    return extinction.num_elements() == elements && scattering_term.num_elements() == elements && emission.size() == elements * nodes;
  }
  // Quantities read from field files (media.X.field), one record per entry: what was read, how it
  // was interpolated and the ranges (source vs nodes); the values themselves are in the fields above.
  struct FieldImport {
    std::string where;                     // the case-file entry
    std::string file;
    std::vector<std::string> quantities;   // e.g. temperature, x_h2o (same order as info.ranges)
    fields::SampledFields info;            // values dropped
    std::size_t nodes = 0;
  };
  std::vector<FieldImport> field_imports;
  // Scattering: one discrete operator per medium entry that scatters (the phase function is per
  // entry); element -> operator index, -1 if the element does not scatter.
  std::vector<angular::PhaseFunction> phase;
  std::vector<angular::ScatteringMoments> scattering;
  std::vector<int> scattering_of_element;
  std::vector<int> entry_of_operator;  // the media entry of each operator (cs.media index)
  int scattering_rank = 0;  // max rank over operators: moments stored per node
  // User source terms (of x and s), per medium entry; only entries whose source is not 0.
  std::vector<io::Expression> source;
  std::vector<int> source_of_element;  // -1: none
  bool has_source() const { return !source.empty(); }
  bool scatters() const { return scattering_rank > 0; }
};

// Locates points (the volume probes' points, in order) and evaluates the case's properties there
// (Medium::output_points); points outside the mesh get element -1.
void attach_output_points(Medium& m, const io::CaseSpec& cs, const transport::Discretization& disc, std::span<const Vec3> points);
// The same for points located already: element[p] (-1: not here) and its interpolation weights
// (N_p per point; a distributed run's rank takes the points rank 0 located in its owned elements).
void attach_output_points(Medium& m, const io::CaseSpec& cs, const transport::Discretization& disc, std::span<const Vec3> points,
                          std::span<const long> element, std::span<const double> weights);

// The angular set of the case (`angular:`); errors name the key and line.
angular::Quadrature build_quadrature(const io::AngularSpec& spec);

Medium build_medium(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature* quad);

// Adds the user source of direction s to rhs: the L2 projection of its values at the property
// points (nodal coefficients); thread-safe (copies the expressions).
void add_user_source(const Medium& m, const transport::Discretization& disc, const Vec3& s, std::span<double> rhs);

// One wall condition per surface group, on the boundary faces. Opaque walls: emissivity +
// diffuse reflectivity + specular reflectivity = 1 (Modest 2013, ch. 3):
//   I(s_in) = eps I_b(T_w) + rho_d q_in d + rho_s I(s_mirror) + inflow + irradiation d
// with d = 1/pi, or 1/H_n (the set's half-range flux about the face normal) when
// wall_flux_normalisation is on, so that the diffusely reflected flux equals rho_d q_in and a
// prescribed irradiation enters exactly. Emission stays eps I_b: with q_in = H_n I_b an
// isothermal enclosure then stays exactly at I = I_b (discrete Kirchhoff law) for every set.
struct WallModel {
  std::string group;
  io::BoundaryType type = io::BoundaryType::black;
  double emissivity = 1, rho_diffuse = 0, rho_specular = 0, irradiation = 0;
  const io::Expression* intensity = nullptr;  // inflow
  // The fraction of an incident flux the wall absorbs (1 - rho_d - rho_s; its emissivity where
  // Kirchhoff's law holds), and the specular part of what it reflects.
  double absorptivity() const { return 1 - rho_diffuse - rho_specular; }
  double specular_share() const { return rho_diffuse + rho_specular > 0 ? rho_specular / (rho_diffuse + rho_specular) : 0.0; }
};

class Walls {
 public:
  // quad may be null only for `directions` runs (then only black and inflow walls are allowed).
  Walls(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature* quad,
        std::vector<std::string>& warnings);

  std::size_t num_faces() const { return face_.size(); }  // boundary faces
  std::size_t face_nodes() const { return nfp_; }
  // Boundary face b: its element and local face (packed: element * 4 + local face); its wall; its
  // unit outward normal.
  ElementFace face(std::size_t b) const { return ElementFace::unpack(face_[b]); }
  std::size_t element_face(std::size_t b) const { return face_[b]; }
  int wall_of(std::size_t b) const { return wall_of_face_[b]; }
  const WallModel& wall(int w) const { return walls_[static_cast<std::size_t>(w)]; }
  std::size_t num_walls() const { return walls_.size(); }
  const Vec3& normal(std::size_t b) const;
  // Spectral gas models: the walls of one spectral point emit eps a_j(T_w) I_b(T_w): sets each face
  // node's emission to a[b * N_fp + j] times the gray one (eps I_b), again for every point.
  void scale_emission(std::span<const double> a);
  // Flux the wall emits in the discrete model: eps I_b(T_w) H_n [W/m^2] (eps sigma T^4 when H_n = pi).
  double emitted_flux(std::size_t b, std::size_t j) const { return emitted_[b * nfp_ + j] * half_range_[b]; }
  double temperature(std::size_t b, std::size_t j) const { return temperature_[b * nfp_ + j]; }
  // Hemispherical emissive power eps sigma T_w^4 [W/m^2] (exact, not the set's H_n): what a ray
  // tracer emits (scaled by scale_emission like the rest).
  double emissive_power(std::size_t b, std::size_t j) const { return emitted_[b * nfp_ + j] * io::kPi; }
  // d of face b: the diffusely reflected radiance is rho_d q_in d (1/pi, or 1/H_n with the set's
  // normalisation), as in inflow().
  double diffuse_factor(std::size_t b) const { return diffuse_factor_[b]; }

  // Diffuse reflection state (the outer iteration's wall block): q_in at each face node of a
  // diffusely reflecting face.
  std::size_t state_size() const { return state_size_; }
  // Specular traces: the outgoing intensity of every ordinate at each node of a specularly
  // reflecting face. They couple only the ordinates of one reflection group (the closure of an
  // ordinate under the walls' mirror maps), and the transport sweep converges them group by group.
  std::size_t specular_size() const { return specular_size_; }
  bool reflects() const { return state_size_ > 0 || specular_size_ > 0; }
  // Ordinates coupled by specular reflection (connected components; singletons for the rest).
  const std::vector<std::vector<int>>& reflection_groups() const { return groups_; }

  // g[b * N_fp + j] for the faces where ordinate m enters the domain (others untouched).
  // m = -1 with v = the direction: `directions` runs (no reflection).
  // extra: known diffuse irradiation per face node [W/m^2] (the diffuse reflection of collimated
  // beams), added as d * extra with the sources.
  // state: diffuse reflection state; specular: the specular traces.
  void inflow(int m, const Vec3& v, bool with_sources, std::span<const double> state, std::span<const double> specular,
              std::span<double> g, std::span<const double> extra = {}) const;
  // rhs -= LIFT (c g) on the faces where v enters: the wall inflow moved to the right-hand side.
  void lift(const Vec3& v, std::span<const double> g, std::span<double> rhs) const;
  // Adds ordinate m's diffuse contribution (traces of u at outflow faces) to the state.
  void record(int m, std::span<const double> u, std::span<double> state) const;
  // Stores ordinate m's traces on specular faces (only m's slices are written); returns the max
  // change and the max magnitude of what was written.
  std::pair<double, double> record_specular(int m, std::span<const double> u, std::span<double> specular) const;
  // Adds ordinate m's wall fluxes per face node: q_in (from wall_intensity: the outflow traces, or at
  // edges and corners another wall's g) and q_out (the inflow g); q_in_wall_delta, when given, gets
  // what wall_intensity changed in q_in.
  void tally(int m, std::span<const double> u, std::span<const double> g, std::span<double> q_in,
             std::span<double> q_out, std::span<double> q_in_wall_delta = {}) const;

  // Boundary-consistent outputs (docs/case-file.md, "Values on the walls"). At a wall point, a direction
  // entering the medium there has the wall's outgoing intensity g (the upwind value the DG flux
  // imposes), not the interior trace u. At face node bj = b * N_fp + j and ordinate m: the mean of g
  // over the wall faces through that point where m enters (face b itself, or another face of the same
  // element on a convex edge or corner with it), else u's trace. tally reports q_in with it.
  double wall_intensity(int m, std::size_t bj, std::span<const double> u, std::span<const double> g) const;
  // Adds ordinate m's share of G and q at every wall face node, each face with its own values: g where
  // m enters that face, else wall_intensity (the trace, or another wall's g at an edge or corner).
  void tally_wall_moments(int m, std::span<const double> u, std::span<const double> g, std::span<double> G,
                          std::span<double> qx, std::span<double> qy, std::span<double> qz) const;
  // The fraction of an incident flux that face b sends back (diffusely, with the set's factor d H_n,
  // and specularly): rho_d d H_n + rho_s.
  double reflectance(std::size_t b) const {
    const auto& w = walls_[static_cast<std::size_t>(wall_of_face_[b])];
    return w.rho_diffuse * diffuse_factor_[b] * half_range_[b] + w.rho_specular;
  }
  // The element node (e * N_p + i) of wall face node bj = b * N_fp + j.
  std::size_t element_node(std::size_t bj) const {
    const std::size_t ef = face_[bj / nfp_];
    const auto [e, f] = ElementFace::unpack(ef);
    return e * static_cast<std::size_t>(disc_.num_nodes()) + static_cast<std::size_t>(disc_.ref.face_nodes[static_cast<std::size_t>(f)][bj % nfp_]);
  }
  // to[b * N_fp + j] += nodal value at the element node of face node j of face b.
  void add_nodal(std::span<const double> nodal, std::span<double> to) const;
  // The wall face nodes at the same point as face node bj, bj excluded (edges and corners).
  std::span<const std::size_t> coincident(std::size_t bj) const {
    return std::span<const std::size_t>(coincident_).subspan(coincident_begin_[bj], coincident_begin_[bj + 1] - coincident_begin_[bj]);
  }
  // Whether coincident(bj)[i]'s face lies on the medium's side of bj's face plane (a convex edge or
  // corner): only there does a direction entering the medium through it come from outside the medium
  // at that point. At a concave edge (a re-entrant corner, a baffle's tip) it comes through the medium.
  bool convex(std::size_t bj, std::size_t i) const { return coincident_convex_[coincident_begin_[bj] + i] != 0; }

  const angular::Quadrature* quadrature() const { return quad_; }
  // Streaming vector of ordinate m: s_bar / w (the unit direction for point sets; for FV sets the
  // control-angle average, so that w v.n = integral of s.n over the control angle).
  const Vec3& streaming(int m) const { return v_[static_cast<std::size_t>(m)]; }

 private:
  struct Reflection {  // specular redistribution for one face normal: into m from m' with coef
    std::vector<std::vector<std::pair<int, double>>> from;  // per ordinate m (incoming), sources m'
    int unmatched = 0;  // ordinates whose exact mirror is not in the set (interpolated)
  };
  const transport::Discretization& disc_;
  const angular::Quadrature* quad_;
  std::size_t nfp_;
  std::vector<WallModel> walls_;
  std::vector<std::size_t> face_;      // e * 4 + f
  std::vector<int> wall_of_face_;
  std::vector<Vec3> normal_;
  std::vector<double> diffuse_factor_;  // d per face
  std::vector<double> half_range_;      // H_n per face (pi without a quadrature)
  std::vector<double> emitted_, temperature_;  // per face node: eps I_b(T_w), T_w
  std::vector<double> gray_emitted_;           // eps I_b(T_w) once scale_emission was called
  std::vector<long> state_offset_;      // per face: start of its diffuse state block, -1 if none
  std::vector<long> specular_offset_;   // per face: start of its specular traces (M x N_fp), -1 if none
  std::size_t specular_size_ = 0;
  std::vector<std::vector<int>> groups_;
  std::vector<int> reflection_of_face_;  // index into reflections_, -1
  std::vector<Reflection> reflections_;
  std::vector<Vec3> v_;
  std::size_t state_size_ = 0;
  // Wall face nodes at one point (CSR over b * N_fp + j).
  std::vector<std::size_t> coincident_begin_, coincident_;
  std::vector<char> coincident_convex_;
  Reflection make_reflection(const Vec3& n) const;
  void find_coincident_nodes();
  bool enters(int m, std::size_t b) const;
 public:
  int unmatched_mirrors() const;  // over all specular faces' normals: ordinates interpolated
};

}  // namespace dgrte::problem
