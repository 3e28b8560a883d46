#pragma once
// Adaptive refinement (issue 32, `refine:` in a case file): which elements to refine, the size field
// that re-meshes them finer, and the transfer of a solution to the next discretisation (the next
// cycle's initial guess). The loop itself is app::run_case's (solve, estimate, refine).
#include "adapt/error_indicator.hpp"
#include "io/case_file.hpp"
#include "mesh/tet_mesh.hpp"
#include "transport/discretization.hpp"

#include <span>
#include <vector>

namespace dgrte::adapt {

// Doerfler (bulk) marking (Doerfler 1996): the fewest elements, largest indicators first, whose
// squared indicators sum to at least theta of the total.
inline constexpr double kMarkingFraction = 0.5;
std::vector<bool> doerfler_marking(const std::vector<double>& eta, double theta = kMarkingFraction);

// The relative estimate refine.target is compared with, and the element indicators that mark for it:
// G, the wall flux, or both (each relative to its norm; both: the larger estimate, and per element
// the root sum of squares of the two relative indicators), or div q. norm l2: the L2 estimate over
// the domain relative to the L2 norm; max: the largest nodal difference relative to the largest
// |value| (ErrorIndicator::max_relative_*); probes: the largest on a probe line (probe_relative_*).
double relative_estimate(const ErrorIndicator& ind, io::RefineQuantity q, io::RefineNorm norm = io::RefineNorm::l2);
std::vector<double> marking_indicator(const ErrorIndicator& ind, io::RefineQuantity q);

// The elements to refine: norm l2, Doerfler marking of marking_indicator; norm max, every element
// whose largest nodal difference (of the quantity; both: of either) is above the target times the
// largest |value| (the maximum strategy: refine where the pointwise target is not met); norm
// probes, Doerfler marking of marking_indicator and the elements holding a probe point above the
// target (element_probe_*).
std::vector<bool> mark_elements(const ErrorIndicator& ind, const io::RefineSpec& spec);

// The size each vertex of `mesh` was meshed with: what Gmsh was asked for, `previous` (the field that
// made `mesh`, on the mesh before it) interpolated at the vertex, or `size` everywhere when `mesh` was
// made with a uniform size (previous null). Why not the measured edges: Gmsh's edges come out
// somewhat longer than asked, and sizes taken from them again each cycle would coarsen the unmarked
// elements cycle by cycle.
std::vector<double> requested_sizes(const mesh::TetMesh& mesh, const mesh::SizeField* previous, double size);

// The size field of the next mesh: per element the mean of its vertices' requested sizes, halved
// where marked; at each vertex the smallest of its elements' (a refined element's neighbours grade
// towards it).
mesh::SizeField refined_size_field(const mesh::TetMesh& mesh, const std::vector<bool>& marked, std::span<const double> requested);

// Fields of `from` (one per ordinate, nodal) evaluated at the nodes of `to` (another mesh of the same
// domain, or another order): each node's value by the polynomial of the element of `from` that
// contains it; a node outside `from` (a curved wall re-meshed) takes that of the nearest element.
std::vector<std::vector<double>> transfer_fields(const transport::Discretization& from, const transport::Discretization& to,
                                                 const std::vector<std::vector<double>>& fields);

}  // namespace dgrte::adapt
