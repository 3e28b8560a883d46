#include "transport/sweep.hpp"

#include "common/error.hpp"
#include "transport/element_solve.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

namespace dgrte::transport {
namespace {

// Strongly connected components (Tarjan, iterative) of the remaining elements' upwind graph.
// edges(e, visit) calls visit(downstream element) for every non-lagged upwind edge e -> d.
template <typename Edges>
std::vector<std::vector<int>> strong_components(const std::vector<int>& nodes, const std::vector<char>& remaining,
                                                std::size_t K, Edges&& edges) {
  std::vector<int> index(K, -1), low(K, 0);
  std::vector<char> on_stack(K, 0);
  std::vector<int> stack;
  std::vector<std::vector<int>> comps;
  int counter = 0;
  struct Frame {
    int v;
    std::vector<int> next;
    std::size_t i = 0;
  };
  for (int root : nodes) {
    if (index[root] >= 0) continue;
    std::vector<Frame> call;
    auto push = [&](int v) {
      index[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack[v] = 1;
      Frame fr{v, {}, 0};
      edges(v, [&](int d) {
        if (remaining[d]) fr.next.push_back(d);
      });
      call.push_back(std::move(fr));
    };
    push(root);
    while (!call.empty()) {
      auto& fr = call.back();
      if (fr.i < fr.next.size()) {
        const int w = fr.next[fr.i++];
        if (index[w] < 0) push(w);
        else if (on_stack[w]) low[fr.v] = std::min(low[fr.v], index[w]);
        continue;
      }
      const int v = fr.v;
      call.pop_back();
      if (!call.empty()) low[call.back().v] = std::min(low[call.back().v], low[v]);
      if (low[v] == index[v]) {
        std::vector<int> comp;
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          comp.push_back(w);
        } while (w != v);
        if (comp.size() > 1) comps.push_back(std::move(comp));
      }
    }
  }
  return comps;
}

using element_solve::element_kernel;
using element_solve::ElementKernel;
using element_solve::GroupKernel;
using element_solve::group_kernel;
using element_solve::LocalMatrices;
using element_solve::PassInputs;

// Spin briefly, then yield: the awaited upwind element is being solved by another thread now.
inline void wait_until_done(const std::atomic<std::uint8_t>& flag) {
  for (int spins = 0; !flag.load(std::memory_order_acquire); ++spins)
    if (spins > 64) std::this_thread::yield();
}

// Set bits of a 4-bit face mask (std::popcount is a libgcc call without -mpopcnt).
constexpr int face_count(unsigned mask) { return static_cast<int>((mask & 1) + (mask >> 1 & 1) + (mask >> 2 & 1) + (mask >> 3 & 1)); }

// Groups of at most `lanes` consecutive elements of the order inside one level (independent
// elements, solved together by the interleaved kernel): begin offsets into plan.order, then its size.
std::vector<std::size_t> level_groups(const SweepPlan& plan, std::size_t lanes) {
  std::vector<std::size_t> begin;
  const std::size_t K = plan.order.size();
  for (std::size_t l = 0; l + 1 < plan.level_begin.size(); ++l) {
    const auto end = static_cast<std::size_t>(plan.level_begin[l + 1]);
    for (auto k = static_cast<std::size_t>(plan.level_begin[l]); k < end; k += lanes) begin.push_back(k);
  }
  begin.push_back(K);
  return begin;
}

// One pass in the plan's order with the kernels of NP nodes: groups of a level's elements through
// the interleaved kernel (a group of one, or ElementSolves::one_by_one, through the scalar one).
// Inside a direction-parallel region (the gray solve): serial, the caller's threads are busy with
// other directions. One direction alone: the threads claim the groups in order and each group
// waits only for the groups of its non-lagged upwind neighbours (a done flag per group), so no
// thread ever waits at a level barrier; a per-level barrier cost ~0.1 ms each with passive waiting,
// which is most of a P1 sweep of 400 levels. Deadlock-free: a group waits only on groups of earlier
// levels, which were claimed before it.
template <int NP>
long sweep_elements(const Discretization& disc, const LocalMatrices& lm, const SweepPlan& plan, const ReactionTerm& sigma_t,
                    const double* rhs, double* u, const double* lagged, bool positivity, ElementSolves solves,
                    double* element_residuals) {
  const double* sigma_nodal = sigma_t.nodal().data();
  const auto np = static_cast<std::size_t>(lm.np);
  const ElementKernel solve_one = element_kernel<NP>();
  const GroupKernel group = group_kernel<NP>();
  const auto lanes = static_cast<std::size_t>(solves == ElementSolves::interleaved ? group.lanes : 1);
  const auto groups = level_groups(plan, lanes);
  const PassInputs in{disc, lm, plan.direction, plan.lagged_faces.data(), lagged, positivity, sigma_t, rhs, u, element_residuals};
  const std::size_t num_groups = groups.size() - 1;
  auto solve_at = [&](std::size_t g, double* B, double* r) -> long {
    const std::size_t begin = groups[g], count = groups[g + 1] - begin;
    if (count > 1) return group.solve(in, plan.order.data() + begin, static_cast<int>(count), B, r);
    const auto e = static_cast<std::size_t>(plan.order[begin]);
    return solve_one(disc, lm, plan.direction, plan.lagged_faces[e], lagged, positivity, e, sigma_nodal + e * np, sigma_t.block(e),
                     rhs + e * np, u, B, r, element_residuals ? element_residuals + e : nullptr);
  };
  long limited = 0;
  if (omp_in_parallel() || omp_get_max_threads() == 1) {
    element_solve::SolveWorkspace work(lm, lanes);
    for (std::size_t g = 0; g < num_groups; ++g) limited += solve_at(g, work.B.data(), work.r.data());
    return limited;
  }
  const auto& mesh = *disc.mesh;
  // A done flag per group, not per element: a flag written by one thread and read by the other moves
  // a cache line between the cores, and per element that traffic cost as much as the solves.
  std::vector<std::uint32_t> group_of(disc.num_elements(), 0);
  for (std::size_t g = 0; g < num_groups; ++g)
    for (std::size_t k = groups[g]; k < groups[g + 1]; ++k) group_of[static_cast<std::size_t>(plan.order[k])] = static_cast<std::uint32_t>(g);
  std::vector<std::atomic<std::uint8_t>> done(num_groups);
  std::atomic<std::size_t> next{0};
  const std::size_t chunk = std::max<std::size_t>(1, 8 / lanes);  // groups per claim: ~8 elements
#pragma omp parallel reduction(+ : limited)
  {
    element_solve::SolveWorkspace work(lm, lanes);
    for (std::size_t first; (first = next.fetch_add(chunk, std::memory_order_relaxed)) < num_groups;)
      for (std::size_t g = first; g < std::min(first + chunk, num_groups); ++g) {
        for (std::size_t k = groups[g]; k < groups[g + 1]; ++k) {
          const auto e = static_cast<std::size_t>(plan.order[k]);
          // Faces whose upwind element must be done first: interior, inflow, not lagged (faces from
          // elements the plan does not solve, a rank's ghosts, are lagged inputs).
          const unsigned upwind = plan.inflow_faces[e] & ~static_cast<unsigned>(plan.lagged_faces[e]);
          for (int f = 0; f < 4; ++f)
            if ((upwind >> f) & 1) wait_until_done(done[group_of[static_cast<std::size_t>(mesh.neighbour[e][f])]]);
        }
        limited += solve_at(g, work.B.data(), work.r.data());
        done[g].store(1, std::memory_order_release);
      }
  }
  return limited;
}

}  // namespace

SweepPlan plan_sweep(const Discretization& disc, const Vec3& s, std::size_t solved) {
  const auto& mesh = *disc.mesh;
  const std::size_t K = std::min(solved, disc.num_elements());
  SweepPlan plan;
  plan.direction = s;
  plan.lagged_faces.assign(disc.num_elements(), 0);
  plan.inflow_faces.assign(disc.num_elements(), 0);
  std::vector<int> indegree(K, 0);
  std::size_t interior_inflow = 0;
  // One pass in element order over the geometry, without branches (an inflow face is a coin toss
  // to the branch predictor): the level walk below reads these bits instead of recomputing s.n at
  // scattered neighbours.
  const auto elements = static_cast<std::ptrdiff_t>(K);
  std::size_t partition_faces = 0;
#pragma omp parallel for schedule(static) reduction(+ : partition_faces, interior_inflow) if (!omp_in_parallel())
  for (std::ptrdiff_t ei = 0; ei < elements; ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    unsigned inflow = 0, unsolved = 0;
    for (int f = 0; f < 4; ++f) {
      const int u = mesh.neighbour[e][f];
      inflow |= static_cast<unsigned>((u >= 0) & (inflow_coefficient(disc.geometry[e], f, s) != 0.0)) << f;
      unsolved |= static_cast<unsigned>(static_cast<std::size_t>(u) >= K) << f;  // a rank's ghost (u < 0 is not inflow)
    }
    plan.inflow_faces[e] = static_cast<std::uint8_t>(inflow);
    plan.lagged_faces[e] = static_cast<std::uint8_t>(inflow & unsolved);  // inputs from elements not solved here
    partition_faces += static_cast<std::size_t>(face_count(inflow & unsolved));
    indegree[e] = face_count(inflow & ~unsolved);
    interior_inflow += static_cast<std::size_t>(indegree[e]);
  }
  plan.partition_faces = partition_faces;
  // Per element, the faces leading downstream (to a solved element for which the face is inflow),
  // so that the level walk visits only those, without a branch per face.
  std::vector<std::uint8_t> downstream_faces(K, 0);
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
  for (std::ptrdiff_t ei = 0; ei < elements; ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    unsigned down = 0;
    for (int f = 0; f < 4; ++f) {
      const int d = mesh.neighbour[e][f];
      const bool solved = d >= 0 && static_cast<std::size_t>(d) < K;
      down |= static_cast<unsigned>(solved && ((plan.inflow_faces[static_cast<std::size_t>(d)] >> mesh.neighbour_face[e][f]) & 1)) << f;
    }
    downstream_faces[e] = static_cast<std::uint8_t>(down);
  }
  // Downstream edges of e: neighbours d across faces that are inflow faces of d, not lagged.
  auto downstream = [&](int e, auto&& visit) {
    for (unsigned m = downstream_faces[static_cast<std::size_t>(e)]; m != 0; m &= m - 1) {
      const int f = __builtin_ctz(m);
      const int d = mesh.neighbour[e][f];
      if (!((plan.lagged_faces[d] >> mesh.neighbour_face[e][f]) & 1)) visit(d);
    }
  };
  std::vector<int> current;
  for (std::size_t e = 0; e < K; ++e)
    if (indegree[e] == 0) current.push_back(static_cast<int>(e));
  std::vector<char> remaining(K, 1);
  std::vector<int> next;
  plan.order.reserve(K);
  plan.level_begin.push_back(0);
  while (plan.order.size() < K) {
    if (current.empty()) {
      // Cycle: cut the lightest upwind face inside each strongly connected component.
      std::vector<int> left;
      for (std::size_t e = 0; e < K; ++e)
        if (remaining[e]) left.push_back(static_cast<int>(e));
      const auto comps = strong_components(left, remaining, K, downstream);
      if (comps.empty()) throw std::logic_error("plan_sweep: no ready element and no cycle");
      std::vector<char> in_comp(K, 0);
      for (const auto& comp : comps) {
        for (int v : comp) in_comp[v] = 1;
        double best = 1e300;
        int be = -1, bf = -1;
        for (int v : comp)
          for (int f = 0; f < 4; ++f) {
            const int u = mesh.neighbour[v][f];
            if (u < 0 || static_cast<std::size_t>(u) >= K || !in_comp[u] || ((plan.lagged_faces[v] >> f) & 1)) continue;
            const double c = inflow_coefficient(disc.geometry[v], f, s);
            if (c == 0.0) continue;
            const double w = -c * disc.geometry[v].jacobian;  // |s.n| sJ: proportional to |s.n| area
            if (w < best) best = w, be = v, bf = f;
          }
        for (int v : comp) in_comp[v] = 0;
        plan.lagged_faces[be] |= static_cast<std::uint8_t>(1u << bf);
        ++plan.lagged;
        ++plan.cycles;
        if (--indegree[be] == 0) current.push_back(be);
      }
      continue;
    }
    std::sort(current.begin(), current.end());
    next.clear();
    for (int e : current) {
      remaining[e] = 0;
      plan.order.push_back(e);
      downstream(e, [&](int d) {
        if (--indegree[d] == 0) next.push_back(d);
      });
    }
    plan.level_begin.push_back(static_cast<int>(plan.order.size()));
    current.swap(next);
  }
  plan.lagged_fraction = interior_inflow ? static_cast<double>(plan.lagged) / static_cast<double>(interior_inflow) : 0.0;
  return plan;
}

void SweepPreconditioned::set_direction(const Vec3& s, const ReactionTerm& sigma_t, transport::BlockKind /*blocks: the sweep*/) {
  const auto& d = plan_.direction;
  if (std::abs(d[0] - s[0]) + std::abs(d[1] - s[1]) + std::abs(d[2] - s[2]) > 1e-14)
    throw std::logic_error("SweepPreconditioned: the sweep plan belongs to another direction");
  op_.set_direction(s, sigma_t, transport::BlockKind::none);
}

void SweepPreconditioned::precondition(std::span<const double> r, std::span<double> z) {
  sweep_pass(disc_, plan_, sigma_t_, r, z, {});
}

long sweep_pass(const Discretization& disc, const SweepPlan& plan, const ReactionTerm& sigma_t,
                std::span<const double> rhs, std::span<double> u, std::span<const double> lagged, bool positivity,
                ElementSolves solves, std::span<double> element_residuals) {
  // The passes read the plan's levels (groups) and inflow bits: a plan from plan_sweep.
  if (plan.level_begin.empty() || plan.level_begin.front() != 0 || static_cast<std::size_t>(plan.level_begin.back()) != plan.order.size() ||
      plan.inflow_faces.size() != disc.num_elements())
    throw std::logic_error("sweep_pass: the plan's levels or inflow faces do not match its order (make plans with plan_sweep)");
  const LocalMatrices lm(disc.ref);
  const double* lagged_values = lagged.empty() ? nullptr : lagged.data();
  auto run = [&]<int NP>() {
    return sweep_elements<NP>(disc, lm, plan, sigma_t, rhs.data(), u.data(), lagged_values, positivity, solves,
                              element_residuals.empty() ? nullptr : element_residuals.data());
  };
  switch (lm.np) {  // P1..P8 with the size fixed at compile time
    case 4: return run.template operator()<4>();
    case 10: return run.template operator()<10>();
    case 20: return run.template operator()<20>();
    case 35: return run.template operator()<35>();
    case 56: return run.template operator()<56>();
    case 84: return run.template operator()<84>();
    case 120: return run.template operator()<120>();
    case 165: return run.template operator()<165>();
    default: return run.template operator()<0>();
  }
}

SweepResult sweep_solve(const Discretization& disc, const SweepPlan& plan, const ReactionTerm& sigma_t,
                        std::span<const double> rhs, std::span<double> u, double tol, int max_passes, bool positivity,
                        const PassCoupling* coupling, bool measure_residual) {
  SweepResult res;
  if (plan.lagged == 0 && !coupling) {
    // Partition faces alone read the ghost block of u (the angular solve's inflow from other ranks):
    // the pass never writes a ghost, so reading u there is no aliasing.
    // The measured residual is the operator's only where every upwind value was final: no lagged
    // bit set (the counter aside) and no partition face.
    const bool exact = plan.partition_faces == 0 && std::none_of(plan.lagged_faces.begin(), plan.lagged_faces.end(),
                                                                 [](std::uint8_t bits) { return bits != 0; });
    std::vector<double> element_residuals(measure_residual && exact ? disc.num_elements() : 0);
    res.limited = sweep_pass(disc, plan, sigma_t, rhs, u, plan.partition_faces ? std::span<const double>(u) : std::span<const double>(),
                             positivity, ElementSolves::interleaved, element_residuals);
    if (!element_residuals.empty()) {  // over the solved elements, in order: the same bits whatever the threads did
      const auto np = static_cast<std::size_t>(disc.ref.num_nodes);
      double r2 = 0, b2 = 0;
      for (const int e : plan.order) {
        const auto ue = static_cast<std::size_t>(e);
        r2 += element_residuals[ue];
        for (std::size_t i = ue * np; i < (ue + 1) * np; ++i) b2 += rhs[i] * rhs[i];
      }
      res.relative_residual = b2 > 0 ? std::sqrt(r2 / b2) : std::sqrt(r2);
    }
    return res;
  }
  // Passes, lagged faces reading the previous pass (a separate array: the same linear map whatever
  // the threads' order). Sweep-preconditioned Bi-CGSTAB on (I - P^-1 C) u = P^-1 rhs was tried and
  // needed more sweeps than passes on every case measured (issue 9 note), so passes it is.
  std::vector<double> previous(u.begin(), u.end());
  const std::size_t measured = coupling ? coupling->owned : u.size();
  for (res.passes = 1; res.passes <= max_passes; ++res.passes) {
    if (coupling) coupling->exchange(previous);
    res.limited = sweep_pass(disc, plan, sigma_t, rhs, u, previous, positivity);
    double change_scale[2] = {0, 0};
    for (std::size_t i = 0; i < measured; ++i) {
      change_scale[0] = std::max(change_scale[0], std::abs(u[i] - previous[i]));
      change_scale[1] = std::max(change_scale[1], std::abs(u[i]));
    }
    if (coupling) coupling->reduce_max(change_scale);
    const double change = change_scale[0], scale = change_scale[1];
    res.lagged_change = scale > 0 ? change / scale : change;
    if (res.lagged_change <= tol) return res;
    std::copy(u.begin(), u.end(), previous.begin());
  }
  throw SolverError(fmt::format("sweep of direction ({:.5g}, {:.5g}, {:.5g}): {} lagged and {} partition faces did not converge in {} "
                                "passes (last change {:.3e}); use solver.inner: bicgstab",
                                plan.direction[0], plan.direction[1], plan.direction[2], plan.lagged, plan.partition_faces,
                                max_passes, res.lagged_change));
}

}  // namespace dgrte::transport
