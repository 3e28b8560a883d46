#pragma once
// Transport sweeps: for one direction the upwind DG system is block lower-triangular once the
// elements are ordered along the direction, so one ordered pass with an element-local solve per
// element (a sweep) solves it exactly (Reed & Hill 1973; OpenSn's SPDS). Dependency cycles of
// unstructured tets are cut by lagging the lightest faces (weight |s.n| area); lagged faces take
// the neighbour's value of the previous pass and a few passes converge them.
#include "transport/transport_backend.hpp"
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace dgrte::transport {

// Faces with |s.n| below this are tangent to the direction: no upwind coupling on either side.
// Deciding it once with one threshold keeps the two sides of a face consistent (two independently
// computed normals can both look "inflow" by round-off).
inline constexpr double kTangentTolerance = 1e-12;

// c_ef = (sJ/J)(s.n) on inflow faces (s.n < -tol), else 0: the only upwind test in the code.
inline double inflow_coefficient(const dg::ElementGeometry& g, int f, const Vec3& s) {
  const double sn = s[0] * g.normal[f][0] + s[1] * g.normal[f][1] + s[2] * g.normal[f][2];
  return sn < -kTangentTolerance ? g.face_scale[f] * sn : 0.0;
}

struct SweepPlan {
  Vec3 direction{};
  std::vector<int> order;        // elements in a valid upwind order
  std::vector<int> level_begin;  // order[level_begin[l] .. level_begin[l+1]) can run in parallel (and are solved together)
  std::vector<std::uint8_t> lagged_faces;  // per element: bit f set = inflow face f is lagged
  std::vector<std::uint8_t> inflow_faces;  // per element: bit f set = face f is an interior inflow face
  std::size_t lagged = 0;        // number of lagged faces
  double lagged_fraction = 0;    // lagged / interior inflow faces
  int cycles = 0;                // strongly connected components broken
  std::size_t partition_faces = 0;  // inflow faces from elements the plan does not solve (a rank's ghosts), lagged
  std::size_t num_levels() const { return level_begin.empty() ? 0 : level_begin.size() - 1; }
  std::size_t bytes() const {
    return order.size() * sizeof(int) + level_begin.size() * sizeof(int) + lagged_faces.size() + inflow_faces.size();
  }
};

// Upwind graph of direction s (interior faces only), ordered into levels; cycles cut. solved: only
// elements [0, solved) are ordered and solved (a distributed mesh's owned elements; the ghosts
// after them are inputs): their inflow faces from elements >= solved are lagged, so a pass reads
// them from `lagged` (the last ghost exchange) or as zero (the block-Jacobi preconditioner).
SweepPlan plan_sweep(const Discretization& disc, const Vec3& s, std::size_t solved = static_cast<std::size_t>(-1));

struct SweepResult {
  int passes = 1;             // sweeps done: 1 without lagged faces
  double lagged_change = 0;   // max relative change of the last pass (0 if exact)
  long limited = 0;           // elements scaled by the positivity limiter (last pass)
  // |rhs - L u| / |rhs| over the elements the plan solves, from the element blocks as the sweep
  // assembled them (measure_residual on a plan without lagged or partition faces: the one pass used
  // final upwind values, so these are exactly the rows of L u - rhs); -1 where not measured (NaN
  // where u has NaN).
  double relative_residual = -1;
};

// Solves L u = rhs for direction s (rhs already holds the boundary inflow lift): one pass if the
// plan has no lagged faces; otherwise passes until the max change of u relative to max|u| is
// below tol (lagged faces read the previous pass; u is the initial guess). sigma_t: the extinction
// term (transport/reaction.hpp). A plan over a rank's owned elements reads the inflow of its partition
// faces from u's ghost block (set by the caller; never written here).
//
// positivity: where an element's solution has a negative nodal value, it is blended with the
// element's first-order upwind solution (the constant u0 >= 0 with the same element balance:
// sources + inflow = absorption + outflow), u <- u0 + theta (u - u0), theta the largest value
// keeping every node >= 0 (a scaling limiter in the spirit of Zhang & Shu 2010, towards a positive
// conservative state rather than the mean). Both states satisfy the element balance, so energy is
// conserved exactly; the limited values feed the downstream elements. Nonlinear: not for a Krylov
// outer iteration.
//
// coupling (a distributed mesh, plan over the owned elements): before each pass `exchange` fills the
// ghost block of the previous pass's values (what partition faces read), the change is measured
// over the first `owned` values and reduced over the ranks by `reduce_max` (both of {change,
// scale}); passes run even without lagged faces here, since other ranks may have them.
struct PassCoupling {
  std::size_t owned = 0;
  std::function<void(std::span<double>)> exchange;
  std::function<void(double* change_and_scale)> reduce_max;
};
SweepResult sweep_solve(const Discretization& disc, const SweepPlan& plan, const ReactionTerm& sigma_t,
                        std::span<const double> rhs, std::span<double> u, double tol = 1e-12, int max_passes = 200,
                        bool positivity = false, const PassCoupling* coupling = nullptr, bool measure_residual = false);

// How a pass does its element solves: `interleaved` solves the elements of a level in groups, one
// SIMD lane each (4 with AVX2, 8 with AVX-512); `one_by_one` element by element (the reference the
// parity test and the benchmark compare with). Same answers to round-off.
enum class ElementSolves { interleaved, one_by_one };

// One pass: u = P^-1 (rhs + C lagged), lagged faces reading `lagged` (empty: zero; must not alias u).
// Returns the number of elements the positivity limiter changed.
// element_residuals (empty: none; else one value per element): |r_e - B_e u_e|^2 of each element's
// system as assembled (its rows of the residual when the upwind values it read were final).
long sweep_pass(const Discretization& disc, const SweepPlan& plan, const ReactionTerm& sigma_t,
                std::span<const double> rhs, std::span<double> u, std::span<const double> lagged, bool positivity = false,
                ElementSolves solves = ElementSolves::interleaved, std::span<double> element_residuals = {});

// The sweep as the preconditioner of Bi-CGSTAB (`solver.preconditioner: sweep`): the operator of
// `op`, and P^-1 r = one pass with the lagged faces reading zero, i.e. the exact inverse of the
// operator without its lagged couplings. Exact on cycle-free plans (Bi-CGSTAB converges in one
// iteration); with lagged faces the Krylov iteration closes the gap (right preconditioning). The
// plan must be that of the direction passed to set_direction.
class SweepPreconditioned final : public transport::TransportBackend {
 public:
  SweepPreconditioned(transport::TransportBackend& op, const Discretization& disc, const SweepPlan& plan,
                      const ReactionTerm& sigma_t)
      : op_(op), disc_(disc), plan_(plan), sigma_t_(sigma_t) {}
  std::size_t size() const override { return op_.size(); }
  void set_direction(const Vec3& s, const ReactionTerm& sigma_t, transport::BlockKind blocks) override;
  void apply(std::span<const double> u, std::span<double> y) override { op_.apply(u, y); }
  void precondition(std::span<const double> r, std::span<double> z) override;
  std::size_t preconditioner_bytes() const override { return plan_.bytes(); }

 private:
  transport::TransportBackend& op_;
  const Discretization& disc_;
  const SweepPlan& plan_;
  const ReactionTerm& sigma_t_;
};

}  // namespace dgrte::transport
