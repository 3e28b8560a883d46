#pragma once
// The YAML case file of `dgrte run` (reference: docs/case-file.md). Parsing is strict: unknown
// keys, wrong types and unparsable expressions are InputErrors naming the file, key path and line.
#include "common/vec3.hpp"
#include "io/expression.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace dgrte::io {

using dgrte::Vec3;

struct MeshSpec {
  std::filesystem::path file;  // .msh (resolved against the case file's folder)
  std::filesystem::path geo;   // or .geo meshed with `size`
  double size = 0;
  std::string where;           // "case.yaml: mesh.file (line 2)", for messages about the file
  std::string as_written;      // the path as the case file gives it
};

// InputError naming the key, the case file and its line, the path as written and where it was looked
// for, if the mesh (or .geo) file of a case does not exist. Relative paths are taken from the case
// file's folder.
void check_mesh_file_exists(const MeshSpec& m);

// Variables of the expressions: medium and exact use (x, y, z, sx, sy, sz); boundary intensity too.
inline const std::vector<std::string> kSpaceVars{"x", "y", "z"};
inline const std::vector<std::string> kSpaceDirectionVars{"x", "y", "z", "sx", "sy", "sz"};

// Medium quantities read from a file of another code (`media.X.field`, fields/field_import.hpp).
struct FieldSpec {
  std::filesystem::path file;  // as resolved against the case file's folder
  std::vector<std::pair<std::string, std::string>> arrays;  // quantity (temperature, x_h2o, ...) -> array name in the file
  bool nearest_outside = false;  // outside: nearest (else outside nodes are an error)
  double max_distance = 0;       // point clouds: 0 = automatic
  std::string where;             // "file: media.X.field (line N)"
  const std::string* array_for(const std::string& quantity) const {
    for (const auto& [q, a] : arrays)
      if (q == quantity) return &a;
    return nullptr;
  }
};

struct MediumSpec {
  std::string group;  // volume physical-group name or "*"
  std::optional<Expression> kappa;  // 1/m, of (x, y, z); required without a gas model, an error with one
  // Exactly one of: blackbody intensity [W/(m^2 sr)] or temperature [K] (Ib = sigma T^4 / pi).
  // With a gas model: temperature only (the gas temperature).
  std::optional<Expression> blackbody_intensity;
  std::optional<Expression> temperature;
  // Gas state for a spectral model (`model:`), of (x, y, z): pressure [atm] (default 1) and mole
  // fractions (default 0).
  std::optional<Expression> pressure, x_h2o, x_co2, x_co;
  // Soot volume fraction (gas/soot.hpp), of (x, y, z); absent = no soot. With a gas model it joins
  // the gas state; in a gray run its Planck-mean absorption is added to kappa (needs temperature).
  std::optional<Expression> soot_fv;
  std::optional<FieldSpec> field;  // quantities from a CFD file instead of expressions
  Expression source{"0", kSpaceDirectionVars, "media.*.source"};  // W/(m^3 sr), of (x, y, z, sx, sy, sz)
  Expression scattering{"0", kSpaceVars, "media.*.scattering"};  // sigma_s [1/m], of (x, y, z)
  struct Phase {
    std::string type = "isotropic";  // isotropic | linear | henyey-greenstein | legendre | kim-lee
    double g = 0, a1 = 0;
    std::vector<double> coefficients;
    std::string name;  // kim-lee: F1, F2, F3, B1, B2
    std::string where;  // file: key (line) for messages
  } phase;
  int line = 0;  // line of the entry in the case file (1-based)
};

// black: emissivity 1; gray: diffuse (and specular_fraction) reflecting; specular: mirror with
// reflectivity; symmetry: perfect mirror; inflow: prescribed intensity; irradiation: prescribed
// incoming diffuse flux (an opening, black to what leaves).
enum class BoundaryType { black, gray, specular, symmetry, inflow, irradiation };

struct BoundarySpec {
  std::string group;  // surface physical-group name or "*"
  BoundaryType type = BoundaryType::black;
  Expression temperature{"0", kSpaceVars, "boundaries.*.temperature"};  // K, of (x, y, z)
  double emissivity = 1.0;            // gray
  double specular_fraction = 0.0;     // gray: part of the reflectivity 1 - eps that is specular
  double reflectivity = 1.0;          // specular
  double flux = 0.0;                  // irradiation [W/m^2]
  std::optional<Expression> intensity;  // W/(m^2 sr) of (x, y, z, sx, sy, sz), inflow
  int line = 0;
};

// Angular discretisation (`angular:`); without it the case is a list of `directions`.
struct AngularSpec {
  std::string quadrature;  // sn | sn-heat | tn | fv | product | file
  int order = 0;           // sn, sn-heat, tn
  int polar = 0, azimuthal = 0, axis = 2;  // fv, product
  std::filesystem::path file;              // file
  bool wall_flux_normalisation = true;     // diffuse wall emission/reflection scaled to the set's half-range flux
  std::string phase_matrix = "auto";       // auto | cell-average | point (angular/scattering_matrix.hpp)
  std::string where;
};

// Of Bi-CGSTAB: block Jacobi (with or without kappa in the blocks), or one sweep pass.
enum class Preconditioner { none, block_jacobi, partial_block_jacobi, sweep };

enum class OuterMethod { source_iteration, gmres, bicgstab };
enum class InnerMethod { sweep, bicgstab };

// solver.method montecarlo: forward bundles and backward rays per probe point (src/mc).
struct MonteCarloSpec {
  std::uint64_t paths = 1'000'000;
  int batches = 20;
  std::uint64_t seed = 1;
  std::uint64_t probe_rays = 100'000;
  // Nongray: spectral sampling by path (each batch a sample of the spectral points by power) or
  // per point (every emitting point its own paths and batches).
  bool per_path = true;
};

struct SolverSpec {
  std::string method = "dg";  // dg (bicgstab: the same, kept for old case files) | montecarlo
  bool monte_carlo() const { return method == "montecarlo"; }
  MonteCarloSpec mc;
  std::optional<InnerMethod> inner;  // default: sweep with `angular`, bicgstab with `directions`
  OuterMethod outer = OuterMethod::gmres;
  double outer_tolerance = 1e-8;
  int outer_max_iterations = 500;
  bool positivity = false;      // Zhang-Shu limiter in the sweeps
  bool threads_over_levels = false;  // solver.threads: directions (default) | levels (elements of a sweep level)
  // solver.properties: quadrature-points (default: the medium where the user gave it, at the
  // quadrature points of the mass and source integrals) | nodes (interpolated at the DG nodes, as
  // before issue 33: cheaper, exact only where the fields are element-wise polynomials of degree <= p
  // for the source and constant for the extinction).
  bool properties_at_nodes = false;
  std::string positivity_where;  // file: key (line)
  Preconditioner preconditioner = Preconditioner::partial_block_jacobi;
  double rtol = 1e-10;
  int max_iterations = 5000;
  double preconditioner_memory_mb = 2048;  // cap on cached element-block inverses per direction
  double spectral_block_mb = 256;          // properties of one block of spectral points (kappa_j, a_j per node)
  // Where the transport solves run (issue 13): cpu (OpenMP + PETSc), opencl (the device core,
  // src/device), auto (a GPU with fp64 if one is present, else cpu). `device`: auto, "P:D" or a name.
  std::string backend = "cpu";
  std::string device = "auto";
  bool single_precision = false;  // solver.precision: double (default) | single (OpenCL only)
  // Single precision: the tightest inner and outer tolerances float can reach (and the defaults).
  static constexpr double kSingleRtol = 1e-6, kSingleOuterTolerance = 1e-5;
  double device_memory_mb = 0;    // device memory budget; 0 = 3/4 of the device's memory
  std::string backend_where;      // file: key (line), for errors about the backend
};

struct ProbeSpec {
  std::string name;
  Vec3 from{}, to{};
  int points = 0;
  std::string wall;  // surface group the probe lies on (wall probe), or empty
  std::string where;
};

struct OutputSpec {
  std::filesystem::path directory = "out";
  bool vtk = true;
  bool linear = false;  // subdivide into linear tets instead of Lagrange cells
  bool intensities = false;  // angular runs: write every ordinate's intensity to solution.vtu
  // Angular runs: the per-element error indicator of G and the wall flux (src/adapt/error_indicator.hpp),
  // as cell arrays in solution.vtu and `error_indicator` in summary.json.
  bool error_indicator = false;
  std::string error_indicator_where;
  // Ray-traced final gather of the wall fluxes and probe G, q (angular DG runs; src/mc/final_gather.hpp):
  // rays per receiver point from min to max, doubled until the point's own estimate meets the
  // tolerance (`rays: N` fixes the count: min = max = N, tolerance 0).
  bool final_gather = false;
  int final_gather_min_rays = 128, final_gather_max_rays = 4096;
  double final_gather_tolerance = 0.005;
  std::string final_gather_where;
  std::vector<ProbeSpec> probes;
};

// A collimated beam of flux [W/m^2, normal to the beam] along `direction`, entering through the
// faces of surface group `boundary` that face it.
struct CollimatedSpec {
  std::string boundary;
  Vec3 direction{};
  double flux = 0;
  std::string where;  // file: key (line)
};

// `refine:` (issue 32): solve, estimate (src/adapt), refine, until the estimated relative error of
// `quantity` is below `target`, for at most max_cycles solves and max_dofs unknowns per ordinate.
enum class RefineQuantity { G, wall_flux, both, divq };
enum class RefineStrategy { h, p };
// l2: the estimated L2 error over the domain relative to the L2 norm; max: the largest nodal
// difference of orders p + 1 and p relative to the largest |value| (pointwise, anywhere); probes:
// the largest difference at the points of the case's probe lines relative to the largest |value|
// on each line (the values an engineer reads; needs output.probes).
enum class RefineNorm { l2, max, probes };
struct RefineSpec {
  double target = 0.005;
  RefineQuantity quantity = RefineQuantity::G;
  int max_cycles = 6;
  std::size_t max_dofs = 0;  // 0: no limit
  RefineStrategy strategy = RefineStrategy::h;
  RefineNorm norm = RefineNorm::l2;
  std::string where;
};
const char* to_string(RefineQuantity q);
const char* to_string(RefineNorm n);

struct CaseSpec {
  std::filesystem::path file;
  std::string name;  // case file stem
  MeshSpec mesh;
  int order = 1;
  std::vector<Vec3> directions;
  std::optional<AngularSpec> angular;
  std::vector<CollimatedSpec> collimated;
  std::vector<MediumSpec> media;
  std::vector<BoundarySpec> boundaries;
  SolverSpec solver;
  std::optional<Expression> exact;  // of (x, y, z, sx, sy, sz)
  std::optional<RefineSpec> refine;
  // The spectral gas model block (`model:`, the same block as `dgrte slab`'s), read by
  // gas::make_model; null for a gray run.
  std::shared_ptr<const YAML::Node> model;
  OutputSpec output;
  std::vector<std::string> warnings;  // e.g. directions normalised
  // Values a library caller gives (dgrte::Solver::set_field), by quantity (temperature, kappa,
  // sigma_s, soot_fv, pressure, x_h2o, x_co2, x_co): the value at a point x of mesh element e. They
  // replace every medium entry's expression or field file for that quantity (a given temperature
  // also replaces an Ib expression).
  std::map<std::string, std::function<double(std::size_t element, const Vec3& x)>> given;
};

CaseSpec read_case(const std::filesystem::path& file);
CaseSpec parse_case(const std::string& yaml_text, const std::filesystem::path& file_for_messages);

const char* to_string(Preconditioner p);
const char* to_string(OuterMethod m);
const char* to_string(InnerMethod m);
const char* to_string(BoundaryType t);

}  // namespace dgrte::io
