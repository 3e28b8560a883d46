#include "io/case_file.hpp"

#include "common/error.hpp"
#include "dg/reference_tet.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace dgrte::io {
namespace {

// Context for messages: "<file>: <key path> (line N): ...".
struct Ctx {
  std::string file;
  std::string where(const std::string& path, const YAML::Node& node) const {
    const auto mark = node.Mark();
    if (mark.line >= 0) return fmt::format("{}: {} (line {})", file, path, mark.line + 1);
    return fmt::format("{}: {}", file, path);
  }
  [[noreturn]] void fail(const std::string& path, const YAML::Node& node, const std::string& what) const {
    throw InputError(fmt::format("{}: {}", where(path, node), what));
  }
};

// The key node of `key` in a map (its Mark is the key's line), or `map` itself if absent.
YAML::Node key_node(const YAML::Node& map, const std::string& key) {
  for (const auto& kv : map)
    if (kv.first.as<std::string>() == key) return kv.first;
  return map;
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& k : s) out += (out.empty() ? "" : ", ") + k;
  return out;
}

void check_map(const Ctx& c, const YAML::Node& node, const std::string& path, const std::set<std::string>& allowed) {
  if (!node.IsMap()) c.fail(path, node, "expected a mapping of keys");
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())  // `{[a]: 1}` or `? {x: 1}`: YAML allows any key, a case file only names
      c.fail(path, kv.first, fmt::format("a key must be a plain name; allowed here: {}", join(allowed)));
    const auto key = kv.first.as<std::string>();
    if (!allowed.count(key))
      c.fail(path.empty() ? key : path + "." + key, kv.first,
             fmt::format("unknown key '{}'; allowed here: {}", key, join(allowed)));
  }
}

template <typename T>
T scalar(const Ctx& c, const YAML::Node& node, const std::string& path, const char* type_name) {
  if (!node.IsScalar()) c.fail(path, node, fmt::format("expected {}", type_name));
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    c.fail(path, node, fmt::format("expected {}, got \"{}\"", type_name, node.Scalar()));
  }
}

// A number, or a constant expression ("1/sqrt(3)", "2*pi"): users type both.
double number(const Ctx& c, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) c.fail(path, node, "expected a number");
  try {
    return node.as<double>();
  } catch (const YAML::Exception&) {
  }
  double v = 0;
  try {
    const Expression e(node.Scalar(), {}, c.where(path, node));
    v = e(std::span<const double>());
  } catch (const InputError&) {
    c.fail(path, node, fmt::format("expected a number or a constant expression such as 1/sqrt(3), got \"{}\"", node.Scalar()));
  }
  return v;
}

Vec3 vec3(const Ctx& c, const YAML::Node& node, const std::string& path) {
  if (!node.IsSequence() || node.size() != 3) c.fail(path, node, "expected a list of three numbers [x, y, z]");
  return {number(c, node[0], path + "[0]"), number(c, node[1], path + "[1]"), number(c, node[2], path + "[2]")};
}

Expression expression(const Ctx& c, const YAML::Node& node, const std::string& path, const std::vector<std::string>& vars) {
  if (!node.IsScalar()) c.fail(path, node, "expected an expression (a string or a number)");
  return Expression(node.Scalar(), vars, c.where(path, node));
}

MeshSpec parse_mesh(const Ctx& c, const YAML::Node& n, const std::filesystem::path& base) {
  check_map(c, n, "mesh", {"file", "geo", "size"});
  MeshSpec m;
  if (n["file"] && n["geo"]) c.fail("mesh", n, "give either 'file' (a .msh) or 'geo' (a .geo with 'size'), not both");
  if (n["file"]) {
    m.as_written = scalar<std::string>(c, n["file"], "mesh.file", "a file name");
    m.file = base / m.as_written;
    m.where = c.where("mesh.file", n["file"]);
    if (n["size"]) c.fail("mesh.size", n["size"], "'size' applies to 'geo' only");
  } else if (n["geo"]) {
    m.as_written = scalar<std::string>(c, n["geo"], "mesh.geo", "a file name");
    m.geo = base / m.as_written;
    m.where = c.where("mesh.geo", n["geo"]);
    if (!n["size"]) c.fail("mesh", n, "'geo' needs 'size' (target element size in metres)");
    m.size = number(c, n["size"], "mesh.size");
    if (!(m.size > 0)) c.fail("mesh.size", n["size"], "must be positive");
  } else {
    c.fail("mesh", n, "needs 'file' (a Gmsh .msh) or 'geo' plus 'size'");
  }
  return m;
}

MediumSpec::Phase parse_phase(const Ctx& c, const YAML::Node& n, const std::string& p) {
  MediumSpec::Phase ph;
  ph.where = c.where(p, n);
  if (n.IsScalar()) {
    ph.type = n.Scalar();
    if (ph.type != "isotropic") c.fail(p, n, fmt::format("'{}' needs parameters: write {{type: {}, ...}}", ph.type, ph.type));
    return ph;
  }
  check_map(c, n, p, {"type", "g", "a1", "coefficients", "name"});
  if (!n["type"]) c.fail(p, n, "missing 'type' (isotropic, linear, henyey-greenstein, legendre or kim-lee)");
  ph.type = scalar<std::string>(c, n["type"], p + ".type", "a phase-function type");
  auto need = [&](const char* key) {
    if (!n[key]) c.fail(p, n, fmt::format("type {} needs '{}'", ph.type, key));
    return n[key];
  };
  auto only = [&](std::set<std::string> keys) {
    for (const auto& kv : n) {
      const auto k = kv.first.as<std::string>();
      if (k != "type" && !keys.count(k)) c.fail(p + "." + k, kv.first, fmt::format("'{}' does not apply to type {}", k, ph.type));
    }
  };
  if (ph.type == "isotropic") {
    only({});
  } else if (ph.type == "linear") {
    only({"a1"});
    ph.a1 = number(c, need("a1"), p + ".a1");
    if (!(std::abs(ph.a1) <= 1)) c.fail(p + ".a1", n["a1"], "the linear phase function 1 + a1 mu is negative unless |a1| <= 1");
  } else if (ph.type == "henyey-greenstein") {
    only({"g"});
    ph.g = number(c, need("g"), p + ".g");
    if (!(std::abs(ph.g) < 1)) c.fail(p + ".g", n["g"], "the asymmetry factor g must satisfy |g| < 1");
  } else if (ph.type == "legendre") {
    only({"coefficients"});
    const auto& a = need("coefficients");
    if (!a.IsSequence() || a.size() == 0) c.fail(p + ".coefficients", a, "expected a list [a0, a1, ...] with a0 = 1");
    for (std::size_t i = 0; i < a.size(); ++i) ph.coefficients.push_back(number(c, a[i], fmt::format("{}.coefficients[{}]", p, i)));
    if (std::abs(ph.coefficients[0] - 1) > 1e-12)
      c.fail(p + ".coefficients[0]", a[0], fmt::format("a0 = {} but the phase function is normalised with a0 = 1", ph.coefficients[0]));
  } else if (ph.type == "kim-lee") {
    only({"name"});
    ph.name = scalar<std::string>(c, need("name"), p + ".name", "a name");
    if (ph.name != "F1" && ph.name != "F2" && ph.name != "F3" && ph.name != "B1" && ph.name != "B2")
      c.fail(p + ".name", n["name"], fmt::format("unknown Kim & Lee phase function '{}'; use F1, F2, F3, B1 or B2", ph.name));
  } else {
    c.fail(p + ".type", n["type"],
           fmt::format("unknown phase function '{}'; use isotropic, linear, henyey-greenstein, legendre or kim-lee", ph.type));
  }
  return ph;
}

// media.X.field: {file, <quantity>: <array name>..., outside: error | nearest, max_distance}.
FieldSpec parse_field(const Ctx& c, const YAML::Node& n, const std::string& p, const std::filesystem::path& base, bool gas_model) {
  static const std::vector<std::string> quantities{"temperature", "pressure", "x_h2o", "x_co2", "x_co", "soot_fv"};
  if (!n.IsMap()) c.fail(p, n, "expected a mapping {file: cfd.vtu, temperature: T, x_h2o: ARRAY, ...}");
  check_map(c, n, p, {"file", "temperature", "pressure", "x_h2o", "x_co2", "x_co", "soot_fv", "outside", "max_distance"});
  if (!n["file"]) c.fail(p, n, "missing 'file' (a .vtu, .vtk or .csv file, relative to the case file)");
  FieldSpec f;
  const auto file = scalar<std::string>(c, n["file"], p + ".file", "a file name");
  f.file = std::filesystem::path(file).is_relative() ? base / file : std::filesystem::path(file);
  for (const auto& q : quantities) {
    if (!n[q]) continue;
    if (!gas_model && q != "temperature" && q != "soot_fv")
      c.fail(p + "." + q, n[q], "without a gas model ('model:') a field can give only the temperature and soot_fv");
    f.arrays.emplace_back(q, scalar<std::string>(c, n[q], p + "." + q, "an array name of the file"));
  }
  if (f.arrays.empty()) c.fail(p, n, "map at least one quantity to an array of the file, e.g. temperature: T");
  if (n["outside"]) {
    const auto o = scalar<std::string>(c, n["outside"], p + ".outside", "error or nearest");
    if (o != "error" && o != "nearest") c.fail(p + ".outside", n["outside"], "expected 'error' (default) or 'nearest'");
    f.nearest_outside = o == "nearest";
  }
  if (n["max_distance"]) {
    f.max_distance = number(c, n["max_distance"], p + ".max_distance");
    if (!(f.max_distance > 0)) c.fail(p + ".max_distance", n["max_distance"], "must be > 0 m");
  }
  f.where = c.where(p, n);
  return f;
}

std::vector<MediumSpec> parse_media(const Ctx& c, const YAML::Node& n, bool gas_model, const std::filesystem::path& base) {
  if (!n.IsMap() || n.size() == 0) c.fail("media", n, "expected a mapping from volume physical-group names (or \"*\") to media");
  std::vector<MediumSpec> media;
  static const char* const gas_keys[] = {"pressure", "x_h2o", "x_co2", "x_co"};
  for (const auto& kv : n) {
    const auto group = kv.first.as<std::string>();
    const std::string p = "media." + group;
    const YAML::Node& m = kv.second;
    check_map(c, m, p, {"kappa", "Ib", "temperature", "source", "scattering", "phase_function", "pressure", "x_h2o", "x_co2", "x_co",
                        "soot_fv", "field"});
    std::optional<FieldSpec> field;
    if (m["field"]) {
      field = parse_field(c, m["field"], p + ".field", base, gas_model);
      for (const auto& [q, array] : field->arrays)
        if (m[q]) c.fail(p + "." + q, m[q], fmt::format("'{}' is also read from the field file (array '{}'); keep one of them", q, array));
    }
    const bool field_temperature = field && field->array_for("temperature");
    if (gas_model) {
      // The model gives kappa and the emission from the gas state (docs/case-file.md, "Gas models").
      if (m["kappa"])
        c.fail(p + ".kappa", m["kappa"], "with a gas model ('model:') the absorption coefficient comes from the model; remove "
                                         "kappa (a gray gas is model: {type: gray, kappa: ...})");
      if (m["Ib"]) c.fail(p + ".Ib", m["Ib"], "with a gas model give the gas 'temperature' [K], not Ib");
      if (!m["temperature"] && !field_temperature)
        c.fail(p, m, "missing 'temperature' (the gas temperature [K], needed by the gas model; or field: {file, temperature: ARRAY})");
    } else {
      if (!m["kappa"]) c.fail(p, m, "missing 'kappa' (absorption coefficient, 1/m)");
      for (const char* k : gas_keys)
        if (m[k])
          c.fail(p + "." + k, m[k], "the gas composition is used only with a spectral gas model: add a 'model:' block "
                                    "(e.g. model: {type: wsgg}) or remove the key");
      if (m["Ib"] && (m["temperature"] || field_temperature)) c.fail(p, m, "give either 'Ib' or 'temperature', not both");
      if ((m["soot_fv"] || (field && field->array_for("soot_fv"))) && m["Ib"])
        c.fail(p + ".soot_fv", m["soot_fv"] ? m["soot_fv"] : m, "soot absorbs by its temperature: give 'temperature' [K], not Ib, "
                                                               "with soot_fv");
      if (!m["Ib"] && !m["temperature"] && !field_temperature) c.fail(p, m, "missing 'Ib' (blackbody intensity) or 'temperature'");
    }
    MediumSpec s;
    s.group = group;
    if (m["kappa"]) s.kappa = expression(c, m["kappa"], p + ".kappa", kSpaceVars);
    s.source = m["source"] ? expression(c, m["source"], p + ".source", kSpaceDirectionVars)
                           : Expression("0", kSpaceDirectionVars, p + ".source");
    s.scattering = Expression("0", kSpaceVars, p + ".scattering");
    if (m["Ib"]) s.blackbody_intensity = expression(c, m["Ib"], p + ".Ib", kSpaceVars);
    if (m["temperature"]) s.temperature = expression(c, m["temperature"], p + ".temperature", kSpaceVars);
    if (m["scattering"]) s.scattering = expression(c, m["scattering"], p + ".scattering", kSpaceVars);
    if (m["phase_function"]) s.phase = parse_phase(c, m["phase_function"], p + ".phase_function");
    if (m["pressure"]) s.pressure = expression(c, m["pressure"], p + ".pressure", kSpaceVars);
    if (m["x_h2o"]) s.x_h2o = expression(c, m["x_h2o"], p + ".x_h2o", kSpaceVars);
    if (m["x_co2"]) s.x_co2 = expression(c, m["x_co2"], p + ".x_co2", kSpaceVars);
    if (m["x_co"]) s.x_co = expression(c, m["x_co"], p + ".x_co", kSpaceVars);
    if (m["soot_fv"]) s.soot_fv = expression(c, m["soot_fv"], p + ".soot_fv", kSpaceVars);
    s.field = std::move(field);
    s.line = kv.first.Mark().line + 1;
    media.push_back(std::move(s));
  }
  return media;
}

std::vector<BoundarySpec> parse_boundaries(const Ctx& c, const YAML::Node& n) {
  if (!n.IsMap() || n.size() == 0)
    c.fail("boundaries", n, "expected a mapping from surface physical-group names (or \"*\") to boundary conditions");
  std::vector<BoundarySpec> out;
  for (const auto& kv : n) {
    const auto group = kv.first.as<std::string>();
    const std::string p = "boundaries." + group;
    const YAML::Node& b = kv.second;
    check_map(c, b, p, {"type", "temperature", "intensity", "emissivity", "specular_fraction", "reflectivity", "flux"});
    BoundarySpec s;
    s.group = group;
    s.line = kv.first.Mark().line + 1;
    const std::string type = b["type"] ? scalar<std::string>(c, b["type"], p + ".type", "a boundary type") : "black";
    const std::map<std::string, std::pair<BoundaryType, std::set<std::string>>> types{
        {"black", {BoundaryType::black, {"temperature"}}},
        {"gray", {BoundaryType::gray, {"temperature", "emissivity", "specular_fraction"}}},
        {"specular", {BoundaryType::specular, {"temperature", "reflectivity"}}},
        {"symmetry", {BoundaryType::symmetry, {}}},
        {"inflow", {BoundaryType::inflow, {"intensity"}}},
        {"irradiation", {BoundaryType::irradiation, {"flux"}}}};
    const auto t = types.find(type);
    if (t == types.end())
      c.fail(p + ".type", b["type"],
             fmt::format("unknown boundary type '{}'; use black, gray, specular, symmetry, inflow or irradiation", type));
    s.type = t->second.first;
    for (const auto& key : b) {
      const auto k = key.first.as<std::string>();
      if (k != "type" && !t->second.second.count(k))
        c.fail(p + "." + k, key.first, fmt::format("'{}' does not apply to type: {} (it takes: {})", k, type,
                                                  t->second.second.empty() ? "nothing else" : join(t->second.second)));
    }
    if (b["temperature"]) s.temperature = expression(c, b["temperature"], p + ".temperature", kSpaceVars);
    if (b["temperature"] && s.temperature.is_constant() && !(s.temperature(Vec3{0, 0, 0}) >= 0))
      c.fail(p + ".temperature", b["temperature"], "temperature must be >= 0 K");
    if (s.type == BoundaryType::gray) {
      if (!b["emissivity"]) c.fail(p, b, "type: gray needs 'emissivity' (0 < emissivity <= 1)");
      s.emissivity = number(c, b["emissivity"], p + ".emissivity");
      if (!(s.emissivity > 0 && s.emissivity <= 1)) c.fail(p + ".emissivity", b["emissivity"], "emissivity must be in (0, 1]");
      if (b["specular_fraction"]) {
        s.specular_fraction = number(c, b["specular_fraction"], p + ".specular_fraction");
        if (!(s.specular_fraction >= 0 && s.specular_fraction <= 1))
          c.fail(p + ".specular_fraction", b["specular_fraction"], "specular_fraction must be in [0, 1]");
      }
    } else if (s.type == BoundaryType::specular) {
      if (!b["reflectivity"]) c.fail(p, b, "type: specular needs 'reflectivity' (0 <= reflectivity <= 1)");
      s.reflectivity = number(c, b["reflectivity"], p + ".reflectivity");
      if (!(s.reflectivity >= 0 && s.reflectivity <= 1)) c.fail(p + ".reflectivity", b["reflectivity"], "reflectivity must be in [0, 1]");
      s.emissivity = 1 - s.reflectivity;
      s.specular_fraction = 1;
    } else if (s.type == BoundaryType::symmetry) {
      s.emissivity = 0;
      s.reflectivity = 1;
      s.specular_fraction = 1;
    } else if (s.type == BoundaryType::inflow) {
      if (!b["intensity"]) c.fail(p, b, "type: inflow needs 'intensity' (expression of x, y, z, sx, sy, sz)");
      s.intensity = expression(c, b["intensity"], p + ".intensity", kSpaceDirectionVars);
    } else if (s.type == BoundaryType::irradiation) {
      if (!b["flux"]) c.fail(p, b, "type: irradiation needs 'flux' (incoming diffuse flux, W/m^2)");
      s.flux = number(c, b["flux"], p + ".flux");
      if (!(s.flux >= 0)) c.fail(p + ".flux", b["flux"], "flux must be >= 0 W/m^2");
    }
    out.push_back(std::move(s));
  }
  return out;
}

SolverSpec parse_solver(const Ctx& c, const YAML::Node& n) {
  check_map(c, n, "solver", {"method", "preconditioner", "rtol", "max_iterations", "preconditioner_memory_mb", "inner",
                              "outer", "outer_tolerance", "outer_max_iterations", "positivity", "threads", "properties",
                              "spectral_block_mb", "paths", "batches", "seed", "probe_rays", "spectral_sampling", "backend", "device", "precision",
                              "device_memory_mb"});
  SolverSpec s;
  if (n["threads"]) {
    const auto v = scalar<std::string>(c, n["threads"], "solver.threads", "directions or levels");
    if (v != "directions" && v != "levels")
      c.fail("solver.threads", n["threads"], fmt::format("unknown value '{}'; use directions (several ordinates at once) or levels "
                                                          "(the elements of one sweep level at once)", v));
    s.threads_over_levels = v == "levels";
  }
  if (n["properties"]) {
    const auto v = scalar<std::string>(c, n["properties"], "solver.properties", "quadrature-points or nodes");
    if (v != "quadrature-points" && v != "nodes")
      c.fail("solver.properties", n["properties"], fmt::format("unknown value '{}'; use quadrature-points (the default: the medium "
                                                              "evaluated where the integrals need it) or nodes (interpolated at the DG nodes)", v));
    s.properties_at_nodes = v == "nodes";
  }
  if (n["positivity"]) {
    s.positivity = scalar<bool>(c, n["positivity"], "solver.positivity", "true or false");
    s.positivity_where = c.where("solver.positivity", n["positivity"]);
  }
  if (n["inner"]) {
    const auto v = scalar<std::string>(c, n["inner"], "solver.inner", "an inner solver name");
    if (v == "sweep") s.inner = InnerMethod::sweep;
    else if (v == "bicgstab") s.inner = InnerMethod::bicgstab;
    else c.fail("solver.inner", n["inner"], fmt::format("unknown inner solver '{}'; use sweep or bicgstab", v));
  }
  if (n["outer"]) {
    const auto v = scalar<std::string>(c, n["outer"], "solver.outer", "an outer solver name");
    if (v == "source-iteration") s.outer = OuterMethod::source_iteration;
    else if (v == "gmres") s.outer = OuterMethod::gmres;
    else if (v == "bicgstab") s.outer = OuterMethod::bicgstab;
    else c.fail("solver.outer", n["outer"], fmt::format("unknown outer solver '{}'; use gmres, bicgstab or source-iteration", v));
  }
  if (n["outer_tolerance"]) {
    s.outer_tolerance = number(c, n["outer_tolerance"], "solver.outer_tolerance");
    if (!(s.outer_tolerance > 0 && s.outer_tolerance < 1)) c.fail("solver.outer_tolerance", n["outer_tolerance"], "must be in (0, 1)");
  }
  if (n["outer_max_iterations"]) {
    s.outer_max_iterations = scalar<int>(c, n["outer_max_iterations"], "solver.outer_max_iterations", "an integer");
    if (s.outer_max_iterations < 1) c.fail("solver.outer_max_iterations", n["outer_max_iterations"], "must be >= 1");
  }
  if (n["method"]) {
    s.method = scalar<std::string>(c, n["method"], "solver.method", "a method name");
    if (s.method == "bicgstab") s.method = "dg";
    if (s.method != "dg" && s.method != "montecarlo")
      c.fail("solver.method", n["method"], fmt::format("unknown method '{}'; use dg (discrete ordinates, the default) or montecarlo", s.method));
  }
  if (s.monte_carlo())  // discrete-ordinates settings a Monte Carlo run would accept and never read
    for (const char* key : {"preconditioner", "rtol", "max_iterations", "preconditioner_memory_mb", "inner", "outer",
                            "outer_tolerance", "outer_max_iterations", "positivity", "threads", "properties"})
      if (n[key])
        c.fail(std::string("solver.") + key, n[key],
               fmt::format("'{}' is a discrete-ordinates (DG) solver setting that solver.method: montecarlo does not use; "
                           "remove it (or use solver.method: dg)", key));
  // Monte Carlo counts: integers given as numbers so that 1e7 reads naturally.
  auto count = [&](const char* key, double lo, double hi) -> std::uint64_t {
    const std::string path = std::string("solver.") + key;
    if (!s.monte_carlo()) c.fail(path, n[key], fmt::format("'{}' applies to solver.method: montecarlo only", key));
    const double v = number(c, n[key], path);
    if (!(v >= lo && v <= hi && v == std::floor(v))) c.fail(path, n[key], fmt::format("must be a whole number in [{:g}, {:g}]", lo, hi));
    return static_cast<std::uint64_t>(v);
  };
  if (n["batches"]) s.mc.batches = static_cast<int>(count("batches", 2, 10000));
  if (n["paths"]) s.mc.paths = count("paths", 1, 1e15);
  if (n["seed"]) s.mc.seed = count("seed", 0, 9007199254740992.0);
  if (n["probe_rays"]) s.mc.probe_rays = count("probe_rays", 1, 1e15);
  if (n["spectral_sampling"]) {
    if (!s.monte_carlo()) c.fail("solver.spectral_sampling", n["spectral_sampling"], "'spectral_sampling' applies to solver.method: montecarlo only");
    const auto v = scalar<std::string>(c, n["spectral_sampling"], "solver.spectral_sampling", "per_path or per_point");
    if (v != "per_path" && v != "per_point")
      c.fail("solver.spectral_sampling", n["spectral_sampling"],
             fmt::format("unknown value '{}'; use per_path (each batch samples the spectral points by power, the default) or per_point", v));
    s.mc.per_path = v == "per_path";
  }
  if (s.monte_carlo() && s.mc.paths < static_cast<std::uint64_t>(s.mc.batches))
    c.fail("solver.paths", n["paths"] ? n["paths"] : n, fmt::format("{} paths cannot fill {} batches", s.mc.paths, s.mc.batches));
  if (s.monte_carlo() && s.mc.probe_rays < static_cast<std::uint64_t>(s.mc.batches))
    c.fail("solver.probe_rays", n["probe_rays"] ? n["probe_rays"] : n,
           fmt::format("{} probe rays cannot fill {} batches", s.mc.probe_rays, s.mc.batches));
  if (n["preconditioner"]) {
    const auto p = scalar<std::string>(c, n["preconditioner"], "solver.preconditioner", "a preconditioner name");
    if (p == "none") s.preconditioner = Preconditioner::none;
    else if (p == "block-jacobi") s.preconditioner = Preconditioner::block_jacobi;
    else if (p == "partial-block-jacobi") s.preconditioner = Preconditioner::partial_block_jacobi;
    else if (p == "sweep") s.preconditioner = Preconditioner::sweep;
    else c.fail("solver.preconditioner", n["preconditioner"],
                fmt::format("unknown preconditioner '{}'; use partial-block-jacobi, block-jacobi, sweep or none", p));
  }
  if (n["rtol"]) {
    s.rtol = number(c, n["rtol"], "solver.rtol");
    if (!(s.rtol > 0 && s.rtol < 1)) c.fail("solver.rtol", n["rtol"], "must be in (0, 1)");
  }
  if (n["max_iterations"]) {
    s.max_iterations = scalar<int>(c, n["max_iterations"], "solver.max_iterations", "an integer");
    if (s.max_iterations < 1) c.fail("solver.max_iterations", n["max_iterations"], "must be >= 1");
  }
  if (n["preconditioner_memory_mb"]) {
    s.preconditioner_memory_mb = number(c, n["preconditioner_memory_mb"], "solver.preconditioner_memory_mb");
    if (s.preconditioner_memory_mb < 0) c.fail("solver.preconditioner_memory_mb", n["preconditioner_memory_mb"], "must be >= 0");
  }
  if (n["spectral_block_mb"]) {
    s.spectral_block_mb = number(c, n["spectral_block_mb"], "solver.spectral_block_mb");
    if (!(s.spectral_block_mb >= 0)) c.fail("solver.spectral_block_mb", n["spectral_block_mb"], "must be >= 0 (MB; 0 = one point at a time)");
  }
  if (n["backend"]) {
    s.backend = scalar<std::string>(c, n["backend"], "solver.backend", "cpu, opencl or auto");
    s.backend_where = c.where("solver.backend", n["backend"]);
    if (s.backend != "cpu" && s.backend != "opencl" && s.backend != "auto")
      c.fail("solver.backend", n["backend"], fmt::format("unknown backend '{}'; use cpu, opencl or auto", s.backend));
  }
  if (n["device"]) s.device = scalar<std::string>(c, n["device"], "solver.device", "auto, P:D (platform:device) or part of a device name");
  if (n["precision"]) {
    const auto v = scalar<std::string>(c, n["precision"], "solver.precision", "double or single");
    if (v != "double" && v != "single") c.fail("solver.precision", n["precision"], fmt::format("unknown precision '{}'; use double or single", v));
    s.single_precision = v == "single";
  }
  if (n["device_memory_mb"]) {
    s.device_memory_mb = number(c, n["device_memory_mb"], "solver.device_memory_mb");
    if (!(s.device_memory_mb >= 0)) c.fail("solver.device_memory_mb", n["device_memory_mb"], "must be >= 0 (MB; 0 = 3/4 of the device)");
  }
  const bool device_keys = n["device"] || n["precision"] || n["device_memory_mb"];
  if (device_keys && s.backend == "cpu")
    c.fail("solver.backend", n["backend"] ? n["backend"] : n,
           "solver.device, solver.precision and solver.device_memory_mb apply to the OpenCL backend: add backend: opencl (or auto)");
  if (s.single_precision && s.backend != "opencl")
    c.fail("solver.precision", n["precision"], "single precision exists on the OpenCL backend only: add backend: opencl");
  if (s.single_precision) {
    // Float resolves ~1e-7 relative: the inner solves stop at 1e-6 and the outer iteration, which
    // sees their round-off, at 1e-5 (docs/opencl.md). Defaults move there; tighter requests fail.
    if (!n["rtol"]) s.rtol = SolverSpec::kSingleRtol;
    else if (s.rtol < SolverSpec::kSingleRtol)
      c.fail("solver.rtol", n["rtol"], fmt::format("single precision resolves about 1e-7 relative: use rtol >= {:g}, or precision: double", SolverSpec::kSingleRtol));
    if (!n["outer_tolerance"]) s.outer_tolerance = SolverSpec::kSingleOuterTolerance;
    else if (s.outer_tolerance < SolverSpec::kSingleOuterTolerance)
      c.fail("solver.outer_tolerance", n["outer_tolerance"],
             fmt::format("single precision: the transport sweeps carry ~1e-6 round-off; use outer_tolerance >= {:g}, or precision: double",
                         SolverSpec::kSingleOuterTolerance));
  }
  if (s.monte_carlo() && s.single_precision)
    c.fail("solver.precision", n["precision"], "the Monte Carlo tracer runs in double precision (its tallies and walks need it): remove precision: single");
  return s;
}

AngularSpec parse_angular(const Ctx& c, const YAML::Node& n, const std::filesystem::path& base) {
  const std::string p = "angular";
  check_map(c, n, p, {"quadrature", "order", "polar", "azimuthal", "axis", "file", "wall_flux_normalisation", "phase_matrix"});
  AngularSpec a;
  a.where = c.where(p, n);
  if (!n["quadrature"]) c.fail(p, n, "missing 'quadrature' (sn, sn-heat, tn, fv, product or file)");
  a.quadrature = scalar<std::string>(c, n["quadrature"], p + ".quadrature", "a quadrature name");
  const std::map<std::string, std::set<std::string>> keys{{"sn", {"order"}},           {"sn-heat", {"order"}},
                                                          {"tn", {"order"}},           {"fv", {"polar", "azimuthal", "axis"}},
                                                          {"product", {"polar", "azimuthal", "axis"}}, {"file", {"file"}}};
  const auto k = keys.find(a.quadrature);
  if (k == keys.end())
    c.fail(p + ".quadrature", n["quadrature"], fmt::format("unknown quadrature '{}'; use sn, sn-heat, tn, fv, product or file", a.quadrature));
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    if (key != "quadrature" && key != "wall_flux_normalisation" && key != "phase_matrix" && !k->second.count(key))
      c.fail(p + "." + key, kv.first, fmt::format("'{}' does not apply to quadrature {} (it takes: {})", key, a.quadrature, join(k->second)));
  }
  for (const auto& key : k->second)
    if (key != "axis" && !n[key]) c.fail(p, n, fmt::format("quadrature {} needs '{}'", a.quadrature, key));
  if (n["order"]) {
    a.order = scalar<int>(c, n["order"], p + ".order", "an integer");
    if (a.quadrature == "sn" && (a.order < 2 || a.order > 16 || a.order % 2))
      c.fail(p + ".order", n["order"], "level-symmetric S_N needs an even order 2..16");
    if (a.quadrature == "sn-heat" && a.order != 4 && a.order != 6 && a.order != 8)
      c.fail(p + ".order", n["order"], "the heat-transfer S_N sets exist for orders 4, 6 and 8");
    if (a.quadrature == "tn" && (a.order < 1 || a.order > 64)) c.fail(p + ".order", n["order"], "T_N needs an order 1..64");
  }
  if (n["polar"]) {
    a.polar = scalar<int>(c, n["polar"], p + ".polar", "an integer");
    if (a.polar < 1 || (a.quadrature == "product" && a.polar % 2))
      c.fail(p + ".polar", n["polar"], a.quadrature == "product" ? "needs an even number >= 2 (half-range Gauss on each side)" : "must be >= 1");
  }
  if (n["azimuthal"]) {
    a.azimuthal = scalar<int>(c, n["azimuthal"], p + ".azimuthal", "an integer");
    if (a.azimuthal < 1) c.fail(p + ".azimuthal", n["azimuthal"], "must be >= 1");
  }
  if (n["axis"]) {
    const auto ax = scalar<std::string>(c, n["axis"], p + ".axis", "x, y or z");
    if (ax == "x") a.axis = 0;
    else if (ax == "y") a.axis = 1;
    else if (ax == "z") a.axis = 2;
    else c.fail(p + ".axis", n["axis"], "axis must be x, y or z");
  }
  if (n["file"]) a.file = base / scalar<std::string>(c, n["file"], p + ".file", "a file name");
  if (n["wall_flux_normalisation"])
    a.wall_flux_normalisation = scalar<bool>(c, n["wall_flux_normalisation"], p + ".wall_flux_normalisation", "true or false");
  if (n["phase_matrix"]) {
    a.phase_matrix = scalar<std::string>(c, n["phase_matrix"], p + ".phase_matrix", "auto, cell-average or point");
    if (a.phase_matrix != "auto" && a.phase_matrix != "cell-average" && a.phase_matrix != "point")
      c.fail(p + ".phase_matrix", n["phase_matrix"], fmt::format("unknown phase_matrix '{}'; use auto, cell-average or point", a.phase_matrix));
  }
  return a;
}

// output.final_gather: false, true, or {rays} (a fixed count) or {tolerance, min_rays, max_rays}.
void parse_final_gather(const Ctx& c, const YAML::Node& fg, OutputSpec& o) {
  o.final_gather_where = c.where("output.final_gather", fg);
  if (fg.IsScalar()) {
    o.final_gather = scalar<bool>(c, fg, "output.final_gather", "true, false or a map {tolerance, min_rays, max_rays} or {rays}");
    return;
  }
  check_map(c, fg, "output.final_gather", {"rays", "tolerance", "min_rays", "max_rays"});
  o.final_gather = true;
  auto rays = [&](const char* key) {
    const std::string name = std::string("output.final_gather.") + key;
    const double r = number(c, fg[key], name);
    if (!(r >= 1 && r <= 1e7 && r == std::floor(r))) c.fail(name, fg[key], "must be a whole number in [1, 1e7]");
    return static_cast<int>(r);
  };
  if (fg["rays"]) {
    for (const char* key : {"tolerance", "min_rays", "max_rays"})
      if (fg[key])
        c.fail(std::string("output.final_gather.") + key, fg[key],
               "'rays' fixes the number of rays per point; remove it to let the tolerance choose (or remove this key)");
    o.final_gather_min_rays = o.final_gather_max_rays = rays("rays");
    o.final_gather_tolerance = 0;
    return;
  }
  if (fg["min_rays"]) o.final_gather_min_rays = rays("min_rays");
  if (fg["max_rays"]) o.final_gather_max_rays = rays("max_rays");
  if (o.final_gather_max_rays < o.final_gather_min_rays)
    c.fail("output.final_gather.max_rays", fg["max_rays"] ? fg["max_rays"] : fg,
           fmt::format("max_rays ({}) is below min_rays ({})", o.final_gather_max_rays, o.final_gather_min_rays));
  if (fg["tolerance"]) {
    o.final_gather_tolerance = number(c, fg["tolerance"], "output.final_gather.tolerance");
    if (!(o.final_gather_tolerance > 0 && o.final_gather_tolerance < 1))
      c.fail("output.final_gather.tolerance", fg["tolerance"], "must be in (0, 1): the relative error each point's rays stop at");
  }
}

OutputSpec parse_output(const Ctx& c, const YAML::Node& n) {
  check_map(c, n, "output", {"directory", "vtk", "linear", "probes", "intensities", "final_gather", "error_indicator"});
  OutputSpec o;
  if (const auto& fg = n["final_gather"]) parse_final_gather(c, fg, o);
  if (n["directory"]) o.directory = scalar<std::string>(c, n["directory"], "output.directory", "a directory name");
  if (n["vtk"]) o.vtk = scalar<bool>(c, n["vtk"], "output.vtk", "true or false");
  if (n["linear"]) o.linear = scalar<bool>(c, n["linear"], "output.linear", "true or false");
  if (n["intensities"]) o.intensities = scalar<bool>(c, n["intensities"], "output.intensities", "true or false");
  if (n["error_indicator"]) {
    o.error_indicator = scalar<bool>(c, n["error_indicator"], "output.error_indicator", "true or false");
    o.error_indicator_where = c.where("output.error_indicator", n["error_indicator"]);
  }
  if (n["probes"]) {
    const auto& ps = n["probes"];
    if (!ps.IsSequence()) c.fail("output.probes", ps, "expected a list of {name, from, to, points}");
    std::set<std::string> names;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::string p = fmt::format("output.probes[{}]", i);
      check_map(c, ps[i], p, {"name", "from", "to", "points", "wall"});
      for (const char* k : {"name", "from", "to", "points"})
        if (!ps[i][k]) c.fail(p, ps[i], fmt::format("missing '{}'", k));
      ProbeSpec s{scalar<std::string>(c, ps[i]["name"], p + ".name", "a name"), vec3(c, ps[i]["from"], p + ".from"),
                  vec3(c, ps[i]["to"], p + ".to"), scalar<int>(c, ps[i]["points"], p + ".points", "an integer"), "", ""};
      if (ps[i]["wall"]) s.wall = scalar<std::string>(c, ps[i]["wall"], p + ".wall", "a surface group name");
      s.where = c.where(p, ps[i]);
      if (s.points < 1) c.fail(p + ".points", ps[i]["points"], "must be >= 1");
      if (s.name.empty() || s.name.find_first_of("/\\ ") != std::string::npos)
        c.fail(p + ".name", ps[i]["name"], "must be a non-empty file-name-safe word (no spaces or slashes)");
      if (!names.insert(s.name).second) c.fail(p + ".name", ps[i]["name"], fmt::format("duplicate probe name '{}'", s.name));
      o.probes.push_back(s);
    }
  }
  return o;
}

}  // namespace

const char* to_string(OuterMethod m) {
  switch (m) {
    case OuterMethod::source_iteration: return "source-iteration";
    case OuterMethod::gmres: return "gmres";
    case OuterMethod::bicgstab: return "bicgstab";
  }
  return "?";
}

const char* to_string(InnerMethod m) { return m == InnerMethod::sweep ? "sweep" : "bicgstab"; }

const char* to_string(BoundaryType t) {
  switch (t) {
    case BoundaryType::black: return "black";
    case BoundaryType::gray: return "gray";
    case BoundaryType::specular: return "specular";
    case BoundaryType::symmetry: return "symmetry";
    case BoundaryType::inflow: return "inflow";
    case BoundaryType::irradiation: return "irradiation";
  }
  return "?";
}

const char* to_string(RefineQuantity q) {
  switch (q) {
    case RefineQuantity::G: return "G";
    case RefineQuantity::wall_flux: return "wall_flux";
    case RefineQuantity::both: return "both";
    case RefineQuantity::divq: return "divq";
  }
  return "?";
}

const char* to_string(RefineNorm n) {
  switch (n) {
    case RefineNorm::l2: return "l2";
    case RefineNorm::max: return "max";
    case RefineNorm::probes: return "probes";
  }
  return "?";
}

const char* to_string(Preconditioner p) {
  switch (p) {
    case Preconditioner::none: return "none";
    case Preconditioner::block_jacobi: return "block-jacobi";
    case Preconditioner::partial_block_jacobi: return "partial-block-jacobi";
    case Preconditioner::sweep: return "sweep";
  }
  return "?";
}

void check_mesh_file_exists(const MeshSpec& m) {
  const auto& path = m.file.empty() ? m.geo : m.file;
  std::error_code ec;
  if (path.empty() || std::filesystem::exists(path, ec)) return;
  const auto absolute = std::filesystem::absolute(path, ec);
  const bool relative = std::filesystem::path(m.as_written).is_relative();
  throw InputError(fmt::format("{}: the mesh file '{}' does not exist (looked for {}{}); check the name, or give an absolute path",
                               m.where, m.as_written, absolute.lexically_normal().string(),
                               relative ? "; relative paths are taken from the case file's folder" : ""));
}

namespace {
// What a spectral gas model cannot take yet: sources and irradiation given as a total, with no
// spectrum to split over the model's spectral points.
void check_spectral_case(const Ctx& c, const YAML::Node& root, const CaseSpec& cs) {
  const std::string why = "is a total over the spectrum, and a spectral gas model would need its spectral distribution; ";
  if (root["collimated"])
    c.fail("collimated", root["collimated"], "a collimated beam " + why + "run it as a gray case (no 'model:')");
  for (const auto& b : cs.boundaries)
    if (b.type == BoundaryType::inflow || b.type == BoundaryType::irradiation)
      c.fail("boundaries." + b.group, root["boundaries"][b.group],
             std::string("an '") + to_string(b.type) + "' boundary " + why +
                 "with a gas model use black or gray walls with a temperature (a hot opening is a black wall at its temperature)");
  for (const auto& kv : root["media"])
    if (kv.second["source"])
      c.fail("media." + kv.first.as<std::string>() + ".source", kv.second["source"],
             "a volume source " + why + "with a gas model the medium emits from its temperature");
  if (root["exact"] && !root["angular"])
    c.fail("exact", root["exact"], "with a gas model 'exact' is the spectrally integrated intensity, compared through G in an "
                                   "'angular:' run; a 'directions:' run has no G: remove it or use an angular set");
}
}  // namespace

// refine: {target, quantity, norm, max_cycles, max_dofs, strategy} (docs/case-file.md, "Adaptive refinement").
RefineSpec parse_refine(const Ctx& c, const YAML::Node& n, const CaseSpec& cs) {
  RefineSpec r;
  r.where = c.where("refine", n);
  if (!n.IsMap()) c.fail("refine", n, "expected a map {target, quantity, norm, max_cycles, max_dofs, strategy}");
  check_map(c, n, "refine", {"target", "quantity", "norm", "max_cycles", "max_dofs", "strategy"});
  if (n["target"]) {
    r.target = number(c, n["target"], "refine.target");
    if (!(r.target > 0 && r.target < 1))
      c.fail("refine.target", n["target"], "must be in (0, 1): the estimated error relative to the norm of the quantity (0.005 = 0.5 %)");
  }
  if (n["norm"]) {
    const auto v = scalar<std::string>(c, n["norm"], "refine.norm", "l2, max or probes");
    if (v == "l2") r.norm = RefineNorm::l2;
    else if (v == "max") r.norm = RefineNorm::max;
    else if (v == "probes") r.norm = RefineNorm::probes;
    else c.fail("refine.norm", n["norm"], "use l2 (the error over the whole domain), max (the largest nodal error, relative to the "
                                          "largest value) or probes (the largest error on the output.probes lines)");
  }
  if (n["quantity"]) {
    const auto q = scalar<std::string>(c, n["quantity"], "refine.quantity", "G, wall_flux, both or divq");
    if (q == "G") r.quantity = RefineQuantity::G;
    else if (q == "wall_flux") r.quantity = RefineQuantity::wall_flux;
    else if (q == "both") r.quantity = RefineQuantity::both;
    else if (q == "divq") r.quantity = RefineQuantity::divq;
    else c.fail("refine.quantity", n["quantity"], "use G, wall_flux, both or divq");
  }
  if (n["max_cycles"]) {
    r.max_cycles = scalar<int>(c, n["max_cycles"], "refine.max_cycles", "an integer");
    if (r.max_cycles < 1) c.fail("refine.max_cycles", n["max_cycles"], "must be >= 1 (solves, the first included)");
  }
  if (n["max_dofs"]) {
    const double d = number(c, n["max_dofs"], "refine.max_dofs");
    if (!(d >= 1)) c.fail("refine.max_dofs", n["max_dofs"], "must be >= 1: the most DG unknowns per ordinate a cycle may have");
    r.max_dofs = static_cast<std::size_t>(d);
  }
  if (n["strategy"]) {
    const auto st = scalar<std::string>(c, n["strategy"], "refine.strategy", "h or p");
    if (st == "h") r.strategy = RefineStrategy::h;
    else if (st == "p") r.strategy = RefineStrategy::p;
    else c.fail("refine.strategy", n["strategy"], "use h (re-mesh the .geo finer where the error is) or p (raise the order)");
  }
  if (r.strategy == RefineStrategy::h && cs.mesh.geo.empty())
    c.fail("refine.strategy", n["strategy"] ? n["strategy"] : n,
           "h refinement re-meshes the case's geometry, and this case gives only mesh.file: give mesh.geo and mesh.size, or use "
           "strategy: p (raises the order on the same mesh)");
  return r;
}

// refine.norm: probes measures the quantity on the case's probe lines: G and div q on volume probes,
// the wall flux on wall probes; a case without the kind it needs cannot be measured.
void check_refine_probes(const Ctx& c, const YAML::Node& n, const RefineSpec& r, const std::vector<ProbeSpec>& probes) {
  const bool volume = std::any_of(probes.begin(), probes.end(), [](const ProbeSpec& p) { return p.wall.empty(); });
  const bool wall = std::any_of(probes.begin(), probes.end(), [](const ProbeSpec& p) { return !p.wall.empty(); });
  const bool needs_volume = r.quantity != RefineQuantity::wall_flux, needs_wall = r.quantity == RefineQuantity::wall_flux || r.quantity == RefineQuantity::both;
  if (needs_volume && !volume)
    c.fail("refine.norm", n["norm"], fmt::format("probes measures {} on the volume probe lines, and output.probes has none: add a line "
                                                 "{{name, from, to, points}} where you read the result, or use norm: l2 or max",
                                                 r.quantity == RefineQuantity::both ? "G" : to_string(r.quantity)));
  if (needs_wall && !wall)
    c.fail("refine.norm", n["norm"], "probes measures the wall flux on the wall probe lines, and output.probes has none: add a line "
                                     "{name, wall: GROUP, from, to, points}, or use norm: l2 or max");
}

// Keys a Monte Carlo run would accept and never read: each is an error naming the key and the method,
// like an unknown key (`angular:` may stay, so that one case file switches between the two methods).
void reject_discrete_ordinates_outputs(const Ctx& c, const YAML::Node& root) {
  const std::string why = "solver.method: montecarlo";
  if (root["refine"])
    c.fail("refine", root["refine"], fmt::format("adaptive refinement follows the DG error indicator; {} has its own statistical "
                                                 "error instead: remove it, or use solver.method: dg", why));
  if (root["output"] && root["output"]["error_indicator"])
    c.fail("output.error_indicator", root["output"]["error_indicator"],
           fmt::format("the error indicator compares a DG solution with one of order p + 1; {} has none: remove it", why));
  if (root["exact"])
    c.fail("exact", root["exact"], fmt::format("'exact' is compared with the discrete-ordinates intensity; {} has no "
                                               "intensity per direction: remove it or use solver.method: dg", why));
  const auto& out = root["output"];
  if (out["final_gather"])
    c.fail("output.final_gather", out["final_gather"],
           fmt::format("the final gather recomputes a discrete-ordinates run's wall fluxes by rays; {} already traces rays: "
                       "remove it", why));
  if (out["intensities"])
    c.fail("output.intensities", out["intensities"],
           fmt::format("{} writes no intensity per ordinate: remove 'intensities' or use solver.method: dg", why));
}

CaseSpec parse_case_checked(const std::string& yaml_text, const std::filesystem::path& file);

// Every value is type-checked where it is read (a message naming the key); a YAML conversion that
// slips past those checks still names the file, line and column rather than escaping as an
// internal error (found by fuzzing: tests/fuzz).
CaseSpec parse_case(const std::string& yaml_text, const std::filesystem::path& file) {
  try {
    return parse_case_checked(yaml_text, file);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: line {}, column {}: unexpected value ({}); see docs/case-file.md for the key's type",
                                 file.string(), e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

CaseSpec parse_case_checked(const std::string& yaml_text, const std::filesystem::path& file) {
  const Ctx c{file.string()};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: not valid YAML (line {}, column {}): {}", file.string(), e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a YAML mapping with keys mesh, order, directions, media, boundaries", file.string()));
  check_map(c, root, "", {"mesh", "order", "directions", "angular", "media", "boundaries", "collimated", "solver", "exact", "output",
                          "model", "refine"});
  for (const char* k : {"mesh", "media", "boundaries"})
    if (!root[k]) throw InputError(fmt::format("{}: missing required key '{}' (see docs/case-file.md)", file.string(), k));
  // Monte Carlo traces the full angular problem and needs no angular set.
  const auto& method = root["solver"] && root["solver"].IsMap() ? root["solver"]["method"] : YAML::Node();
  const bool monte_carlo = method && method.IsScalar() && method.as<std::string>() == "montecarlo";
  if (monte_carlo && root["directions"])
    c.fail("directions", root["directions"], "solver.method montecarlo traces every direction; remove 'directions' (or use 'angular' "
                                             "for a DG run of the same case)");
  if (!root["directions"] && !root["angular"] && !monte_carlo)
    throw InputError(fmt::format("{}: give 'angular' (a quadrature: radiative heat transfer) or 'directions' (single-direction transport)", file.string()));
  if (root["directions"] && root["angular"])
    c.fail("directions", root["directions"], "give either 'angular' or 'directions', not both");

  CaseSpec cs;
  cs.file = file;
  cs.name = file.stem().string();
  const auto base = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  cs.mesh = parse_mesh(c, root["mesh"], base);
  if (root["order"]) {
    cs.order = scalar<int>(c, root["order"], "order", "an integer");
    if (cs.order < dg::kMinOrder || cs.order > dg::kMaxOrder)
      c.fail("order", root["order"], fmt::format("DG order {} is not supported; use {}..{}", cs.order, dg::kMinOrder, dg::kMaxOrder));
  }
  if (root["angular"]) cs.angular = parse_angular(c, root["angular"], base);
  const auto& dirs = root["directions"];
  if (dirs && (!dirs.IsSequence() || dirs.size() == 0))  // an empty value's mark is the next token: name the key's line
    c.fail("directions", dirs.IsNull() ? key_node(root, "directions") : dirs, "expected a non-empty list of [sx, sy, sz]");
  for (std::size_t i = 0; dirs && i < dirs.size(); ++i) {
    const std::string p = fmt::format("directions[{}]", i);
    auto d = vec3(c, dirs[i], p);
    const double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(norm > 1e-8)) c.fail(p, dirs[i], "direction has zero length");
    // Rounded unit vectors (9 digits, 1/sqrt(3) typed as 0.57735) are normalised silently; a length off by
    // more than 1e-6 is probably not meant as a unit vector, so say so.
    if (std::abs(norm - 1.0) > 1e-6)
      cs.warnings.push_back(fmt::format("{}: length {:.15g} normalised to 1", c.where(p, dirs[i]), norm));
    for (auto& v : d) v /= norm;
    cs.directions.push_back(d);
  }
  if (const auto& model = root["model"]) {
    if (!model.IsMap()) c.fail("model", model, "expected a mapping such as {type: wsgg} (the same block as dgrte slab's model)");
    if (!root["angular"] && !monte_carlo) c.fail("model", model, "a spectral gas model needs an angular run ('angular:'), not 'directions'");
    cs.model = std::make_shared<const YAML::Node>(model);
  }
  // `model: {type: gray}` with kappa in the media is the plain gray run (kappa of x, y, z).
  bool gray_media_kappa = false;
  if (cs.model && (*cs.model)["type"] && (*cs.model)["type"].IsScalar() && (*cs.model)["type"].as<std::string>() == "gray" &&
      root["media"].IsMap())
    for (const auto& kv : root["media"])
      if (kv.second.IsMap() && kv.second["kappa"]) gray_media_kappa = true;
  if (gray_media_kappa) {
    if ((*cs.model)["kappa"])
      c.fail("model.kappa", (*cs.model)["kappa"], "kappa is given both in the gray model and in media; keep one of them");
    check_map(c, *cs.model, "model", {"type"});
    cs.model.reset();
  }
  cs.media = parse_media(c, root["media"], cs.model != nullptr, base);
  cs.boundaries = parse_boundaries(c, root["boundaries"]);
  if (root["collimated"]) {
    const auto& beams = root["collimated"];
    if (!beams.IsSequence()) c.fail("collimated", beams, "expected a list of {boundary, direction, flux}");
    if (!root["angular"] && !monte_carlo) c.fail("collimated", beams, "collimated irradiation needs an angular run ('angular:')");
    for (std::size_t i = 0; i < beams.size(); ++i) {
      const std::string p = fmt::format("collimated[{}]", i);
      check_map(c, beams[i], p, {"boundary", "direction", "flux"});
      for (const char* k : {"boundary", "direction", "flux"})
        if (!beams[i][k]) c.fail(p, beams[i], fmt::format("missing '{}'", k));
      CollimatedSpec b;
      b.boundary = scalar<std::string>(c, beams[i]["boundary"], p + ".boundary", "a surface group name");
      b.direction = vec3(c, beams[i]["direction"], p + ".direction");
      const double len = std::sqrt(b.direction[0] * b.direction[0] + b.direction[1] * b.direction[1] + b.direction[2] * b.direction[2]);
      if (!(len > 1e-8)) c.fail(p + ".direction", beams[i]["direction"], "direction has zero length");
      for (auto& v : b.direction) v /= len;
      b.flux = number(c, beams[i]["flux"], p + ".flux");
      if (!(b.flux >= 0)) c.fail(p + ".flux", beams[i]["flux"], "flux must be >= 0 W/m^2");
      b.where = c.where(p, beams[i]);
      cs.collimated.push_back(b);
    }
  }
  if (cs.model) check_spectral_case(c, root, cs);
  if (root["solver"]) cs.solver = parse_solver(c, root["solver"]);
  if (root["exact"]) cs.exact = expression(c, root["exact"], "exact", kSpaceDirectionVars);
  if (root["output"]) cs.output = parse_output(c, root["output"]);
  if (monte_carlo) reject_discrete_ordinates_outputs(c, root);
  if (root["refine"]) {
    cs.refine = parse_refine(c, root["refine"], cs);
    cs.output.error_indicator = true;  // each cycle estimates its error
    if (!root["output"] || !root["output"]["error_indicator"]) cs.output.error_indicator_where = cs.refine->where;
    if (cs.refine->norm == RefineNorm::probes) check_refine_probes(c, root["refine"], *cs.refine, cs.output.probes);
  }
  if (cs.output.error_indicator) {
    const bool asked = root["output"] && root["output"]["error_indicator"];
    const auto& key = asked ? root["output"]["error_indicator"] : root["refine"];
    const std::string name = asked ? "output.error_indicator" : "refine";
    if (!cs.angular)
      c.fail(name, key, "the error indicator estimates the error of G and the wall flux of an angular run: add an "
                        "'angular:' set (a 'directions:' run compares with 'exact' instead)");
    if (cs.order + 1 > 8)
      c.fail(name, key, fmt::format("the error indicator solves at order p + 1 = {}, above the largest order 8; use order <= 7", cs.order + 1));
  }
  return cs;
}

CaseSpec read_case(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("{}: cannot open the case file (check the path)", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_case(ss.str(), file);
}

}  // namespace dgrte::io
