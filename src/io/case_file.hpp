#pragma once
// The YAML case file of `dgrte run` (reference: docs/case-file.md). Parsing is strict: unknown
// keys, wrong types and unparsable expressions are InputErrors naming the file, key path and line.
#include "io/expression.hpp"

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dgrte::io {

using Vec3 = std::array<double, 3>;

struct MeshSpec {
  std::filesystem::path file;  // .msh (resolved against the case file's folder)
  std::filesystem::path geo;   // or .geo meshed with `size`
  double size = 0;
};

// Variables of the expressions: medium and exact use (x, y, z, sx, sy, sz); boundary intensity too.
inline const std::vector<std::string> kSpaceVars{"x", "y", "z"};
inline const std::vector<std::string> kSpaceDirectionVars{"x", "y", "z", "sx", "sy", "sz"};

struct MediumSpec {
  std::string group;  // volume physical-group name or "*"
  Expression kappa;   // 1/m, of (x, y, z)
  // Exactly one of: blackbody intensity [W/(m^2 sr)] or temperature [K] (Ib = sigma T^4 / pi).
  std::optional<Expression> blackbody_intensity;
  std::optional<Expression> temperature;
  Expression source;  // W/(m^3 sr), of (x, y, z, sx, sy, sz)
};

enum class BoundaryType { black, inflow };

struct BoundarySpec {
  std::string group;  // surface physical-group name or "*"
  BoundaryType type = BoundaryType::black;
  double temperature = 0;             // K, black walls
  std::optional<Expression> intensity;  // W/(m^2 sr) of (x, y, z, sx, sy, sz), inflow
};

enum class Preconditioner { none, block_jacobi, partial_block_jacobi };

struct SolverSpec {
  std::string method = "bicgstab";
  Preconditioner preconditioner = Preconditioner::partial_block_jacobi;
  double rtol = 1e-10;
  int max_iterations = 5000;
  double preconditioner_memory_mb = 2048;  // cap on cached element-block inverses per direction
};

struct ProbeSpec {
  std::string name;
  Vec3 from{}, to{};
  int points = 0;
};

struct OutputSpec {
  std::filesystem::path directory = "out";
  bool vtk = true;
  bool linear = false;  // subdivide into linear tets instead of Lagrange cells
  std::vector<ProbeSpec> probes;
};

struct CaseSpec {
  std::filesystem::path file;
  std::string name;  // case file stem
  MeshSpec mesh;
  int order = 1;
  std::vector<Vec3> directions;
  std::vector<MediumSpec> media;
  std::vector<BoundarySpec> boundaries;
  SolverSpec solver;
  std::optional<Expression> exact;  // of (x, y, z, sx, sy, sz)
  OutputSpec output;
  std::vector<std::string> warnings;  // e.g. directions normalised
};

CaseSpec read_case(const std::filesystem::path& file);
CaseSpec parse_case(const std::string& yaml_text, const std::filesystem::path& file_for_messages);

const char* to_string(Preconditioner p);

}  // namespace dgrte::io
