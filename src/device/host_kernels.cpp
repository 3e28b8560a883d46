#include "device/host_kernels.hpp"

#include <algorithm>
#include <cmath>

namespace dgrte::device {
namespace {

struct Direction {
  double x, y, z;
};

Direction direction_of(std::span<const double> directions, std::size_t c) {
  return {directions[3 * c], directions[3 * c + 1], directions[3 * c + 2]};
}

double stream_coefficient(const double* g, int d, const Direction& s) {
  return s.x * g[3 * d] + s.y * g[3 * d + 1] + s.z * g[3 * d + 2];
}

double inflow_coefficient(const double* g, int f, const Direction& s) {
  const double sn = s.x * g[9 + 3 * f] + s.y * g[9 + 3 * f + 1] + s.z * g[9 + 3 * f + 2];
  return sn < -kTangentTolerance ? g[21 + f] * sn : 0.0;
}

// Row-major augmented block (np x np+1) of element e, as element_solve.cl's assemble_row builds it.
void assemble_block(const TransportData& d, std::int64_t e, const Direction& s, bool include_sigma, const double* rhs_e,
                    std::vector<double>& A) {
  const int np = d.np, nfp = d.nfp, row = np + 1;
  const double* g = d.geometry.data() + e * kGeometryStride;
  const double a0 = stream_coefficient(g, 0, s), a1 = stream_coefficient(g, 1, s), a2 = stream_coefficient(g, 2, s);
  const double* dr = d.d_ref.data();
  const double* ds = dr + np * np;
  const double* dt = ds + np * np;
  for (int i = 0; i < np; ++i) {
    double* Ai = A.data() + i * row;
    for (int j = 0; j < np; ++j) Ai[j] = a0 * dr[j * np + i] + a1 * ds[j * np + i] + a2 * dt[j * np + i];
    if (include_sigma) {
      if (const double* Kb = d.sigma_block(e))
        for (int j = 0; j < np; ++j) Ai[j] += Kb[j * np + i];
      else
        Ai[i] += d.sigma_t[static_cast<std::size_t>(e * np + i)];
    }
    Ai[np] = rhs_e[i];
  }
  for (int f = 0; f < 4; ++f) {
    const double cf = inflow_coefficient(g, f, s);
    if (cf == 0.0) continue;
    for (int jj = 0; jj < nfp; ++jj) {
      const int q = f * nfp + jj, col = d.face_nodes[static_cast<std::size_t>(q)];
      for (int i = 0; i < np; ++i) A[static_cast<std::size_t>(i * row + col)] -= cf * d.lift[static_cast<std::size_t>(q * np + i)];
    }
  }
}

// Gaussian elimination with partial pivoting on the augmented block; solution into x.
void eliminate(int np, std::vector<double>& A, double* x) {
  const int row = np + 1;
  std::vector<int> pivot(static_cast<std::size_t>(np));
  std::vector<char> used(static_cast<std::size_t>(np), 0);
  for (int k = 0; k < np; ++k) {
    int p = -1;
    double best = -1;
    for (int r = 0; r < np; ++r)
      if (!used[r] && (p < 0 || std::abs(A[static_cast<std::size_t>(r * row + k)]) > best)) best = std::abs(A[static_cast<std::size_t>(r * row + k)]), p = r;
    used[p] = 1;
    pivot[k] = p;
    const double* Ap = A.data() + p * row;
    for (int i = 0; i < np; ++i) {
      if (used[i]) continue;
      double* Ai = A.data() + i * row;
      const double l = Ai[k] / Ap[k];
      for (int j = k + 1; j <= np; ++j) Ai[j] -= l * Ap[j];
    }
  }
  for (int k = np - 1; k >= 0; --k) {
    const double* Ap = A.data() + pivot[k] * row;
    double v = Ap[np];
    for (int j = k + 1; j < np; ++j) v -= Ap[j] * x[j];
    x[k] = v / Ap[k];
  }
}

// Gauss-Jordan with partial pivoting on [B | I] (A: row-major np x np+1 from assemble_block, its
// last column ignored), as element_solve.cl's gauss_jordan: B^-1 into inv, column-major.
void invert(int np, const std::vector<double>& A, double* inv) {
  const auto w = static_cast<std::size_t>(2 * np);
  std::vector<double> G(static_cast<std::size_t>(np) * w, 0.0);
  for (int i = 0; i < np; ++i) {
    std::copy_n(A.data() + i * (np + 1), np, G.data() + static_cast<std::size_t>(i) * w);
    G[static_cast<std::size_t>(i) * w + static_cast<std::size_t>(np + i)] = 1.0;
  }
  std::vector<int> pivot(static_cast<std::size_t>(np));
  std::vector<char> used(static_cast<std::size_t>(np), 0);
  for (int k = 0; k < np; ++k) {
    int p = -1;
    double best = -1;
    for (int r = 0; r < np; ++r)
      if (!used[r] && (p < 0 || std::abs(G[r * w + k]) > best)) best = std::abs(G[r * w + k]), p = r;
    used[p] = 1;
    pivot[k] = p;
    const double* Gp = G.data() + p * w;
    for (int i = 0; i < np; ++i) {
      if (i == p) continue;
      double* Gi = G.data() + i * w;
      const double l = Gi[k] / Gp[k];
      if (l != 0.0)
        for (std::size_t j = static_cast<std::size_t>(k + 1); j < w; ++j) Gi[j] -= l * Gp[j];
    }
  }
  for (int i = 0; i < np; ++i) {
    const double* Gp = G.data() + pivot[i] * w;
    const double scale = 1.0 / Gp[i];
    for (int j = 0; j < np; ++j) inv[j * np + i] = Gp[np + j] * scale;
  }
}

// ri = rhs_e - LIFT(c_ef u^+) over the inflow faces of element e (lagged faces read `lagged`).
void upwind_rhs(const TransportData& d, std::int64_t e, const Direction& s, std::uint8_t lag, std::span<const double> lagged,
                std::size_t column_offset, const double* rhs_e, const double* uc, std::vector<double>& ri) {
  const int np = d.np, nfp = d.nfp;
  const double* g = d.geometry.data() + e * kGeometryStride;
  std::copy_n(rhs_e, np, ri.begin());
  for (int q = 0; q < 4 * nfp; ++q) {
    const int f = q / nfp;
    const double cf = inflow_coefficient(g, f, s);
    const int nb = d.neighbour_node[static_cast<std::size_t>(e * 4 * nfp + q)];
    if (cf == 0.0 || nb < 0) continue;
    const double up = ((lag >> f) & 1) ? (lagged.empty() ? 0.0 : lagged[column_offset + static_cast<std::size_t>(nb)]) : uc[nb];
    for (int i = 0; i < np; ++i) ri[static_cast<std::size_t>(i)] -= d.lift[static_cast<std::size_t>(q * np + i)] * cf * up;
  }
}

double dot(const double* a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

const char* to_string(BicgStatus s) {
  switch (s) {
    case BicgStatus::running: return "running";
    case BicgStatus::converged: return "converged";
    case BicgStatus::breakdown: return "breakdown";
    case BicgStatus::not_a_number: return "not a number";
    case BicgStatus::iteration_limit: return "iteration limit";
  }
  return "?";
}

void host_apply(const TransportData& d, std::span<const double> directions, std::span<const int> active,
                std::span<const double> u, std::span<double> y) {
  const int np = d.np, nfp = d.nfp;
  const auto n = static_cast<std::size_t>(d.num_dofs());
  const double* dr = d.d_ref.data();
  const double* ds = dr + np * np;
  const double* dt = ds + np * np;
  for (std::size_t c = 0; c < active.size(); ++c) {
    if (!active[c]) continue;
    const Direction s = direction_of(directions, c);
    const double* uc = u.data() + c * n;
    double* yc = y.data() + c * n;
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < d.K; ++e) {
      const double* g = d.geometry.data() + e * kGeometryStride;
      const double* ue = uc + e * np;
      std::vector<double> jump(static_cast<std::size_t>(4 * nfp), 0.0);
      for (int q = 0; q < 4 * nfp; ++q) {
        const double cf = inflow_coefficient(g, q / nfp, s);
        if (cf == 0.0) continue;
        const int nb = d.neighbour_node[static_cast<std::size_t>(e * 4 * nfp + q)];
        jump[static_cast<std::size_t>(q)] = cf * ((nb >= 0 ? uc[nb] : 0.0) - ue[d.face_nodes[static_cast<std::size_t>(q)]]);
      }
      const double a0 = stream_coefficient(g, 0, s), a1 = stream_coefficient(g, 1, s), a2 = stream_coefficient(g, 2, s);
      const double* Kb = d.sigma_block(e);
      for (int i = 0; i < np; ++i) {
        double gr = 0, gs = 0, gt = 0, lifted = 0, reaction = 0;
        for (int j = 0; j < np; ++j) {
          gr += dr[j * np + i] * ue[j];
          gs += ds[j * np + i] * ue[j];
          gt += dt[j * np + i] * ue[j];
        }
        for (int q = 0; q < 4 * nfp; ++q) lifted += d.lift[static_cast<std::size_t>(q * np + i)] * jump[static_cast<std::size_t>(q)];
        const std::size_t k = static_cast<std::size_t>(e * np + i);
        if (Kb)
          for (int j = 0; j < np; ++j) reaction += Kb[j * np + i] * ue[j];
        else
          reaction = d.sigma_t[k] * ue[i];
        yc[k] = a0 * gr + a1 * gs + a2 * gt + reaction + lifted;
      }
    }
  }
}

void host_block_jacobi(const TransportData& d, bool include_sigma, std::span<const double> directions,
                       std::span<const int> active, std::span<const double> r, std::span<double> z) {
  const int np = d.np;
  const auto n = static_cast<std::size_t>(d.num_dofs());
  for (std::size_t c = 0; c < active.size(); ++c) {
    if (!active[c]) continue;
    const Direction s = direction_of(directions, c);
#pragma omp parallel
    {
      std::vector<double> A(static_cast<std::size_t>(np * (np + 1)));
#pragma omp for schedule(static)
      for (std::int64_t e = 0; e < d.K; ++e) {
        assemble_block(d, e, s, include_sigma, r.data() + c * n + static_cast<std::size_t>(e * np), A);
        eliminate(np, A, z.data() + c * n + static_cast<std::size_t>(e * np));
      }
    }
  }
}

void host_sweep_level(const TransportData& d, int level, std::span<const int> plan_of_column,
                      std::span<const double> lagged, std::span<const double> directions, std::span<const int> active,
                      std::span<const double> rhs, std::span<double> u, std::span<const double> inverses) {
  const int np = d.np;
  const auto n = static_cast<std::size_t>(d.num_dofs());
  for (std::size_t c = 0; c < active.size(); ++c) {
    if (!active[c]) continue;
    const Direction s = direction_of(directions, c);
    const auto p = static_cast<std::size_t>(plan_of_column[c]);
    const int begin = d.plan_level_begin[p * static_cast<std::size_t>(d.level_stride) + static_cast<std::size_t>(level)];
    const int end = d.plan_level_begin[p * static_cast<std::size_t>(d.level_stride) + static_cast<std::size_t>(level) + 1];
    double* uc = u.data() + c * n;
#pragma omp parallel
    {
      std::vector<double> A(static_cast<std::size_t>(np * (np + 1))), ri(static_cast<std::size_t>(np));
#pragma omp for schedule(static)
      for (int t = begin; t < end; ++t) {
        const std::int64_t e = d.plan_order[p * static_cast<std::size_t>(d.K) + static_cast<std::size_t>(t)];
        const std::uint8_t lag = d.plan_lagged[p * static_cast<std::size_t>(d.K) + static_cast<std::size_t>(e)];
        upwind_rhs(d, e, s, lag, lagged, c * n, rhs.data() + c * n + static_cast<std::size_t>(e * np), uc, ri);
        if (inverses.empty()) {
          assemble_block(d, e, s, true, ri.data(), A);
          eliminate(np, A, uc + e * np);
        } else {
          const double* inv = inverses.data() + (c * static_cast<std::size_t>(d.K) + static_cast<std::size_t>(e)) * static_cast<std::size_t>(np * np);
          for (int i = 0; i < np; ++i) {
            double x = 0;
            for (int j = 0; j < np; ++j) x += inv[j * np + i] * ri[static_cast<std::size_t>(j)];
            uc[e * np + i] = x;
          }
        }
      }
    }
  }
}

void host_sweep(const TransportData& d, std::span<const int> plan_of_column, std::span<const double> lagged,
                std::span<const double> directions, std::span<const int> active, std::span<const double> rhs,
                std::span<double> u, std::span<const double> inverses) {
  for (int level = 0; level + 1 < d.level_stride; ++level)
    host_sweep_level(d, level, plan_of_column, lagged, directions, active, rhs, u, inverses);
}

std::vector<double> host_block_inverses(const TransportData& d, std::span<const double> directions) {
  const int np = d.np;
  const std::size_t cols = directions.size() / 3, block = static_cast<std::size_t>(np * np), K = static_cast<std::size_t>(d.K);
  std::vector<double> inverses(cols * K * block);
  const std::vector<double> zeros(static_cast<std::size_t>(np), 0.0);
  for (std::size_t c = 0; c < cols; ++c) {
    const Direction s = direction_of(directions, c);
#pragma omp parallel
    {
      std::vector<double> A(static_cast<std::size_t>(np * (np + 1)));
#pragma omp for schedule(static)
      for (std::int64_t e = 0; e < d.K; ++e) {
        assemble_block(d, e, s, true, zeros.data(), A);
        invert(np, A, inverses.data() + (c * K + static_cast<std::size_t>(e)) * block);
      }
    }
  }
  return inverses;
}

BatchedSolve host_bicgstab(const ColumnOperator& apply, const ColumnOperator& precondition, std::size_t n,
                           std::size_t columns, std::span<const double> b, std::span<double> x, double rtol,
                           int max_iterations) {
  const std::size_t N = n * columns;
  std::vector<double> r(N), r_hat(N), p(N, 0.0), v(N, 0.0), s(N), t(N), p_hat(N), s_hat(N), y(N);
  std::vector<int> active(columns, 1);
  std::vector<double> rho_old(columns, 1), alpha(columns, 1), omega(columns, 1), rho(columns), tol(columns);
  BatchedSolve out;
  out.iterations.assign(columns, 0);
  out.status.assign(columns, BicgStatus::running);
  out.residual_norm.assign(columns, 0);
  out.rhs_norm.assign(columns, 0);
  auto col = [n](auto& v, std::size_t c) { return v.data() + c * n; };
  apply(active, x, y);
  for (std::size_t i = 0; i < N; ++i) r[i] = r_hat[i] = b[i] - y[i];
  for (std::size_t c = 0; c < columns; ++c) {
    out.rhs_norm[c] = std::sqrt(dot(b.data() + c * n, b.data() + c * n, n));
    out.residual_norm[c] = std::sqrt(dot(col(r, c), col(r, c), n));
    tol[c] = rtol * out.rhs_norm[c];
    if (!std::isfinite(out.residual_norm[c])) out.status[c] = BicgStatus::not_a_number, active[c] = 0;
    else if (out.residual_norm[c] <= tol[c]) out.status[c] = BicgStatus::converged, active[c] = 0;
  }
  auto live = [&] { return std::any_of(active.begin(), active.end(), [](int a) { return a != 0; }); };
  for (int it = 0; it < max_iterations && live(); ++it) {
    for (std::size_t c = 0; c < columns; ++c) {
      if (!active[c]) continue;
      rho[c] = dot(col(r, c), col(r_hat, c), n);
      if (rho[c] == 0) {
        out.status[c] = BicgStatus::breakdown, active[c] = 0;
        continue;
      }
      const double beta = (rho[c] / rho_old[c]) * (alpha[c] / omega[c]);
      for (std::size_t i = c * n; i < (c + 1) * n; ++i) p[i] = r[i] + beta * (p[i] - omega[c] * v[i]);
    }
    precondition(active, p, p_hat);
    apply(active, p_hat, v);
    for (std::size_t c = 0; c < columns; ++c) {
      if (!active[c]) continue;
      const double dv = dot(col(v, c), col(r_hat, c), n);
      if (dv == 0) {
        out.status[c] = BicgStatus::breakdown, active[c] = 0;
        continue;
      }
      alpha[c] = rho[c] / dv;
      for (std::size_t i = c * n; i < (c + 1) * n; ++i) s[i] = r[i] - alpha[c] * v[i];
      const double snorm = std::sqrt(dot(col(s, c), col(s, c), n));
      if (std::isfinite(snorm) && snorm <= tol[c]) {  // the half step finishes the column (blas1.cl's bicg_half)
        for (std::size_t i = c * n; i < (c + 1) * n; ++i) x[i] += alpha[c] * p_hat[i];
        out.residual_norm[c] = snorm;
        ++out.iterations[c];
        out.status[c] = BicgStatus::converged, active[c] = 0;
      }
    }
    if (!live()) break;
    precondition(active, s, s_hat);
    apply(active, s_hat, t);
    for (std::size_t c = 0; c < columns; ++c) {
      if (!active[c]) continue;
      const double ts = dot(col(t, c), col(s, c), n), tt = dot(col(t, c), col(t, c), n);
      omega[c] = tt > 0 ? ts / tt : 0.0;
      for (std::size_t i = c * n; i < (c + 1) * n; ++i) {
        x[i] += alpha[c] * p_hat[i] + omega[c] * s_hat[i];
        r[i] = s[i] - omega[c] * t[i];
      }
      out.residual_norm[c] = std::sqrt(dot(col(r, c), col(r, c), n));
      rho_old[c] = rho[c];
      ++out.iterations[c];
      if (!std::isfinite(out.residual_norm[c])) out.status[c] = BicgStatus::not_a_number, active[c] = 0;
      else if (out.residual_norm[c] <= tol[c]) out.status[c] = BicgStatus::converged, active[c] = 0;
      else if (omega[c] == 0) out.status[c] = BicgStatus::breakdown, active[c] = 0;
    }
  }
  for (std::size_t c = 0; c < columns; ++c)
    if (out.status[c] == BicgStatus::running) out.status[c] = BicgStatus::iteration_limit;
  return out;
}

void host_scatter_source(const TransportData& d, const ScatteringTables& t, std::span<const int> ordinate, bool has_base,
                         std::span<const double> phi, std::span<double> base) {
  const auto n = static_cast<std::size_t>(d.num_dofs()), np = static_cast<std::size_t>(d.np), R = static_cast<std::size_t>(t.rank);
  const std::size_t M = t.weights.size();
  for (std::size_t c = 0; c < ordinate.size(); ++c)
    for (std::size_t k = 0; k < n; ++k) {
      double s = has_base ? base[c * n + k] : 0.0;
      const std::size_t e = k / np;
      const int op = R > 0 ? t.operator_of_element[e] : -1;
      if (op >= 0) {
        const double* Y = t.to_direction.data() + (static_cast<std::size_t>(op) * M + static_cast<std::size_t>(ordinate[c])) * R;
        auto scattered = [&](std::size_t node) {
          double a = 0;
          for (std::size_t j = 0; j < R; ++j) a += Y[j] * phi[node * R + j];
          return a;
        };
        const int b = t.sigma_s_block_of.empty() ? -1 : t.sigma_s_block_of[e];
        if (b >= 0) {
          const double* Kb = t.sigma_s_blocks.data() + static_cast<std::size_t>(b) * np * np;
          const std::size_t i = k - e * np;
          for (std::size_t j = 0; j < np; ++j) s += Kb[j * np + i] * scattered(e * np + j);
        } else {
          s += t.sigma_s[k] * scattered(k);
        }
      }
      base[c * n + k] = s;
    }
}

void host_lift_inflow(const TransportData& d, std::span<const int> element_face, std::span<const double> directions,
                      std::span<const double> inflow, std::span<double> rhs) {
  const auto n = static_cast<std::size_t>(d.num_dofs()), np = static_cast<std::size_t>(d.np), nfp = static_cast<std::size_t>(d.nfp);
  const std::size_t faces = element_face.size(), cols = directions.size() / 3;
  for (std::size_t c = 0; c < cols; ++c) {
    const Direction s = direction_of(directions, c);
    for (std::size_t b = 0; b < faces; ++b) {
      const auto e = static_cast<std::size_t>(element_face[b] / 4);
      const int f = element_face[b] % 4;
      const double cf = inflow_coefficient(d.geometry.data() + e * kGeometryStride, f, s);
      if (cf == 0.0) continue;
      const double* g = inflow.data() + c * faces * nfp + b * nfp;
      for (std::size_t i = 0; i < np; ++i) {
        double a = 0;
        for (std::size_t q = 0; q < nfp; ++q) a += d.lift[(static_cast<std::size_t>(f) * nfp + q) * np + i] * g[q];
        rhs[c * n + e * np + i] -= cf * a;
      }
    }
  }
}

void host_gather_traces(const TransportData& d, std::span<const int> element_face, std::span<const double> u,
                        std::span<double> traces) {
  const auto n = static_cast<std::size_t>(d.num_dofs()), np = static_cast<std::size_t>(d.np), nfp = static_cast<std::size_t>(d.nfp);
  const std::size_t faces = element_face.size(), cols = u.size() / n;
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t b = 0; b < faces; ++b) {
      const auto e = static_cast<std::size_t>(element_face[b] / 4), f = static_cast<std::size_t>(element_face[b] % 4);
      for (std::size_t j = 0; j < nfp; ++j)
        traces[c * faces * nfp + b * nfp + j] = u[c * n + e * np + static_cast<std::size_t>(d.face_nodes[f * nfp + j])];
    }
}

void host_accumulate_moments(const TransportData& d, const ScatteringTables& t, std::span<const int> ordinate, bool outputs,
                             std::span<const double> u, std::span<double> moments, std::span<double> fluxes) {
  const auto n = static_cast<std::size_t>(d.num_dofs()), np = static_cast<std::size_t>(d.np), R = static_cast<std::size_t>(t.rank);
  const std::size_t M = t.weights.size(), cols = ordinate.size();
  for (std::size_t k = 0; k < n; ++k) {
    const int op = R > 0 ? t.operator_of_element[k / np] : -1;
    if (op >= 0)
      for (std::size_t j = 0; j < R; ++j) {
        double a = 0;
        for (std::size_t c = 0; c < cols; ++c)
          a += t.to_moment[(static_cast<std::size_t>(op) * M + static_cast<std::size_t>(ordinate[c])) * R + j] * u[c * n + k];
        moments[k * R + j] += a;
      }
    if (!outputs) continue;
    for (std::size_t c = 0; c < cols; ++c) {
      const auto m = static_cast<std::size_t>(ordinate[c]);
      const double I = u[c * n + k];
      fluxes[k] += t.weights[m] * I;
      for (std::size_t x = 0; x < 3; ++x) fluxes[(x + 1) * n + k] += t.s_bar[3 * m + x] * I;
    }
  }
}

void host_max_change(std::size_t n, std::span<const double> u, std::span<const double> previous, std::span<double> change,
                     std::span<double> size) {
  for (std::size_t c = 0; c < change.size(); ++c) {
    change[c] = size[c] = 0;
    for (std::size_t k = c * n; k < (c + 1) * n; ++k) {
      change[c] = std::max(change[c], std::abs(u[k] - previous[k]));
      size[c] = std::max(size[c], std::abs(u[k]));
    }
  }
}

}  // namespace dgrte::device
