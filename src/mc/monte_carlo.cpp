#include "mc/monte_carlo.hpp"

#include "common/error.hpp"
#include "mc/random.hpp"
#include "common/tet_topology.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numbers>

namespace dgrte::mc {
namespace {

constexpr double kPi = std::numbers::pi;

Vec3 isotropic_direction(PathRandom& rng) {
  const double mu = 2 * rng.uniform() - 1, phi = 2 * kPi * rng.uniform();
  const double s = std::sqrt(std::max(0.0, 1 - mu * mu));
  return {s * std::cos(phi), s * std::sin(phi), mu};
}

// Cosine-weighted (Lambertian) direction about the unit normal n.
Vec3 lambertian_direction(const Vec3& n, PathRandom& rng) {
  const double mu = std::sqrt(rng.uniform());
  return scatter_direction(n, mu, rng.uniform());
}

Vec3 point_in_tet(const TracingMesh& tm, std::size_t e, PathRandom& rng) {
  // Sorted uniforms give barycentrics uniform on the simplex.
  double u[3] = {rng.uniform(), rng.uniform(), rng.uniform()};
  std::sort(u, u + 3);
  const double b[4] = {u[0], u[1] - u[0], u[2] - u[1], 1 - u[2]};
  Vec3 x{0, 0, 0};
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c) x[static_cast<std::size_t>(c)] += b[k] * tm.vertices[static_cast<std::size_t>(tm.tets[e][static_cast<std::size_t>(k)])][static_cast<std::size_t>(c)];
  return x;
}

Vec3 point_on_face(const TracingMesh& tm, std::size_t e, int f, PathRandom& rng) {
  double r1 = rng.uniform(), r2 = rng.uniform();
  if (r1 + r2 > 1) r1 = 1 - r1, r2 = 1 - r2;
  const auto& fv = dgrte::kFaceVertices[static_cast<std::size_t>(f)];
  const auto& a = tm.vertices[static_cast<std::size_t>(tm.tets[e][static_cast<std::size_t>(fv[0])])];
  const auto& b = tm.vertices[static_cast<std::size_t>(tm.tets[e][static_cast<std::size_t>(fv[1])])];
  const auto& c = tm.vertices[static_cast<std::size_t>(tm.tets[e][static_cast<std::size_t>(fv[2])])];
  return {a[0] + r1 * (b[0] - a[0]) + r2 * (c[0] - a[0]), a[1] + r1 * (b[1] - a[1]) + r2 * (c[1] - a[1]),
          a[2] + r1 * (b[2] - a[2]) + r2 * (c[2] - a[2])};
}

Vec3 mirror(const Vec3& d, const Vec3& n) {
  const double dn = dot(d, n);
  return {d[0] - 2 * dn * n[0], d[1] - 2 * dn * n[1], d[2] - 2 * dn * n[2]};
}

// A wall's new direction for a reflected bundle at face f (model.faces[b]).
Vec3 reflect(const McModel::Face& face, const Vec3& d, PathRandom& rng) {
  if (face.specular_share > 0 && (face.specular_share >= 1 || rng.uniform() < face.specular_share)) return mirror(d, face.inward);
  return lambertian_direction(face.inward, rng);
}

// Running mean and variance over batches (Welford), per entry.
struct Accumulator {
  std::vector<double> mean, m2;
  int count = 0;
  explicit Accumulator(std::size_t n = 0) : mean(n, 0.0), m2(n, 0.0) {}
  void add(const std::vector<double>& x) {
    ++count;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double delta = x[i] - mean[i];
      mean[i] += delta / count;
      m2[i] += delta * (x[i] - mean[i]);
    }
  }
  Estimate estimate() const {
    Estimate e{mean, std::vector<double>(mean.size(), 0.0)};
    if (count > 1)
      for (std::size_t i = 0; i < mean.size(); ++i) e.error[i] = std::sqrt(std::max(0.0, m2[i]) / (count - 1) / count);
    return e;
  }
};

// Fixed-point tallies: integer sums are exact and associative, so the total does not depend on
// which thread traced which path. One deposit is at most 2^62 (unit weight, or a track across the
// whole domain); 128-bit sums cannot overflow. (A device version would use two 64-bit words.)
constexpr double kDepositScale = 0x1.0p62;
// N tallies per element or face, side by side (one or two cache lines per crossing, not N), and the
// entries touched: a group of few paths (one spectral point of one batch) is cleared and reduced in
// O(entries touched), not O(mesh).
template <std::size_t N>
struct FixedTally {
  std::vector<std::array<__int128, N>> v;
  std::vector<std::uint32_t> touched;
  std::vector<char> marked;
  bool bad = false;  // a non-finite or out-of-range deposit
  void resize(std::size_t n) {
    v.assign(n, {}), marked.assign(n, 0), touched.clear();
    bad = false;
  }
  void clear() {
    for (const auto i : touched) v[i] = {}, marked[i] = 0;
    touched.clear();
    bad = false;
  }
  void add(std::size_t i, std::size_t c, double x, double scale) {
    const double y = x * scale;
    if (!(std::abs(y) < 0x1.0p63)) {
      bad = true;
      return;
    }
    if (!marked[i]) marked[i] = 1, touched.push_back(static_cast<std::uint32_t>(i));
    v[i][c] += static_cast<__int128>(std::llround(y));
  }
};

// What the paths of one thread deposit: per element absorbed weight, track, track x, y, z; per
// boundary face incident and absorbed weight; event counts.
struct alignas(64) PathTally {  // one cache line apart: no false sharing of the counters
  FixedTally<5> element;
  FixedTally<2> face;
  std::uint64_t segments = 0, scatters = 0, reflections = 0, lost = 0;
  void resize(std::size_t elements, std::size_t faces) { element.resize(elements), face.resize(faces); }
  void clear() { element.clear(), face.clear(); }
  bool bad() const { return element.bad || face.bad; }
};

// The next event along d from x in element e: the exit face, or first a scattering event (tau_s:
// the optical depth left to it, consumed by the step). Shared by the forward and backward walks.
struct Step {
  Exit exit;
  double length;
  bool scatter;
};
Step next_step(const McModel::Cell& cell, const Vec3& x, const Vec3& d, double& tau_s) {
  const Exit ex = exit_face(cell.plane, x.data(), d.data());
  Step st{ex, ex.distance, false};
  const double s = cell.sigma_s;
  if (s > 0 && tau_s < s * st.length) {
    st.length = tau_s / s;
    st.scatter = true;
  } else {
    tau_s -= s * st.length;
  }
  return st;
}

// A scattering event in element e: a direction from its phase function, a new optical depth.
void scatter(const McModel& m, std::size_t e, Vec3& d, double& tau_s, PathRandom& rng) {
  const auto& ph = m.phase[static_cast<std::size_t>(m.phase_of_element[e])];
  // Two statements: the order of the draws must not depend on how a compiler orders arguments (the
  // device kernel draws the cosine first, then the azimuth).
  const double mu = ph.cosine(rng.uniform());
  d = scatter_direction(d, mu, rng.uniform());
  tau_s = -std::log(rng.uniform());
}

// Russian roulette below kRouletteBelow: false if the bundle ends; a survivor carries kRouletteWeight.
bool survives_roulette(double& w, PathRandom& rng) {
  if (w >= kRouletteBelow) return true;
  if (rng.uniform() * kRouletteWeight >= w) return false;
  w = kRouletteWeight;
  return true;
}

std::size_t sample_source(const McModel& m, double u) {
  const double target = u * m.total_power();
  const auto it = std::upper_bound(m.source_cdf.begin(), m.source_cdf.end(), target);
  return std::min<std::size_t>(static_cast<std::size_t>(it - m.source_cdf.begin()), m.sources.size() - 1);
}

// After a step of length l to `face` of element e: into the neighbour (e updated, returns -1), or
// the boundary face reached (its index). Counts consecutive zero-length steps (a ray on an edge).
long cross_face(const McModel& m, std::size_t& e, int face, double l, int& zero_steps) {
  zero_steps = l > 0 ? 0 : zero_steps + 1;
  const int next = m.cells[e].across[face];
  if (next < 0) return -1 - next;
  e = static_cast<std::size_t>(next);
  return -1;
}

// One forward bundle (path id `id`): emitted by a source sampled by power, walked to its end;
// deposits in weight units (the tally scales: kDepositScale for weights, lscale for tracks).
void trace_forward_path(const McModel& m, std::uint64_t seed, std::uint64_t id, double lscale, PathTally& T) {
  const double wscale = kDepositScale;
  PathRandom rng(seed, kForwardStream, id);
  const auto& src = m.sources[sample_source(m, rng.uniform())];
  Vec3 x, d;
  std::size_t e;
  if (src.kind == McModel::Source::Kind::element) {
    e = src.index;
    x = point_in_tet(m.mesh, e, rng);
    d = isotropic_direction(rng);
  } else {
    const auto& face = m.faces[src.index];
    e = static_cast<std::size_t>(face.element);
    x = point_on_face(m.mesh, e, face.local, rng);
    d = src.kind == McModel::Source::Kind::beam ? m.beam_direction[static_cast<std::size_t>(src.beam)]
                                                : lambertian_direction(face.inward, rng);
  }
  double w = 1, tau_s = -std::log(rng.uniform());
  int zero_steps = 0;
  for (long seg = 0;; ++seg) {
    const Step st = next_step(m.cells[e], x, d, tau_s);
    const Exit& ex = st.exit;
    if (ex.face < 0 || seg > kMaxSegments || zero_steps > kMaxZeroSteps) {
      ++T.lost;
      break;
    }
    const double k = m.cells[e].kappa, l = st.length;
    double deposit = 0, track = w * l;
    if (k > 0) {
      deposit = -w * std::expm1(-k * l);
      track = deposit / k;
    }
    if (l > 0) {
      T.element.add(e, 0, deposit, wscale);
      T.element.add(e, 1, track, lscale);
      T.element.add(e, 2, track * d[0], lscale);
      T.element.add(e, 3, track * d[1], lscale);
      T.element.add(e, 4, track * d[2], lscale);
    }
    ++T.segments;
    w -= deposit;
    if (!survives_roulette(w, rng)) break;  // after every segment: also ends bundles fading across many elements
    for (int c = 0; c < 3; ++c) x[static_cast<std::size_t>(c)] += l * d[static_cast<std::size_t>(c)];
    if (st.scatter) {
      scatter(m, e, d, tau_s, rng);
      ++T.scatters;
      zero_steps = 0;
    } else {
      const long boundary = cross_face(m, e, ex.face, l, zero_steps);
      if (boundary < 0) continue;
      const auto fb = static_cast<std::size_t>(boundary);
      const auto& face = m.faces[fb];
      T.face.add(fb, 0, w, wscale);
      T.face.add(fb, 1, w * face.absorptivity, wscale);
      w *= 1 - face.absorptivity;
      if (!(w > 0)) break;
      d = reflect(face, d, rng);
      ++T.reflections;
      if (!survives_roulette(w, rng)) break;
    }
  }
}

}  // namespace

McModel build_model(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Medium& medium,
                    const problem::Walls& walls, Tracing use) {
  const std::string file = cs.file.string();
  const bool gather = use == Tracing::final_gather;
  if (!gather)
    for (const auto& m : cs.media)
      if (m.source.text() != "0")
        throw InputError(fmt::format("{}: media.{} (line {}): solver.method montecarlo traces emission by the medium and the walls and "
                                     "collimated beams; a user source term (media.*.source) needs the DG solver (solver.method: dg)",
                                     file, m.group, m.line));
  for (const auto& b : cs.boundaries)
    if (b.type == io::BoundaryType::inflow)
      throw InputError(fmt::format("{}: boundaries.{} (line {}): {} does not trace prescribed inflow intensities; use type irradiation "
                                   "(a diffuse incoming flux){}",
                                   file, b.group, b.line, gather ? cs.output.final_gather_where + ": the final gather" : "solver.method montecarlo",
                                   gather ? ", or switch the gather off (output.final_gather: false)" : " or the DG solver"));
  const auto& mesh = *disc.mesh;
  const std::size_t K = disc.num_elements();
  std::vector<long> boundary_face_of(4 * K, -1);
  for (std::size_t b = 0; b < walls.num_faces(); ++b) boundary_face_of[walls.element_face(b)] = static_cast<long>(b);
  McModel m;
  m.mesh = make_tracing_mesh(mesh, boundary_face_of);
  for (const auto& p : medium.phase) m.phase.emplace_back(p);

  // Walls: geometry and reflection (emission: set_properties).
  std::map<int, int> group_index;
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const auto [e, f] = walls.face(b);
    const auto& wm = walls.wall(walls.wall_of(b));
    McModel::Face face{};
    face.element = m.mesh.tracer_index[e], face.local = f;
    const Vec3& n = walls.normal(b);
    face.inward = {-n[0], -n[1], -n[2]};
    face.area = 2 * disc.geometry[e].face_scale[static_cast<std::size_t>(f)] * disc.geometry[e].jacobian;
    face.absorptivity = wm.absorptivity();
    face.specular_share = wm.specular_share();
    face.irradiation = wm.irradiation;
    const int g = mesh.boundary_group[e][static_cast<std::size_t>(f)];
    auto [it, fresh] = group_index.try_emplace(g, static_cast<int>(m.group_names.size()));
    if (fresh) m.group_names.push_back(g >= 0 ? problem::group_label(mesh.surface_groups[static_cast<std::size_t>(g)]) : "(unlabelled)");
    face.group = it->second;
    m.faces.push_back(face);
  }
  for (std::size_t i = 0; i < cs.collimated.size(); ++i) {
    const auto& spec = cs.collimated[i];
    const double len = std::sqrt(dot(spec.direction, spec.direction));
    const Vec3 d{spec.direction[0] / len, spec.direction[1] / len, spec.direction[2] / len};
    m.beam_direction.push_back(d);
    m.beam_flux.push_back(spec.flux);
    const auto g = std::find(m.group_names.begin(), m.group_names.end(), spec.boundary);
    m.beam_group.push_back(g == m.group_names.end() ? -1 : static_cast<int>(g - m.group_names.begin()));
    bool any = false;
    for (auto& face : m.faces) {
      const double c = dot(d, face.inward);  // the beam enters where it points into the domain
      if (face.group != m.beam_group.back() || c <= 0) continue;
      any = true;
      face.beam += spec.flux * c;
    }
    if (!any)
      throw InputError(fmt::format("{}: no face of boundary '{}' lets the beam ({:.4g}, {:.4g}, {:.4g}) into the domain", spec.where,
                                   spec.boundary, d[0], d[1], d[2]));
  }
  set_properties(m, disc, medium, walls);
  return m;
}

void set_properties(McModel& m, const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls) {
  const std::size_t K = disc.num_elements(), np = static_cast<std::size_t>(disc.num_nodes());
  const std::size_t nfp = walls.face_nodes();
  // Element means of what the solve integrates (problem::Medium: sigma_t, sigma_s and kappa Ib from
  // the property points, as L2 projections), by the reference mass matrix's row sums (exact for a
  // nodal polynomial, and a projection keeps the field's mean): kappa = sigma_t - sigma_s.
  const Eigen::VectorXd w = disc.ref.mass.colwise().sum().transpose();
  const double wsum = w.sum();
  if (!medium.has_solve_terms(K, np))
    throw std::logic_error("mc::set_properties: the medium's solve terms are not built (problem::build_medium)");
  const std::vector<double> sigma_t = medium.extinction.projection(), sigma_s = medium.scattering_term.projection();
  m.kappa.assign(K, 0.0), m.sigma_s.assign(K, 0.0), m.emission.assign(K, 0.0), m.source_radiance.assign(K, 0.0);
  m.phase_of_element.assign(K, -1);
  m.clamped_elements = 0;
  ++m.revision;
  for (std::size_t t = 0; t < K; ++t) {  // tracer order; e: the mesh element
    const auto e = static_cast<std::size_t>(m.mesh.original[t]);
    double k = 0, s = 0, kib = 0;
    for (std::size_t i = 0; i < np; ++i) {
      const double wi = w[static_cast<Eigen::Index>(i)] / wsum;
      k += wi * (sigma_t[e * np + i] - sigma_s[e * np + i]);
      s += wi * sigma_s[e * np + i];
      kib += wi * medium.emission[e * np + i];
    }
    // Means over the property rule (positive weights) of fields >= 0 are >= 0 but for round-off
    // (kappa = sigma_t - sigma_s in a purely scattering medium); solver.properties: nodes takes the
    // nodal interpolant's mean, which can dip below 0 where a steep field meets negative weights
    // (P2 vertex nodes). No negative absorption or emission in a tracer.
    if (k < -1e-12 * (s + std::abs(k)) || s < 0 || kib < 0) ++m.clamped_elements;
    k = std::max(k, 0.0), s = std::max(s, 0.0), kib = std::max(kib, 0.0);
    m.kappa[t] = k, m.sigma_s[t] = s;
    m.emission[t] = 4 * kPi * kib * m.mesh.volume[t];
    m.source_radiance[t] = k > 0 ? kib / k : 0.0;
    if (s > 0 && !medium.scattering_of_element.empty()) m.phase_of_element[t] = medium.scattering_of_element[e];
    if (s > 0 && m.phase_of_element[t] < 0)
      throw SolverError(fmt::format("element {} scatters but has no phase function", e));
  }
  // Walls: face means of the emissive power (face mass row sums).
  std::array<Eigen::VectorXd, 4> fw;
  for (int f = 0; f < 4; ++f) fw[static_cast<std::size_t>(f)] = disc.ref.face_mass[static_cast<std::size_t>(f)].colwise().sum().transpose();
  for (std::size_t b = 0; b < m.faces.size(); ++b) {
    const auto& fwf = fw[static_cast<std::size_t>(m.faces[b].local)];
    double e_mean = 0;
    for (std::size_t j = 0; j < nfp; ++j) e_mean += fwf[static_cast<Eigen::Index>(j)] * walls.emissive_power(b, j);
    m.faces[b].emission = e_mean / fwf.sum();
  }
  // The stepping record per element: planes, neighbours, kappa, sigma_s in three cache lines.
  m.cells.resize(K);
  for (std::size_t t = 0; t < K; ++t) {
    auto& c = m.cells[t];
    for (std::size_t f = 0; f < 4; ++f) c.plane[f] = m.mesh.plane[t * 4 + f], c.across[f] = m.mesh.across[t * 4 + f];
    c.kappa = m.kappa[t], c.sigma_s = m.sigma_s[t];
  }
  // Sources in proportion to power.
  m.sources.clear(), m.source_cdf.clear();
  double total = 0;
  auto add = [&](McModel::Source s, double power) {
    if (!(power > 0)) return;
    total += power;
    m.sources.push_back(s);
    m.source_cdf.push_back(total);
  };
  for (std::size_t e = 0; e < K; ++e) add({McModel::Source::Kind::element, e, -1}, m.emission[e]);
  for (std::size_t b = 0; b < m.faces.size(); ++b) add({McModel::Source::Kind::wall, b, -1}, m.faces[b].leaving() * m.faces[b].area);
  for (std::size_t i = 0; i < m.beam_direction.size(); ++i)
    for (std::size_t b = 0; b < m.faces.size(); ++b) {
      const auto& face = m.faces[b];
      const double c = dot(m.beam_direction[i], face.inward);
      if (face.group == m.beam_group[i] && c > 0) add({McModel::Source::Kind::beam, b, static_cast<int>(i)}, m.beam_flux[i] * c * face.area);
    }
}

namespace {

// Per batch: the tallies (weight units) in physical units, into running means and variances.
struct ForwardAccumulators {
  Accumulator G, qx, qy, qz, divq, q_in, q_net, group_in, group_net, totals;
  ForwardAccumulators(std::size_t K, std::size_t F, std::size_t groups)
      : G(K), qx(K), qy(K), qz(K), divq(K), q_in(F), q_net(F), group_in(groups), group_net(groups), totals(4) {}
  // element: K x 5 (absorbed weight, track, track x, y, z [m]); face: F x 2 (incident, absorbed
  // weight); unit: W per unit weight; emission [W] per element and leaving [W/m^2] per face (emitted,
  // irradiation and beams entering there) of the batch's sources.
  void add_batch(const McModel& m, const std::vector<double>& element, const std::vector<double>& face, double unit,
                 const std::vector<double>& emission, const std::vector<double>& leaving) {
    const std::size_t K = m.mesh.num_elements(), F = m.faces.size();
    std::vector<double> div(K), track(K), tx(K), ty(K), tz(K), incident(F), net(F), gin(group_in.mean.size(), 0.0),
        gnet(group_in.mean.size(), 0.0);
    double volume_W = 0;
    for (std::size_t e = 0; e < K; ++e) {
      const double V = m.mesh.volume[e];
      const double q_abs = element[5 * e] * unit;
      volume_W += emission[e] - q_abs;
      div[e] = (emission[e] - q_abs) / V;
      track[e] = element[5 * e + 1] * unit / V, tx[e] = element[5 * e + 2] * unit / V;
      ty[e] = element[5 * e + 3] * unit / V, tz[e] = element[5 * e + 4] * unit / V;
    }
    double walls_in = 0, walls_net = 0;
    for (std::size_t f = 0; f < F; ++f) {
      const auto& fc = m.faces[f];
      incident[f] = face[2 * f] * unit / fc.area;
      // q_net = incident - leaving = absorbed - emitted - irradiation - beams entering here.
      net[f] = face[2 * f + 1] * unit / fc.area - leaving[f];
      const auto g = static_cast<std::size_t>(fc.group);
      gin[g] += incident[f] * fc.area, gnet[g] += net[f] * fc.area;
      walls_in += incident[f] * fc.area, walls_net += net[f] * fc.area;
    }
    G.add(track), qx.add(tx), qy.add(ty), qz.add(tz), divq.add(div);
    q_in.add(incident), q_net.add(net), group_in.add(gin), group_net.add(gnet);
    totals.add({volume_W, walls_net, walls_in, volume_W - walls_net});
  }
  void finish(const McModel& m, McResult& r) const {
    auto mesh_order = [&](const Accumulator& a) {  // element results in mesh order (the tracer's order is internal)
      const auto est = a.estimate();
      return Estimate{m.in_mesh_order(est.mean), m.in_mesh_order(est.error)};
    };
    r.G = mesh_order(G), r.qx = mesh_order(qx), r.qy = mesh_order(qy), r.qz = mesh_order(qz), r.divq = mesh_order(divq);
    r.q_in = q_in.estimate(), r.q_net = q_net.estimate(), r.group_q_in = group_in.estimate(), r.group_q_net = group_net.estimate();
    const auto t = totals.estimate();
    r.volume_divq = {t.mean[0], t.error[0]};
    r.walls_q_net = {t.mean[1], t.error[1]};
    r.walls_q_in = {t.mean[2], t.error[2]};
    r.imbalance = {t.mean[3], t.error[3]};
  }
};

void add_counts(McResult& r, const PathTally& t) {
  r.segments += t.segments, r.scattering_events += t.scatters, r.wall_reflections += t.reflections, r.lost_rays += t.lost;
}

[[noreturn]] void bad_tally(int batch) {
  throw SolverError(fmt::format("Monte Carlo: a non-finite or out-of-range tally in batch {} (a bundle weight above 1 or a NaN "
                                "property): check kappa, sigma_s and the temperatures for NaN",
                                batch));
}

double track_scale(const McModel& m) { return kDepositScale / std::max(m.mesh.diameter, 1e-300); }  // track <= diameter
// The fixed-point scale of element tally c: absorbed weight (c = 0), or a track (lscale).
double element_scale(std::size_t c, double lscale) { return c == 0 ? kDepositScale : lscale; }

std::vector<double> face_leaving(const McModel& m) {
  std::vector<double> out(m.faces.size());
  for (std::size_t f = 0; f < out.size(); ++f) out[f] = m.faces[f].leaving() + m.faces[f].beam;
  return out;
}

// Path ids [first, last) of batch b of n paths split into B batches.
std::uint64_t batch_begin(std::uint64_t n, int b, int B) { return n * static_cast<std::uint64_t>(b) / static_cast<std::uint64_t>(B); }

}  // namespace

McResult solve_forward(const McModel& m, const McOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t K = m.kappa.size(), F = m.faces.size();
  const int B = std::max(2, opt.batches);
  McResult r;
  r.source_power = m.total_power();
  ForwardAccumulators acc(K, F, m.group_names.size());
  const std::vector<double> leaving = face_leaving(m);
  std::vector<PathTally> tt(opt.tracer ? 0 : static_cast<std::size_t>(omp_get_max_threads()));  // the host loop's
  for (auto& t : tt) t.resize(K, F);
  const double lscale = track_scale(m);
  std::vector<double> element(5 * K), face(2 * F);
  for (int b = 0; b < B; ++b) {
    const std::uint64_t first = batch_begin(opt.paths, b, B), last = batch_begin(opt.paths, b + 1, B);
    if (opt.tracer) {
      BatchTallies part{std::vector<double>(5 * K, 0.0), std::vector<double>(2 * F, 0.0)};
      if (m.total_power() > 0) part = opt.tracer(m, opt.seed, opt.first_path + first, opt.first_path + last);
      r.segments += part.segments, r.scattering_events += part.scatters, r.wall_reflections += part.reflections, r.lost_rays += part.lost;
      element = std::move(part.element), face = std::move(part.face);
    } else {
      for (auto& t : tt) t.clear();
      if (m.total_power() > 0) {
#pragma omp parallel
        {
          PathTally& T = tt[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 256)
          for (std::int64_t pi = static_cast<std::int64_t>(first); pi < static_cast<std::int64_t>(last); ++pi)
            trace_forward_path(m, opt.seed, opt.first_path + static_cast<std::uint64_t>(pi), lscale, T);
        }
      }
      // Reduce the threads' integer tallies (exact), then to weight units.
      for (const auto& t : tt)
        if (t.bad()) bad_tally(b);
      for (std::size_t i = 0; i < K; ++i)
        for (std::size_t c = 0; c < 5; ++c) {
          __int128 sum = 0;
          for (const auto& t : tt) sum += t.element.v[i][c];
          element[5 * i + c] = static_cast<double>(sum) / element_scale(c, lscale);
        }
      for (std::size_t i = 0; i < F; ++i)
        for (std::size_t c = 0; c < 2; ++c) {
          __int128 sum = 0;
          for (const auto& t : tt) sum += t.face.v[i][c];
          face[2 * i + c] = static_cast<double>(sum) / kDepositScale;
        }
    }
    const double n_batch = static_cast<double>(last - first);
    acc.add_batch(m, element, face, n_batch > 0 ? m.total_power() / n_batch : 0.0, m.emission, leaving);
    if (opt.progress) {
      const auto t = acc.totals.estimate();
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      opt.progress(fmt::format("  batch {}/{}: {:.3g} paths/s, wall incident power {:.6g} W (standard error {:.2e} relative)", b + 1, B,
                               static_cast<double>(last) / sec, t.mean[2], b > 0 && t.mean[2] != 0 ? t.error[2] / std::abs(t.mean[2]) : 0.0));
    }
  }
  for (const auto& t : tt) add_counts(r, t);
  acc.finish(m, r);
  r.paths = opt.paths;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

namespace {

void add_estimate(Estimate& total, const Estimate& part) {
  if (total.mean.empty()) total.mean.assign(part.mean.size(), 0.0), total.error.assign(part.error.size(), 0.0);
  for (std::size_t i = 0; i < part.mean.size(); ++i) {
    total.mean[i] += part.mean[i];
    total.error[i] = std::hypot(total.error[i], part.error[i]);
  }
}
void add_scalar(ScalarEstimate& total, const ScalarEstimate& part) {
  total.mean += part.mean;
  total.error = std::hypot(total.error, part.error);
}

}  // namespace

void accumulate(McResult& t, const McResult& p) {
  for (auto [a, b] : {std::pair{&t.G, &p.G}, {&t.qx, &p.qx}, {&t.qy, &p.qy}, {&t.qz, &p.qz}, {&t.divq, &p.divq}, {&t.q_in, &p.q_in},
                      {&t.q_net, &p.q_net}, {&t.group_q_in, &p.group_q_in}, {&t.group_q_net, &p.group_q_net}})
    add_estimate(*a, *b);
  for (auto [a, b] : {std::pair{&t.volume_divq, &p.volume_divq}, {&t.walls_q_net, &p.walls_q_net}, {&t.walls_q_in, &p.walls_q_in},
                      {&t.imbalance, &p.imbalance}})
    add_scalar(*a, *b);
  t.source_power += p.source_power;
  t.paths += p.paths, t.segments += p.segments, t.scattering_events += p.scattering_events;
  t.wall_reflections += p.wall_reflections, t.lost_rays += p.lost_rays;
  t.seconds += p.seconds;
}

void accumulate(ProbeRun& t, const ProbeRun& p) {
  if (t.values.empty()) t.values.resize(p.values.size());
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    auto& a = t.values[i];
    const auto& b = p.values[i];
    for (auto [x, y] : {std::pair{&a.G, &b.G}, {&a.qx, &b.qx}, {&a.qy, &b.qy}, {&a.qz, &b.qz}, {&a.divq, &b.divq}, {&a.q_in, &b.q_in},
                        {&a.q_net, &b.q_net}})
      add_scalar(*x, *y);
  }
  t.rays += p.rays, t.segments += p.segments, t.lost_rays += p.lost_rays, t.shadow_rays += p.shadow_rays;
  t.unfollowed_specular_beam_hits += p.unfollowed_specular_beam_hits;
  t.seconds += p.seconds;
}

namespace {

struct BackwardCounters {
  std::uint64_t segments = 0, lost = 0, shadow = 0, unfollowed = 0;
};

// Transmission exp(-tau) of beam i's uncollided radiation from its entry faces to x (in element
// e): a shadow ray traced against the beam. 0 where the ray meets any other wall first.
double beam_transmission(const McModel& m, std::size_t i, std::size_t e, const Vec3& x, BackwardCounters& c) {
  ++c.shadow;
  long wall = -1;
  const double T = shadow_transmission(m, i, e, x, [&](std::size_t t, const Vec3&, const Vec3&, double l) {
    return (m.cells[t].kappa + m.cells[t].sigma_s) * l;
  }, wall);
  if (wall < 0) {
    ++c.lost;
    return 0.0;
  }
  const auto& face = m.faces[static_cast<std::size_t>(wall)];
  const bool entry = face.group == m.beam_group[i] && dot(m.beam_direction[i], face.inward) > 0;
  if (!entry && face.specular_share > 0 && face.absorptivity < 1) ++c.unfollowed;  // a beam image may come through this mirror
  return T;
}

// Beam flux arriving on a wall point from inside (diffusely reflected there): sum over beams of
// F exp(-tau) (b . n_out) where the beam hits that wall.
double beam_flux_on_wall(const McModel& m, const McModel::Face& face, const Vec3& x, BackwardCounters& c) {
  double q = 0;
  for (std::size_t i = 0; i < m.beam_direction.size(); ++i) {
    const double cosine = -dot(m.beam_direction[i], face.inward);
    if (cosine > 1e-12) q += m.beam_flux[i] * cosine * beam_transmission(m, i, static_cast<std::size_t>(face.element), x, c);
  }
  return q;
}

// Radiance arriving at x against travel direction d (the ray is traced along d, toward where the
// radiation comes from): emission along the path, attenuated, with scattering and wall reflections
// followed backward; beams by next-event estimation. Adds to the counters.
double backward_radiance(const McModel& m, std::size_t e, Vec3 x, Vec3 d, PathRandom& rng, BackwardCounters& count) {
  auto& segments = count.segments;
  auto& lost = count.lost;
  const bool beams = !m.beam_direction.empty();
  double L = 0, w = 1, tau_s = -std::log(rng.uniform());
  int zero_steps = 0;
  for (long seg = 0;; ++seg) {
    const Step st = next_step(m.cells[e], x, d, tau_s);
    const Exit& ex = st.exit;
    if (ex.face < 0 || seg > kMaxSegments || zero_steps > kMaxZeroSteps) {
      ++lost;
      return L;
    }
    const double k = m.cells[e].kappa, s = m.cells[e].sigma_s, l = st.length;
    ++segments;
    if (beams && s > 0 && l > 0) {
      // First scattering of the beams along the segment: integral_0^l w exp(-kappa t) S_c(t) dt with
      // S_c = sigma_s/(4 pi) Phi(b . s) F exp(-tau_b), t sampled with density proportional to exp(-kappa t).
      const double u = rng.uniform();
      const double t = k * l > 1e-12 ? -std::log1p(u * std::expm1(-k * l)) / k : u * l;
      const double length = k * l > 1e-12 ? -std::expm1(-k * l) / k : l;
      const Vec3 y{x[0] + t * d[0], x[1] + t * d[1], x[2] + t * d[2]};
      const auto& ph = m.phase[static_cast<std::size_t>(m.phase_of_element[e])];
      for (std::size_t i = 0; i < m.beam_direction.size(); ++i) {
        const double mu = -dot(m.beam_direction[i], d);  // the radiation travels along -d
        L += w * length * s / (4 * kPi) * ph.value(mu) * m.beam_flux[i] * beam_transmission(m, i, e, y, count);
      }
    }
    if (k > 0) {
      const double a = -std::expm1(-k * l);
      L += w * m.source_radiance[e] * a;
      w -= w * a;
    }
    for (int c = 0; c < 3; ++c) x[static_cast<std::size_t>(c)] += l * d[static_cast<std::size_t>(c)];
    if (st.scatter) {
      scatter(m, e, d, tau_s, rng);
      zero_steps = 0;
    } else {
      const long boundary = cross_face(m, e, ex.face, l, zero_steps);
      if (boundary < 0) continue;
      const auto& face = m.faces[static_cast<std::size_t>(boundary)];
      L += w * face.leaving() / kPi;  // diffuse leaving radiance by emission and irradiation
      if (beams && face.absorptivity < 1) {
        const double q_beam = beam_flux_on_wall(m, face, x, count);
        L += w * (1 - face.absorptivity) * (1 - face.specular_share) * q_beam / kPi;
        if (q_beam > 0 && face.specular_share > 0) ++count.unfollowed;
      }
      w *= 1 - face.absorptivity;
      if (!(w > 0)) return L;
      d = reflect(face, d, rng);
    }
    if (!survives_roulette(w, rng)) return L;
  }
}

// Sums over backward rays [first_id, last_id) of probe point p: 4 pi L and -4 pi L d (volume
// points: G and q), or pi L (wall points: q_in), without the uncollided beams.
std::array<double, 4> probe_ray_sums(const McModel& m, const ProbePoint& pt, std::size_t p, std::uint64_t seed, std::uint64_t first_id,
                                     std::uint64_t last_id, BackwardCounters& count) {
  std::array<double, 4> sum{};
  const auto element = pt.element >= 0 ? static_cast<std::size_t>(m.mesh.tracer_index[static_cast<std::size_t>(pt.element)]) : 0;
  for (std::uint64_t ray = first_id; ray < last_id; ++ray) {
    PathRandom rng(seed, 1 + p, ray);
    if (pt.face >= 0) {
      const auto& face = m.faces[static_cast<std::size_t>(pt.face)];
      const Vec3 d = lambertian_direction(face.inward, rng);
      sum[0] += kPi * backward_radiance(m, static_cast<std::size_t>(face.element), pt.x, d, rng, count);
    } else {
      const Vec3 d = isotropic_direction(rng);
      const double L = 4 * kPi * backward_radiance(m, element, pt.x, d, rng, count);
      sum[0] += L;  // the radiation travels along -d
      for (int c = 0; c < 3; ++c) sum[static_cast<std::size_t>(1 + c)] -= L * d[static_cast<std::size_t>(c)];
    }
  }
  return sum;
}

}  // namespace

ProbeRun trace_probes(const McModel& m, const std::vector<ProbePoint>& points, const McOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const int B = std::max(2, opt.batches);
  const std::size_t P = points.size();
  ProbeRun run;
  run.values.resize(P);
  // Per (point, batch): the batch means; tasks are independent, each sums its rays in order.
  std::vector<std::array<double, 4>> batch(P * static_cast<std::size_t>(B));
  std::uint64_t segments = 0, lost = 0, shadow = 0, unfollowed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : segments, lost, shadow, unfollowed)
  for (std::int64_t task = 0; task < static_cast<std::int64_t>(P) * B; ++task) {
    BackwardCounters count;
    const std::size_t p = static_cast<std::size_t>(task) / static_cast<std::size_t>(B);
    const std::uint64_t b = static_cast<std::uint64_t>(task) % static_cast<std::uint64_t>(B);
    const auto& pt = points[p];
    const std::uint64_t first = batch_begin(opt.probe_rays, static_cast<int>(b), B), last = batch_begin(opt.probe_rays, static_cast<int>(b) + 1, B);
    const auto element = pt.element >= 0 ? static_cast<std::size_t>(m.mesh.tracer_index[static_cast<std::size_t>(pt.element)]) : 0;
    auto sum = probe_ray_sums(m, pt, p, opt.seed, opt.first_path + first, opt.first_path + last, count);
    const double n = std::max<double>(1.0, static_cast<double>(last - first));
    for (auto& v : sum) v /= n;
    // The uncollided beams at the point itself: deterministic, the same in every batch.
    for (std::size_t i = 0; i < m.beam_direction.size(); ++i) {
      const Vec3& bd = m.beam_direction[i];
      if (pt.face >= 0) {
        const auto& face = m.faces[static_cast<std::size_t>(pt.face)];
        const double cosine = -dot(bd, face.inward);
        if (cosine > 1e-12) sum[0] += m.beam_flux[i] * cosine * beam_transmission(m, i, static_cast<std::size_t>(face.element), pt.x, count);
      } else {
        const double G = m.beam_flux[i] * beam_transmission(m, i, element, pt.x, count);
        sum[0] += G;
        for (int c = 0; c < 3; ++c) sum[static_cast<std::size_t>(1 + c)] += G * bd[static_cast<std::size_t>(c)];
      }
    }
    segments += count.segments, lost += count.lost, shadow += count.shadow, unfollowed += count.unfollowed;
    batch[static_cast<std::size_t>(task)] = sum;
  }
  for (std::size_t p = 0; p < P; ++p) {
    Accumulator acc(4);
    for (int b = 0; b < B; ++b) {
      const auto& s = batch[p * static_cast<std::size_t>(B) + static_cast<std::size_t>(b)];
      acc.add({s.begin(), s.end()});
    }
    const auto est = acc.estimate();
    auto& v = run.values[p];
    const auto& pt = points[p];
    if (pt.face >= 0) {
      const auto& face = m.faces[static_cast<std::size_t>(pt.face)];
      v.q_in = {est.mean[0], est.error[0]};
      // Leaving = emitted + irradiation + reflected (1 - absorptivity) q_in (+ beams entering there).
      v.q_net = {face.absorptivity * est.mean[0] - face.leaving() - face.beam, face.absorptivity * est.error[0]};
    } else {
      const auto e = static_cast<std::size_t>(m.mesh.tracer_index[static_cast<std::size_t>(pt.element)]);
      v.G = {est.mean[0], est.error[0]};
      v.qx = {est.mean[1], est.error[1]}, v.qy = {est.mean[2], est.error[2]}, v.qz = {est.mean[3], est.error[3]};
      v.divq = {m.emission[e] / m.mesh.volume[e] - m.kappa[e] * est.mean[0], m.kappa[e] * est.error[0]};
    }
  }
  run.rays = opt.probe_rays * P;
  run.segments = segments;
  run.lost_rays = lost;
  run.shadow_rays = shadow;
  run.unfollowed_specular_beam_hits = unfollowed;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

// --- Spectral sampling by path -------------------------------------------------------------------

namespace {
constexpr std::uint64_t kSpectralStream = std::uint64_t{1} << 62;  // the batches' offsets U_b (probe streams are 1 + point)
}

struct SpectralSampler::Scratch {
  std::vector<PathTally> threads;
};

namespace {
// Cumulative sums of x normalised to end at exactly 1 (all 0 when x sums to 0).
std::vector<double> normalised_cumulative(const std::vector<double>& x) {
  std::vector<double> c(x.size());
  double total = 0;
  for (std::size_t j = 0; j < x.size(); ++j) total += std::max(x[j], 0.0), c[j] = total;
  for (auto& v : c) v = total > 0 ? v / total : 0.0;
  if (total > 0 && !c.empty()) c.back() = 1.0;
  return c;
}
}  // namespace

SpectralSampler::SpectralSampler(const std::vector<double>& power, const std::vector<double>& blackbody, const McOptions& opt,
                                 const McModel& g, std::size_t probe_points)
    : scratch_(std::make_shared<Scratch>()), opt_(opt), B_(std::max(2, opt.batches)) {
  scratch_->threads.resize(opt.tracer ? 0 : static_cast<std::size_t>(omp_get_max_threads()));  // the host loop's
  for (auto& t : scratch_->threads) t.resize(g.mesh.num_elements(), g.faces.size());
  for (const double p : power) total_power_ += std::max(p, 0.0);
  cumulative_ = normalised_cumulative(power);
  // q_j = (p_j + b_j) / 2, b_j only where the point emits at all.
  std::vector<double> share(power.size(), 0.0), bb(power.size(), 0.0);
  double bb_total = 0;
  for (std::size_t j = 0; j < power.size(); ++j)
    if (power[j] > 0 && j < blackbody.size()) bb[j] = std::max(blackbody[j], 0.0), bb_total += bb[j];
  for (std::size_t j = 0; j < power.size(); ++j)
    share[j] = (total_power_ > 0 ? std::max(power[j], 0.0) / total_power_ : 0.0) + (bb_total > 0 ? bb[j] / bb_total : 0.0);
  probe_cumulative_ = normalised_cumulative(share);
  for (int b = 0; b < B_; ++b) {
    PathRandom rng(opt.seed, kSpectralStream, static_cast<std::uint64_t>(b));
    offset_.push_back(rng.uniform()), probe_offset_.push_back(rng.uniform());
  }
  element_.assign(static_cast<std::size_t>(B_), std::vector<double>(5 * g.mesh.num_elements(), 0.0));
  face_.assign(static_cast<std::size_t>(B_), std::vector<double>(2 * g.faces.size(), 0.0));
  probe_sums_.assign(probe_points * static_cast<std::size_t>(B_) * 5, 0.0);
}

std::pair<std::uint64_t, std::uint64_t> SpectralSampler::positions(int j, int b, bool probe) const {
  const std::uint64_t total = probe ? opt_.probe_rays : opt_.paths;
  const std::uint64_t n = batch_begin(total, b + 1, B_) - batch_begin(total, b, B_);
  if (!(total_power_ > 0)) return {0, 0};
  const double u = (probe ? probe_offset_ : offset_)[static_cast<std::size_t>(b)];
  const auto& cumulative = probe ? probe_cumulative_ : cumulative_;
  // Position k lies in point j when cumulative[j-1] <= (k + u) / n < cumulative[j].
  auto first_at = [&](double c) {
    const double k = std::ceil(static_cast<double>(n) * c - u);
    return static_cast<std::uint64_t>(std::clamp(k, 0.0, static_cast<double>(n)));
  };
  const auto jj = static_cast<std::size_t>(j);
  return {first_at(jj == 0 ? 0.0 : cumulative[jj - 1]), first_at(cumulative[jj])};
}

std::uint64_t SpectralSampler::count(int j, bool probe) const {
  std::uint64_t n = 0;
  for (int b = 0; b < B_; ++b) {
    const auto [first, last] = positions(j, b, probe);
    n += last - first;
  }
  return n;
}

void SpectralSampler::trace_point(int j, const McModel& m, const std::vector<ProbePoint>& probes) {
  if (!m.beam_direction.empty())
    throw SolverError("Monte Carlo spectral sampling by path: collimated beams are not part of a nongray model's spectral points");
  const auto t0 = std::chrono::steady_clock::now();
  if (opt_.tracer) {  // a device: one launch per batch with paths at this point
    for (int b = 0; b < B_; ++b) {
      const auto [first, last] = positions(j, b, false);
      if (first == last) continue;
      const std::uint64_t base = opt_.first_path + batch_begin(opt_.paths, b, B_);
      const auto part = opt_.tracer(m, opt_.seed, base + first, base + last);
      auto& el = element_[static_cast<std::size_t>(b)];
      auto& fa = face_[static_cast<std::size_t>(b)];
      for (std::size_t i = 0; i < el.size(); ++i) el[i] += part.element[i];
      for (std::size_t i = 0; i < fa.size(); ++i) fa[i] += part.face[i];
      counts_.segments += part.segments, counts_.scattering_events += part.scatters, counts_.wall_reflections += part.reflections;
      counts_.lost_rays += part.lost, counts_.paths += last - first;
    }
    counts_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    trace_point_on_host(j, m, t0);
  }
  trace_probes_of_point(j, m, probes);
}

void SpectralSampler::trace_point_on_host(int j, const McModel& m, std::chrono::steady_clock::time_point t0) {
  // Each batch's paths of this point are traced by one thread into its own tally and added to that
  // batch's sums: the integer sums are exact and the batches' sums run in point order, so the result
  // does not depend on the thread count.
  const double lscale = track_scale(m);
  std::uint64_t traced = 0;
  bool bad = false;
  auto& threads = scratch_->threads;
  for (auto& t : threads) t.segments = t.scatters = t.reflections = t.lost = 0;
#pragma omp parallel reduction(|| : bad) reduction(+ : traced)
  {
    PathTally& T = threads[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
    for (int b = 0; b < B_; ++b) {
      const auto [first, last] = positions(j, b, false);
      if (first == last) continue;
      T.clear();
      const std::uint64_t base = opt_.first_path + batch_begin(opt_.paths, b, B_);
      for (std::uint64_t k = first; k < last; ++k) trace_forward_path(m, opt_.seed, base + k, lscale, T);
      traced += last - first;
      bad = bad || T.bad();
      auto& el = element_[static_cast<std::size_t>(b)];
      for (const auto i : T.element.touched)
        for (std::size_t c = 0; c < 5; ++c) el[5 * i + c] += static_cast<double>(T.element.v[i][c]) / element_scale(c, lscale);
      auto& fa = face_[static_cast<std::size_t>(b)];
      for (const auto i : T.face.touched)
        for (std::size_t c = 0; c < 2; ++c) fa[2 * i + c] += static_cast<double>(T.face.v[i][c]) / kDepositScale;
    }
  }
  for (const auto& t : threads) add_counts(counts_, t);
  if (bad) bad_tally(-1);
  counts_.paths += traced;
  counts_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void SpectralSampler::trace_probes_of_point(int j, const McModel& m, const std::vector<ProbePoint>& probes) {
  if (probes.empty()) return;
  const auto t1 = std::chrono::steady_clock::now();
  const auto jj = static_cast<std::size_t>(j);
  const double share = probe_cumulative_[jj] - (jj == 0 ? 0.0 : probe_cumulative_[jj - 1]);  // q_j
  std::uint64_t segments = 0, lost = 0, shadow = 0, unfollowed = 0, rays = 0;
  const auto P = static_cast<std::int64_t>(probes.size());
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : segments, lost, shadow, unfollowed, rays)
  for (std::int64_t task = 0; task < P * B_; ++task) {
    const auto p = static_cast<std::size_t>(task / B_);
    const int b = static_cast<int>(task % B_);
    const auto [first, last] = positions(j, b, true);
    if (first == last) continue;
    BackwardCounters count;
    const std::uint64_t base = opt_.first_path + batch_begin(opt_.probe_rays, b, B_);
    const auto sum = probe_ray_sums(m, probes[p], p, opt_.seed, base + first, base + last, count);
    const double n_b = static_cast<double>(batch_begin(opt_.probe_rays, b + 1, B_) - batch_begin(opt_.probe_rays, b, B_));
    const double weight = 1.0 / (n_b * share);  // unbiased: E[rays of j in batch b] = n_b q_j
    double* out = &probe_sums_[(p * static_cast<std::size_t>(B_) + static_cast<std::size_t>(b)) * 5];
    for (std::size_t c = 0; c < 4; ++c) out[c] += weight * sum[c];
    if (probes[p].face < 0)
      out[4] += weight * sum[0] * m.kappa[static_cast<std::size_t>(m.mesh.tracer_index[static_cast<std::size_t>(probes[p].element)])];
    segments += count.segments, lost += count.lost, shadow += count.shadow, unfollowed += count.unfollowed, rays += last - first;
  }
  probe_counts_.rays += rays, probe_counts_.segments += segments, probe_counts_.lost_rays += lost;
  probe_counts_.shadow_rays += shadow, probe_counts_.unfollowed_specular_beam_hits += unfollowed;
  probe_counts_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
}

McResult SpectralSampler::forward_result(const McModel& g, const std::vector<double>& element_emission,
                                         const std::vector<double>& face_emission) const {
  McResult r = counts_;
  r.source_power = total_power_;
  ForwardAccumulators acc(g.mesh.num_elements(), g.faces.size(), g.group_names.size());
  for (int b = 0; b < B_; ++b) {
    const double n_b = static_cast<double>(batch_begin(opt_.paths, b + 1, B_) - batch_begin(opt_.paths, b, B_));
    acc.add_batch(g, element_[static_cast<std::size_t>(b)], face_[static_cast<std::size_t>(b)], n_b > 0 ? total_power_ / n_b : 0.0,
                  element_emission, face_emission);
  }
  acc.finish(g, r);
  return r;
}

ProbeRun SpectralSampler::probe_result(const McModel& g, const std::vector<ProbePoint>& probes, const std::vector<double>& element_emission,
                                       const std::vector<double>& face_emission) const {
  ProbeRun run = probe_counts_;
  run.values.resize(probes.size());
  for (std::size_t p = 0; p < probes.size(); ++p) {
    Accumulator acc(5);
    for (int b = 0; b < B_; ++b) {
      const double* s = &probe_sums_[(p * static_cast<std::size_t>(B_) + static_cast<std::size_t>(b)) * 5];
      acc.add({s, s + 5});
    }
    const auto est = acc.estimate();
    auto& v = run.values[p];
    if (probes[p].face >= 0) {
      const auto f = static_cast<std::size_t>(probes[p].face);
      v.q_in = {est.mean[0], est.error[0]};
      v.q_net = {g.faces[f].absorptivity * est.mean[0] - face_emission[f], g.faces[f].absorptivity * est.error[0]};
    } else {
      const auto e = static_cast<std::size_t>(g.mesh.tracer_index[static_cast<std::size_t>(probes[p].element)]);
      v.G = {est.mean[0], est.error[0]};
      v.qx = {est.mean[1], est.error[1]}, v.qy = {est.mean[2], est.error[2]}, v.qz = {est.mean[3], est.error[3]};
      v.divq = {element_emission[e] / g.mesh.volume[e] - est.mean[4], est.error[4]};
    }
  }
  return run;
}

}  // namespace dgrte::mc
