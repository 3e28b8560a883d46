#include "transport/sweep.hpp"

#include "common/error.hpp"

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

// Reference matrices in the layout the local solve reads: column-major, so that the face terms
// (columns of the block) and the LU's column updates are contiguous, vectorisable loops.
struct LocalMatrices {
  int np, nfp;
  std::vector<double> dr, ds, dt;  // np x np, column-major
  std::vector<double> lift;        // per face f, column j: LIFT(:, f nfp + j), np values each
  std::vector<double> mean_weight; // (M 1)_i / sum(M 1): integral weights of the nodal values
  explicit LocalMatrices(const dg::ReferenceTet& ref) : np(ref.num_nodes), nfp(ref.num_face_nodes) {
    const Eigen::VectorXd m1 = ref.mass.colwise().sum().transpose();
    for (Eigen::Index i = 0; i < m1.size(); ++i) mean_weight.push_back(m1[i] / m1.sum());
    auto colmajor = [](const dg::Matrix& m) {
      std::vector<double> out(static_cast<std::size_t>(m.rows() * m.cols()));
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        for (Eigen::Index i = 0; i < m.rows(); ++i) out[static_cast<std::size_t>(j * m.rows() + i)] = m(i, j);
      return out;
    };
    dr = colmajor(ref.Dr);
    ds = colmajor(ref.Ds);
    dt = colmajor(ref.Dt);
    lift = colmajor(ref.lift);
  }
};

// Solves A x = r in place (r becomes x); A column-major n x n, destroyed. Gaussian elimination
// with partial pivoting (upwind DG blocks are nonsingular for sigma_t >= 0, but not diagonally
// dominant). N > 0 fixes the size at compile time so that the column loops unroll and vectorise;
// N = 0 reads it from n.
template <int N>
void lu_solve(int n_runtime, double* __restrict A, double* __restrict r) {
  const int n = N > 0 ? N : n_runtime;
  for (int k = 0; k < n; ++k) {
    double* __restrict colk = A + static_cast<std::ptrdiff_t>(k) * n;
    int p = k;
    double best = std::abs(colk[k]);
    for (int i = k + 1; i < n; ++i)
      if (std::abs(colk[i]) > best) best = std::abs(colk[i]), p = i;
    if (p != k) {
      for (int j = k; j < n; ++j) std::swap(A[static_cast<std::ptrdiff_t>(j) * n + k], A[static_cast<std::ptrdiff_t>(j) * n + p]);
      std::swap(r[k], r[p]);
    }
    const double inv = 1.0 / colk[k];
    for (int i = k + 1; i < n; ++i) colk[i] *= inv;  // the multipliers l_ik
    const double rk = r[k];
    for (int i = k + 1; i < n; ++i) r[i] -= colk[i] * rk;
    for (int j = k + 1; j < n; ++j) {
      double* __restrict colj = A + static_cast<std::ptrdiff_t>(j) * n;
      const double akj = colj[k];
      if (akj == 0.0) continue;
      for (int i = k + 1; i < n; ++i) colj[i] -= colk[i] * akj;
    }
  }
  for (int k = n - 1; k >= 0; --k) {  // back substitution by columns of U
    const double* __restrict colk = A + static_cast<std::ptrdiff_t>(k) * n;
    r[k] /= colk[k];
    const double rk = r[k];
    for (int i = 0; i < k; ++i) r[i] -= colk[i] * rk;
  }
}

// The local solve of element e: full diagonal block (streaming + sigma_t + inflow faces), upwind
// neighbour traces moved to the right-hand side. NP > 0: the number of nodes, fixed at compile time.
// Lagged faces read their upwind values from `lagged` (a separate array, so that a pass is the same
// linear map whatever the threads' order), or take zero if it is null.
template <int NP>
bool solve_element(const Discretization& disc, const LocalMatrices& lm, const Vec3& s, std::uint8_t lagged_mask,
                   const double* lagged, bool positivity, std::size_t e, const double* sigma_t_e, const double* sigma_block_e,
                   const double* rhs_e, double* u, double* __restrict B, double* __restrict r) {
  const int np = NP > 0 ? NP : lm.np;
  const int nfp = lm.nfp;
  const auto nn = static_cast<std::size_t>(np) * static_cast<std::size_t>(np);
  const auto& g = disc.geometry[e];
  const double a0 = s[0] * g.grad_rst[0][0] + s[1] * g.grad_rst[0][1] + s[2] * g.grad_rst[0][2];
  const double a1 = s[0] * g.grad_rst[1][0] + s[1] * g.grad_rst[1][1] + s[2] * g.grad_rst[1][2];
  const double a2 = s[0] * g.grad_rst[2][0] + s[1] * g.grad_rst[2][1] + s[2] * g.grad_rst[2][2];
  const double* __restrict dr = lm.dr.data();
  const double* __restrict ds = lm.ds.data();
  const double* __restrict dt = lm.dt.data();
  if (sigma_block_e) {  // sigma_t varies on the element: its Galerkin block (transport/reaction.hpp)
    for (std::size_t k = 0; k < nn; ++k) B[k] = a0 * dr[k] + a1 * ds[k] + a2 * dt[k] + sigma_block_e[k];
  } else {
    for (std::size_t k = 0; k < nn; ++k) B[k] = a0 * dr[k] + a1 * ds[k] + a2 * dt[k];
    for (int i = 0; i < np; ++i) B[static_cast<std::size_t>(i) * static_cast<std::size_t>(np + 1)] += sigma_t_e[i];
  }
  for (int i = 0; i < np; ++i) r[i] = rhs_e[i];
  const auto& ref = disc.ref;
  for (int f = 0; f < 4; ++f) {
    const double c = inflow_coefficient(g, f, s);
    if (c == 0.0) continue;
    const int* fn = ref.face_nodes[f].data();
    const int* nb = disc.neighbour_node.data() + (e * 4 + static_cast<std::size_t>(f)) * static_cast<std::size_t>(nfp);
    const bool interior = nb[0] >= 0;
    const bool is_lagged = (lagged_mask >> f) & 1;
    const double* upwind = !interior ? nullptr : (is_lagged ? lagged : u);
    for (int j = 0; j < nfp; ++j) {
      const double* __restrict lj = lm.lift.data() + static_cast<std::size_t>(f * nfp + j) * static_cast<std::size_t>(np);
      double* __restrict col = B + static_cast<std::size_t>(fn[j]) * static_cast<std::size_t>(np);
      for (int i = 0; i < np; ++i) col[i] -= c * lj[i];  // the -u^- part of c (u+ - u-)
      if (upwind) {
        const double t = c * upwind[nb[j]];  // the known upwind u^+ part
        for (int i = 0; i < np; ++i) r[i] -= t * lj[i];
      }
    }
  }
  // Positivity: the element's conservative first-order solution, a constant u0 with the same
  // element balance m^T B (u0 1) = m^T r, is >= 0; blending towards it keeps the balance exactly.
  double balance_rhs = 0, balance_lhs = 0;
  if (positivity)
    for (int i = 0; i < np; ++i) {
      const double* col = B + static_cast<std::size_t>(i) * static_cast<std::size_t>(np);
      for (int k = 0; k < np; ++k) balance_lhs += lm.mean_weight[static_cast<std::size_t>(k)] * col[k];
      balance_rhs += lm.mean_weight[static_cast<std::size_t>(i)] * r[i];
    }
  lu_solve<NP>(np, B, r);
  bool limited = false;
  if (positivity) {
    double low = r[0];
    for (int i = 1; i < np; ++i) low = std::min(low, r[i]);
    if (low < 0) {
      limited = true;
      const double u0 = std::max(0.0, balance_rhs / balance_lhs);
      const double theta = u0 / (u0 - low);  // largest blend keeping every node >= 0
      for (int i = 0; i < np; ++i) r[i] = u0 + theta * (r[i] - u0);
    }
  }
  std::copy(r, r + np, u + e * static_cast<std::size_t>(np));
  return limited;
}

// The same kernel compiled for AVX2 + FMA, picked at run time where the CPU has them: flatten
// inlines the block assembly and the LU into it, so their column loops use 4-wide FMAs (P4 sweep
// on 179k tets 0.61 -> 0.42 s). Per function rather than -march=native for the build: a
// native-flagged translation unit would change Eigen's alignment ABI against prebuilt libraries
// that carry their own Eigen instantiations (libgmsh crashed that way), and the binary stays portable.
using ElementKernel = bool (*)(const Discretization&, const LocalMatrices&, const Vec3&, std::uint8_t, const double*, bool,
                               std::size_t, const double*, const double*, const double*, double*, double* __restrict,
                               double* __restrict);
#if defined(__GNUC__) && defined(__x86_64__)
template <int NP>
[[gnu::target("avx2,fma"), gnu::flatten]] bool solve_element_avx2(const Discretization& disc, const LocalMatrices& lm,
                                                                   const Vec3& s, std::uint8_t lagged_mask, const double* lagged,
                                                                   bool positivity, std::size_t e, const double* sigma_t_e,
                                                                   const double* sigma_block_e, const double* rhs_e, double* u,
                                                                   double* __restrict B, double* __restrict r) {
  return solve_element<NP>(disc, lm, s, lagged_mask, lagged, positivity, e, sigma_t_e, sigma_block_e, rhs_e, u, B, r);
}
template <int NP>
ElementKernel element_kernel() {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2 ? &solve_element_avx2<NP> : &solve_element<NP>;
}
#else
template <int NP>
ElementKernel element_kernel() {
  return &solve_element<NP>;
}
#endif

// Spin briefly, then yield: the awaited upwind element is being solved by another thread now.
inline void wait_until_done(const std::atomic<std::uint8_t>& flag) {
  for (int spins = 0; !flag.load(std::memory_order_acquire); ++spins)
    if (spins > 64) std::this_thread::yield();
}

// One pass in the plan's order with the kernel of NP nodes.
// Inside a direction-parallel region (the gray solve): serial, the caller's threads are busy with
// other directions. One direction alone: the threads claim consecutive chunks of the order and
// each element waits only for its non-lagged upwind neighbours (a done flag each), so no thread
// ever waits at a level barrier; a per-level barrier cost ~0.1 ms each with passive waiting,
// which is most of a P1 sweep of 400 levels. Deadlock-free: an element waits only on elements
// earlier in the order, which were claimed before it.
template <int NP>
long sweep_elements(const Discretization& disc, const LocalMatrices& lm, const SweepPlan& plan, const ReactionTerm& sigma_t,
                    const double* rhs, double* u, const double* lagged, bool positivity) {
  const double* sigma_nodal = sigma_t.nodal().data();
  const auto np = static_cast<std::size_t>(lm.np);
  const std::size_t K = plan.order.size();
  const ElementKernel solve = element_kernel<NP>();
  long limited = 0;
  if (omp_in_parallel() || omp_get_max_threads() == 1) {
    std::vector<double> B(np * np), r(np);
    for (const int e : plan.order) {
      const auto ue = static_cast<std::size_t>(e);
      limited += solve(disc, lm, plan.direction, plan.lagged_faces[ue], lagged, positivity, ue, sigma_nodal + ue * np,
                       sigma_t.block(ue), rhs + ue * np, u, B.data(), r.data());
    }
    return limited;
  }
  const auto& mesh = *disc.mesh;
  std::vector<std::atomic<std::uint8_t>> done(K);
  std::atomic<std::size_t> next{0};
  constexpr std::size_t chunk = 8;
#pragma omp parallel reduction(+ : limited)
  {
    std::vector<double> B(np * np), r(np);
    for (std::size_t begin; (begin = next.fetch_add(chunk, std::memory_order_relaxed)) < K;)
      for (std::size_t k = begin; k < std::min(begin + chunk, K); ++k) {
        const auto e = static_cast<std::size_t>(plan.order[k]);
        for (int f = 0; f < 4; ++f) {
          const int d = mesh.neighbour[e][f];
          if (d >= 0 && !((plan.lagged_faces[e] >> f) & 1) && inflow_coefficient(disc.geometry[e], f, plan.direction) != 0.0)
            wait_until_done(done[static_cast<std::size_t>(d)]);
        }
        limited += solve(disc, lm, plan.direction, plan.lagged_faces[e], lagged, positivity, e, sigma_nodal + e * np,
                         sigma_t.block(e), rhs + e * np, u, B.data(), r.data());
        done[e].store(1, std::memory_order_release);
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
  std::vector<int> indegree(K, 0);
  std::size_t interior_inflow = 0;
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f) {
      const int u = mesh.neighbour[e][f];
      if (u < 0 || inflow_coefficient(disc.geometry[e], f, s) == 0.0) continue;
      if (static_cast<std::size_t>(u) >= K) {  // from an element not solved here: an input
        plan.lagged_faces[e] |= static_cast<std::uint8_t>(1u << f);
        ++plan.partition_faces;
        continue;
      }
      ++indegree[e], ++interior_inflow;
    }
  // Downstream edges of e: neighbours d across faces that are inflow faces of d, not lagged.
  auto downstream = [&](int e, auto&& visit) {
    for (int f = 0; f < 4; ++f) {
      const int d = mesh.neighbour[e][f];
      if (d < 0 || static_cast<std::size_t>(d) >= K) continue;
      const int fd = mesh.neighbour_face[e][f];
      if (inflow_coefficient(disc.geometry[d], fd, s) != 0.0 && !((plan.lagged_faces[d] >> fd) & 1)) visit(d);
    }
  };
  std::vector<int> current;
  for (std::size_t e = 0; e < K; ++e)
    if (indegree[e] == 0) current.push_back(static_cast<int>(e));
  std::vector<char> remaining(K, 1);
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
    std::vector<int> next;
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

void SweepPreconditioned::set_direction(const Vec3& s, const ReactionTerm& sigma_t, backend::BlockKind /*blocks: the sweep*/) {
  const auto& d = plan_.direction;
  if (std::abs(d[0] - s[0]) + std::abs(d[1] - s[1]) + std::abs(d[2] - s[2]) > 1e-14)
    throw std::logic_error("SweepPreconditioned: the sweep plan belongs to another direction");
  op_.set_direction(s, sigma_t, backend::BlockKind::none);
}

void SweepPreconditioned::precondition(std::span<const double> r, std::span<double> z) {
  sweep_pass(disc_, plan_, sigma_t_, r, z, {});
}

long sweep_pass(const Discretization& disc, const SweepPlan& plan, const ReactionTerm& sigma_t,
                std::span<const double> rhs, std::span<double> u, std::span<const double> lagged, bool positivity) {
  const LocalMatrices lm(disc.ref);
  const double* lagged_values = lagged.empty() ? nullptr : lagged.data();
  auto run = [&]<int NP>() {
    return sweep_elements<NP>(disc, lm, plan, sigma_t, rhs.data(), u.data(), lagged_values, positivity);
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
                        const PassCoupling* coupling) {
  SweepResult res;
  if (plan.lagged == 0 && !coupling) {
    // Partition faces alone read the ghost block of u (the angular solve's inflow from other ranks):
    // the pass never writes a ghost, so reading u there is no aliasing.
    res.limited = sweep_pass(disc, plan, sigma_t, rhs, u, plan.partition_faces ? std::span<const double>(u) : std::span<const double>(),
                             positivity);
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
