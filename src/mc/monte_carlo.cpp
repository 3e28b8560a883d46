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
// which thread traced which path (and maps onto 64-bit atomics on a device).
struct FixedTally {
  std::vector<std::int64_t> v;
  bool overflow = false;
  void add(std::size_t i, double x, double scale) {
    const auto q = static_cast<std::int64_t>(std::llround(x * scale));
    if (__builtin_add_overflow(v[i], q, &v[i])) overflow = true;
  }
};

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
  if (medium.has_gas_model())
    throw InputError(fmt::format("{}: model: solver.method montecarlo is gray in this version; nongray gas models run with the DG "
                                 "solver (solver.method: dg)",
                                 file));
  const auto& mesh = *disc.mesh;
  const std::size_t K = disc.num_elements(), np = static_cast<std::size_t>(disc.num_nodes());
  const std::size_t nfp = walls.face_nodes();
  std::vector<long> boundary_face_of(4 * K, -1);
  for (std::size_t b = 0; b < walls.num_faces(); ++b) boundary_face_of[walls.element_face(b)] = static_cast<long>(b);
  McModel m;
  m.mesh = make_tracing_mesh(mesh, boundary_face_of);

  // Element means by the reference mass matrix's row sums (exact for the nodal polynomial).
  const Eigen::VectorXd w = disc.ref.mass.colwise().sum().transpose();
  const double wsum = w.sum();
  m.kappa.assign(K, 0.0), m.sigma_s.assign(K, 0.0), m.emission.assign(K, 0.0), m.source_radiance.assign(K, 0.0);
  m.phase_of_element.assign(K, -1);
  for (const auto& p : medium.phase) m.phase.emplace_back(p);
  for (std::size_t e = 0; e < K; ++e) {
    double k = 0, s = 0, kib = 0;
    for (std::size_t i = 0; i < np; ++i) {
      const double wi = w[static_cast<Eigen::Index>(i)] / wsum;
      k += wi * medium.kappa[e * np + i];
      s += wi * medium.sigma_s[e * np + i];
      kib += wi * medium.kappa[e * np + i] * medium.blackbody_intensity[e * np + i];
    }
    m.kappa[e] = k, m.sigma_s[e] = s;
    m.emission[e] = 4 * kPi * kib * m.mesh.volume[e];
    m.source_radiance[e] = k > 0 ? kib / k : 0.0;
    if (s > 0 && !medium.scattering_of_element.empty()) m.phase_of_element[e] = medium.scattering_of_element[e];
    if (s > 0 && m.phase_of_element[e] < 0)
      throw SolverError(fmt::format("element {} scatters but has no phase function", e));
  }

  // Walls: face means of the emissive power (face mass row sums).
  std::array<Eigen::VectorXd, 4> fw;
  for (int f = 0; f < 4; ++f) fw[static_cast<std::size_t>(f)] = disc.ref.face_mass[static_cast<std::size_t>(f)].colwise().sum().transpose();
  std::map<int, int> group_index;
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const std::size_t ef = walls.element_face(b), e = ef / 4;
    const int f = static_cast<int>(ef % 4);
    const auto& wm = walls.wall(walls.wall_of(b));
    McModel::Face face{};
    face.element = static_cast<int>(e), face.local = f;
    const Vec3& n = walls.normal(b);
    face.inward = {-n[0], -n[1], -n[2]};
    face.area = 2 * disc.geometry[e].face_scale[static_cast<std::size_t>(f)] * disc.geometry[e].jacobian;
    const double rho = wm.rho_diffuse + wm.rho_specular;
    face.absorptivity = 1 - rho;
    face.specular_share = rho > 0 ? wm.rho_specular / rho : 0.0;
    const auto& fwf = fw[static_cast<std::size_t>(f)];
    double e_mean = 0;
    for (std::size_t j = 0; j < nfp; ++j) e_mean += fwf[static_cast<Eigen::Index>(j)] * walls.emissive_power(b, j);
    face.emission = e_mean / fwf.sum() + wm.irradiation;
    const int g = mesh.boundary_group[e][static_cast<std::size_t>(f)];
    auto [it, fresh] = group_index.try_emplace(g, static_cast<int>(m.group_names.size()));
    if (fresh) m.group_names.push_back(g >= 0 ? problem::group_label(mesh.surface_groups[static_cast<std::size_t>(g)]) : "(unlabelled)");
    face.group = it->second;
    m.faces.push_back(face);
  }

  // Sources in proportion to power.
  double total = 0;
  auto add = [&](McModel::Source s, double power) {
    if (!(power > 0)) return;
    total += power;
    m.sources.push_back(s);
    m.source_cdf.push_back(total);
  };
  for (std::size_t e = 0; e < K; ++e) add({McModel::Source::Kind::element, e, -1}, m.emission[e]);
  for (std::size_t b = 0; b < m.faces.size(); ++b) add({McModel::Source::Kind::wall, b, -1}, m.faces[b].emission * m.faces[b].area);
  for (std::size_t i = 0; i < cs.collimated.size(); ++i) {
    const auto& spec = cs.collimated[i];
    const double len = std::sqrt(dot(spec.direction, spec.direction));
    const Vec3 d{spec.direction[0] / len, spec.direction[1] / len, spec.direction[2] / len};
    m.beam_direction.push_back(d);
    m.beam_flux.push_back(spec.flux);
    const auto g = std::find(m.group_names.begin(), m.group_names.end(), spec.boundary);
    m.beam_group.push_back(g == m.group_names.end() ? -1 : static_cast<int>(g - m.group_names.begin()));
    bool any = false;
    for (std::size_t b = 0; b < m.faces.size(); ++b) {
      const auto& face = m.faces[b];
      if (m.group_names[static_cast<std::size_t>(face.group)] != spec.boundary) continue;
      const double c = dot(d, face.inward);  // the beam enters where it points into the domain
      if (c <= 0) continue;
      any = true;
      add({McModel::Source::Kind::beam, b, static_cast<int>(i)}, spec.flux * c * face.area);
    }
    if (!any)
      throw InputError(fmt::format("{}: no face of boundary '{}' lets the beam ({:.4g}, {:.4g}, {:.4g}) into the domain", spec.where,
                                   spec.boundary, d[0], d[1], d[2]));
  }
  return m;
}

McResult solve_forward(const McModel& m, const McOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t K = m.kappa.size(), F = m.faces.size(), G = m.group_names.size();
  const int B = std::max(2, opt.batches);
  McResult r;
  r.source_power = m.total_power();
  Accumulator aG(K), aqx(K), aqy(K), aqz(K), adiv(K), ain(F), anet(F), agin(G), agnet(G), avol(1);
  const int threads = omp_get_max_threads();
  struct ThreadTally {
    FixedTally absorbed, track, tx, ty, tz, incident, wall_absorbed;
    std::uint64_t segments = 0, scatters = 0, reflections = 0, lost = 0;
  };
  std::vector<ThreadTally> tt(static_cast<std::size_t>(threads));
  for (int b = 0; b < B; ++b) {
    const std::uint64_t first = opt.paths * static_cast<std::uint64_t>(b) / static_cast<std::uint64_t>(B);
    const std::uint64_t last = opt.paths * static_cast<std::uint64_t>(b + 1) / static_cast<std::uint64_t>(B);
    const double n_batch = static_cast<double>(last - first);
    // Scales: a path deposits at most its unit weight in all (roulette aside), and a track at most
    // weight x length; 2^60 leaves headroom of 8x the batch's paths (overflow is checked anyway).
    const double wscale = 0x1.0p60 / std::max(1.0, n_batch);
    const double lscale = wscale / (256.0 * std::max(m.mesh.diameter, 1e-300));
    for (auto& t : tt) {
      for (auto* f : {&t.absorbed, &t.track, &t.tx, &t.ty, &t.tz}) f->v.assign(K, 0);
      for (auto* f : {&t.incident, &t.wall_absorbed}) f->v.assign(F, 0);
    }
    if (m.total_power() > 0) {
#pragma omp parallel
      {
        ThreadTally& T = tt[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t pi = static_cast<std::int64_t>(first); pi < static_cast<std::int64_t>(last); ++pi) {
          PathRandom rng(opt.seed, kForwardStream, static_cast<std::uint64_t>(pi));
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
            const Exit ex = exit_face(&m.mesh.plane[e * 4], x.data(), d.data());
            if (ex.face < 0 || seg > kMaxSegments || zero_steps > kMaxZeroSteps) {
              ++T.lost;
              break;
            }
            const double k = m.kappa[e], s = m.sigma_s[e];
            double l = ex.distance;
            bool scatter = false;
            if (s > 0 && tau_s < s * l) {
              l = tau_s / s;
              scatter = true;
            } else {
              tau_s -= s * l;
            }
            double deposit = 0, track = w * l;
            if (k > 0) {
              deposit = -w * std::expm1(-k * l);
              track = deposit / k;
            }
            if (l > 0) {
              T.absorbed.add(e, deposit, wscale);
              T.track.add(e, track, lscale);
              T.tx.add(e, track * d[0], lscale);
              T.ty.add(e, track * d[1], lscale);
              T.tz.add(e, track * d[2], lscale);
            }
            ++T.segments;
            w -= deposit;
            for (int c = 0; c < 3; ++c) x[static_cast<std::size_t>(c)] += l * d[static_cast<std::size_t>(c)];
            if (scatter) {
              const auto& ph = m.phase[static_cast<std::size_t>(m.phase_of_element[e])];
              d = scatter_direction(d, ph.cosine(rng.uniform()), rng.uniform());
              tau_s = -std::log(rng.uniform());
              ++T.scatters;
              zero_steps = 0;
            } else {
              zero_steps = l > 0 ? 0 : zero_steps + 1;
              const int next = m.mesh.across[e * 4 + static_cast<std::size_t>(ex.face)];
              if (next >= 0) {
                e = static_cast<std::size_t>(next);
                continue;
              }
              const auto fb = static_cast<std::size_t>(-1 - next);
              const auto& face = m.faces[fb];
              T.incident.add(fb, w, wscale);
              T.wall_absorbed.add(fb, w * face.absorptivity, wscale);
              w *= 1 - face.absorptivity;
              if (!(w > 0)) break;
              d = reflect(face, d, rng);
              ++T.reflections;
            }
            if (w < kRouletteBelow) {
              if (rng.uniform() * kRouletteWeight >= w) break;
              w = kRouletteWeight;
            }
          }
        }
      }
    }
    // Reduce the threads' integer tallies (exact), then to physical units.
    std::vector<std::int64_t> sum(std::max(K, F));
    bool overflow = false;
    auto reduce = [&](FixedTally ThreadTally::*member, std::size_t n) {
      std::fill(sum.begin(), sum.begin() + static_cast<std::ptrdiff_t>(n), 0);
      for (auto& t : tt) {
        overflow = overflow || (t.*member).overflow;
        for (std::size_t i = 0; i < n; ++i) overflow = __builtin_add_overflow(sum[i], (t.*member).v[i], &sum[i]) || overflow;
      }
      return std::vector<double>(sum.begin(), sum.begin() + static_cast<std::ptrdiff_t>(n));
    };
    const double unit = n_batch > 0 ? m.total_power() / n_batch : 0.0;  // W per unit weight
    auto absorbed = reduce(&ThreadTally::absorbed, K);
    auto track = reduce(&ThreadTally::track, K), tx = reduce(&ThreadTally::tx, K), ty = reduce(&ThreadTally::ty, K),
         tz = reduce(&ThreadTally::tz, K);
    auto incident = reduce(&ThreadTally::incident, F), wall_abs = reduce(&ThreadTally::wall_absorbed, F);
    if (overflow)
      throw SolverError(fmt::format("Monte Carlo tallies overflowed in batch {} ({} paths): raise solver.batches so that each batch "
                                    "holds fewer paths",
                                    b, last - first));
    double volume_W = 0;
    for (std::size_t e = 0; e < K; ++e) {
      const double V = m.mesh.volume[e];
      const double q_abs = absorbed[e] / wscale * unit;
      volume_W += m.emission[e] - q_abs;
      absorbed[e] = (m.emission[e] - q_abs) / V;  // div q
      track[e] *= unit / (lscale * V), tx[e] *= unit / (lscale * V), ty[e] *= unit / (lscale * V), tz[e] *= unit / (lscale * V);
    }
    std::vector<double> gin(G, 0.0), gnet(G, 0.0);
    for (std::size_t f = 0; f < F; ++f) {
      const auto& face = m.faces[f];
      incident[f] *= unit / (wscale * face.area);
      wall_abs[f] = wall_abs[f] * unit / (wscale * face.area) - face.emission;  // q_net
      gin[static_cast<std::size_t>(face.group)] += incident[f] * face.area;
      gnet[static_cast<std::size_t>(face.group)] += wall_abs[f] * face.area;
    }
    aG.add(track), aqx.add(tx), aqy.add(ty), aqz.add(tz), adiv.add(absorbed);
    ain.add(incident), anet.add(wall_abs), agin.add(gin), agnet.add(gnet), avol.add({volume_W});
    if (opt.progress) {
      const auto gi = agin.estimate();
      double tot = 0, err2 = 0;
      for (std::size_t g = 0; g < G; ++g) tot += gi.mean[g], err2 += gi.error[g] * gi.error[g];
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      opt.progress(fmt::format("  batch {}/{}: {:.3g} paths/s, wall incident power {:.6g} W (standard error {:.2e} relative)", b + 1, B,
                               static_cast<double>(last) / sec, tot, b > 0 && tot != 0 ? std::sqrt(err2) / std::abs(tot) : 0.0));
    }
  }
  for (const auto& t : tt) r.segments += t.segments, r.scattering_events += t.scatters, r.wall_reflections += t.reflections, r.lost_rays += t.lost;
  r.G = aG.estimate(), r.qx = aqx.estimate(), r.qy = aqy.estimate(), r.qz = aqz.estimate(), r.divq = adiv.estimate();
  r.q_in = ain.estimate(), r.q_net = anet.estimate(), r.group_q_in = agin.estimate(), r.group_q_net = agnet.estimate();
  const auto v = avol.estimate();
  r.volume_divq = {v.mean[0], v.error[0]};
  r.paths = opt.paths;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
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
    const Exit ex = exit_face(&m.mesh.plane[e * 4], x.data(), d.data());
    if (ex.face < 0) break;
    tau += (m.kappa[e] + m.sigma_s[e]) * ex.distance;
    zero_steps = ex.distance > 0 ? 0 : zero_steps + 1;
    for (int k = 0; k < 3; ++k) x[static_cast<std::size_t>(k)] += ex.distance * d[static_cast<std::size_t>(k)];
    const int next = m.mesh.across[e * 4 + static_cast<std::size_t>(ex.face)];
    if (next >= 0) {
      e = static_cast<std::size_t>(next);
      continue;
    }
    const auto& face = m.faces[static_cast<std::size_t>(-1 - next)];
    return face.group == m.beam_group[i] && dot(b, face.inward) > 0 ? std::exp(-tau) : 0.0;
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
    const Exit ex = exit_face(&m.mesh.plane[e * 4], x.data(), d.data());
    if (ex.face < 0 || seg > kMaxSegments || zero_steps > kMaxZeroSteps) {
      ++lost;
      return L;
    }
    const double k = m.kappa[e], s = m.sigma_s[e];
    double l = ex.distance;
    bool scatter = false;
    if (s > 0 && tau_s < s * l) {
      l = tau_s / s;
      scatter = true;
    } else {
      tau_s -= s * l;
    }
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
    if (scatter) {
      const auto& ph = m.phase[static_cast<std::size_t>(m.phase_of_element[e])];
      d = scatter_direction(d, ph.cosine(rng.uniform()), rng.uniform());
      tau_s = -std::log(rng.uniform());
      zero_steps = 0;
    } else {
      zero_steps = l > 0 ? 0 : zero_steps + 1;
      const int next = m.mesh.across[e * 4 + static_cast<std::size_t>(ex.face)];
      if (next >= 0) {
        e = static_cast<std::size_t>(next);
        continue;
      }
      const auto& face = m.faces[static_cast<std::size_t>(-1 - next)];
      L += w * face.emission / kPi;  // diffuse leaving radiance by emission (and irradiation)
      if (beams && face.absorptivity < 1) {
        const double q_beam = beam_flux_on_wall(m, face, x, count);
        L += w * (1 - face.absorptivity) * (1 - face.specular_share) * q_beam / kPi;
        if (q_beam > 0 && face.specular_share > 0) ++count.unfollowed;
      }
      w *= 1 - face.absorptivity;
      if (!(w > 0)) return L;
      d = reflect(face, d, rng);
    }
    if (w < kRouletteBelow) {
      if (rng.uniform() * kRouletteWeight >= w) return L;
      w = kRouletteWeight;
    }
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
    for (std::uint64_t ray = first; ray < last; ++ray) {
      PathRandom rng(opt.seed, 1 + p, ray);
      if (pt.face >= 0) {
        const auto& face = m.faces[static_cast<std::size_t>(pt.face)];
        const Vec3 d = lambertian_direction(face.inward, rng);
        sum[0] += kPi * backward_radiance(m, static_cast<std::size_t>(face.element), pt.x, d, rng, count);
      } else {
        const Vec3 d = isotropic_direction(rng);
        const double L = 4 * kPi * backward_radiance(m, static_cast<std::size_t>(pt.element), pt.x, d, rng, count);
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
        const double G = m.beam_flux[i] * beam_transmission(m, i, static_cast<std::size_t>(pt.element), pt.x, count);
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
      v.q_net = {face.absorptivity * est.mean[0] - face.emission, face.absorptivity * est.error[0]};
    } else {
      const auto e = static_cast<std::size_t>(pt.element);
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
