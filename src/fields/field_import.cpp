#include "fields/field_import.hpp"

#include "common/error.hpp"
#include "isolation/isolated_read.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nanoflann.hpp>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkCellTypes.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkGenericCell.h>
#include <vtkGenericDataObjectReader.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkProbeFilter.h>
#include <vtkSmartPointer.h>
#include <vtkStaticCellLocator.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace dgrte::fields {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string where_file(const FieldRequest& r) { return r.file.empty() ? r.where : fmt::format("{}: {}", r.where, r.file.string()); }

void finish_ranges(SampledFields& out, const FieldRequest& r) {
  for (std::size_t a = 0; a < r.arrays.size(); ++a) {
    const auto [lo, hi] = std::minmax_element(out.values[a].begin(), out.values[a].end());
    if (lo != out.values[a].end()) out.ranges[a].sampled_min = *lo, out.ranges[a].sampled_max = *hi;
  }
}

[[noreturn]] void outside_error(const FieldRequest& r, const SampledFields& s, std::size_t total, const std::string& what) {
  if (r.file.empty())  // a caller's cloud in memory (sample_cloud)
    throw InputError(fmt::format("{}: {} of {} radiation-mesh points lie outside the given {} (the first at ({:.6g}, {:.6g}, {:.6g})); "
                                 "give points that cover the radiation mesh, in the same units and frame",
                                 r.where, s.outside, total, what, s.first_outside[0], s.first_outside[1], s.first_outside[2]));
  throw InputError(fmt::format("{}: {} of {} points lie outside the {} (the first at ({:.6g}, {:.6g}, {:.6g})); check that the "
                               "field file covers the radiation mesh in the same units and frame, or set 'outside: nearest' "
                               "in the field entry to take the value at the closest point of the source",
                               where_file(r), s.outside, total, what, s.first_outside[0], s.first_outside[1], s.first_outside[2]));
}

// ---------------------------------------------------------------------------------------------
// VTK files.

// VTK readers report problems through events, not exceptions: collect them for one clear error.
class ErrorCollector : public vtkCommand {
 public:
  static ErrorCollector* New() { return new ErrorCollector; }
  void Execute(vtkObject*, unsigned long, void* data) override {
    failed = true;
    if (data && message.empty()) message = static_cast<const char*>(data);
  }
  bool failed = false;
  std::string message;
};

vtkSmartPointer<vtkDataSet> read_vtk(const FieldRequest& r) {
  vtkNew<ErrorCollector> errors;
  vtkSmartPointer<vtkDataSet> ds;
  const auto ext = lower(r.file.extension().string());
  if (ext == ".vtu") {
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    // A quiet check first: a file that is not VTK XML makes the parser print before it fails.
    if (!reader->CanReadFile(r.file.c_str()))
      throw InputError(fmt::format("{}: not a VTK XML unstructured grid (.vtu) file (its header is not <VTKFile type=\"UnstructuredGrid\">)",
                                   where_file(r)));
    reader->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->SetFileName(r.file.c_str());
    reader->Update();
    ds = reader->GetOutput();
  } else {
    vtkNew<vtkGenericDataObjectReader> reader;
    reader->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->SetFileName(r.file.c_str());
    reader->Update();
    ds = vtkDataSet::SafeDownCast(reader->GetOutput());
  }
  if (errors->failed || !ds || ds->GetNumberOfPoints() == 0)
    throw InputError(fmt::format("{}: cannot read it as a VTK {} data set{}{}", where_file(r), ext == ".vtu" ? "XML unstructured grid (.vtu)" : "legacy (.vtk)",
                                 errors->message.empty() ? "" : ": ", errors->message));
  return ds;
}

// The cells' point lists, checked before any VTK filter walks them: VTK's readers accept connectivity
// that names points the file does not have, or a cell with too few points for its type, and the
// probe filter then reads out of bounds (found by fuzzing, tests/fuzz/corpus/field_import).
void check_cells(const FieldRequest& r, vtkCellArray* cells, const vtkUnsignedCharArray* types, vtkIdType num_points,
                 const char* what) {
  if (!cells) return;
  const vtkIdType n = cells->GetNumberOfCells();
  if (types && types->GetNumberOfTuples() != n)
    throw InputError(fmt::format("{}: {} cells but {} cell types; the file is inconsistent, write it again", where_file(r), n,
                                 types->GetNumberOfTuples()));
  const vtkIdType connectivity = cells->GetNumberOfConnectivityIds();
  vtkIdType previous = 0;
  for (vtkIdType c = 0; c <= n; ++c) {  // offsets: 0, ..., connectivity, non-decreasing
    const vtkIdType offset = cells->GetOffsetsArray()->GetComponent(c, 0);
    if ((c == 0 && offset != 0) || offset < previous || offset > connectivity || (c == n && offset != connectivity))
      throw InputError(fmt::format("{}: the {} offsets are inconsistent at cell {} (offset {}, {} connectivity entries); write the "
                                   "file again", where_file(r), what, c, offset, connectivity));
    previous = offset;
  }
  for (vtkIdType i = 0; i < connectivity; ++i) {
    const vtkIdType id = static_cast<vtkIdType>(cells->GetConnectivityArray()->GetComponent(i, 0));
    if (id < 0 || id >= num_points)
      throw InputError(fmt::format("{}: a {} cell names point {}, but the file has {} points (0..{}); write the file again",
                                   where_file(r), what, id, num_points, num_points - 1));
  }
  if (!types) return;
  for (vtkIdType c = 0; c < n; ++c) {
    const int type = types->GetValue(c);
    const vtkIdType size = cells->GetCellSize(c);
    int needed = -1;  // fixed point counts of the linear cells CFD codes write
    switch (type) {
      case VTK_VERTEX: needed = 1; break;
      case VTK_LINE: needed = 2; break;
      case VTK_TRIANGLE: needed = 3; break;
      case VTK_QUAD: case VTK_PIXEL: case VTK_TETRA: needed = 4; break;
      case VTK_PYRAMID: needed = 5; break;
      case VTK_WEDGE: needed = 6; break;
      case VTK_VOXEL: case VTK_HEXAHEDRON: needed = 8; break;
      case VTK_QUADRATIC_TETRA: needed = 10; break;
      case VTK_QUADRATIC_HEXAHEDRON: needed = 20; break;
      default: break;
    }
    // Cells VTK can interpolate in: linear, quadratic, polyhedra, Lagrange and Bezier (dgrte's own
    // solution.vtu). The abstract parametric and higher-order ids (51-67) crash the probe filter.
    const bool interpolable = (type >= VTK_VERTEX && type <= VTK_HEXAGONAL_PRISM) ||
                              (type >= VTK_QUADRATIC_EDGE && type <= VTK_TRIQUADRATIC_PYRAMID) || type == VTK_POLYHEDRON ||
                              (type >= VTK_LAGRANGE_CURVE && type <= VTK_BEZIER_PYRAMID);
    if (!interpolable || std::string(vtkCellTypes::GetClassNameFromTypeId(type)) == "UnknownClass")
      throw InputError(fmt::format("{}: cell {} has VTK cell type {}, which cannot be interpolated in; write the field with "
                                   "linear, quadratic or Lagrange cells", where_file(r), c, type));
    if ((needed > 0 && size != needed) || size < 1)
      throw InputError(fmt::format("{}: cell {} ({}) has {} points, but that type has {}; write the file again", where_file(r), c,
                                   vtkCellTypes::GetClassNameFromTypeId(type), size, needed));
  }
}

void check_topology(const FieldRequest& r, vtkDataSet* ds) {
  if (auto* grid = vtkUnstructuredGrid::SafeDownCast(ds)) {
    if (grid->GetNumberOfCells() > 0 && (!grid->GetCells() || !grid->GetCellTypesArray()))
      throw InputError(fmt::format("{}: cells without connectivity or types; write the file again", where_file(r)));
    check_cells(r, grid->GetCells(), grid->GetCellTypesArray(), grid->GetNumberOfPoints(), "grid");
    // (Polyhedra's face streams are not checked: tests/fuzz/README.md.)
  } else if (auto* poly = vtkPolyData::SafeDownCast(ds)) {
    for (auto* cells : {poly->GetVerts(), poly->GetLines(), poly->GetPolys(), poly->GetStrips()})
      check_cells(r, cells, nullptr, poly->GetNumberOfPoints(), "polygonal");
  }
}

vtkSmartPointer<vtkDataSet> read_checked_vtk(const FieldRequest& r) {
  auto ds = read_vtk(r);
  if (ds->GetNumberOfCells() == 0) throw InputError(fmt::format("{}: the data set has no cells to interpolate in", where_file(r)));
  check_topology(r, ds);
  return ds;
}

SampledFields sample_vtk(const FieldRequest& r, std::span<const Vec3> points) {
  isolation::check_in_child({.reader = "vtk",
                             .file = r.file,
                             .arguments = {r.where},
                             .context = where_file(r),
                             .library = "VTK's reader",
                             .remedy = "Write the file again from the CFD code or ParaView (File > Save Data)."});
  const auto ds = read_checked_vtk(r);
  // A copy holding only the requested arrays, so that the probe interpolates nothing else.
  vtkSmartPointer<vtkDataSet> src = vtkSmartPointer<vtkDataSet>::Take(ds->NewInstance());
  src->CopyStructure(ds);
  SampledFields out;
  std::vector<vtkDataArray*> arrays;
  std::vector<char> is_cell;
  for (const auto& name : r.arrays) {
    vtkDataArray* a = ds->GetPointData()->GetArray(name.c_str());
    const bool cell = a == nullptr;
    if (cell) a = ds->GetCellData()->GetArray(name.c_str());
    if (!a) {
      std::vector<std::string> have;
      for (int i = 0; i < ds->GetPointData()->GetNumberOfArrays(); ++i)
        if (const char* n = ds->GetPointData()->GetArrayName(i)) have.push_back(fmt::format("{} (point)", n));
      for (int i = 0; i < ds->GetCellData()->GetNumberOfArrays(); ++i)
        if (const char* n = ds->GetCellData()->GetArrayName(i)) have.push_back(fmt::format("{} (cell)", n));
      throw InputError(fmt::format("{}: no point or cell array named '{}'; the file has: {}", where_file(r), name,
                                   have.empty() ? "no arrays" : fmt::format("{}", fmt::join(have, ", "))));
    }
    if (a->GetNumberOfComponents() != 1)
      throw InputError(fmt::format("{}: array '{}' has {} components; a scalar (1 component) is needed", where_file(r), name,
                                   a->GetNumberOfComponents()));
    ArrayRange range{name, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 0, 0};
    for (vtkIdType i = 0; i < a->GetNumberOfTuples(); ++i) {
      const double v = a->GetTuple1(i);
      if (!std::isfinite(v))
        throw InputError(fmt::format("{}: array '{}' holds {} at {} {}; fix or remove the non-finite values", where_file(r), name, v,
                                     cell ? "cell" : "point", i));
      range.source_min = std::min(range.source_min, v), range.source_max = std::max(range.source_max, v);
    }
    out.ranges.push_back(range);
    if (cell)
      src->GetCellData()->AddArray(a);
    else
      src->GetPointData()->AddArray(a);
    arrays.push_back(a);
    is_cell.push_back(cell ? 1 : 0);
  }
  const bool any_cell = std::count(is_cell.begin(), is_cell.end(), 1) > 0, any_point = std::count(is_cell.begin(), is_cell.end(), 0) > 0;
  out.source_kind = any_cell && any_point ? "point and cell data" : any_cell ? "cell data" : "point data";
  out.method = any_cell && any_point ? "linear in the source cells (point data), the containing cell's value (cell data)"
               : any_cell           ? "the containing cell's value"
                                    : "linear in the source cells";
  out.source_points = static_cast<std::size_t>(any_point ? ds->GetNumberOfPoints() : ds->GetNumberOfCells());

  vtkNew<vtkPoints> pts;
  pts->SetDataTypeToDouble();
  pts->SetNumberOfPoints(static_cast<vtkIdType>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) pts->SetPoint(static_cast<vtkIdType>(i), points[i].data());
  vtkNew<vtkPolyData> targets;
  targets->SetPoints(pts);
  vtkNew<vtkProbeFilter> probe;
  probe->SetInputData(targets);
  probe->SetSourceData(src);
  probe->Update();
  vtkDataSet* probed = probe->GetOutput();
  vtkDataArray* mask = probed->GetPointData()->GetArray(probe->GetValidPointMaskArrayName());
  out.values.assign(r.arrays.size(), std::vector<double>(points.size()));
  for (std::size_t a = 0; a < r.arrays.size(); ++a) {
    vtkDataArray* v = probed->GetPointData()->GetArray(r.arrays[a].c_str());
    if (!v) throw std::logic_error("vtkProbeFilter lost array " + r.arrays[a]);
    for (std::size_t i = 0; i < points.size(); ++i) out.values[a][i] = v->GetTuple1(static_cast<vtkIdType>(i));
  }
  // Points outside every cell: an error, or the value at the closest point of the source.
  vtkSmartPointer<vtkStaticCellLocator> locator;
  vtkNew<vtkGenericCell> cell;
  std::vector<double> weights(static_cast<std::size_t>(std::max(1, src->GetMaxCellSize())));
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (mask && mask->GetTuple1(static_cast<vtkIdType>(i)) != 0) continue;
    if (out.outside++ == 0) out.first_outside = points[i];
    if (!r.nearest_outside) continue;
    if (!locator) {
      locator = vtkSmartPointer<vtkStaticCellLocator>::New();
      locator->SetDataSet(src);
      locator->BuildLocator();
    }
    double closest[3], pcoords[3], d2 = 0, d2cell = 0;
    vtkIdType cell_id = -1;
    int sub = 0;
    double x[3] = {points[i][0], points[i][1], points[i][2]};
    locator->FindClosestPoint(x, closest, cell, cell_id, sub, d2);
    if (cell_id < 0) throw std::logic_error("vtkStaticCellLocator found no closest cell");
    double on_cell[3];
    cell->EvaluatePosition(closest, on_cell, sub, pcoords, d2cell, weights.data());
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      if (is_cell[a]) {
        out.values[a][i] = arrays[a]->GetTuple1(cell_id);
        continue;
      }
      double v = 0;
      for (vtkIdType p = 0; p < cell->GetNumberOfPoints(); ++p) v += weights[static_cast<std::size_t>(p)] * arrays[a]->GetTuple1(cell->GetPointId(p));
      out.values[a][i] = v;
    }
  }
  if (out.outside > 0 && !r.nearest_outside) outside_error(r, out, points.size(), "cells of the field file");
  finish_ranges(out, r);
  return out;
}

// ---------------------------------------------------------------------------------------------
// CSV point clouds.

struct Cloud {
  std::span<const Vec3> points;
  std::size_t kdtree_get_point_count() const { return points.size(); }
  double kdtree_get_pt(std::size_t i, std::size_t d) const { return points[i][d]; }
  template <class Box>
  bool kdtree_get_bbox(Box&) const {
    return false;
  }
};
using KdTree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 3, std::size_t>;

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t\r\"");
    const auto e = item.find_last_not_of(" \t\r\"");
    out.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

SampledFields sample_csv(const FieldRequest& r, std::span<const Vec3> points) {
  std::ifstream in(r.file);
  if (!in) throw InputError(fmt::format("{}: cannot open the file (check the path, relative to the case file)", where_file(r)));
  std::string line;
  std::vector<std::string> header;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t\r")] == '#') continue;
    header = split_csv(line);
    break;
  }
  if (header.empty()) throw InputError(fmt::format("{}: no header line (expected e.g. x,y,z,T,x_h2o)", where_file(r)));
  auto column = [&](const std::string& name, bool case_insensitive) -> std::size_t {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name || (case_insensitive && lower(header[c]) == lower(name))) return c;
    throw InputError(fmt::format("{}: no column '{}' in the header (line {}: {})", where_file(r), name, line_no, fmt::join(header, ",")));
  };
  const std::size_t cx = column("x", true), cy = column("y", true), cz = column("z", true);
  std::vector<std::size_t> cols;
  for (const auto& a : r.arrays) cols.push_back(column(a, false));
  PointCloud cloud;
  auto& data = cloud.values;
  data.resize(r.arrays.size());
  while (std::getline(in, line)) {
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto f = split_csv(line);
    if (f.size() != header.size())
      throw InputError(fmt::format("{} (line {}): {} values, but the header has {} columns", where_file(r), line_no, f.size(), header.size()));
    auto number = [&](std::size_t c) {
      double v = 0;
      const auto* b = f[c].data();
      const auto res = std::from_chars(b, b + f[c].size(), v);
      if (res.ec != std::errc() || res.ptr != b + f[c].size() || !std::isfinite(v))
        throw InputError(fmt::format("{} (line {}): column '{}' holds '{}', not a finite number", where_file(r), line_no, header[c], f[c]));
      return v;
    };
    cloud.points.push_back({number(cx), number(cy), number(cz)});
    for (std::size_t a = 0; a < cols.size(); ++a) data[a].push_back(number(cols[a]));
  }
  if (cloud.points.empty()) throw InputError(fmt::format("{}: no data rows after the header", where_file(r)));
  return sample_cloud(cloud, r, points);
}

}  // namespace

SampledFields sample_cloud(const PointCloud& source, const FieldRequest& r, std::span<const Vec3> points) {
  if (source.points.empty()) throw InputError(fmt::format("{}: the point cloud is empty", where_file(r)));
  const Cloud cloud{source.points};
  const auto& data = source.values;
  SampledFields out;
  out.source_kind = "point cloud";
  out.source_points = cloud.points.size();
  const std::size_t k = std::min<std::size_t>(8, cloud.points.size());
  out.method = fmt::format("inverse-distance weighting (1/d^2) of the {} nearest points", k);
  for (std::size_t a = 0; a < data.size(); ++a) {
    const auto [lo, hi] = std::minmax_element(data[a].begin(), data[a].end());
    out.ranges.push_back({r.arrays[a], *lo, *hi, 0, 0});
  }
  const KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
  // Outside: farther from every source point than twice the cloud's largest nearest-neighbour
  // spacing (a point inside a regular grid cell is at most 0.87 spacings from a corner).
  out.max_distance = r.max_distance;
  if (!(out.max_distance > 0)) {
    double spacing = 0;
    if (cloud.points.size() > 1) {
#pragma omp parallel for reduction(max : spacing) schedule(static)
      for (std::size_t i = 0; i < cloud.points.size(); ++i) {
        std::size_t idx[2];
        double d2[2];
        tree.knnSearch(cloud.points[i].data(), 2, idx, d2);
        spacing = std::max(spacing, std::sqrt(d2[1]));
      }
    }
    out.max_distance = 2.0 * spacing;
  }
  out.values.assign(r.arrays.size(), std::vector<double>(points.size()));
  std::vector<char> outside(points.size(), 0);
  const double exact2 = 1e-24 * (out.max_distance * out.max_distance + 1e-300);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::size_t idx[8];
    double d2[8];
    const std::size_t found = tree.knnSearch(points[i].data(), k, idx, d2);
    outside[i] = std::sqrt(d2[0]) > out.max_distance ? 1 : 0;
    for (std::size_t a = 0; a < data.size(); ++a) {
      double num = 0, den = 0;
      if (d2[0] <= exact2 || (outside[i] && r.nearest_outside)) {
        num = data[a][idx[0]], den = 1;  // on a source point, or the nearest value outside
      } else {
        for (std::size_t j = 0; j < found; ++j) num += data[a][idx[j]] / d2[j], den += 1.0 / d2[j];
      }
      out.values[a][i] = num / den;
    }
  }
  for (std::size_t i = 0; i < points.size(); ++i)
    if (outside[i] && out.outside++ == 0) out.first_outside = points[i];
  if (out.outside > 0 && !r.nearest_outside)
    outside_error(r, out, points.size(), fmt::format("point cloud (farther than {:.4g} from every source point)", out.max_distance));
  finish_ranges(out, r);
  return out;
}

void read_vtk_in_process(const FieldRequest& request) { read_checked_vtk(request); }

SampledFields sample_fields(const FieldRequest& request, std::span<const Vec3> points) {
  if (!std::filesystem::exists(request.file))
    throw InputError(fmt::format("{}: the field file does not exist (paths are relative to the case file)", where_file(request)));
  const auto ext = lower(request.file.extension().string());
  if (ext == ".csv" || ext == ".txt") return sample_csv(request, points);
  if (ext == ".vtu" || ext == ".vtk") return sample_vtk(request, points);
  throw InputError(fmt::format("{}: unknown field file type '{}'; use .vtu, .vtk (VTK) or .csv (point cloud x,y,z,...)",
                               where_file(request), ext));
}

}  // namespace dgrte::fields
