#pragma once
// Fields computed elsewhere (a CFD temperature and composition), read from a file and sampled at
// given points (the DG nodes):
//   VTK .vtu (XML) or legacy .vtk unstructured grids: point data interpolated linearly inside the
//     source cells, cell data taken from the cell containing the point (vtkProbeFilter);
//   CSV point clouds (a header `x,y,z,NAME,...`): inverse-distance weighting of the k nearest
//     source points (k-d tree, nanoflann).
// A point outside the source (no containing cell; for a cloud, farther from its nearest source
// point than max_distance) is an error naming how many and where, unless nearest_outside: then it
// takes the value at the closest point of the source, and the count is reported.
#include "common/vec3.hpp"

#include <array>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace dgrte::fields {

using dgrte::Vec3;

struct FieldRequest {
  std::filesystem::path file;
  std::vector<std::string> arrays;  // names in the file
  bool nearest_outside = false;
  // Point clouds: a point farther than this from every source point is outside; 0 = automatic
  // (2 x the largest nearest-neighbour spacing of the cloud).
  double max_distance = 0;
  std::string where;  // prefix of error messages, e.g. "case.yaml: media.* (line 7).field"
};

struct ArrayRange {
  std::string name;
  double source_min = 0, source_max = 0;  // over the file's values
  double sampled_min = 0, sampled_max = 0;  // over the sampled points
};

struct SampledFields {
  std::vector<std::vector<double>> values;  // per requested array, per point
  std::vector<ArrayRange> ranges;           // per requested array
  std::string source_kind;                  // "point data", "cell data", "point cloud"
  std::string method;                       // how the values were interpolated
  std::size_t source_points = 0;            // points (or cells, for cell data) of the source
  std::size_t outside = 0;                  // sampled points outside the source
  Vec3 first_outside{};
  double max_distance = 0;                  // point clouds: the distance used
};

// A point cloud in memory (a coupled CFD code's cell centres or nodes): values[a][i] is array a at
// points[i].
struct PointCloud {
  std::vector<Vec3> points;
  std::vector<std::vector<double>> values;
};

// A cloud sampled at points as a CSV file's is (inverse-distance weighting of the nearest points,
// the same outside rule); request.arrays names the cloud's arrays (same order), request.file is
// empty, request.where prefixes messages.
SampledFields sample_cloud(const PointCloud& cloud, const FieldRequest& request, std::span<const Vec3> points);

// VTK files are parsed in a child process first (isolation/isolated_read.hpp): a file that crashes
// VTK's readers is an InputError, not a crash of the run.
SampledFields sample_fields(const FieldRequest& request, std::span<const Vec3> points);

// Reads a .vtu/.vtk file and checks its cells, in this process: what the child (dgrte-read-check)
// runs. Only request.file and request.where are used.
void read_vtk_in_process(const FieldRequest& request);

}  // namespace dgrte::fields
