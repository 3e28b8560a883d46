#include "output/radiation_output.hpp"
#include "common/tet_topology.hpp"

#include "common/error.hpp"
#include "io/atomic_file.hpp"
#include "transport/field_evaluation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <map>
#include <numeric>

namespace dgrte::output {
namespace {

// Face-node weights of a face integral on the reference triangle: 1^T face_mass.
std::array<Eigen::VectorXd, 4> face_weights(const dg::ReferenceTet& ref) {
  std::array<Eigen::VectorXd, 4> w;
  for (int f = 0; f < 4; ++f) w[f] = ref.face_mass[f].colwise().sum().transpose();
  return w;
}

std::string group_of_face(const transport::Discretization& disc, std::size_t element_face) {
  const auto& mesh = *disc.mesh;
  const auto [e, f] = ElementFace::unpack(element_face);
  const int g = mesh.boundary_group[e][static_cast<std::size_t>(f)];
  return g >= 0 ? problem::group_label(mesh.surface_groups[static_cast<std::size_t>(g)]) : std::string("(no group)");
}

double face_integral(const transport::Discretization& disc, const std::array<Eigen::VectorXd, 4>& fw, std::size_t element_face,
                     const double* values) {
  const auto [e, f] = ElementFace::unpack(element_face);
  const double sJ = disc.geometry[e].face_scale[f] * disc.geometry[e].jacobian;
  double s = 0;
  for (Eigen::Index j = 0; j < fw[f].size(); ++j) s += fw[f][j] * values[j];
  return sJ * s;
}

}  // namespace

double volume_integral(const transport::Discretization& disc, std::span<const double> f, std::size_t elements) {
  const Eigen::VectorXd w = disc.ref.mass.colwise().sum().transpose();
  const std::size_t np = static_cast<std::size_t>(disc.num_nodes());
  const auto K = static_cast<std::ptrdiff_t>(std::min(elements, disc.num_elements()));
  double total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (std::ptrdiff_t ei = 0; ei < K; ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    double s = 0;
    for (std::size_t i = 0; i < np; ++i) s += w[static_cast<Eigen::Index>(i)] * f[e * np + i];
    total += disc.geometry[e].jacobian * s;
  }
  return total;
}

double element_sum(std::span<const double> per_element, std::size_t elements) {
  const auto end = per_element.begin() + static_cast<std::ptrdiff_t>(std::min(elements, per_element.size()));
  return std::accumulate(per_element.begin(), end, 0.0);
}

RadiationFields radiation_fields(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                                 const solver::GrayResult& r) {
  RadiationFields out;
  const std::size_t n = disc.num_dofs(), np = static_cast<std::size_t>(disc.num_nodes()), K = disc.num_elements();
  constexpr double four_pi = 4 * std::numbers::pi;  // the sum of every angular set's weights
  out.divq.resize(n);
  out.divq_from_q.resize(n);
  for (std::size_t k = 0; k < n; ++k) out.divq[k] = r.source_total[k] - medium.kappa[k] * r.G[k];
  // What the source holds besides the emission (user sources), per node: integrated and interpolated as
  // the polynomial it is; the emission and absorption with the properties where they are evaluated.
  std::vector<double> other(n);
  for (std::size_t k = 0; k < n; ++k) other[k] = r.source_total[k] - four_pi * medium.kappa[k] * medium.blackbody_intensity[k];
  out.divq_element.resize(K);
  const Eigen::VectorXd mass_weights = disc.ref.mass.colwise().sum().transpose();
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < static_cast<std::ptrdiff_t>(K); ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    double source = 0;
    for (std::size_t i = 0; i < np; ++i)
      source += mass_weights[static_cast<Eigen::Index>(i)] * (other[e * np + i] + four_pi * medium.emission[e * np + i]);
    const double* G = r.G.data() + e * np;
    const double absorbed = medium.extinction.element_integral(disc, e, G) - medium.scattering_term.element_integral(disc, e, G);
    out.divq_element[e] = disc.geometry[e].jacobian * (source - absorbed);
  }
  const auto& op = medium.output_points;
  out.output_divq.assign(op.size(), std::nan(""));
  for (std::size_t p = 0; p < op.size(); ++p) {
    if (op.element[p] < 0) continue;
    const auto e = static_cast<std::size_t>(op.element[p]);
    const double* w = op.weights.data() + p * np;
    double G = 0, rest = 0;
    for (std::size_t i = 0; i < np; ++i) G += w[i] * r.G[e * np + i], rest += w[i] * other[e * np + i];
    out.output_divq[p] = rest + four_pi * op.kappa[p] * op.blackbody_intensity[p] - op.kappa[p] * G;
  }
  const auto& ref = disc.ref;
  const auto npi = static_cast<Eigen::Index>(np);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < static_cast<std::ptrdiff_t>(K); ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    const auto& g = disc.geometry[e];
    Eigen::VectorXd div = Eigen::VectorXd::Zero(npi);
    const std::array<const std::vector<double>*, 3> q{&r.qx, &r.qy, &r.qz};
    const std::array<const dg::Matrix*, 3> D{&ref.Dr, &ref.Ds, &ref.Dt};
    for (int c = 0; c < 3; ++c) {
      const Eigen::Map<const Eigen::VectorXd> qc(q[c]->data() + e * np, npi);
      for (int d = 0; d < 3; ++d) div.noalias() += g.grad_rst[d][c] * (*D[d] * qc);
    }
    for (std::size_t i = 0; i < np; ++i) out.divq_from_q[e * np + i] = div[static_cast<Eigen::Index>(i)];
  }
  const std::size_t nfp = walls.face_nodes();
  out.q_net.resize(r.q_in.size());
  out.q_emitted.resize(r.q_in.size());
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const auto [e, f] = walls.face(b);
    out.face_area.push_back(2 * disc.geometry[e].face_scale[f] * disc.geometry[e].jacobian);
    for (std::size_t j = 0; j < nfp; ++j) {
      out.q_net[b * nfp + j] = r.q_in[b * nfp + j] - r.q_out[b * nfp + j];
      out.q_emitted[b * nfp + j] = walls.emitted_flux(b, j);
    }
  }
  out.balance_q_net = out.q_net;
  if (!r.wall_G.empty()) {
    out.wall_divq.resize(r.wall_G.size());
    std::vector<double> source(r.wall_G.size()), kappa(r.wall_G.size());
    walls.add_nodal(r.source_total, source);
    walls.add_nodal(medium.kappa, kappa);
    for (std::size_t k = 0; k < r.wall_G.size(); ++k) out.wall_divq[k] = source[k] - kappa[k] * r.wall_G[k];
  }
  out.balance_q_in = r.q_in;
  out.balance_q_out = r.q_out;
  if (!r.wall_delta_q_in.empty())
    for (std::size_t b = 0; b < walls.num_faces(); ++b)
      for (std::size_t j = 0; j < nfp; ++j) {
        const std::size_t k = b * nfp + j;
        out.balance_q_in[k] -= r.wall_delta_q_in[k];
        out.balance_q_out[k] -= walls.reflectance(b) * r.wall_delta_q_in[k];
      }
  for (std::size_t k = 0; k < out.q_net.size(); ++k) out.balance_q_net[k] = out.balance_q_in[k] - out.balance_q_out[k];
  return out;
}

nlohmann::json wall_summary(const transport::Discretization& disc, const problem::Walls& walls, const RadiationFields& fields) {
  const auto fw = face_weights(disc.ref);
  const std::size_t nfp = walls.face_nodes();
  struct Sums {
    double area = 0, q_net = 0, q_in = 0, q_out = 0, emitted = 0;
    std::string type;
  };
  std::map<std::string, Sums> by_group;
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    auto& s = by_group[group_of_face(disc, walls.element_face(b))];
    s.type = io::to_string(walls.wall(walls.wall_of(b)).type);
    s.area += fields.face_area[b];
    s.q_net += face_integral(disc, fw, walls.element_face(b), fields.balance_q_net.data() + b * nfp);
    s.q_in += face_integral(disc, fw, walls.element_face(b), fields.balance_q_in.data() + b * nfp);
    s.q_out += face_integral(disc, fw, walls.element_face(b), fields.balance_q_out.data() + b * nfp);
    s.emitted += face_integral(disc, fw, walls.element_face(b), fields.q_emitted.data() + b * nfp);
  }
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, s] : by_group)
    j[name] = {{"type", s.type},         {"area", s.area},       {"q_net_W", s.q_net}, {"q_in_W", s.q_in},
               {"q_out_W", s.q_out},     {"emitted_W", s.emitted}, {"q_net_mean", s.area > 0 ? s.q_net / s.area : 0.0}};
  return j;
}

std::map<std::string, double> group_integrals(const transport::Discretization& disc, const problem::Walls& walls,
                                              std::span<const double> per_face_node) {
  const auto fw = face_weights(disc.ref);
  std::map<std::string, double> out;
  for (std::size_t b = 0; b < walls.num_faces(); ++b)
    out[group_of_face(disc, walls.element_face(b))] +=
        face_integral(disc, fw, walls.element_face(b), per_face_node.data() + b * walls.face_nodes());
  return out;
}

nlohmann::json energy_balance(const transport::Discretization& disc, const problem::Walls& walls, const RadiationFields& fields,
                              const solver::GrayResult& result) {
  const auto fw = face_weights(disc.ref);
  const std::size_t nfp = walls.face_nodes();
  double walls_W = 0, walls_abs = 0, incident_W = 0;
  for (std::size_t b = 0; b < walls.num_faces(); ++b) {
    const double q = face_integral(disc, fw, walls.element_face(b), fields.balance_q_net.data() + b * nfp);
    walls_W += q;
    walls_abs += std::abs(q);
    incident_W += face_integral(disc, fw, walls.element_face(b), fields.balance_q_in.data() + b * nfp);
  }
  const double volume_W = element_sum(fields.divq_element);
  const auto abs_integral = [&](std::span<const double> f) {
    std::vector<double> a(f.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::abs(f[i]);
    return volume_integral(disc, a);
  };
  const double emitted_W = abs_integral(result.source_total);
  const double scale = std::max({abs_integral(fields.divq), walls_abs, std::abs(incident_W), emitted_W, 1e-300});
  return {{"volume_W", volume_W},
          {"walls_W", walls_W},
          {"imbalance_W", volume_W - walls_W},
          {"relative_imbalance", (volume_W - walls_W) / scale},
          {"scale_W", scale},
          {"definition", "volume_W = integral of div q (balance form) dV; walls_W = integral of q_net dA (into the walls); "
                         "relative to scale_W = max(integral |div q| dV, integral |q_net| dA, integral q_in dA, "
                         "integral |emission| dV)"}};
}

void write_quadrature_csv(const std::filesystem::path& file, const angular::Quadrature& quad) {
  std::string text = fmt::format("# {} ({} ordinates); weights in sr, sum 4 pi\nsx,sy,sz,w\n", quad.name, quad.size());
  for (std::size_t m = 0; m < quad.size(); ++m)
    text += fmt::format("{:.17g},{:.17g},{:.17g},{:.17g}\n", quad.s[m][0], quad.s[m][1], quad.s[m][2], quad.w[m]);
  io::write_text_atomically(file, text);
}

std::vector<WallPoint> wall_faces_at(const io::Vec3& point, const transport::Discretization& disc, const problem::Walls& walls,
                                     std::span<const std::size_t> faces) {
  const Eigen::Vector3d x(point[0], point[1], point[2]);
  std::vector<WallPoint> hits;
  for (std::size_t b : faces) {
    const auto [e, f] = walls.face(b);
    const auto v = disc.element_vertices(e);
    const auto& A = v[dgrte::kFaceVertices[f][0]];
    const auto& B = v[dgrte::kFaceVertices[f][1]];
    const auto& C = v[dgrte::kFaceVertices[f][2]];
    Eigen::Matrix<double, 3, 2> E;
    Eigen::Vector3d rel;
    for (int c = 0; c < 3; ++c) E(c, 0) = B[c] - A[c], E(c, 1) = C[c] - A[c], rel[c] = x[c] - A[c];
    const double size = std::sqrt(E.col(0).cross(E.col(1)).norm());
    if (rel.norm() > 2 * (E.col(0).norm() + E.col(1).norm())) continue;  // far from the face
    const Eigen::Vector2d l = (E.transpose() * E).ldlt().solve(E.transpose() * rel);
    constexpr double tol = 1e-9;  // points on edges and corners belong to every face that has them
    if ((E * l - rel).norm() > 1e-7 * size || l[0] < -tol || l[1] < -tol || l[0] + l[1] > 1 + tol) continue;
    hits.push_back({b, l[0], l[1]});
  }
  return hits;
}

std::vector<double> with_wall_values(const problem::Walls& walls, std::span<const double> nodal,
                                     std::span<const double> wall_values) {
  std::vector<double> out(nodal.begin(), nodal.end());
  if (wall_values.empty()) return out;
  for (std::size_t bj = 0; bj < walls.num_faces() * walls.face_nodes(); ++bj) {
    double sum = wall_values[bj];
    for (const std::size_t c : walls.coincident(bj)) sum += wall_values[c];
    out[walls.element_node(bj)] = sum / static_cast<double>(1 + walls.coincident(bj).size());
  }
  return out;
}

double wall_value(const transport::Discretization& disc, const problem::Walls& walls, const std::vector<WallPoint>& hits,
                  std::span<const double> values) {
  const std::size_t nfp = walls.face_nodes();
  double sum = 0;
  for (const auto& wp : hits) {
    const int f = walls.face(wp.face).face;
    const auto P = disc.ref.face_interpolation_matrix(f, {{wp.l1, wp.l2}});
    const Eigen::Map<const Eigen::VectorXd> v(values.data() + wp.face * nfp, static_cast<Eigen::Index>(nfp));
    sum += (P * v)(0);
  }
  return sum / static_cast<double>(hits.size());
}

double point_value(const transport::Discretization& disc, const problem::Walls& walls, const transport::PointLocator& locator,
                   const transport::PointLocator::Location& loc, const std::vector<WallPoint>& hits, std::span<const double> nodal,
                   std::span<const double> wall) {
  return !hits.empty() && !wall.empty() ? wall_value(disc, walls, hits, wall) : locator.evaluate(loc, nodal);
}

std::vector<std::vector<WallPoint>> locate_wall_probe(const io::ProbeSpec& probe, const transport::Discretization& disc,
                                                      const problem::Walls& walls) {
  std::vector<std::size_t> faces;
  for (std::size_t b = 0; b < walls.num_faces(); ++b)
    if (group_of_face(disc, walls.element_face(b)) == probe.wall) faces.push_back(b);
  if (faces.empty())
    throw InputError(fmt::format("{}: wall '{}' is not a surface group with boundary faces in the mesh", probe.where, probe.wall));
  std::vector<std::vector<WallPoint>> out;
  for (const auto& [point, distance] : probe_points(probe)) {
    const int i = static_cast<int>(out.size());
    auto hits = wall_faces_at(point, disc, walls, faces);
    const auto& x = point;
    if (hits.empty())
      throw InputError(fmt::format("{}: point {} ({:.6g}, {:.6g}, {:.6g}) is not on the wall '{}'; a wall probe must lie on "
                                   "that group's faces (edges and corners included)",
                                   probe.where, i, x[0], x[1], x[2], probe.wall));
    out.push_back(std::move(hits));
  }
  return out;
}

std::vector<std::pair<io::Vec3, double>> probe_points(const io::ProbeSpec& probe) {
  const double length = std::sqrt(std::pow(probe.to[0] - probe.from[0], 2) + std::pow(probe.to[1] - probe.from[1], 2) +
                                  std::pow(probe.to[2] - probe.from[2], 2));
  std::vector<std::pair<io::Vec3, double>> out;
  for (int i = 0; i < probe.points; ++i) {
    const double t = probe.points > 1 ? static_cast<double>(i) / (probe.points - 1) : 0.0;
    out.push_back({io::Vec3{probe.from[0] + t * (probe.to[0] - probe.from[0]), probe.from[1] + t * (probe.to[1] - probe.from[1]),
                            probe.from[2] + t * (probe.to[2] - probe.from[2])},
                   t * length});
  }
  return out;
}

std::vector<ProbeTable> probe_tables(const io::CaseSpec& cs, const transport::Discretization& disc, const problem::Walls& walls,
                                     const solver::GrayResult& r, const RadiationFields& fields, std::vector<std::string>& warnings,
                                     const GatheredProbes* gathered) {
  std::vector<ProbeTable> tables;
  if (cs.output.probes.empty()) return tables;
  std::size_t probe_index = 0;
  const transport::PointLocator locator(disc);
  std::vector<std::size_t> all_faces(walls.num_faces());
  std::iota(all_faces.begin(), all_faces.end(), std::size_t{0});
  std::size_t output_point = 0;  // fields.output_divq: the volume probes' points in order
  for (const auto& probe : cs.output.probes) {
    const auto* gather = gathered && !gathered->values[probe_index].empty() ? &gathered->values[probe_index] : nullptr;
    ++probe_index;
    const auto line = probe_points(probe);
    auto point = [&](int i) { return line[static_cast<std::size_t>(i)]; };
    std::string text;
    if (probe.wall.empty()) {
      std::vector<std::pair<std::string, const std::vector<double>*>> columns{
          {"G", &r.G}, {"qx", &r.qx}, {"qy", &r.qy}, {"qz", &r.qz}, {"divq", &fields.divq}, {"divq_from_q", &fields.divq_from_q}};
      if (!r.G_collimated.empty())
        for (const auto& c : std::initializer_list<std::pair<std::string, const std::vector<double>*>>{
                 {"G_collimated", &r.G_collimated}, {"qx_collimated", &r.qx_collimated}, {"qy_collimated", &r.qy_collimated},
                 {"qz_collimated", &r.qz_collimated}})
          columns.push_back(c);
      text = "# G [W/m^2], q [W/m^2] (totals: diffuse + collimated), divq [W/m^3] (balance: sum w emission - kappa G), "
             "divq_from_q [W/m^3] (DG divergence of q), *_collimated: the collimated part alone, distance [m] along the line\n";
      if (gather)
        text += "# final gather: G, qx, qy, qz (and divq = emission - kappa G) from rays through the converged DG source; *_dg: "
                "the DG values\n";
      text += "x,y,z,distance";
      for (const auto& c : columns) text += "," + c.first;
      if (gather) text += ",G_dg,qx_dg,qy_dg,qz_dg";
      text += "\n";
      // On a wall: G, q and div q with the walls' values (the DG trace of the directions entering there
      // is not the wall's outgoing intensity; docs/case-file.md).
      const std::array<const std::vector<double>*, 5> on_wall{&r.wall_G, &r.wall_qx, &r.wall_qy, &r.wall_qz, &fields.wall_divq};
      const bool point_divq = !fields.output_divq.empty();
      if (point_divq && output_point + static_cast<std::size_t>(probe.points) > fields.output_divq.size())
        throw std::logic_error("probe_tables: the medium's output points are not the volume probes' points");
      const std::size_t first_point = output_point;
      output_point += static_cast<std::size_t>(probe.points);
      int point_index = 0;
      auto value = [&](const transport::PointLocator::Location& loc, const std::vector<WallPoint>& hits, std::size_t c) {
        if (c == 4 && point_divq && hits.empty()) return fields.output_divq[first_point + static_cast<std::size_t>(point_index)];
        return point_value(disc, walls, locator, loc, hits, *columns[c].second, c < on_wall.size() ? *on_wall[c] : std::span<const double>());
      };
      int outside = 0;
      for (int i = 0; i < probe.points; ++i) {
        point_index = i;
        const auto [x, d] = point(i);
        text += fmt::format("{:.10g},{:.10g},{:.10g},{:.10g}", x[0], x[1], x[2], d);
        const auto loc = locator.locate(x);
        if (!loc) ++outside;
        const auto hits = loc ? wall_faces_at(x, disc, walls, all_faces) : std::vector<WallPoint>();
        if (!gather || !loc) {
          for (std::size_t c = 0; c < columns.size(); ++c) text += loc ? fmt::format(",{:.12g}", value(*loc, hits, c)) : std::string(",nan");
          if (gather) text += ",nan,nan,nan,nan";
        } else {
          const auto& gv = (*gather)[static_cast<std::size_t>(i)];
          std::vector<double> dg;
          for (std::size_t c = 0; c < columns.size(); ++c) dg.push_back(value(*loc, hits, c));
          std::vector<double> out = dg;
          for (int k = 0; k < 4; ++k) out[static_cast<std::size_t>(k)] = gv[static_cast<std::size_t>(k)];
          out[4] = dg[4] + gathered->divq_shift[probe_index - 1][static_cast<std::size_t>(i)];  // emission - kappa G, gathered G
          if (columns.size() >= 10 && probe_index - 1 < gathered->collimated.size() && !gathered->collimated[probe_index - 1].empty())
            for (std::size_t k = 0; k < 4; ++k) out[6 + k] = gathered->collimated[probe_index - 1][static_cast<std::size_t>(i)][k];
          for (double v : out) text += fmt::format(",{:.12g}", v);
          for (int k = 0; k < 4; ++k) text += fmt::format(",{:.12g}", dg[static_cast<std::size_t>(k)]);
        }
        text += "\n";
      }
      if (outside)
        warnings.push_back(fmt::format("probe '{}': {} of {} points lie outside the mesh (written as nan)", probe.name, outside, probe.points));
    } else {
      text = "# q_in: incident flux [W/m^2]; q_net = absorbed - emitted [W/m^2], positive into the wall; distance [m] along the line\n";
      if (gather) text += "# final gather: q_in at each point from rays through the converged DG source (summary.json final_gather)\n";
      text += "x,y,z,distance,q_in,q_net\n";
      const auto located = locate_wall_probe(probe, disc, walls);
      for (int i = 0; i < probe.points; ++i) {
        const auto [x, d] = point(i);
        const auto& hits = located[static_cast<std::size_t>(i)];
        double q_in = wall_value(disc, walls, hits, r.q_in), q_net = wall_value(disc, walls, hits, fields.q_net);
        if (gather && !hits.empty()) {
          // q_net = absorptivity q_in - emitted: move the interpolated value by the gathered q_in's difference.
          const auto& wm = walls.wall(walls.wall_of(hits.front().face));
          const double q_gathered = (*gather)[static_cast<std::size_t>(i)][0];
          q_net += wm.absorptivity() * (q_gathered - q_in);
          q_in = q_gathered;
        }
        text += fmt::format("{:.10g},{:.10g},{:.10g},{:.10g},{:.12g},{:.12g}\n", x[0], x[1], x[2], d, q_in, q_net);
      }
    }
    tables.push_back({probe.name, std::move(text)});
  }
  return tables;
}

}  // namespace dgrte::output
