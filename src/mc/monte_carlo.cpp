#include "mc/monte_carlo.hpp"

#include "common/error.hpp"
#include "mc/random.hpp"
#include "mesh/tet_topology.hpp"

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
constexpr double kRouletteBelow = 1e-3;   // bundles below this weight play Russian roulette
constexpr double kRouletteWeight = 1e-2;  // and survive with this weight (probability w / 1e-2)
constexpr long kMaxSegments = 10'000'000;  // per path: a longer path is counted lost
constexpr int kMaxZeroSteps = 64;          // consecutive zero-length crossings: a ray stuck on an edge

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

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
  const auto& fv = mesh::kFaceVertices[static_cast<std::size_t>(f)];
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
// N tallies per element or face, side by side (one or two cache lines per crossing, not N).
template <std::size_t N>
struct FixedTally {
  std::vector<std::array<__int128, N>> v;
  bool bad = false;  // a non-finite or out-of-range deposit
  void add(std::size_t i, std::size_t c, double x, double scale) {
    const double y = x * scale;
    if (!(std::abs(y) < 0x1.0p63)) {
      bad = true;
      return;
    }
    v[i][c] += static_cast<__int128>(std::llround(y));
  }
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
  d = scatter_direction(d, ph.cosine(rng.uniform()), rng.uniform());
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

}  // namespace

McModel build_model(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Medium& medium,
                    const problem::Walls& walls) {
  const std::string file = cs.file.string();
  for (const auto& m : cs.media)
    if (m.source.text() != "0")
      throw InputError(fmt::format("{}: media.{} (line {}): solver.method montecarlo traces emission by the medium and the walls and "
                                   "collimated beams; a user source term (media.*.source) needs the DG solver (solver.method: dg)",
                                   file, m.group, m.line));
  for (const auto& b : cs.boundaries)
    if (b.type == io::BoundaryType::inflow)
      throw InputError(fmt::format("{}: boundaries.{} (line {}): solver.method montecarlo does not trace prescribed inflow intensities; "
                                   "use type irradiation (a diffuse incoming flux) or the DG solver",
                                   file, b.group, b.line));
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
    const std::size_t ef = walls.element_face(b), e = ef / 4;
    const int f = static_cast<int>(ef % 4);
    const auto& wm = walls.wall(walls.wall_of(b));
    McModel::Face face{};
    face.element = m.mesh.tracer_index[e], face.local = f;
    const Vec3& n = walls.normal(b);
    face.inward = {-n[0], -n[1], -n[2]};
    face.area = 2 * disc.geometry[e].face_scale[static_cast<std::size_t>(f)] * disc.geometry[e].jacobian;
    const double rho = wm.rho_diffuse + wm.rho_specular;
    face.absorptivity = 1 - rho;
    face.specular_share = rho > 0 ? wm.rho_specular / rho : 0.0;
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
  // Element means by the reference mass matrix's row sums (exact for the nodal polynomial).
  const Eigen::VectorXd w = disc.ref.mass.colwise().sum().transpose();
  const double wsum = w.sum();
  m.kappa.assign(K, 0.0), m.sigma_s.assign(K, 0.0), m.emission.assign(K, 0.0), m.source_radiance.assign(K, 0.0);
  m.phase_of_element.assign(K, -1);
  m.clamped_elements = 0;
  for (std::size_t t = 0; t < K; ++t) {  // tracer order; e: the mesh element
    const auto e = static_cast<std::size_t>(m.mesh.original[t]);
    double k = 0, s = 0, kib = 0;
    for (std::size_t i = 0; i < np; ++i) {
      const double wi = w[static_cast<Eigen::Index>(i)] / wsum;
      k += wi * medium.kappa[e * np + i];
      s += wi * medium.sigma_s[e * np + i];
      kib += wi * medium.kappa[e * np + i] * medium.blackbody_intensity[e * np + i];
    }
    // The mean of the nodal interpolant can dip below 0 where a steep field meets negative
    // quadrature weights (P2 vertex nodes): no negative absorption or emission in a tracer.
    if (k < 0 || s < 0 || kib < 0) ++m.clamped_elements;
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

McResult solve_forward(const McModel& m, const McOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t K = m.kappa.size(), F = m.faces.size(), G = m.group_names.size();
  const int B = std::max(2, opt.batches);
  McResult r;
  r.source_power = m.total_power();
  Accumulator aG(K), aqx(K), aqy(K), aqz(K), adiv(K), ain(F), anet(F), agin(G), agnet(G), atotals(4);
  const int threads = omp_get_max_threads();
  struct alignas(64) ThreadTally {  // one cache line apart: no false sharing of the counters
    FixedTally<5> element;  // absorbed, track, track x, y, z
    FixedTally<2> face;     // incident, absorbed
    std::uint64_t segments = 0, scatters = 0, reflections = 0, lost = 0;
  };
  std::vector<ThreadTally> tt(static_cast<std::size_t>(threads));
  for (int b = 0; b < B; ++b) {
    const std::uint64_t first = opt.paths * static_cast<std::uint64_t>(b) / static_cast<std::uint64_t>(B);
    const std::uint64_t last = opt.paths * static_cast<std::uint64_t>(b + 1) / static_cast<std::uint64_t>(B);
    const double n_batch = static_cast<double>(last - first);
    const double wscale = kDepositScale;                                          // weight <= 1
    const double lscale = kDepositScale / std::max(m.mesh.diameter, 1e-300);       // track <= diameter
    for (auto& t : tt) {
      t.element.v.assign(K, {}), t.face.v.assign(F, {});
      t.element.bad = t.face.bad = false;
    }
    if (m.total_power() > 0) {
#pragma omp parallel
      {
        ThreadTally& T = tt[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t pi = static_cast<std::int64_t>(first); pi < static_cast<std::int64_t>(last); ++pi) {
          PathRandom rng(opt.seed, kForwardStream, opt.first_path + static_cast<std::uint64_t>(pi));
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
              zero_steps = l > 0 ? 0 : zero_steps + 1;
              const int next = m.cells[e].across[ex.face];
              if (next >= 0) {
                e = static_cast<std::size_t>(next);
                continue;
              }
              const auto fb = static_cast<std::size_t>(-1 - next);
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
      }
    }
    // Reduce the threads' integer tallies (exact), then to physical units.
    bool bad = false;
    for (auto& t : tt) bad = bad || t.element.bad || t.face.bad;
    auto reduce = [&](auto ThreadTally::*member, std::size_t c, std::size_t n) {
      std::vector<__int128> sum(n, 0);
      for (auto& t : tt)
        for (std::size_t i = 0; i < n; ++i) sum[i] += (t.*member).v[i][c];
      return std::vector<double>(sum.begin(), sum.end());
    };
    const double unit = n_batch > 0 ? m.total_power() / n_batch : 0.0;  // W per unit weight
    auto absorbed = reduce(&ThreadTally::element, 0, K);
    auto track = reduce(&ThreadTally::element, 1, K), tx = reduce(&ThreadTally::element, 2, K),
         ty = reduce(&ThreadTally::element, 3, K), tz = reduce(&ThreadTally::element, 4, K);
    auto incident = reduce(&ThreadTally::face, 0, F), wall_abs = reduce(&ThreadTally::face, 1, F);
    if (bad)
      throw SolverError(fmt::format("Monte Carlo: a non-finite or out-of-range tally in batch {} (a bundle weight above 1 or a NaN "
                                    "property): check kappa, sigma_s and the temperatures for NaN",
                                    b));
    double volume_W = 0;
    for (std::size_t e = 0; e < K; ++e) {
      const double V = m.mesh.volume[e];
      const double q_abs = absorbed[e] / wscale * unit;
      volume_W += m.emission[e] - q_abs;
      absorbed[e] = (m.emission[e] - q_abs) / V;  // div q
      track[e] *= unit / (lscale * V), tx[e] *= unit / (lscale * V), ty[e] *= unit / (lscale * V), tz[e] *= unit / (lscale * V);
    }
    std::vector<double> gin(G, 0.0), gnet(G, 0.0);
    double walls_in = 0, walls_net = 0;
    for (std::size_t f = 0; f < F; ++f) {
      const auto& face = m.faces[f];
      incident[f] *= unit / (wscale * face.area);
      // q_net = incident - leaving = absorbed - emitted - irradiation - beams entering here.
      wall_abs[f] = wall_abs[f] * unit / (wscale * face.area) - face.leaving() - face.beam;
      gin[static_cast<std::size_t>(face.group)] += incident[f] * face.area;
      gnet[static_cast<std::size_t>(face.group)] += wall_abs[f] * face.area;
      walls_in += incident[f] * face.area, walls_net += wall_abs[f] * face.area;
    }
    aG.add(track), aqx.add(tx), aqy.add(ty), aqz.add(tz), adiv.add(absorbed);
    ain.add(incident), anet.add(wall_abs), agin.add(gin), agnet.add(gnet);
    atotals.add({volume_W, walls_net, walls_in, volume_W - walls_net});
    if (opt.progress) {
      const auto t = atotals.estimate();
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      opt.progress(fmt::format("  batch {}/{}: {:.3g} paths/s, wall incident power {:.6g} W (standard error {:.2e} relative)", b + 1, B,
                               static_cast<double>(last) / sec, t.mean[2], b > 0 && t.mean[2] != 0 ? t.error[2] / std::abs(t.mean[2]) : 0.0));
    }
  }
  for (const auto& t : tt) r.segments += t.segments, r.scattering_events += t.scatters, r.wall_reflections += t.reflections, r.lost_rays += t.lost;
  // Element results in mesh order (the tracer's order is internal).
  auto mesh_order = [&](const Accumulator& a) {
    const auto est = a.estimate();
    return Estimate{m.in_mesh_order(est.mean), m.in_mesh_order(est.error)};
  };
  r.G = mesh_order(aG), r.qx = mesh_order(aqx), r.qy = mesh_order(aqy), r.qz = mesh_order(aqz), r.divq = mesh_order(adiv);
  r.q_in = ain.estimate(), r.q_net = anet.estimate(), r.group_q_in = agin.estimate(), r.group_q_net = agnet.estimate();
  const auto t = atotals.estimate();
  r.volume_divq = {t.mean[0], t.error[0]};
  r.walls_q_net = {t.mean[1], t.error[1]};
  r.walls_q_in = {t.mean[2], t.error[2]};
  r.imbalance = {t.mean[3], t.error[3]};
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
double beam_transmission(const McModel& m, std::size_t i, std::size_t e, Vec3 x, BackwardCounters& c) {
  ++c.shadow;
  const Vec3& b = m.beam_direction[i];
  const Vec3 d{-b[0], -b[1], -b[2]};
  double tau = 0;
  int zero_steps = 0;
  for (long seg = 0; seg <= kMaxSegments && zero_steps <= kMaxZeroSteps; ++seg) {
    const Exit ex = exit_face(m.cells[e].plane, x.data(), d.data());
    if (ex.face < 0) break;
    tau += (m.cells[e].kappa + m.cells[e].sigma_s) * ex.distance;
    zero_steps = ex.distance > 0 ? 0 : zero_steps + 1;
    for (int k = 0; k < 3; ++k) x[static_cast<std::size_t>(k)] += ex.distance * d[static_cast<std::size_t>(k)];
    const int next = m.cells[e].across[ex.face];
    if (next >= 0) {
      e = static_cast<std::size_t>(next);
      continue;
    }
    const auto& face = m.faces[static_cast<std::size_t>(-1 - next)];
    if (face.group == m.beam_group[i] && dot(b, face.inward) > 0) return std::exp(-tau);
    if (face.specular_share > 0 && face.absorptivity < 1) ++c.unfollowed;  // a beam image may come through this mirror
    return 0.0;
  }
  ++c.lost;
  return 0.0;
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
      zero_steps = l > 0 ? 0 : zero_steps + 1;
      const int next = m.cells[e].across[ex.face];
      if (next >= 0) {
        e = static_cast<std::size_t>(next);
        continue;
      }
      const auto& face = m.faces[static_cast<std::size_t>(-1 - next)];
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
    const std::uint64_t first = opt.probe_rays * b / static_cast<std::uint64_t>(B), last = opt.probe_rays * (b + 1) / static_cast<std::uint64_t>(B);
    std::array<double, 4> sum{};
    const auto element = pt.element >= 0 ? static_cast<std::size_t>(m.mesh.tracer_index[static_cast<std::size_t>(pt.element)]) : 0;
    for (std::uint64_t ray = first; ray < last; ++ray) {
      PathRandom rng(opt.seed, 1 + p, opt.first_path + ray);
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

}  // namespace dgrte::mc
