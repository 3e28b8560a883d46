#include "transport/sweep.hpp"

#include "common/error.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
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

// Row-major copies of the reference matrices the local solve reads row by row.
struct LocalMatrices {
  int np, nfp;
  std::vector<double> dr, ds, dt, lift;  // np x np, np x np, np x np, np x 4 nfp
  std::vector<double> mean_weight;       // (M 1)_i / sum(M 1): integral weights of the nodal values
  explicit LocalMatrices(const dg::ReferenceTet& ref) : np(ref.num_nodes), nfp(ref.num_face_nodes) {
    const Eigen::VectorXd m1 = ref.mass.colwise().sum().transpose();
    for (Eigen::Index i = 0; i < m1.size(); ++i) mean_weight.push_back(m1[i] / m1.sum());
    auto rowmajor = [](const dg::Matrix& m) {
      std::vector<double> out(static_cast<std::size_t>(m.rows() * m.cols()));
      for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) out[static_cast<std::size_t>(i * m.cols() + j)] = m(i, j);
      return out;
    };
    dr = rowmajor(ref.Dr);
    ds = rowmajor(ref.Ds);
    dt = rowmajor(ref.Dt);
    lift = rowmajor(ref.lift);
  }
};

// Solves the element block B x = r in place (r becomes x); B row-major n x n, destroyed.
// Gaussian elimination with partial pivoting; the blocks are nonsingular for sigma_t >= 0
// (upwind DG streaming blocks are invertible).
void solve_dense(int n, double* B, double* r) {
  for (int k = 0; k < n; ++k) {
    int p = k;
    double best = std::abs(B[k * n + k]);
    for (int i = k + 1; i < n; ++i)
      if (std::abs(B[i * n + k]) > best) best = std::abs(B[i * n + k]), p = i;
    if (p != k) {
      std::swap_ranges(B + k * n + k, B + k * n + n, B + p * n + k);
      std::swap(r[k], r[p]);
    }
    const double inv = 1.0 / B[k * n + k];
    for (int i = k + 1; i < n; ++i) {
      const double l = B[i * n + k] * inv;
      if (l == 0.0) continue;
      double* bi = B + i * n;
      const double* bk = B + k * n;
      for (int j = k + 1; j < n; ++j) bi[j] -= l * bk[j];
      r[i] -= l * r[k];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    double v = r[i];
    for (int j = i + 1; j < n; ++j) v -= B[i * n + j] * r[j];
    r[i] = v / B[i * n + i];
  }
}

// The local solve of element e: full diagonal block (streaming + sigma_t + inflow faces), upwind
// neighbour traces moved to the right-hand side.
// Lagged faces read their upwind values from `lagged` (a separate array, so that a pass is the same
// linear map whatever the threads' order), or take zero if it is null.
bool solve_element(const Discretization& disc, const LocalMatrices& lm, const Vec3& s, std::uint8_t lagged_mask,
                   const double* lagged, bool positivity, std::size_t e, const double* sigma_t_e, const double* rhs_e, double* u,
                   std::vector<double>& B, std::vector<double>& r) {
  const int np = lm.np, nfp = lm.nfp;
  const auto& g = disc.geometry[e];
  const double a0 = s[0] * g.grad_rst[0][0] + s[1] * g.grad_rst[0][1] + s[2] * g.grad_rst[0][2];
  const double a1 = s[0] * g.grad_rst[1][0] + s[1] * g.grad_rst[1][1] + s[2] * g.grad_rst[1][2];
  const double a2 = s[0] * g.grad_rst[2][0] + s[1] * g.grad_rst[2][1] + s[2] * g.grad_rst[2][2];
  for (int k = 0; k < np * np; ++k) B[k] = a0 * lm.dr[k] + a1 * lm.ds[k] + a2 * lm.dt[k];
  for (int i = 0; i < np; ++i) {
    B[i * np + i] += sigma_t_e[i];
    r[i] = rhs_e[i];
  }
  const auto& ref = disc.ref;
  for (int f = 0; f < 4; ++f) {
    const double c = inflow_coefficient(g, f, s);
    if (c == 0.0) continue;
    const int* fn = ref.face_nodes[f].data();
    const int* nb = disc.neighbour_node.data() + (e * 4 + f) * nfp;
    const bool interior = nb[0] >= 0;
    const bool is_lagged = (lagged_mask >> f) & 1;
    const double* upwind = !interior ? nullptr : (is_lagged ? lagged : u);
    for (int i = 0; i < np; ++i) {
      const double* li = lm.lift.data() + i * 4 * nfp + f * nfp;
      double acc = 0;
      for (int j = 0; j < nfp; ++j) {
        B[i * np + fn[j]] -= c * li[j];  // the -u^- part of c (u+ - u-)
        if (upwind) acc += li[j] * upwind[nb[j]];
      }
      r[i] -= c * acc;  // the known upwind u^+ part
    }
  }
  // Positivity: the element's conservative first-order solution, a constant u0 with the same
  // element balance m^T B (u0 1) = m^T r, is >= 0; blending towards it keeps the balance exactly.
  double balance_rhs = 0, balance_lhs = 0;
  if (positivity)
    for (int i = 0; i < np; ++i) {
      double row = 0;
      for (int k = 0; k < np; ++k) row += B[static_cast<std::size_t>(i * np + k)];
      balance_lhs += lm.mean_weight[static_cast<std::size_t>(i)] * row;
      balance_rhs += lm.mean_weight[static_cast<std::size_t>(i)] * r[static_cast<std::size_t>(i)];
    }
  solve_dense(np, B.data(), r.data());
  bool limited = false;
  if (positivity) {
    double low = r[0];
    for (int i = 1; i < np; ++i) low = std::min(low, r[static_cast<std::size_t>(i)]);
    if (low < 0) {
      limited = true;
      const double u0 = std::max(0.0, balance_rhs / balance_lhs);
      const double theta = u0 / (u0 - low);  // largest blend keeping every node >= 0
      for (int i = 0; i < np; ++i) r[static_cast<std::size_t>(i)] = u0 + theta * (r[static_cast<std::size_t>(i)] - u0);
    }
  }
  std::copy(r.begin(), r.begin() + np, u + e * static_cast<std::size_t>(np));
  return limited;
}

}  // namespace

SweepPlan plan_sweep(const Discretization& disc, const Vec3& s) {
  const auto& mesh = *disc.mesh;
  const std::size_t K = disc.num_elements();
  SweepPlan plan;
  plan.direction = s;
  plan.lagged_faces.assign(K, 0);
  std::vector<int> indegree(K, 0);
  std::size_t interior_inflow = 0;
  for (std::size_t e = 0; e < K; ++e)
    for (int f = 0; f < 4; ++f)
      if (mesh.neighbour[e][f] >= 0 && inflow_coefficient(disc.geometry[e], f, s) != 0.0) ++indegree[e], ++interior_inflow;
  // Downstream edges of e: neighbours d across faces that are inflow faces of d, not lagged.
  auto downstream = [&](int e, auto&& visit) {
    for (int f = 0; f < 4; ++f) {
      const int d = mesh.neighbour[e][f];
      if (d < 0) continue;
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
            if (u < 0 || !in_comp[u] || ((plan.lagged_faces[v] >> f) & 1)) continue;
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

long sweep_pass(const Discretization& disc, const SweepPlan& plan, std::span<const double> sigma_t,
                std::span<const double> rhs, std::span<double> u, std::span<const double> lagged, bool positivity) {
  const LocalMatrices lm(disc.ref);
  const std::size_t np = static_cast<std::size_t>(lm.np);
  const bool nested = omp_in_parallel();
  const std::size_t levels = plan.num_levels();
  const double* lagged_values = lagged.empty() ? nullptr : lagged.data();
  // One direction alone: elements of a level in parallel; inside a direction-parallel region:
  // serial (the caller's threads are busy with other directions).
  long limited = 0;
#pragma omp parallel if (!nested) reduction(+ : limited)
  {
    std::vector<double> B(np * np), r(np);
    for (std::size_t l = 0; l < levels; ++l) {
      const auto b = static_cast<std::ptrdiff_t>(plan.level_begin[l]), eidx = static_cast<std::ptrdiff_t>(plan.level_begin[l + 1]);
#pragma omp for schedule(static)
      for (std::ptrdiff_t k = b; k < eidx; ++k) {
        const auto e = static_cast<std::size_t>(plan.order[static_cast<std::size_t>(k)]);
        limited += solve_element(disc, lm, plan.direction, plan.lagged_faces[e], lagged_values, positivity, e,
                                 sigma_t.data() + e * np, rhs.data() + e * np, u.data(), B, r);
      }
    }
  }
  return limited;
}

SweepResult sweep_solve(const Discretization& disc, const SweepPlan& plan, std::span<const double> sigma_t,
                        std::span<const double> rhs, std::span<double> u, double tol, int max_passes, bool positivity) {
  SweepResult res;
  if (plan.lagged == 0) {
    res.limited = sweep_pass(disc, plan, sigma_t, rhs, u, {}, positivity);
    return res;
  }
  // Passes, lagged faces reading the previous pass (a separate array: the same linear map whatever
  // the threads' order). Sweep-preconditioned Bi-CGSTAB on (I - P^-1 C) u = P^-1 rhs was tried and
  // needed more sweeps than passes on every case measured (issue 9 note), so passes it is.
  std::vector<double> previous(u.begin(), u.end());
  for (res.passes = 1; res.passes <= max_passes; ++res.passes) {
    res.limited = sweep_pass(disc, plan, sigma_t, rhs, u, previous, positivity);
    double change = 0, scale = 0;
    for (std::size_t i = 0; i < u.size(); ++i) {
      change = std::max(change, std::abs(u[i] - previous[i]));
      scale = std::max(scale, std::abs(u[i]));
    }
    res.lagged_change = scale > 0 ? change / scale : change;
    if (res.lagged_change <= tol) return res;
    std::copy(u.begin(), u.end(), previous.begin());
  }
  throw SolverError(fmt::format("sweep of direction ({:.5g}, {:.5g}, {:.5g}): {} lagged faces did not converge in {} passes "
                                "(last change {:.3e}); use solver.inner: bicgstab",
                                plan.direction[0], plan.direction[1], plan.direction[2], plan.lagged, max_passes,
                                res.lagged_change));
}

}  // namespace dgrte::transport
