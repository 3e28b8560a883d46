#include "problem/problem.hpp"

#include "common/error.hpp"
#include "gas/gas_common.hpp"
#include "gas/soot.hpp"
#include "transport/field_evaluation.hpp"
#include "transport/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace dgrte::problem {
namespace {

constexpr double kSigma = io::kStefanBoltzmann;
constexpr double kPi = io::kPi;

std::string at(const Vec3& x) { return fmt::format("({:.4g}, {:.4g}, {:.4g})", x[0], x[1], x[2]); }

template <typename Spec>
std::vector<int> match_groups(const std::vector<mesh::PhysicalGroup>& groups, const std::vector<Spec>& specs,
                              const std::string& section, const std::string& what, const std::string& file,
                              bool need_ungrouped) {
  int star = -1;
  std::map<std::string, int> by_name;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].group == "*") star = static_cast<int>(i);
    else by_name[specs[i].group] = static_cast<int>(i);
  }
  std::string available;
  for (const auto& g : groups) available += (available.empty() ? "" : ", ") + group_label(g);
  for (const auto& [name, i] : by_name) {
    const bool found = std::any_of(groups.begin(), groups.end(), [&](const auto& g) { return group_label(g) == name; });
    if (!found)
      throw InputError(fmt::format("{}: {}.{} (line {}): the mesh has no {} physical group '{}' (it has: {})", file, section, name,
                                   specs[static_cast<std::size_t>(i)].line, what, name, available.empty() ? "none" : available));
  }
  std::vector<int> out;
  for (const auto& g : groups) {
    const auto it = by_name.find(group_label(g));
    const int idx = it != by_name.end() ? it->second : star;
    if (idx < 0)
      throw InputError(fmt::format("{}: {}: the {} physical group '{}' of the mesh has no entry; add '{}:' or '\"*\":' under {}",
                                   file, section, what, group_label(g), group_label(g), section));
    out.push_back(idx);
  }
  if (need_ungrouped && star < 0)
    throw InputError(fmt::format("{}: {}: some {} belong to no {} physical group; add a '\"*\":' entry under {}", file, section,
                                 what == "volume" ? "elements" : "boundary faces", what, section));
  out.push_back(star);  // last entry: for elements in no group
  return out;
}

angular::PhaseFunction make_phase(const io::MediumSpec::Phase& p) {
  try {
    if (p.type == "linear") return angular::linear_anisotropic(p.a1);
    if (p.type == "henyey-greenstein") return angular::henyey_greenstein(p.g);
    if (p.type == "legendre") return angular::legendre(p.coefficients);
    if (p.type == "kim-lee") return angular::kim_lee(p.name);
    return angular::isotropic();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", p.where, e.what()));
  }
}

// Checks a nodal property value: finite and >= 0, else an error naming key, line and location.
double checked(double v, const std::string& file, const std::string& key, int line, const Vec3& x, const char* what) {
  if (!std::isfinite(v) || v < 0)
    throw InputError(fmt::format("{}: {} (line {}) = {} at {}: {} must be finite and >= 0", file, key, line, v, at(x), what));
  return v;
}

}  // namespace

std::string group_label(const mesh::PhysicalGroup& g) { return g.name.empty() ? fmt::format("#{}", g.tag) : g.name; }

angular::Quadrature build_quadrature(const io::AngularSpec& a) {
  try {
    if (a.quadrature == "sn") return angular::level_symmetric(a.order);
    if (a.quadrature == "sn-heat") return angular::heat_transfer_sn(a.order);
    if (a.quadrature == "tn") return angular::thurgood(a.order);
    if (a.quadrature == "fv") return angular::finite_volume(a.polar, a.azimuthal, a.axis);
    if (a.quadrature == "product") return angular::product_gauss(a.polar, a.azimuthal, a.axis);
    return angular::from_file(a.file);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", a.where, e.what()));
  }
}

namespace {

// The media entry of every element (cs.media index).
std::vector<std::size_t> media_entries(const io::CaseSpec& cs, const transport::Discretization& disc) {
  const auto& mesh = *disc.mesh;
  const bool ungrouped = std::any_of(mesh.tet_group.begin(), mesh.tet_group.end(), [](int g) { return g < 0; });
  const auto entry_of_group = match_groups(mesh.volume_groups, cs.media, "media", "volume", cs.file.string(), ungrouped);
  std::vector<std::size_t> out(disc.num_elements());
  for (std::size_t e = 0; e < out.size(); ++e) {
    const int g = mesh.tet_group[e];
    out[e] = static_cast<std::size_t>(entry_of_group[g >= 0 ? static_cast<std::size_t>(g) : entry_of_group.size() - 1]);
  }
  return out;
}

// Whether a media entry gives a soot volume fraction (expression or field array).
bool has_soot(const io::MediumSpec& ms) { return ms.soot_fv || (ms.field && ms.field->array_for("soot_fv")); }

// The user's fields (expressions, field files, defaults) at points x[k] of elements element[k]:
// the one place the case's property definitions are evaluated, for the DG nodes, the property
// points and output points alike (`what` names them in errors). Field files are sampled once per
// entry; imports, when given, gets a record per file.
struct PointSamples {
  std::vector<double> kappa, sigma_s, ib, temperature;  // temperature NaN where the case gives Ib
  std::vector<gas::GasState> gas;                       // with a gas model
  std::vector<double> soot_fv;                          // soot volume fraction (0 without soot)
};
PointSamples sample_properties(const io::CaseSpec& cs, std::span<const std::size_t> entry_of_element, std::span<const std::size_t> element,
                               std::span<const Vec3> x, const char* what, std::vector<Medium::FieldImport>* imports) {
  const std::size_t total = x.size();
  const bool gas_model = cs.model != nullptr;
  const std::string file = cs.file.string();
  std::vector<std::vector<std::pair<std::string, std::vector<double>>>> sampled(cs.media.size());
  for (std::size_t entry = 0; entry < cs.media.size(); ++entry) {
    const auto& spec = cs.media[entry];
    if (!spec.field) continue;
    std::vector<std::size_t> index;
    std::vector<fields::Vec3> points;
    for (std::size_t k = 0; k < total; ++k)
      if (entry_of_element[element[k]] == entry) index.push_back(k), points.push_back(x[k]);
    fields::FieldRequest req{spec.field->file, {}, spec.field->nearest_outside, spec.field->max_distance, spec.field->where};
    for (const auto& qa : spec.field->arrays) req.arrays.push_back(qa.second);
    auto got = fields::sample_fields(req, points);
    Medium::FieldImport record{spec.field->where, spec.field->file.string(), {}, {}, index.size()};
    for (std::size_t a = 0; a < req.arrays.size(); ++a) {
      std::vector<double> full(total, std::nan(""));
      for (std::size_t j = 0; j < index.size(); ++j) full[index[j]] = got.values[a][j];
      sampled[entry].emplace_back(spec.field->arrays[a].first, std::move(full));
      record.quantities.push_back(spec.field->arrays[a].first);
    }
    got.values.clear();
    record.info = std::move(got);
    if (imports) imports->push_back(std::move(record));
  }
  // A quantity at point k: the caller's (cs.given) if given, else from the entry's field file if it
  // maps it, else its expression, else the default.
  auto given = [&](const char* name) {
    const auto it = cs.given.find(name);
    return it == cs.given.end() ? nullptr : &it->second;
  };
  auto quantity = [&](std::size_t entry, const char* name, const std::optional<io::Expression>& ex, std::size_t k, double fallback) {
    if (const auto* g = given(name)) return (*g)(element[k], x[k]);
    for (const auto& [q, v] : sampled[entry])
      if (q == name) return v[k];
    return ex ? (*ex)(x[k]) : fallback;
  };
  PointSamples out;
  out.kappa.resize(total), out.sigma_s.resize(total), out.ib.resize(total), out.temperature.assign(total, std::nan(""));
  out.soot_fv.assign(total, 0.0);
  // soot in a gray run (no gas model): its Planck-mean absorption joins kappa (gas/soot.hpp)
  const bool gray_soot = !gas_model && std::any_of(cs.media.begin(), cs.media.end(), has_soot);
  const double soot_constant = gray_soot ? gas::soot_optics(gas::kDefaultSootOptics, "soot").constant : 0.0;
  if (gas_model) out.gas.resize(total);
  for (std::size_t k = 0; k < total; ++k) {
    const std::size_t entry = entry_of_element[element[k]];
    const auto& spec = cs.media[entry];
    const std::string key = "media." + spec.group;
    const Vec3& xk = x[k];
    const auto* given_kappa = given("kappa");
    const auto* given_sigma_s = given("sigma_s");
    const bool temperature_given = given("temperature") != nullptr;
    // (Given values are checked where they are given: dgrte::Solver::set_field.)
    out.kappa[k] = given_kappa   ? (*given_kappa)(element[k], xk)
                   : spec.kappa ? checked((*spec.kappa)(xk), file, key + ".kappa", spec.line, xk, "the absorption coefficient")
                                : 0.0;
    out.sigma_s[k] = given_sigma_s ? (*given_sigma_s)(element[k], xk)
                                   : checked(spec.scattering(xk), file, key + ".scattering", spec.line, xk, "the scattering coefficient");
    if (spec.blackbody_intensity && !temperature_given) {
      out.ib[k] = checked((*spec.blackbody_intensity)(xk), file, key + ".Ib", spec.line, xk, "the blackbody intensity");
    } else {
      const bool from_field = spec.field && spec.field->array_for("temperature");
      const double T = checked(quantity(entry, "temperature", spec.temperature, k, 0.0), file,
                               key + (from_field ? ".field.temperature" : ".temperature"), spec.line, xk, "the temperature");
      out.temperature[k] = T;
      out.ib[k] = kSigma * std::pow(T, 4) / kPi;
    }
    if (has_soot(spec)) {
      const bool soot_from_field = spec.field && spec.field->array_for("soot_fv");
      const double fv = gas::soot_fv_without_roundoff(quantity(entry, "soot_fv", spec.soot_fv, k, 0.0));
      if (!gas::valid_soot_fv(fv))
        throw InputError(fmt::format("{}: {} (line {}) = {} at {}: the soot volume fraction must lie in [0, 1) (flames: 1e-8 "
                                     "to 1e-5); check the expression or the field's array",
                                     file, key + (soot_from_field ? ".field.soot_fv" : ".soot_fv"), spec.line, fv, at(xk)));
      out.soot_fv[k] = fv;
      if (!gas_model) out.kappa[k] += gas::soot_planck_mean_kappa(soot_constant, fv, out.temperature[k]);
    }
    if (gas_model) {  // a gas model requires the temperature (no Ib): temperature is set
      gas::GasState& st = out.gas[k];
      st.temperature = out.temperature[k];
      st.pressure = quantity(entry, "pressure", spec.pressure, k, 1.0);
      st.x_h2o = quantity(entry, "x_h2o", spec.x_h2o, k, 0.0);
      st.x_co2 = quantity(entry, "x_co2", spec.x_co2, k, 0.0);
      st.x_co = quantity(entry, "x_co", spec.x_co, k, 0.0);
      st.soot_fv = out.soot_fv[k];
      try {
        gas::validate_state(st, "gas state");
      } catch (const InputError& err) {
        throw InputError(fmt::format("{}: {} (line {}) at the {} ({:.6g}, {:.6g}, {:.6g}): {}; check the temperature, "
                                     "pressure, mole fractions and soot_fv of this entry",
                                     file, key, spec.line, what, xk[0], xk[1], xk[2], err.what()));
      }
    }
  }
  return out;
}

}  // namespace

Medium build_medium(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature* quad) {
  const std::size_t K = disc.num_elements(), np = static_cast<std::size_t>(disc.num_nodes()), n = disc.num_dofs();
  const std::size_t Q = disc.property.size(), nq = K * Q;
  const auto entry_of_element = media_entries(cs, disc);
  auto entry_of = [&](std::size_t e) { return entry_of_element[e]; };
  Medium m;
  const bool gas_model = cs.model != nullptr;
  const std::string file = cs.file.string();
  // The user's fields at two sets of points: the DG nodes (e * N_p + i: what outputs read) and the
  // property points (e * Q + q: what the solve integrates; docs/architecture.md, "Properties at
  // quadrature points").
  std::vector<std::size_t> element(n);
  for (std::size_t k = 0; k < n; ++k) element[k] = k / np;
  auto at_nodes = sample_properties(cs, entry_of_element, element, disc.node_position, "node", &m.field_imports);
  m.kappa = std::move(at_nodes.kappa);
  m.sigma_s = std::move(at_nodes.sigma_s);
  m.blackbody_intensity = std::move(at_nodes.ib);
  m.temperature = std::move(at_nodes.temperature);
  m.gas = std::move(at_nodes.gas);
  if (std::any_of(cs.media.begin(), cs.media.end(), has_soot)) m.soot_fv = std::move(at_nodes.soot_fv);
  std::vector<char> scatters(cs.media.size(), 0);
  for (std::size_t e = 0; e < K; ++e)
    for (std::size_t i = 0; i < np; ++i)
      if (m.sigma_s[e * np + i] > 0) scatters[entry_of(e)] = 1;
  std::vector<double> sigma_t_nodes(n);
  for (std::size_t k = 0; k < n; ++k) sigma_t_nodes[k] = m.kappa[k] + m.sigma_s[k];
  m.properties_at_nodes = cs.solver.properties_at_nodes;
  if (m.properties_at_nodes) {  // solver.properties: nodes, the collocated form
    m.extinction = transport::ReactionTerm(std::move(sigma_t_nodes), static_cast<int>(np));
    m.scattering_term = transport::ReactionTerm(m.sigma_s, static_cast<int>(np));
    m.emission.resize(n);
    for (std::size_t k = 0; k < n; ++k) m.emission[k] = m.kappa[k] * m.blackbody_intensity[k];
  } else {
    auto at_points = [&] {
      std::vector<std::size_t> point_element(nq);
      std::vector<Vec3> x;
      x.reserve(nq);
      for (std::size_t e = 0; e < K; ++e) {
        const auto xe = disc.property_points(e);
        x.insert(x.end(), xe.begin(), xe.end());
        std::fill_n(point_element.begin() + static_cast<std::ptrdiff_t>(e * Q), Q, e);
      }
      return sample_properties(cs, entry_of_element, point_element, x, "quadrature point", nullptr);
    }();
    for (std::size_t e = 0; e < K; ++e)
      for (std::size_t q = 0; q < Q; ++q)
        if (at_points.sigma_s[e * Q + q] > 0) scatters[entry_of(e)] = 1;
    // What the solve integrates: sigma_t and sigma_s terms and the projected emission.
    std::vector<double> sigma_t_points(nq), emission_points(nq);
    for (std::size_t k = 0; k < nq; ++k) {
      sigma_t_points[k] = at_points.kappa[k] + at_points.sigma_s[k];
      emission_points[k] = at_points.kappa[k] * at_points.ib[k];
    }
    m.extinction = transport::ReactionTerm::from_points(disc, sigma_t_points, std::move(sigma_t_nodes));
    m.scattering_term = transport::ReactionTerm::from_points(disc, at_points.sigma_s, m.sigma_s);
    m.emission = transport::project_points(disc, emission_points);
    if (gas_model) {
      m.point_gas = std::move(at_points.gas);
      m.point_sigma_s = std::move(at_points.sigma_s);
      m.point_blackbody_intensity = std::move(at_points.ib);
    }
  }
  // Scattering operators, one per scattering entry.
  std::vector<int> op_of_entry(cs.media.size(), -1);
  for (std::size_t i = 0; i < cs.media.size(); ++i) {
    if (!scatters[i]) continue;
    if (!quad)
      throw InputError(fmt::format("{}: media.{}.scattering (line {}): scattering couples directions and needs an angular "
                                   "quadrature: replace 'directions' by 'angular' (see docs/case-file.md)",
                                   file, cs.media[i].group, cs.media[i].line));
    op_of_entry[i] = static_cast<int>(m.scattering.size());
    m.entry_of_operator.push_back(static_cast<int>(i));
    m.phase.push_back(make_phase(cs.media[i].phase));
    const std::string& pm = cs.angular ? cs.angular->phase_matrix : std::string("auto");
    const auto sampling = pm == "point"          ? angular::PhaseSampling::point
                          : pm == "cell-average" ? angular::PhaseSampling::cell_average
                                                 : angular::PhaseSampling::automatic;
    m.scattering.push_back(angular::scattering_moments(*quad, m.phase.back(), sampling));
    m.scattering_rank = std::max(m.scattering_rank, m.scattering.back().rank);
  }
  m.scattering_of_element.resize(K);
  for (std::size_t e = 0; e < K; ++e) m.scattering_of_element[e] = op_of_entry[entry_of(e)];
  // User sources that are not identically zero.
  std::vector<int> src_of_entry(cs.media.size(), -1);
  for (std::size_t i = 0; i < cs.media.size(); ++i) {
    const auto& src = cs.media[i].source;
    if (src.is_constant() && src(std::array<double, 6>{}) == 0.0) continue;
    src_of_entry[i] = static_cast<int>(m.source.size());
    m.source.push_back(src);
  }
  m.source_of_element.resize(K);
  for (std::size_t e = 0; e < K; ++e) m.source_of_element[e] = src_of_entry[entry_of(e)];
  return m;
}

void attach_output_points(Medium& m, const io::CaseSpec& cs, const transport::Discretization& disc, std::span<const Vec3> points) {
  const transport::PointLocator locator(disc);
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  std::vector<long> element;
  std::vector<double> weights;
  for (const auto& x : points) {
    const auto loc = locator.locate(x);
    element.push_back(loc ? static_cast<long>(loc->element) : -1);
    const Eigen::RowVectorXd w = loc ? Eigen::RowVectorXd(disc.ref.interpolation_matrix(loc->rst)) : Eigen::RowVectorXd::Zero(static_cast<Eigen::Index>(np));
    weights.insert(weights.end(), w.data(), w.data() + w.size());
  }
  attach_output_points(m, cs, disc, points, element, weights);
}

void attach_output_points(Medium& m, const io::CaseSpec& cs, const transport::Discretization& disc, std::span<const Vec3> points,
                          std::span<const long> located, std::span<const double> weights) {
  auto& out = m.output_points;
  out = {};
  out.position.assign(points.begin(), points.end());
  out.element.assign(located.begin(), located.end());
  out.weights.assign(weights.begin(), weights.end());
  std::vector<std::size_t> element;
  std::vector<Vec3> inside;
  for (std::size_t p = 0; p < points.size(); ++p)
    if (located[p] >= 0) element.push_back(static_cast<std::size_t>(located[p])), inside.push_back(points[p]);
  const auto samples = sample_properties(cs, media_entries(cs, disc), element, inside, "probe point", nullptr);
  const double nan = std::nan("");
  out.kappa.assign(points.size(), nan);
  out.blackbody_intensity.assign(points.size(), nan);
  // Outside points carry a valid state (a spectral model evaluates every point); nothing reads it.
  if (cs.model) out.gas.assign(points.size(), m.gas.empty() ? gas::GasState{} : m.gas.front());
  for (std::size_t p = 0, k = 0; p < points.size(); ++p) {
    if (out.element[p] < 0) continue;
    out.kappa[p] = samples.kappa[k];
    out.blackbody_intensity[p] = samples.ib[k];
    if (cs.model) out.gas[p] = samples.gas[k];
    ++k;
  }
}

void Walls::scale_emission(std::span<const double> a) {
  if (a.size() != emitted_.size()) throw std::logic_error("Walls::scale_emission: one weight per boundary face node");
  if (gray_emitted_.empty()) gray_emitted_ = emitted_;
  for (std::size_t k = 0; k < a.size(); ++k) emitted_[k] = gray_emitted_[k] * a[k];
}

void add_user_source(const Medium& m, const transport::Discretization& disc, const Vec3& s, std::span<double> rhs) {
  if (!m.has_source()) return;
  std::vector<io::Expression> src(m.source);  // muparser binds variables per object: one copy per call
  const std::size_t np = static_cast<std::size_t>(disc.num_nodes()), Q = disc.property.size();
  if (m.properties_at_nodes) {
    for (std::size_t e = 0; e < disc.num_elements(); ++e) {
      const int k = m.source_of_element[e];
      if (k < 0) continue;
      for (std::size_t i = 0; i < np; ++i) rhs[e * np + i] += src[static_cast<std::size_t>(k)](disc.node_position[e * np + i], s);
    }
    return;
  }
  Eigen::VectorXd values(static_cast<Eigen::Index>(Q));
  for (std::size_t e = 0; e < disc.num_elements(); ++e) {
    const int k = m.source_of_element[e];
    if (k < 0) continue;
    const auto x = disc.property_points(e);
    for (std::size_t q = 0; q < Q; ++q) values[static_cast<Eigen::Index>(q)] = src[static_cast<std::size_t>(k)](x[q], s);
    Eigen::Map<Eigen::VectorXd>(rhs.data() + e * np, static_cast<Eigen::Index>(np)) += disc.property.projection * values;
  }
}

Walls::Walls(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature* quad,
             std::vector<std::string>& warnings)
    : disc_(disc), quad_(quad), nfp_(static_cast<std::size_t>(disc.ref.num_face_nodes)) {
  const auto& mesh = *disc.mesh;
  const std::string file = cs.file.string();
  const std::size_t K = disc.num_elements(), np = static_cast<std::size_t>(disc.num_nodes());
  bool ungrouped = false;
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f)
      if (mesh.neighbour[e][f] < 0 && mesh.boundary_group[e][f] < 0 && mesh.boundary_group[e][f] != mesh::kPartitionFace) ungrouped = true;
  const auto entry_of_group = match_groups(mesh.surface_groups, cs.boundaries, "boundaries", "surface", file, ungrouped);
  if (quad) {
    for (std::size_t m = 0; m < quad->size(); ++m) {
      const Vec3& sb = quad->s_bar[m];
      v_.push_back({sb[0] / quad->w[m], sb[1] / quad->w[m], sb[2] / quad->w[m]});
    }
  }
  for (const auto& b : cs.boundaries) {
    WallModel w;
    w.group = b.group;
    w.type = b.type;
    const bool needs_quadrature = b.type != io::BoundaryType::black && b.type != io::BoundaryType::inflow;
    if (needs_quadrature && !quad)
      throw InputError(fmt::format("{}: boundaries.{} (line {}): type {} reflects or irradiates diffusely and needs an angular "
                                   "quadrature: replace 'directions' by 'angular' (see docs/case-file.md)",
                                   file, b.group, b.line, io::to_string(b.type)));
    switch (b.type) {
      case io::BoundaryType::black: w.emissivity = 1; break;
      case io::BoundaryType::gray:
      case io::BoundaryType::specular:
      case io::BoundaryType::symmetry:
        w.emissivity = b.emissivity;
        w.rho_specular = b.specular_fraction * (1 - b.emissivity);
        w.rho_diffuse = (1 - b.specular_fraction) * (1 - b.emissivity);
        break;
      case io::BoundaryType::inflow: w.emissivity = 0; w.intensity = &*b.intensity; break;
      case io::BoundaryType::irradiation: w.emissivity = 0; w.irradiation = b.flux; break;
    }
    walls_.push_back(w);
  }
  // Boundary faces (a face is a wall only where the mesh has no neighbour: an owned element's
  // partition face has its neighbour in the ghost layer, and a ghost's faces toward other ranks,
  // mesh::kPartitionFace, are no walls either).
  std::map<std::array<long long, 3>, int> reflection_of_normal;
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f) {
      if (mesh.neighbour[e][f] >= 0 || mesh.boundary_group[e][f] == mesh::kPartitionFace) continue;
      const int g = mesh.boundary_group[e][f];
      const int w = entry_of_group[g >= 0 ? static_cast<std::size_t>(g) : entry_of_group.size() - 1];
      const auto& wall = walls_[static_cast<std::size_t>(w)];
      const auto& spec = cs.boundaries[static_cast<std::size_t>(w)];
      const Vec3 n = disc.geometry[e].normal[f];
      face_.push_back(ElementFace{e, f}.packed());
      wall_of_face_.push_back(w);
      normal_.push_back(n);
      double h = kPi;
      if (quad) {
        h = 0;
        for (std::size_t m = 0; m < quad->size(); ++m) h += quad->w[m] * std::max(0.0, -dot(v_[m], n));
      }
      half_range_.push_back(h);
      diffuse_factor_.push_back(cs.angular && cs.angular->wall_flux_normalisation ? 1 / h : 1 / kPi);
      for (std::size_t j = 0; j < nfp_; ++j) {
        const auto& x = disc.node_position[e * np + static_cast<std::size_t>(disc.ref.face_nodes[f][j])];
        const double T = spec.temperature(x);
        if (!std::isfinite(T) || T < 0)
          throw InputError(fmt::format("{}: boundaries.{}.temperature (line {}) = {} at {}: the wall temperature must be finite and >= 0 K",
                                       file, spec.group, spec.line, T, at(x)));
        temperature_.push_back(T);
        emitted_.push_back(wall.emissivity * kSigma * std::pow(T, 4) / kPi);
      }
      long offset = -1, spec_offset = -1;
      int refl = -1;
      if (wall.rho_diffuse > 0) {
        offset = static_cast<long>(state_size_);
        state_size_ += nfp_;
      }
      {
        if (wall.rho_specular > 0) {
          spec_offset = static_cast<long>(specular_size_);
          specular_size_ += quad->size() * nfp_;
          std::array<long long, 3> key{};
          for (int k = 0; k < 3; ++k) key[k] = std::llround(n[k] * 1e9);
          auto it = reflection_of_normal.find(key);
          if (it == reflection_of_normal.end()) {
            it = reflection_of_normal.emplace(key, static_cast<int>(reflections_.size())).first;
            reflections_.push_back(make_reflection(n));
          }
          refl = it->second;
        }
      }
      state_offset_.push_back(offset);
      specular_offset_.push_back(spec_offset);
      reflection_of_face_.push_back(refl);
    }
  // Reflection groups: union of each ordinate with the ordinates it reflects from.
  if (quad) {
    std::vector<int> parent(quad->size());
    for (std::size_t m = 0; m < parent.size(); ++m) parent[m] = static_cast<int>(m);
    auto find = [&](int a) {
      while (parent[static_cast<std::size_t>(a)] != a) a = parent[static_cast<std::size_t>(a)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(a)])];
      return a;
    };
    for (const auto& r : reflections_)
      for (std::size_t m = 0; m < r.from.size(); ++m)
        for (const auto& [mp, coef] : r.from[m]) parent[static_cast<std::size_t>(find(static_cast<int>(m)))] = find(mp);
    std::map<int, std::size_t> index;
    for (std::size_t m = 0; m < parent.size(); ++m) {
      const int root = find(static_cast<int>(m));
      auto it = index.find(root);
      if (it == index.end()) {
        it = index.emplace(root, groups_.size()).first;
        groups_.emplace_back();
      }
      groups_[it->second].push_back(static_cast<int>(m));
    }
  }
  find_coincident_nodes();
  if (const int u = unmatched_mirrors(); u > 0)
    warnings.push_back(fmt::format("specular walls: {} mirror directions are not in the quadrature {} (walls not aligned with its "
                                   "symmetry planes); their reflected energy is spread over the nearest ordinates, conserving it",
                                   u, quad->name));
}

const Vec3& Walls::normal(std::size_t b) const { return normal_[b]; }

int Walls::unmatched_mirrors() const {
  int u = 0;
  for (const auto& r : reflections_) u += r.unmatched;
  return u;
}

Walls::Reflection Walls::make_reflection(const Vec3& n) const {
  const std::size_t M = quad_->size();
  Reflection r;
  r.from.resize(M);
  for (std::size_t mp = 0; mp < M; ++mp) {
    const double vn_out = dot(v_[mp], n);
    if (vn_out <= transport::kTangentTolerance) continue;  // not leaving through the wall
    const double flux = quad_->w[mp] * vn_out;              // energy carried into the wall
    const int mirror = quad_->reflect(static_cast<int>(mp), n);
    std::vector<std::pair<int, double>> targets;  // (incoming ordinate, share)
    if (mirror >= 0 && dot(v_[static_cast<std::size_t>(mirror)], n) < -transport::kTangentTolerance) {
      targets.push_back({mirror, 1.0});
    } else {
      // Mirror not in the set: share its energy among the three nearest incoming ordinates,
      // inversely to their angular distance; each share keeps its energy exactly.
      ++r.unmatched;
      const Vec3& s = quad_->s[mp];
      const double sn = dot(s, n);
      const Vec3 mir{s[0] - 2 * sn * n[0], s[1] - 2 * sn * n[1], s[2] - 2 * sn * n[2]};
      std::vector<std::pair<double, int>> dist;
      for (std::size_t m = 0; m < M; ++m)
        if (dot(v_[m], n) < -transport::kTangentTolerance)
          dist.push_back({std::acos(std::clamp(dot(quad_->s[m], mir), -1.0, 1.0)), static_cast<int>(m)});
      std::sort(dist.begin(), dist.end());
      const std::size_t k = std::min<std::size_t>(3, dist.size());
      double total = 0;
      for (std::size_t i = 0; i < k; ++i) total += 1 / (dist[i].first + 1e-9);
      for (std::size_t i = 0; i < k; ++i) targets.push_back({dist[i].second, 1 / (dist[i].first + 1e-9) / total});
    }
    for (const auto& [m, share] : targets) {
      const auto mu = static_cast<std::size_t>(m);
      r.from[mu].push_back({static_cast<int>(mp), share * flux / (quad_->w[mu] * -dot(v_[mu], n))});
    }
  }
  return r;
}

void Walls::inflow(int m, const Vec3& v, bool with_sources, std::span<const double> state, std::span<const double> specular,
                   std::span<double> g, std::span<const double> extra) const {
  const std::size_t np = static_cast<std::size_t>(disc_.num_nodes());
  std::vector<io::Expression> intensity;  // thread-local copies (muparser is not thread-safe)
  std::vector<int> copy_of_wall(walls_.size(), -1);
  for (std::size_t w = 0; w < walls_.size(); ++w)
    if (with_sources && walls_[w].intensity) {
      copy_of_wall[w] = static_cast<int>(intensity.size());
      intensity.push_back(*walls_[w].intensity);
    }
  for (std::size_t b = 0; b < face_.size(); ++b) {
    const auto [e, f] = ElementFace::unpack(face_[b]);
    if (transport::inflow_coefficient(disc_.geometry[e], f, v) == 0.0) continue;
    const auto w = static_cast<std::size_t>(wall_of_face_[b]);
    const WallModel& wall = walls_[w];
    const double d = diffuse_factor_[b];
    double* gb = g.data() + b * nfp_;
    for (std::size_t j = 0; j < nfp_; ++j) {
      double val = 0;
      if (with_sources) {
        val += emitted_[b * nfp_ + j] + d * wall.irradiation;
        if (!extra.empty()) val += d * extra[b * nfp_ + j];
        if (copy_of_wall[w] >= 0)
          val += intensity[static_cast<std::size_t>(copy_of_wall[w])](
              disc_.node_position[e * np + static_cast<std::size_t>(disc_.ref.face_nodes[f][j])], v);
      }
      gb[j] = val;
    }
    if (m < 0) continue;
    if (state_offset_[b] >= 0) {
      const double* st = state.data() + state_offset_[b];
      for (std::size_t j = 0; j < nfp_; ++j) gb[j] += d * wall.rho_diffuse * st[j];
    }
    if (specular_offset_[b] >= 0) {
      const double* st = specular.data() + specular_offset_[b];
      for (const auto& [mp, coef] : reflections_[static_cast<std::size_t>(reflection_of_face_[b])].from[static_cast<std::size_t>(m)]) {
        const double* tr = st + static_cast<std::size_t>(mp) * nfp_;
        for (std::size_t j = 0; j < nfp_; ++j) gb[j] += wall.rho_specular * coef * tr[j];
      }
    }
  }
}

void Walls::lift(const Vec3& v, std::span<const double> g, std::span<double> rhs) const {
  const auto& ref = disc_.ref;
  const auto np = static_cast<Eigen::Index>(disc_.num_nodes()), nfp = static_cast<Eigen::Index>(nfp_);
  for (std::size_t b = 0; b < face_.size(); ++b) {
    const std::size_t e = face_[b] / 4;
    const int f = static_cast<int>(face_[b] % 4);
    const double c = transport::inflow_coefficient(disc_.geometry[e], f, v);
    if (c == 0.0) continue;
    Eigen::Map<Eigen::VectorXd> re(rhs.data() + e * static_cast<std::size_t>(np), np);
    const Eigen::Map<const Eigen::VectorXd> gb(g.data() + b * nfp_, nfp);
    re.noalias() -= c * ref.lift.middleCols(f * nfp, nfp) * gb;
  }
}

void Walls::record(int m, std::span<const double> u, std::span<double> state) const {
  const std::size_t np = static_cast<std::size_t>(disc_.num_nodes());
  const auto mu = static_cast<std::size_t>(m);
  const Vec3& v = v_[mu];
  for (std::size_t b = 0; b < face_.size(); ++b) {  // serial: boundary work is small
    if (state_offset_[b] < 0) continue;
    const double vn = dot(v, normal_[b]);
    if (vn <= transport::kTangentTolerance) continue;
    const std::size_t e = face_[b] / 4;
    const int f = static_cast<int>(face_[b] % 4);
    double* st = state.data() + state_offset_[b];
    const int* fn = disc_.ref.face_nodes[f].data();
    for (std::size_t j = 0; j < nfp_; ++j) st[j] += quad_->w[mu] * vn * u[e * np + static_cast<std::size_t>(fn[j])];
  }
}

std::pair<double, double> Walls::record_specular(int m, std::span<const double> u, std::span<double> specular) const {
  const std::size_t np = static_cast<std::size_t>(disc_.num_nodes());
  const auto mu = static_cast<std::size_t>(m);
  double change = 0, magnitude = 0;
  for (std::size_t b = 0; b < face_.size(); ++b) {
    if (specular_offset_[b] < 0 || dot(v_[mu], normal_[b]) <= transport::kTangentTolerance) continue;
    const std::size_t e = face_[b] / 4;
    const int* fn = disc_.ref.face_nodes[face_[b] % 4].data();
    double* st = specular.data() + specular_offset_[b] + mu * nfp_;
    for (std::size_t j = 0; j < nfp_; ++j) {
      const double v = u[e * np + static_cast<std::size_t>(fn[j])];
      change = std::max(change, std::abs(v - st[j]));
      magnitude = std::max(magnitude, std::abs(v));
      st[j] = v;
    }
  }
  return {change, magnitude};
}

// Two faces' nodes are at one point when they are the same mesh vertex, or the same point of the same
// mesh edge (the reference nodes are symmetric on edges, so the barycentric of the edge's first
// vertex identifies it); a node inside a face is no other wall face's. Keys from the mesh's vertex
// numbers, not coordinates: exact, whatever the scale.
void Walls::find_coincident_nodes() {
  const auto& mesh = *disc_.mesh;
  const auto& ref = disc_.ref;
  const std::size_t nb = face_.size() * nfp_;
  std::map<int, std::vector<std::size_t>> at_vertex;
  std::map<std::pair<int, int>, std::vector<std::pair<double, std::size_t>>> on_edge;
  for (std::size_t b = 0; b < face_.size(); ++b) {
    const std::size_t e = face_[b] / 4;
    const int f = static_cast<int>(face_[b] % 4);
    for (std::size_t j = 0; j < nfp_; ++j) {
      const auto i = static_cast<std::size_t>(ref.face_nodes[f][j]);
      const std::size_t bj = b * nfp_ + j;
      const auto row = static_cast<Eigen::Index>(i);
      const auto lambda = dg::vertex_barycentrics(ref.nodes(row, 0), ref.nodes(row, 1), ref.nodes(row, 2));
      std::vector<int> on;
      for (int v = 0; v < 4; ++v)
        if (lambda[static_cast<std::size_t>(v)] > 1e-10) on.push_back(v);
      if (on.size() == 1) {
        at_vertex[mesh.tets[e][static_cast<std::size_t>(on[0])]].push_back(bj);
      } else if (on.size() == 2) {
        int a = on[0], c = on[1];
        if (mesh.tets[e][static_cast<std::size_t>(a)] > mesh.tets[e][static_cast<std::size_t>(c)]) std::swap(a, c);
        on_edge[{mesh.tets[e][static_cast<std::size_t>(a)], mesh.tets[e][static_cast<std::size_t>(c)]}].push_back(
            {lambda[static_cast<std::size_t>(a)], bj});
      }
    }
  }
  std::vector<std::vector<std::size_t>> clusters;
  for (auto& [v, nodes] : at_vertex)
    if (nodes.size() > 1) clusters.push_back(std::move(nodes));
  for (auto& [edge, nodes] : on_edge) {
    std::sort(nodes.begin(), nodes.end());
    for (std::size_t a = 0; a < nodes.size();) {
      std::size_t c = a + 1;
      while (c < nodes.size() && nodes[c].first - nodes[a].first < 1e-8) ++c;
      if (c - a > 1) {
        clusters.emplace_back();
        for (std::size_t k = a; k < c; ++k) clusters.back().push_back(nodes[k].second);
      }
      a = c;
    }
  }
  std::vector<std::vector<std::size_t>> others(nb);
  for (const auto& cluster : clusters)
    for (const std::size_t x : cluster)
      for (const std::size_t y : cluster)
        if (x != y) others[x].push_back(y);
  coincident_begin_.assign(nb + 1, 0);
  for (std::size_t bj = 0; bj < nb; ++bj) coincident_begin_[bj + 1] = coincident_begin_[bj] + others[bj].size();
  coincident_.clear();
  for (const auto& o : others) coincident_.insert(coincident_.end(), o.begin(), o.end());
  // Convex pairs: the other face's centroid lies strictly inside this face's plane (outward normal).
  coincident_convex_.assign(coincident_.size(), 0);
  for (std::size_t bj = 0; bj < nb; ++bj) {
    const std::size_t b = bj / nfp_;
    const Vec3& x = disc_.node_position[element_node(bj)];
    for (std::size_t i = coincident_begin_[bj]; i < coincident_begin_[bj + 1]; ++i) {
      const std::size_t c = coincident_[i] / nfp_;
      const auto v = disc_.element_vertices(face_[c] / 4);
      Vec3 centroid{0, 0, 0};
      double size = 0;
      for (int k = 0; k < 3; ++k) {
        const auto& p = v[static_cast<std::size_t>(dgrte::kFaceVertices[face_[c] % 4][k])];
        for (int d = 0; d < 3; ++d) centroid[static_cast<std::size_t>(d)] += p[static_cast<std::size_t>(d)] / 3;
      }
      for (int d = 0; d < 3; ++d) size = std::max(size, std::abs(centroid[static_cast<std::size_t>(d)] - x[static_cast<std::size_t>(d)]));
      const Vec3 r{centroid[0] - x[0], centroid[1] - x[1], centroid[2] - x[2]};
      coincident_convex_[i] = dot(r, normal_[b]) < -1e-8 * size;
    }
  }
}

bool Walls::enters(int m, std::size_t b) const {
  return transport::inflow_coefficient(disc_.geometry[face_[b] / 4], static_cast<int>(face_[b] % 4), v_[static_cast<std::size_t>(m)]) != 0.0;
}

double Walls::wall_intensity(int m, std::size_t bj, std::span<const double> u, std::span<const double> g) const {
  double sum = 0;
  int count = 0;
  const auto consider = [&](std::size_t c) {
    if (enters(m, c / nfp_)) sum += g[c], ++count;
  };
  consider(bj);
  // Other walls through this point: only the same element's faces, so that a distributed run (whose
  // ranks hold whole elements) gives the one-process answer; a neighbouring wall whose face belongs to
  // another element keeps the DG trace here (docs/case-file.md).
  const auto others = coincident(bj);
  const std::size_t element = face_[bj / nfp_] / 4;
  for (std::size_t i = 0; i < others.size(); ++i)
    if (convex(bj, i) && face_[others[i] / nfp_] / 4 == element) consider(others[i]);
  if (count > 0) return sum / count;
  return u[element_node(bj)];
}

void Walls::tally_wall_moments(int m, std::span<const double> u, std::span<const double> g, std::span<double> G,
                               std::span<double> qx, std::span<double> qy, std::span<double> qz) const {
  const auto mu = static_cast<std::size_t>(m);
  const double w = quad_->w[mu];
  const Vec3& sb = quad_->s_bar[mu];
  for (std::size_t b = 0; b < face_.size(); ++b) {
    const bool in = enters(m, b);
    for (std::size_t j = 0; j < nfp_; ++j) {
      const std::size_t bj = b * nfp_ + j;
      const double I = in ? g[bj] : wall_intensity(m, bj, u, g);
      G[bj] += w * I;
      qx[bj] += sb[0] * I;
      qy[bj] += sb[1] * I;
      qz[bj] += sb[2] * I;
    }
  }
}

void Walls::add_nodal(std::span<const double> nodal, std::span<double> to) const {
  for (std::size_t bj = 0; bj < face_.size() * nfp_; ++bj) to[bj] += nodal[element_node(bj)];
}

void Walls::tally(int m, std::span<const double> u, std::span<const double> g, std::span<double> q_in,
                  std::span<double> q_out, std::span<double> q_in_wall_delta) const {
  const auto mu = static_cast<std::size_t>(m);
  const Vec3& v = v_[mu];
  for (std::size_t b = 0; b < face_.size(); ++b) {
    const double wvn = quad_->w[mu] * dot(v, normal_[b]);
    if (enters(m, b)) {
      for (std::size_t j = 0; j < nfp_; ++j) q_out[b * nfp_ + j] -= wvn * g[b * nfp_ + j];
    } else {  // outflow (or tangent): the trace, or another wall's g where m enters there (edges, corners)
      for (std::size_t j = 0; j < nfp_; ++j) {
        const std::size_t bj = b * nfp_ + j;
        const double I = wall_intensity(m, bj, u, g);
        q_in[bj] += wvn * I;
        if (!q_in_wall_delta.empty()) q_in_wall_delta[bj] += wvn * (I - u[element_node(bj)]);
      }
    }
  }
}

}  // namespace dgrte::problem
