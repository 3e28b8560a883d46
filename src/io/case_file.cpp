#include "io/case_file.hpp"

#include "common/error.hpp"
#include "dg/reference_tet.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
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

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& k : s) out += (out.empty() ? "" : ", ") + k;
  return out;
}

void check_map(const Ctx& c, const YAML::Node& node, const std::string& path, const std::set<std::string>& allowed) {
  if (!node.IsMap()) c.fail(path, node, "expected a mapping of keys");
  for (const auto& kv : node) {
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

double number(const Ctx& c, const YAML::Node& node, const std::string& path) {
  return scalar<double>(c, node, path, "a number");
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
    m.file = base / scalar<std::string>(c, n["file"], "mesh.file", "a file name");
    if (n["size"]) c.fail("mesh.size", n["size"], "'size' applies to 'geo' only");
  } else if (n["geo"]) {
    m.geo = base / scalar<std::string>(c, n["geo"], "mesh.geo", "a file name");
    if (!n["size"]) c.fail("mesh", n, "'geo' needs 'size' (target element size in metres)");
    m.size = number(c, n["size"], "mesh.size");
    if (!(m.size > 0)) c.fail("mesh.size", n["size"], "must be positive");
  } else {
    c.fail("mesh", n, "needs 'file' (a Gmsh .msh) or 'geo' plus 'size'");
  }
  return m;
}

std::vector<MediumSpec> parse_media(const Ctx& c, const YAML::Node& n) {
  if (!n.IsMap() || n.size() == 0) c.fail("media", n, "expected a mapping from volume physical-group names (or \"*\") to media");
  std::vector<MediumSpec> media;
  for (const auto& kv : n) {
    const auto group = kv.first.as<std::string>();
    const std::string p = "media." + group;
    const YAML::Node& m = kv.second;
    check_map(c, m, p, {"kappa", "Ib", "temperature", "source"});
    if (!m["kappa"]) c.fail(p, m, "missing 'kappa' (absorption coefficient, 1/m)");
    if (m["Ib"] && m["temperature"]) c.fail(p, m, "give either 'Ib' or 'temperature', not both");
    if (!m["Ib"] && !m["temperature"]) c.fail(p, m, "missing 'Ib' (blackbody intensity) or 'temperature'");
    MediumSpec s{group, expression(c, m["kappa"], p + ".kappa", kSpaceVars), std::nullopt, std::nullopt,
                 m["source"] ? expression(c, m["source"], p + ".source", kSpaceDirectionVars)
                             : Expression("0", kSpaceDirectionVars, p + ".source")};
    if (m["Ib"]) s.blackbody_intensity = expression(c, m["Ib"], p + ".Ib", kSpaceVars);
    if (m["temperature"]) s.temperature = expression(c, m["temperature"], p + ".temperature", kSpaceVars);
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
    check_map(c, b, p, {"type", "temperature", "intensity"});
    BoundarySpec s;
    s.group = group;
    const std::string type = b["type"] ? scalar<std::string>(c, b["type"], p + ".type", "a boundary type") : "black";
    if (type == "black") {
      s.type = BoundaryType::black;
      if (b["intensity"]) c.fail(p + ".intensity", b["intensity"], "'intensity' applies to type: inflow only");
      if (b["temperature"]) s.temperature = number(c, b["temperature"], p + ".temperature");
      if (s.temperature < 0) c.fail(p + ".temperature", b["temperature"], "temperature must be >= 0 K");
    } else if (type == "inflow") {
      s.type = BoundaryType::inflow;
      if (b["temperature"]) c.fail(p + ".temperature", b["temperature"], "'temperature' applies to type: black only");
      if (!b["intensity"]) c.fail(p, b, "type: inflow needs 'intensity' (expression of x, y, z, sx, sy, sz)");
      s.intensity = expression(c, b["intensity"], p + ".intensity", kSpaceDirectionVars);
    } else {
      c.fail(p + ".type", b["type"], fmt::format("unknown boundary type '{}'; use black or inflow", type));
    }
    out.push_back(std::move(s));
  }
  return out;
}

SolverSpec parse_solver(const Ctx& c, const YAML::Node& n) {
  check_map(c, n, "solver", {"method", "preconditioner", "rtol", "max_iterations", "preconditioner_memory_mb"});
  SolverSpec s;
  if (n["method"]) {
    s.method = scalar<std::string>(c, n["method"], "solver.method", "a method name");
    if (s.method != "bicgstab") c.fail("solver.method", n["method"], fmt::format("unknown method '{}'; use bicgstab", s.method));
  }
  if (n["preconditioner"]) {
    const auto p = scalar<std::string>(c, n["preconditioner"], "solver.preconditioner", "a preconditioner name");
    if (p == "none") s.preconditioner = Preconditioner::none;
    else if (p == "block-jacobi") s.preconditioner = Preconditioner::block_jacobi;
    else if (p == "partial-block-jacobi") s.preconditioner = Preconditioner::partial_block_jacobi;
    else c.fail("solver.preconditioner", n["preconditioner"],
                fmt::format("unknown preconditioner '{}'; use partial-block-jacobi, block-jacobi or none", p));
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
  return s;
}

OutputSpec parse_output(const Ctx& c, const YAML::Node& n) {
  check_map(c, n, "output", {"directory", "vtk", "linear", "probes"});
  OutputSpec o;
  if (n["directory"]) o.directory = scalar<std::string>(c, n["directory"], "output.directory", "a directory name");
  if (n["vtk"]) o.vtk = scalar<bool>(c, n["vtk"], "output.vtk", "true or false");
  if (n["linear"]) o.linear = scalar<bool>(c, n["linear"], "output.linear", "true or false");
  if (n["probes"]) {
    const auto& ps = n["probes"];
    if (!ps.IsSequence()) c.fail("output.probes", ps, "expected a list of {name, from, to, points}");
    std::set<std::string> names;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::string p = fmt::format("output.probes[{}]", i);
      check_map(c, ps[i], p, {"name", "from", "to", "points"});
      for (const char* k : {"name", "from", "to", "points"})
        if (!ps[i][k]) c.fail(p, ps[i], fmt::format("missing '{}'", k));
      ProbeSpec s{scalar<std::string>(c, ps[i]["name"], p + ".name", "a name"), vec3(c, ps[i]["from"], p + ".from"),
                  vec3(c, ps[i]["to"], p + ".to"), scalar<int>(c, ps[i]["points"], p + ".points", "an integer")};
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

const char* to_string(Preconditioner p) {
  switch (p) {
    case Preconditioner::none: return "none";
    case Preconditioner::block_jacobi: return "block-jacobi";
    case Preconditioner::partial_block_jacobi: return "partial-block-jacobi";
  }
  return "?";
}

CaseSpec parse_case(const std::string& yaml_text, const std::filesystem::path& file) {
  const Ctx c{file.string()};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: not valid YAML (line {}, column {}): {}", file.string(), e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a YAML mapping with keys mesh, order, directions, media, boundaries", file.string()));
  check_map(c, root, "", {"mesh", "order", "directions", "media", "boundaries", "solver", "exact", "output"});
  for (const char* k : {"mesh", "directions", "media", "boundaries"})
    if (!root[k]) throw InputError(fmt::format("{}: missing required key '{}' (see docs/case-file.md)", file.string(), k));

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
  const auto& dirs = root["directions"];
  if (!dirs.IsSequence() || dirs.size() == 0) c.fail("directions", dirs, "expected a non-empty list of [sx, sy, sz]");
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const std::string p = fmt::format("directions[{}]", i);
    auto d = vec3(c, dirs[i], p);
    const double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(norm > 1e-8)) c.fail(p, dirs[i], "direction has zero length");
    if (std::abs(norm - 1.0) > 1e-12) {
      cs.warnings.push_back(fmt::format("{}: length {:.15g} normalised to 1", c.where(p, dirs[i]), norm));
      for (auto& v : d) v /= norm;
    }
    cs.directions.push_back(d);
  }
  cs.media = parse_media(c, root["media"]);
  cs.boundaries = parse_boundaries(c, root["boundaries"]);
  if (root["solver"]) cs.solver = parse_solver(c, root["solver"]);
  if (root["exact"]) cs.exact = expression(c, root["exact"], "exact", kSpaceDirectionVars);
  if (root["output"]) cs.output = parse_output(c, root["output"]);
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
