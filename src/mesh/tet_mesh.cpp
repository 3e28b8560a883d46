// Reading, validating and connecting linear tetrahedral meshes through the Gmsh SDK.
#include "mesh/tet_mesh.hpp"

#include "isolation/isolated_read.hpp"

#include <fmt/format.h>
#include <gmsh.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "common/error.hpp"

namespace dgrte::mesh {
namespace {

namespace fs = std::filesystem;

constexpr int kGmshTriangle = 2;     // 3-node triangle
constexpr int kGmshTetrahedron = 4;  // 4-node tetrahedron
// Relative volume below which a tet counts as degenerate: |vol| < kDegenerate * h_max^3.
constexpr double kDegenerate = 1e-12;

std::string fmt_point(const Vec3& p) { return fmt::format("({:.6g}, {:.6g}, {:.6g})", p[0], p[1], p[2]); }

std::string group_label(const PhysicalGroup& g) {
  return g.name.empty() ? fmt::format("#{}", g.tag) : fmt::format("\"{}\"", g.name);
}

std::string surface_label(const TetMesh& m, int g) {
  if (g >= 0 && static_cast<std::size_t>(g) < m.surface_groups.size()) return group_label(m.surface_groups[g]);
  return fmt::format("#{} (surface group index)", g);
}

std::string source_label(const TetMesh& m) { return m.source.empty() ? std::string("<mesh>") : m.source; }

std::size_t element_tag(const TetMesh& m, std::size_t e) { return e < m.tet_tags.size() ? m.tet_tags[e] : e; }

Vec3 tet_centroid(const TetMesh& m, std::size_t e) {
  Vec3 c{0, 0, 0};
  for (int v : m.tets[e])
    for (int d = 0; d < 3; ++d) c[d] += 0.25 * m.vertices[v][d];
  return c;
}

Vec3 face_centroid(const TetMesh& m, std::size_t e, int f) {
  Vec3 c{0, 0, 0};
  for (int k : kFaceVertices[f])
    for (int d = 0; d < 3; ++d) c[d] += m.vertices[m.tets[e][k]][d] / 3.0;
  return c;
}

double max_edge(const TetMesh& m, std::size_t e) {
  double h = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) h = std::max(h, norm(sub(m.vertices[m.tets[e][i]], m.vertices[m.tets[e][j]])));
  return h;
}

// ---------------------------------------------------------------------------------------------
// Gmsh session: initialize/finalize around one read, serialized (Gmsh is one global state).
std::mutex& gmsh_mutex() {
  static std::mutex m;
  return m;
}

// How Gmsh 4.8 reports errors: every error goes through Msg::Error, which (i) passes the message to
// the logger callback (gmsh::logger::start/get) when General.Verbosity >= 1, (ii) stores it for
// gmsh::logger::getLastError (but several API calls, e.g. open and generate, clear that store
// again, so a later check misses it), and (iii) with General.AbortOnError = 2 (the API default)
// throws the message as a std::string, not a std::exception. Throwing from inside the .geo parser
// leaves stale lexer input behind in the library that breaks the *next* parse (even after
// finalize/initialize), so errors are not thrown here (AbortOnError = 0) but collected from the
// logger after every call. Gmsh also ignores a missing file silently (checked before).
class GmshSession {
 public:
  explicit GmshSession(fs::path file) : lock_(gmsh_mutex()), file_(std::move(file)) {
#ifdef _OPENMP
    omp_threads_ = omp_get_max_threads();  // Gmsh sets the OpenMP thread count to 1: restored below
#endif
    // readConfigFiles=false: a user's ~/.gmshrc must not change how a mesh is read or generated.
    gmsh::initialize(0, nullptr, false);
    try {
      gmsh::option::setNumber("General.Terminal", 0);
      gmsh::option::setNumber("General.Verbosity", 1);  // errors only reach the logger
      gmsh::option::setNumber("General.AbortOnError", 0);
      gmsh::logger::start();
      gmsh::logger::getLastError(last_error_);
    } catch (...) {
      shutdown();
      throw;
    }
  }
  ~GmshSession() { shutdown(); }
  GmshSession(const GmshSession&) = delete;
  GmshSession& operator=(const GmshSession&) = delete;

  // Runs Gmsh API calls; any error Gmsh reports becomes an InputError naming the file.
  template <class F>
  void call(std::string_view what, std::string_view hint, F&& f) {
    std::string message;
    try {
      f();
    } catch (const InputError&) {
      throw;
    } catch (const std::string& s) {
      message = s;
    } catch (const char* s) {
      message = s ? s : "unknown error";
    } catch (const std::exception& e) {
      message = e.what();
    }
    try {
      std::vector<std::string> log;
      gmsh::logger::get(log);
      for (std::size_t i = seen_; i < log.size() && message.empty(); ++i)
        if (log[i].rfind("Error", 0) == 0) {
          const auto colon = log[i].find(": ");
          message = colon == std::string::npos ? log[i] : log[i].substr(colon + 2);
        }
      seen_ = log.size();
      std::string last;
      gmsh::logger::getLastError(last);
      if (message.empty() && !last.empty() && last != last_error_) message = last;
      last_error_ = last;
    } catch (...) {  // the logger itself failed: keep what we have
    }
    if (message.find("bad_alloc") != std::string::npos)  // inside the child's memory cap (isolated_read.hpp)
      message = "it ran out of memory (" + message + "): a count the file declares is larger than its data";
    if (!message.empty())
      throw InputError(
          fmt::format("{}: Gmsh failed to {}: {}{}{}", file_.string(), what, message, hint.empty() ? "" : "; ", hint));
  }

 private:
  void shutdown() noexcept {
    try {
      gmsh::logger::stop();
    } catch (...) {
    }
    try {
      gmsh::finalize();
    } catch (...) {  // nothing sensible to do in a destructor
    }
#ifdef _OPENMP
    omp_set_num_threads(omp_threads_);
#endif
  }
  int omp_threads_ = 1;
  std::lock_guard<std::mutex> lock_;
  fs::path file_;
  std::string last_error_;
  std::size_t seen_ = 0;
};

// ---------------------------------------------------------------------------------------------
// File checks done before Gmsh sees the file (Gmsh 4.8 silently ignores a missing file).
void check_readable(const fs::path& file, std::string_view kind) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    // a case file has already made its mesh path absolute (relative to the case file's folder)
    const std::string hint = file.is_relative()
                                 ? fmt::format(" (relative paths are taken from the working directory {})",
                                               fs::current_path(ec).string())
                                 : std::string();
    throw InputError(fmt::format("{}: {} file does not exist; check the path{}", file.string(), kind, hint));
  }
  if (!fs::is_regular_file(file, ec))
    throw InputError(fmt::format("{}: not a regular file; give the path of a {} file", file.string(), kind));
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw InputError(
        fmt::format("{}: cannot open the {} file for reading; check its permissions", file.string(), kind));
}

// A .msh file (2.2 or 4.x, ASCII or binary) starts with "$MeshFormat" and its version, and ends with a
// "$End..." line. Anything else is refused before Gmsh sees it: gmsh::open picks its reader from the
// content, and malformed post-processing views ("$View", "$NodeData" ...) crash Gmsh 4.8's view readers
// (found by fuzzing, tests/fuzz/corpus/mesh_msh). Gmsh 4.8 also accepts a file cut off after the last
// complete element without complaint; catch that here.
void check_msh_format(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.rfind("$MeshFormat", 0) != 0)
    throw InputError(fmt::format("{}: not a Gmsh mesh file (a .msh file starts with \"$MeshFormat\"); write the mesh "
                                 "from Gmsh in format 2.2 or 4.1 (File > Export > .msh, or gmsh -3 -format msh41)",
                                 file.string()));
  std::istringstream version_line(head.substr(11));  // "$MeshFormat\n4.1 0 8"
  double version = 0;
  version_line >> version;
  if (!(version == 2.2 || (version >= 4.0 && version < 5.0)))
    throw InputError(fmt::format("{}: line 2: Gmsh mesh format version {} is not read; save the mesh in format 2.2 or "
                                 "4.1 (gmsh -format msh41)", file.string(), version_line ? fmt::format("{:g}", version) : "(unreadable)"));
  // Post-processing sections: the mesh alone is read. Scan in blocks (the markers are ASCII in binary files too).
  static constexpr std::array<std::string_view, 5> kViews = {"\n$NodeData", "\n$ElementData", "\n$ElementNodeData",
                                                              "\n$View", "\n$PostFormat"};
  // The buffer keeps the last bytes of the previous block in front, so a marker split across two
  // blocks is still found; lines are counted once per block, and up to the marker only when one is found.
  constexpr std::size_t kBlock = 1 << 20, kKeep = 24;
  std::string buffer(kKeep + kBlock, '\0');
  std::size_t kept = 0, line = 1;
  in.clear();
  in.seekg(0);
  while (in) {
    in.read(buffer.data() + kept, static_cast<std::streamsize>(kBlock));
    const std::string_view text(buffer.data(), kept + static_cast<std::size_t>(in.gcount()));
    for (const auto& marker : kViews)
      if (const auto at = text.find(marker); at != std::string_view::npos)
        throw InputError(fmt::format("{}: line {}: the file holds post-processing data (\"{}\"), which dgrte does not read; "
                                     "save the mesh alone (Gmsh: File > Export without views, or gmsh -0 -save)",
                                     file.string(), line + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at) + 1, '\n')),
                                     marker.substr(1)));
    const std::size_t keep = std::min(text.size(), kKeep);
    line += static_cast<std::size_t>(std::count(text.begin(), text.end() - static_cast<std::ptrdiff_t>(keep), '\n'));
    std::memmove(buffer.data(), text.data() + text.size() - keep, keep);
    kept = keep;
  }
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff tail_len = std::min<std::streamoff>(size, 256);
  in.seekg(size - tail_len);
  std::string tail(static_cast<std::size_t>(tail_len), '\0');
  in.read(tail.data(), tail_len);
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
  const auto nl = tail.find_last_of("\r\n");
  const std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  if (last.rfind("$End", 0) != 0)
    throw InputError(
        fmt::format("{}: the mesh file is truncated (its last line is \"{}\", not a \"$End...\" section "
                    "end); write the mesh again",
                    file.string(), last.substr(0, 40)));
}

// The $PhysicalNames section (ASCII in text and binary files alike): a count, then that many lines
// `dim tag "name"`, then $EndPhysicalNames. Gmsh 4.8 trusts the count and crashes on a section that
// breaks this (found by fuzzing), so it is checked here first.
void check_physical_names(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: line {}: {} in $PhysicalNames (each line: dimension 0-3, tag, \"name\"); write "
                                 "the mesh again", file.string(), line_no, what));
  };
  auto read_line = [&] {  // a line without its '\r', counted
    if (!std::getline(in, line)) return false;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };
  auto next = [&] {
    if (!read_line()) fail("the file ends");
  };
  while (read_line()) {  // the section comes before the nodes
    if (line == "$Nodes" || line == "$Entities" || line == "$Elements" || line_no > 64) return;
    if (line != "$PhysicalNames") continue;
    next();
    std::istringstream count_line(line);
    long count = -1;
    if (!(count_line >> count) || count < 0 || count > 1000000) fail(fmt::format("\"{}\" is not a count of names", line.substr(0, 40)));
    for (long i = 0; i < count; ++i) {
      next();
      std::istringstream entry(line);
      int dim = -1;
      long tag = 0;
      std::string rest;
      if (!(entry >> dim >> tag) || dim < 0 || dim > 3) fail(fmt::format("entry {} of {} (\"{}\") has no dimension 0-3 and tag", i + 1, count, line.substr(0, 40)));
      std::getline(entry, rest);
      const auto open = rest.find('"');
      if (open == std::string::npos || rest.find('"', open + 1) == std::string::npos)
        fail(fmt::format("entry {} of {} has no quoted name", i + 1, count));
    }
    next();
    if (line != "$EndPhysicalNames") fail(fmt::format("\"{}\" instead of $EndPhysicalNames after {} names", line.substr(0, 40), count));
    return;
  }
}

std::string element_type_name(int type) {
  std::string name;
  int dim = 0, order = 0, num_nodes = 0, num_primary = 0;
  std::vector<double> local;
  try {
    gmsh::model::mesh::getElementProperties(type, name, dim, order, num_nodes, local, num_primary);
  } catch (...) {
    return fmt::format("element type {}", type);
  }
  return fmt::format("{} (Gmsh type {}, {} nodes)", name, type, num_nodes);
}

// ---------------------------------------------------------------------------------------------
// Extraction of the current Gmsh model into a TetMesh, then validation and connectivity.
TetMesh extract_model(GmshSession& session, const fs::path& file, BoundaryLabels labels) {
  TetMesh mesh;
  mesh.source = file.string();
  const std::string src = mesh.source;
  const std::string hint = "check that the file is a Gmsh mesh (.msh 2.2 or 4.1) or geometry (.geo)";

  // Physical groups and their names.
  gmsh::vectorpair vol_pg, surf_pg;
  session.call("list the physical groups", hint, [&] {
    gmsh::model::getPhysicalGroups(vol_pg, 3);
    gmsh::model::getPhysicalGroups(surf_pg, 2);
  });
  auto make_groups = [&](const gmsh::vectorpair& pg, int dim) {
    std::vector<PhysicalGroup> groups;
    for (const auto& entity : pg) {  // no structured binding: lambdas below capture these (clang < 16)
      const int d = entity.first, tag = entity.second;
      PhysicalGroup g;
      g.tag = tag;
      g.dim = dim;
      session.call("read a physical name", hint, [&] { gmsh::model::getPhysicalName(d, tag, g.name); });
      groups.push_back(std::move(g));
    }
    return groups;
  };
  mesh.volume_groups = make_groups(vol_pg, 3);
  mesh.surface_groups = make_groups(surf_pg, 2);
  std::map<int, int> vol_index;
  for (std::size_t i = 0; i < mesh.volume_groups.size(); ++i)
    vol_index[mesh.volume_groups[i].tag] = static_cast<int>(i);

  // Tetrahedra of all 3-D entities (as Gmsh node tags for now).
  gmsh::vectorpair volumes;
  session.call("list the volume entities", hint, [&] { gmsh::model::getEntities(volumes, 3); });
  std::vector<std::size_t> tet_nodes;
  std::map<int, std::pair<std::size_t, std::size_t>> bad_types;  // type -> (count, first tag)
  for (const auto& entity : volumes) {
    const int dim = entity.first, ent = entity.second;
    std::vector<int> types;
    std::vector<std::vector<std::size_t>> elem_tags, node_tags;
    session.call("read the volume elements", hint,
                 [&] { gmsh::model::mesh::getElements(types, elem_tags, node_tags, dim, ent); });
    std::vector<int> phys;
    session.call("read the physical groups of a volume", hint,
                 [&] { gmsh::model::getPhysicalGroupsForEntity(dim, ent, phys); });
    int group = -1;
    for (int p : phys) {
      auto it = vol_index.find(p);
      if (it == vol_index.end()) continue;
      if (group >= 0) {
        std::size_t first_tag = 0;
        for (std::size_t t = 0; t < types.size(); ++t)
          if (!elem_tags[t].empty()) {
            first_tag = elem_tags[t][0];
            break;
          }
        throw InputError(fmt::format(
            "{}: element {} (and the other elements of volume entity {}) is in two Physical Volumes, {} and {}; "
            "a tetrahedron may belong to one Physical Volume only: remove it from one of them",
            src, first_tag, ent, group_label(mesh.volume_groups[group]), group_label(mesh.volume_groups[it->second])));
      }
      group = it->second;
    }
    for (std::size_t t = 0; t < types.size(); ++t) {
      if (types[t] != kGmshTetrahedron) {
        auto& b = bad_types[types[t]];
        if (b.first == 0 && !elem_tags[t].empty()) b.second = elem_tags[t][0];
        b.first += elem_tags[t].size();
        continue;
      }
      tet_nodes.insert(tet_nodes.end(), node_tags[t].begin(), node_tags[t].end());
      mesh.tet_tags.insert(mesh.tet_tags.end(), elem_tags[t].begin(), elem_tags[t].end());
      mesh.tet_group.insert(mesh.tet_group.end(), elem_tags[t].size(), group);
    }
  }
  if (!bad_types.empty()) {
    std::string list;
    for (const auto& [type, b] : bad_types)
      list += fmt::format("{}{} x {} (first: element {})", list.empty() ? "" : ", ", b.first, element_type_name(type),
                          b.second);
    throw InputError(
        fmt::format("{}: unsupported 3-D elements: {}; dgrte needs a mesh of linear 4-node tetrahedra only: "
                    "remesh with tetrahedra (no recombination, Mesh.ElementOrder = 1)",
                    src, list));
  }
  if (mesh.tet_tags.empty())
    throw InputError(
        fmt::format("no tetrahedra in {}: the mesh has no 3-D elements; mesh in 3-D (gmsh -3; a .geo file needs a "
                    "Volume) and, if the file defines physical groups, add a Physical Volume so that the "
                    "tetrahedra are saved",
                    src));

  // Nodes: map Gmsh tags to 0-based indices, keeping only those used by tets (in Gmsh's order).
  std::vector<std::size_t> all_tags;
  std::vector<double> coords, param;
  session.call("read the nodes", hint,
               [&] { gmsh::model::mesh::getNodes(all_tags, coords, param, -1, -1, false, false); });
  const std::size_t max_tag = all_tags.empty() ? 0 : *std::max_element(all_tags.begin(), all_tags.end());
  const bool dense = max_tag <= 4 * all_tags.size() + 1024;
  std::vector<int> dense_index;
  std::unordered_map<std::size_t, int> sparse_index;
  constexpr int kUnused = -2, kMissing = -1;
  int missing = kMissing;  // slot returned for tags that have no node
  auto lookup = [&](std::size_t tag) -> int& {
    missing = kMissing;
    if (dense) return tag < dense_index.size() ? dense_index[tag] : missing;
    auto it = sparse_index.find(tag);
    return it == sparse_index.end() ? missing : it->second;
  };
  if (dense) {
    dense_index.assign(max_tag + 1, kMissing);
    for (std::size_t t : all_tags) dense_index[t] = kUnused;
  } else {
    sparse_index.reserve(all_tags.size());
    for (std::size_t t : all_tags) sparse_index[t] = kUnused;
  }
  for (std::size_t i = 0; i < tet_nodes.size(); ++i) {
    int& idx = lookup(tet_nodes[i]);
    if (idx == kMissing)
      throw InputError(fmt::format("{}: element {} uses node {}, which is not defined; write the mesh again", src,
                                   mesh.tet_tags[i / 4], tet_nodes[i]));
    idx = 0;  // used
  }
  for (std::size_t i = 0; i < all_tags.size(); ++i) {
    int& idx = lookup(all_tags[i]);
    if (idx == 0) {
      idx = static_cast<int>(mesh.vertices.size()) + 1;  // +1: 0 still means "used, not numbered"
      mesh.vertices.push_back({coords[3 * i], coords[3 * i + 1], coords[3 * i + 2]});
    }
  }
  if (mesh.vertices.size() > static_cast<std::size_t>(std::numeric_limits<int>::max() - 2))
    throw InputError(fmt::format("{}: too many vertices ({})", src, mesh.vertices.size()));
  auto vertex_of = [&](std::size_t tag) {
    const int i = lookup(tag);
    return i > 0 ? i - 1 : -1;
  };
  mesh.tets.resize(mesh.tet_tags.size());
  for (std::size_t e = 0; e < mesh.tets.size(); ++e)
    for (int k = 0; k < 4; ++k) mesh.tets[e][k] = vertex_of(tet_nodes[4 * e + k]);
  tet_nodes = {};

  // Orientation and degeneracy.
  {
    std::size_t n_bad = 0, first = 0;
    double first_vol = 0, first_h = 0;
    for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
      const double v = tet_volume(mesh, e);
      const double h = max_edge(mesh, e);
      if (!(v > kDegenerate * h * h * h)) {  // also catches NaN coordinates
        if (n_bad++ == 0) {
          first = e;
          first_vol = v;
          first_h = h;
        }
      }
    }
    if (n_bad > 0) {
      const bool inverted = std::abs(first_vol) >= kDegenerate * first_h * first_h * first_h;
      throw InputError(fmt::format(
          "{}: element {} at centroid {} is {} (signed volume {:.6g}, longest edge {:.6g}){}; {}", src,
          element_tag(mesh, first), fmt_point(tet_centroid(mesh, first)),
          inverted ? "inverted" : "degenerate (nearly zero volume)", first_vol, first_h,
          n_bad > 1 ? fmt::format(", and {} more tetrahedra are inverted or degenerate", n_bad - 1) : std::string(),
          inverted ? "its nodes must be ordered with positive orientation (Gmsh convention); regenerate the mesh"
                   : "remove the flat element or regenerate the mesh"));
    }
  }

  // Surface groups: their 3-node triangles whose nodes all belong to tets.
  std::vector<std::vector<std::array<int, 3>>> triangles(mesh.surface_groups.size());
  for (std::size_t g = 0; g < mesh.surface_groups.size(); ++g) {
    std::vector<int> ents;
    session.call("read the entities of a physical surface", hint,
                 [&] { gmsh::model::getEntitiesForPhysicalGroup(2, mesh.surface_groups[g].tag, ents); });
    for (int ent : ents) {
      std::vector<int> types;
      std::vector<std::vector<std::size_t>> elem_tags, node_tags;
      session.call("read the surface elements", hint,
                   [&] { gmsh::model::mesh::getElements(types, elem_tags, node_tags, 2, ent); });
      for (std::size_t t = 0; t < types.size(); ++t) {
        if (elem_tags[t].empty()) continue;
        if (types[t] != kGmshTriangle)
          throw InputError(
              fmt::format("{}: Physical Surface {} contains {} x {} (first: element {}); only linear 3-node "
                          "triangles are supported: remesh with Mesh.ElementOrder = 1 and no recombination",
                          src, group_label(mesh.surface_groups[g]), elem_tags[t].size(), element_type_name(types[t]),
                          elem_tags[t][0]));
        for (std::size_t i = 0; i < elem_tags[t].size(); ++i) {
          std::array<int, 3> tri{vertex_of(node_tags[t][3 * i]), vertex_of(node_tags[t][3 * i + 1]),
                                 vertex_of(node_tags[t][3 * i + 2])};
          if (tri[0] >= 0 && tri[1] >= 0 && tri[2] >= 0) triangles[g].push_back(tri);
        }
      }
    }
  }

  build_connectivity(mesh, triangles);

  // Every boundary face must carry a surface group (the boundary condition is chosen by group).
  const auto unlabelled = unlabelled_boundary_faces(mesh);
  if (unlabelled.count > 0 && labels == BoundaryLabels::required)
    throw InputError(fmt::format(
        "{}: {} boundary face(s) are in no surface physical group, e.g. the face at {} of element {}; every boundary "
        "face needs a boundary condition: add a Physical Surface containing it (`dgrte mesh-info` shows where they are)",
        src, unlabelled.count, fmt_point(unlabelled.first_centroid), element_tag(mesh, unlabelled.first_element)));
  return mesh;
}

// Parity (0 even, 1 odd) of the permutation p of {0,1,2,3}.
int parity(const std::array<int, 4>& p) {
  int inv = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) inv += p[i] > p[j];
  return inv & 1;
}

// The checks dgrte makes itself before Gmsh sees a .msh file.
void check_msh_file(const fs::path& file) {
  check_readable(file, "mesh");
  check_msh_format(file);
  check_physical_names(file);
}

TetMesh open_msh(const fs::path& file, BoundaryLabels labels) {
  GmshSession session(file);
  session.call("read the mesh", "check that it is a complete Gmsh .msh file (format 2.2 or 4.1)",
               [&] { gmsh::open(file.string()); });
  return extract_model(session, file, labels);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TetMesh read_mesh(const std::filesystem::path& file, BoundaryLabels labels) {
  // The quick checks with their own messages first, then Gmsh in a child, then here.
  check_msh_file(file);
  isolation::check_in_child({.reader = "msh",
                             .file = file,
                             .arguments = {labels == BoundaryLabels::optional ? "optional" : "required"},
                             .context = file.string(),
                             .library = "Gmsh's .msh reader",
                             .remedy = "Write the mesh again from Gmsh (format 4.1: gmsh -3 -format msh41)."});
  return open_msh(file, labels);
}

TetMesh read_mesh_in_process(const std::filesystem::path& file, BoundaryLabels labels) {
  check_msh_file(file);
  return open_msh(file, labels);
}

namespace {

TetMesh mesh_geo_sized(const std::filesystem::path& geo_file, double size, const SizeField* field, BoundaryLabels labels) {
  if (!(size > 0) || !std::isfinite(size))
    throw InputError(fmt::format("{}: mesh size {} is not a positive length; give the target element size in metres",
                                 geo_file.string(), size));
  check_readable(geo_file, "geometry");
  GmshSession session(geo_file);
  session.call("read the geometry", "check the .geo script (open it in gmsh to see the error in context)",
               [&] { gmsh::open(geo_file.string()); });
  session.call("set the mesh size", "", [&] {
    // `size` alone controls the element size: ignore point sizes and curvature, keep no lower bound.
    gmsh::option::setNumber("Mesh.MeshSizeFromPoints", 0);
    gmsh::option::setNumber("Mesh.MeshSizeFromCurvature", 0);
    // With a size field the field decides inside too (extending the boundary's sizes would override it).
    gmsh::option::setNumber("Mesh.MeshSizeExtendFromBoundary", field ? 0 : 1);
    gmsh::option::setNumber("Mesh.MeshSizeMin", 0);
    gmsh::option::setNumber("Mesh.MeshSizeMax", size);
    gmsh::option::setNumber("Mesh.ElementOrder", 1);
  });
  if (field) {
    const auto& m = *field->mesh;
    if (field->vertex_size.size() != m.vertices.size()) throw std::logic_error("SizeField: one size per vertex");
    session.call("set the refinement size field", "", [&] {
      // "SS": scalar values on tetrahedra, per element x1..x4 y1..y4 z1..z4 v1..v4.
      std::vector<double> data;
      data.reserve(m.tets.size() * 16);
      for (const auto& t : m.tets) {
        for (int d = 0; d < 3; ++d)
          for (int v : t) data.push_back(m.vertices[static_cast<std::size_t>(v)][static_cast<std::size_t>(d)]);
        for (int v : t) data.push_back(field->vertex_size[static_cast<std::size_t>(v)]);
      }
      const int view = gmsh::view::add("dgrte refinement size");
      gmsh::view::addListData(view, "SS", static_cast<int>(m.tets.size()), data);
      const int f = gmsh::model::mesh::field::add("PostView");
      gmsh::model::mesh::field::setNumber(f, "ViewTag", view);
      gmsh::model::mesh::field::setAsBackgroundMesh(f);
    });
  }
  session.call(fmt::format("mesh the geometry in 3-D with size {}{}", size, field ? " and the refinement size field" : ""),
               "check that the geometry has closed volumes (Surface Loop / Volume) and try another size",
               [&] { gmsh::model::mesh::generate(3); });
  return extract_model(session, geo_file, labels);
}

}  // namespace

TetMesh mesh_geo(const std::filesystem::path& geo_file, double size, BoundaryLabels labels) {
  return mesh_geo_sized(geo_file, size, nullptr, labels);
}

TetMesh mesh_geo(const std::filesystem::path& geo_file, double size, const SizeField& field, BoundaryLabels labels) {
  return mesh_geo_sized(geo_file, size, &field, labels);
}

UnlabelledFaces unlabelled_boundary_faces(const TetMesh& mesh) {
  UnlabelledFaces u;
  for (std::size_t e = 0; e < mesh.tets.size(); ++e)
    for (int f = 0; f < 4; ++f)
      if (mesh.neighbour[e][f] < 0 && mesh.boundary_group[e][f] < 0 && u.count++ == 0) {
        u.first_centroid = face_centroid(mesh, e, f);
        u.first_element = e;
      }
  return u;
}

// ---------------------------------------------------------------------------------------------
void build_connectivity(TetMesh& mesh, const std::vector<std::vector<std::array<int, 3>>>& boundary_triangles) {
  const std::string src = source_label(mesh);
  const std::size_t ne = mesh.tets.size();
  const std::size_t nv = mesh.vertices.size();
  if (ne > static_cast<std::size_t>(std::numeric_limits<int>::max() / 4))
    throw InputError(fmt::format("{}: too many elements ({})", src, ne));
  for (std::size_t e = 0; e < ne; ++e)
    for (int v : mesh.tets[e])
      if (v < 0 || static_cast<std::size_t>(v) >= nv)
        throw InputError(fmt::format("{}: element {} refers to vertex index {} (only {} vertices)", src,
                                     element_tag(mesh, e), v, nv));

  // Faces bucketed by their smallest vertex (counting sort), then sorted inside each small bucket
  // by the other two vertices: O(n) overall, no hashing.
  struct FaceRec {
    int b, c;    // the two larger vertices, b < c
    int id;      // 4*e + f
    int orient;  // parity of (positions of sorted face vertices, opposite vertex) in the tet
  };
  std::vector<std::uint32_t> start(nv + 1, 0);
  auto sorted_face = [&](std::size_t e, int f) {
    std::array<int, 3> t{mesh.tets[e][kFaceVertices[f][0]], mesh.tets[e][kFaceVertices[f][1]],
                         mesh.tets[e][kFaceVertices[f][2]]};
    std::sort(t.begin(), t.end());
    return t;
  };
  for (std::size_t e = 0; e < ne; ++e)
    for (int f = 0; f < 4; ++f) {
      const auto& k = kFaceVertices[f];
      ++start[std::min({mesh.tets[e][k[0]], mesh.tets[e][k[1]], mesh.tets[e][k[2]]}) + 1];
    }
  for (std::size_t v = 0; v < nv; ++v) start[v + 1] += start[v];
  std::vector<FaceRec> faces(4 * ne);
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t e = 0; e < ne; ++e)
      for (int f = 0; f < 4; ++f) {
        const auto t = sorted_face(e, f);
        std::array<int, 4> perm{};
        for (int i = 0; i < 3; ++i)
          for (int k = 0; k < 4; ++k)
            if (mesh.tets[e][k] == t[i]) perm[i] = k;
        perm[3] = 6 - kFaceVertices[f][0] - kFaceVertices[f][1] - kFaceVertices[f][2];
        faces[fill[t[0]]++] = FaceRec{t[1], t[2], static_cast<int>(4 * e + f), parity(perm)};
      }
  }

  mesh.neighbour.assign(ne, {-1, -1, -1, -1});
  mesh.neighbour_face.assign(ne, {-1, -1, -1, -1});
  mesh.boundary_group.assign(ne, {-1, -1, -1, -1});
  const std::size_t groups = std::max(mesh.surface_groups.size(), boundary_triangles.size());
  mesh.interior_tagged_faces.assign(groups, 0);
  mesh.first_interior_tagged.assign(groups, Vec3{});
  auto less = [](const FaceRec& x, const FaceRec& y) { return x.b != y.b ? x.b < y.b : x.c < y.c; };
  for (std::size_t v = 0; v < nv; ++v) {
    const auto first = faces.begin() + start[v], last = faces.begin() + start[v + 1];
    std::sort(first, last,
              [&](const FaceRec& x, const FaceRec& y) { return less(x, y) || (!less(y, x) && x.id < y.id); });
    for (auto it = first; it != last;) {
      auto run_end = it + 1;
      while (run_end != last && run_end->b == it->b && run_end->c == it->c) ++run_end;
      const auto count = run_end - it;
      if (count > 2) {
        std::string tags;
        for (auto r = it; r != run_end; ++r)
          tags += fmt::format("{}{}", tags.empty() ? "" : ", ", element_tag(mesh, static_cast<std::size_t>(r->id / 4)));
        throw InputError(
            fmt::format("{}: the face at {} is shared by {} tetrahedra (elements {}); a face may belong to "
                        "at most two elements: remove the overlapping or duplicated elements",
                        src, fmt_point(face_centroid(mesh, it->id / 4, it->id % 4)), count, tags));
      }
      if (count == 2) {
        const int e0 = it->id / 4, f0 = it->id % 4, e1 = (it + 1)->id / 4, f1 = (it + 1)->id % 4;
        if (e0 == e1)
          throw InputError(fmt::format("{}: element {} has two identical faces (repeated vertex); remove it", src,
                                       element_tag(mesh, e0)));
        // Both tets positively oriented: their opposite vertices must lie on opposite sides of the face.
        if (it->orient == (it + 1)->orient) {
          const int opp0 = mesh.tets[e0][6 - kFaceVertices[f0][0] - kFaceVertices[f0][1] - kFaceVertices[f0][2]];
          const int opp1 = mesh.tets[e1][6 - kFaceVertices[f1][0] - kFaceVertices[f1][1] - kFaceVertices[f1][2]];
          throw InputError(fmt::format(
              "{}: elements {} and {} {} (shared face at {}); {}", src, element_tag(mesh, e0), element_tag(mesh, e1),
              opp0 == opp1 ? "have the same four vertices" : "overlap: they lie on the same side of their shared face",
              fmt_point(face_centroid(mesh, e0, f0)),
              opp0 == opp1 ? "remove the duplicate (in a .msh 2.2 file a tetrahedron listed under two physical tags is "
                             "duplicated; a tetrahedron may belong to one Physical Volume only)"
                           : "check the orientation of the elements or regenerate the mesh"));
        }
        mesh.neighbour[e0][f0] = e1;
        mesh.neighbour_face[e0][f0] = f1;
        mesh.neighbour[e1][f1] = e0;
        mesh.neighbour_face[e1][f1] = f0;
      }
      it = run_end;
    }
  }

  // Boundary groups: look each surface triangle up among the faces; ignore triangles that are not
  // boundary faces (internal surfaces, or surfaces not touching the tets).
  for (std::size_t g = 0; g < boundary_triangles.size(); ++g) {
    for (const auto& tri : boundary_triangles[g]) {
      std::array<int, 3> t = tri;
      std::sort(t.begin(), t.end());
      if (t[0] < 0 || static_cast<std::size_t>(t[2]) >= nv) continue;
      const auto first = faces.begin() + start[t[0]], last = faces.begin() + start[t[0] + 1];
      const FaceRec key{t[1], t[2], 0, 0};
      const auto it = std::lower_bound(first, last, key, less);
      if (it == last || it->b != t[1] || it->c != t[2]) continue;
      const int e = it->id / 4, f = it->id % 4;
      if (mesh.neighbour[e][f] >= 0) {  // interior face: no boundary condition; counted for the warning
        if (mesh.interior_tagged_faces[g]++ == 0) mesh.first_interior_tagged[g] = face_centroid(mesh, static_cast<std::size_t>(e), f);
        continue;
      }
      int& bg = mesh.boundary_group[e][f];
      if (bg >= 0 && bg != static_cast<int>(g))
        throw InputError(
            fmt::format("{}: the boundary face at {} (element {}) is in two surface groups, {} and {}; a "
                        "boundary face needs exactly one boundary condition: remove it from one Physical "
                        "Surface",
                        src, fmt_point(face_centroid(mesh, e, f)), element_tag(mesh, e), surface_label(mesh, bg),
                        surface_label(mesh, static_cast<int>(g))));
      bg = static_cast<int>(g);
    }
  }
}

double tet_volume(const TetMesh& mesh, std::size_t e) {
  const auto& t = mesh.tets[e];
  const Vec3& p0 = mesh.vertices[t[0]];
  return dot(sub(mesh.vertices[t[1]], p0), cross(sub(mesh.vertices[t[2]], p0), sub(mesh.vertices[t[3]], p0))) / 6.0;
}

MeshQuality mesh_quality(const TetMesh& mesh) {
  MeshQuality q;
  const std::size_t ne = mesh.tets.size();
  if (ne == 0) return q;
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double rad2deg = 57.295779513082320876798;
  q.min_volume = q.min_edge = q.min_radius_ratio = q.min_dihedral_deg = inf;
  q.max_volume = q.max_edge = q.max_dihedral_deg = -inf;
  double sum_ratio = 0;
  static constexpr std::array<std::array<int, 4>, 6> kEdges{
      {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2}, {1, 2, 0, 3}, {1, 3, 0, 2}, {2, 3, 0, 1}}};  // edge ab, others c d
  for (std::size_t e = 0; e < ne; ++e) {
    const auto& t = mesh.tets[e];
    const Vec3 p[4] = {mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]], mesh.vertices[t[3]]};
    const double vol = tet_volume(mesh, e);
    q.total_volume += vol;
    q.min_volume = std::min(q.min_volume, vol);
    q.max_volume = std::max(q.max_volume, vol);
    for (const auto& ed : kEdges) {
      const Vec3 ab = sub(p[ed[1]], p[ed[0]]);
      const double len = norm(ab);
      q.min_edge = std::min(q.min_edge, len);
      q.max_edge = std::max(q.max_edge, len);
      // Dihedral angle at edge ab: angle between the components of ac and ad normal to ab.
      const Vec3 ac = sub(p[ed[2]], p[ed[0]]), ad = sub(p[ed[3]], p[ed[0]]);
      const double l2 = dot(ab, ab);
      Vec3 u{}, w{};
      for (int d = 0; d < 3; ++d) {
        u[d] = ac[d] - dot(ac, ab) / l2 * ab[d];
        w[d] = ad[d] - dot(ad, ab) / l2 * ab[d];
      }
      const double c = std::clamp(dot(u, w) / (norm(u) * norm(w)), -1.0, 1.0);
      const double ang = std::acos(c) * rad2deg;
      q.min_dihedral_deg = std::min(q.min_dihedral_deg, ang);
      q.max_dihedral_deg = std::max(q.max_dihedral_deg, ang);
    }
    // Inradius r = 3V / (sum of face areas); circumradius R = |a^2 (b x c) + b^2 (c x a) + c^2 (a x b)| / (12 V).
    double area = 0;
    for (const auto& fv : kFaceVertices) area += 0.5 * norm(cross(sub(p[fv[1]], p[fv[0]]), sub(p[fv[2]], p[fv[0]])));
    const Vec3 a = sub(p[1], p[0]), b = sub(p[2], p[0]), c = sub(p[3], p[0]);
    const Vec3 bc = cross(b, c), ca = cross(c, a), ab = cross(a, b);
    Vec3 num{};
    for (int d = 0; d < 3; ++d) num[d] = dot(a, a) * bc[d] + dot(b, b) * ca[d] + dot(c, c) * ab[d];
    const double av = std::abs(vol);
    double ratio = 0;
    if (av > 0 && area > 0) {
      const double r_in = 3 * av / area;
      const double r_circ = norm(num) / (12 * av);
      ratio = r_circ > 0 ? 3 * r_in / r_circ : 0;
    }
    q.min_radius_ratio = std::min(q.min_radius_ratio, ratio);
    sum_ratio += ratio;
  }
  q.mean_radius_ratio = sum_ratio / static_cast<double>(ne);
  if (mesh.neighbour.size() == ne) {
    std::size_t inner_sides = 0;
    for (const auto& nb : mesh.neighbour)
      for (int n : nb) (n < 0 ? q.boundary_faces : inner_sides) += 1;
    q.interior_faces = inner_sides / 2;
  }
  return q;
}

}  // namespace dgrte::mesh
