#pragma once
// The element-local solves of a transport sweep (transport/sweep.cpp): the scalar kernel (one
// element) and the interleaved one (W elements of one sweep level at once, one SIMD lane each).
// In a header so that the parity test calls both directly; internal to dgrte_transport.
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"
#include "transport/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dgrte::transport::element_solve {

// Reference matrices in the layout the local solve reads: column-major, so that the face terms
// (columns of the block) and the LU's column updates are contiguous, vectorisable loops.
struct LocalMatrices {
  int np, nfp;
  std::vector<double> dr, ds, dt;  // np x np, column-major
  std::vector<double> lift;        // per face f, column j: LIFT(:, f nfp + j), np values each
  std::vector<double> mean_weight; // (M 1)_i / sum(M 1): integral weights of the nodal values
  // The faces through node i, in face order: node_faces[node_face_begin[i] .. [i + 1]) = f nfp + j
  // with face_nodes[f][j] = i (a vertex lies on 3 faces, an edge node on 2, a face node on 1).
  std::vector<int> node_face_begin, node_faces;
  explicit LocalMatrices(const dg::ReferenceTet& ref) : np(ref.num_nodes), nfp(ref.num_face_nodes) {
    node_face_begin.push_back(0);
    for (int i = 0; i < np; ++i) {
      for (int f = 0; f < 4; ++f)
        for (int j = 0; j < nfp; ++j)
          if (ref.face_nodes[static_cast<std::size_t>(f)][static_cast<std::size_t>(j)] == i) node_faces.push_back(f * nfp + j);
      node_face_begin.push_back(static_cast<int>(node_faces.size()));
    }
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

// Threshold partial pivoting (Duff, Erisman & Reid, Direct Methods for Sparse Matrices, 1986,
// sec. 5.4): the diagonal stays the pivot unless it is below this fraction of the column's largest
// entry, which bounds every multiplier by 1/0.5 = 2. Upwind DG blocks are nonsingular for
// sigma_t >= 0 but not diagonally dominant: plain partial pivoting interchanged rows at 28 % of the
// elimination steps of P3 sweeps on the cube, this threshold at 6.9 % (0.1: 0.65 %); pivot search
// and interchanges had been a quarter of the interleaved kernel's time. 0.5, not 0.1: with 0.1 the
// residual of a P6 sweep grew 2.5x over partial pivoting's (3e-13) and a P2 slab with rtol 1e-13
// needed a second Krylov iteration; with 0.5 it stays within 15 % of partial pivoting at P1-P6.
inline constexpr double kPivotThreshold = 0.5;

// Solves A x = r in place (r becomes x); A column-major n x n, destroyed. Gaussian elimination
// with threshold partial pivoting (kPivotThreshold). N > 0 fixes the size at compile time so that
// the column loops unroll and vectorise; N = 0 reads it from n.
template <int N>
void lu_solve(int n_runtime, double* __restrict A, double* __restrict r) {
  const int n = N > 0 ? N : n_runtime;
  for (int k = 0; k < n; ++k) {
    double* __restrict colk = A + static_cast<std::ptrdiff_t>(k) * n;
    int p = k;
    double best = std::abs(colk[k]);
    for (int i = k + 1; i < n; ++i)
      if (std::abs(colk[i]) > best) best = std::abs(colk[i]), p = i;
    if (p != k && !(std::abs(colk[k]) >= kPivotThreshold * best)) {
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
//
// residual_e (null: not wanted): receives |r_e - B_e u_e|^2 with the block and right-hand side as
// assembled here and u_e as written (after the limiter): element e's rows of the residual of the
// upwind DG system, exactly so when the upwind values were final (no lagged faces). B and r then
// need room for a copy: 2 N_p^2 and 2 N_p values.
template <int NP>
bool solve_element(const Discretization& disc, const LocalMatrices& lm, const Vec3& s, std::uint8_t lagged_mask,
                   const double* lagged, bool positivity, std::size_t e, const double* sigma_t_e, const double* sigma_block_e,
                   const double* rhs_e, double* u, double* __restrict B, double* __restrict r, double* residual_e) {
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
  double* __restrict B_assembled = B + nn;
  double* __restrict r_assembled = r + np;
  if (residual_e) {
    std::copy(B, B + nn, B_assembled);
    std::copy(r, r + np, r_assembled);
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
  if (residual_e) {
    for (int k = 0; k < np; ++k) {
      const double* __restrict col = B_assembled + static_cast<std::size_t>(k) * static_cast<std::size_t>(np);
      for (int i = 0; i < np; ++i) r_assembled[i] -= col[i] * r[k];
    }
    double sum = 0;
    for (int i = 0; i < np; ++i) sum += r_assembled[i] * r_assembled[i];
    *residual_e = sum;
  }
  return limited;
}

// What every element solve of one pass reads.
struct PassInputs {
  const Discretization& disc;
  const LocalMatrices& lm;
  const Vec3& s;
  const std::uint8_t* lagged_faces;  // the plan's, per element
  const double* lagged;              // upwind values of lagged faces; null: zero
  bool positivity;
  const ReactionTerm& sigma_t;
  const double* rhs;
  double* u;
  double* element_residuals = nullptr;  // per element |r_e - B_e u_e|^2 (solve_element's residual_e); null: none
};

// W doubles as one value (GCC/Clang vector extensions): the lanes of the interleaved kernel. Written
// with these rather than left to the auto-vectoriser, which vectorised the face loop along the
// nodes with shuffles instead of along the lanes (the kernel was no faster than the scalar one).
// Unaligned (aligned(8)) and may_alias: they are views of plain double arrays.
template <int W>
struct LaneVector {
  typedef double type __attribute__((vector_size(8 * W), aligned(8), may_alias));
};

// The element solves of W elements of one sweep level at once (no upwind coupling between them),
// element `elements[l]` in lane l: blocks, right-hand sides and LU interleaved (entry k of lane l at
// k W + l), so that every column operation of solve_element is one W-wide vector operation instead
// of a short scalar loop (issue 30, item 5). Each lane solves what solve_element solves, with the
// same pivots (threshold partial pivoting, kPivotThreshold) but the LU in left-looking order, so
// the answers agree to round-off (measured 1e-15 at P1 to 3e-13 at P8 relative to max |u|, the
// parity test in tests/transport/test_sweep.cpp). Lanes count..W-1 repeat lane 0's element and
// are not written. Workspace: B 2 N_p^2 W values, r (2 N_p + 4 N_fp) W (the second halves hold
// the assembled block and right-hand side when residuals are wanted). Returns the elements the
// limiter changed.
template <int NP, int W>
long solve_group(const PassInputs& in, const int* elements, int count, double* __restrict B, double* __restrict r) {
  using V = typename LaneVector<W>::type;
  auto lanes = [](double* p, std::size_t k) -> V& { return *reinterpret_cast<V*>(p + k * W); };
  const int np = NP > 0 ? NP : in.lm.np;
  const int nfp = in.lm.nfp;
  const auto n = static_cast<std::size_t>(np);
  const std::size_t nn = n * n;
  const auto& disc = in.disc;
  const Vec3& s = in.s;
  std::size_t lane_element[W];
  V a0{}, a1{}, a2{};
  for (int l = 0; l < W; ++l) {
    const auto e = static_cast<std::size_t>(elements[l < count ? l : 0]);
    lane_element[l] = e;
    const auto& g = disc.geometry[e];
    a0[l] = s[0] * g.grad_rst[0][0] + s[1] * g.grad_rst[0][1] + s[2] * g.grad_rst[0][2];
    a1[l] = s[0] * g.grad_rst[1][0] + s[1] * g.grad_rst[1][1] + s[2] * g.grad_rst[1][2];
    a2[l] = s[0] * g.grad_rst[2][0] + s[1] * g.grad_rst[2][1] + s[2] * g.grad_rst[2][2];
  }
  // Per face and lane: c_f (0 off inflow faces) and the known upwind terms t_fj = c_f u^+_j.
  const auto nfp_ = static_cast<std::size_t>(nfp);
  double* __restrict upwind_terms = r + n * W;  // 4 nfp lane vectors
  V c[4];
  bool inflow[4];
  for (int f = 0; f < 4; ++f) {
    c[f] = V{};
    inflow[f] = false;
    const int* nb[W];
    const double* upwind[W];
    for (int l = 0; l < W; ++l) {
      const std::size_t e = lane_element[l];
      c[f][l] = inflow_coefficient(disc.geometry[e], f, s);
      inflow[f] = inflow[f] || c[f][l] != 0.0;
      nb[l] = disc.neighbour_node.data() + (e * 4 + static_cast<std::size_t>(f)) * nfp_;
      const bool is_lagged = (in.lagged_faces[e] >> f) & 1;
      upwind[l] = c[f][l] == 0.0 || nb[l][0] < 0 ? nullptr : (is_lagged ? in.lagged : in.u);
    }
    if (!inflow[f]) continue;
    for (std::size_t j = 0; j < nfp_; ++j) {  // built in a register, stored whole
      V t;
      for (int l = 0; l < W; ++l) t[l] = upwind[l] ? c[f][l] * upwind[l][nb[l][j]] : 0.0;
      lanes(upwind_terms, static_cast<std::size_t>(f) * nfp_ + j) = t;
    }
  }
  // The block, column by column, each entry stored once: streaming, minus c_f LIFT on the inflow
  // faces through the column's node (the -u^- part of c (u+ - u-)), plus sigma_t on the diagonal.
  const double* sigma_nodal = in.sigma_t.nodal().data();
  const double* lift = in.lm.lift.data();
  bool any_block = false;
  V diagonal_lanes{};  // 1 in the lanes whose sigma_t is diagonal (nodal), 0 where it has a block
  for (int l = 0; l < W; ++l) {
    const bool block = in.sigma_t.block(lane_element[l]) != nullptr;
    any_block = any_block || block;
    diagonal_lanes[l] = block ? 0.0 : 1.0;
  }
  for (std::size_t col = 0; col < n; ++col) {
    double* __restrict bcol = B + col * n * W;
    const double* __restrict drc = in.lm.dr.data() + col * n;
    const double* __restrict dsc = in.lm.ds.data() + col * n;
    const double* __restrict dtc = in.lm.dt.data() + col * n;
    V face_c[3];
    const double* face_lift[3];
    int faces = 0;
    for (int m = in.lm.node_face_begin[col]; m < in.lm.node_face_begin[col + 1] && faces < 3; ++m) {
      const int fj = in.lm.node_faces[static_cast<std::size_t>(m)];
      if (!inflow[fj / nfp]) continue;
      face_c[faces] = c[fj / nfp];
      face_lift[faces++] = lift + static_cast<std::size_t>(fj) * n;
    }
    for (std::size_t i = 0; i < n; ++i) {
      V v = a0 * drc[i] + a1 * dsc[i] + a2 * dtc[i];
      for (int m = 0; m < faces; ++m) v -= face_c[m] * face_lift[m][i];
      lanes(bcol, i) = v;
    }
    V diagonal;
    for (int l = 0; l < W; ++l) diagonal[l] = sigma_nodal[lane_element[l] * n + col];
    lanes(bcol, col) += diagonal * diagonal_lanes;
  }
  if (any_block)  // sigma_t varies on these elements: its Galerkin block (transport/reaction.hpp)
    for (int l = 0; l < W; ++l)
      if (const double* block = in.sigma_t.block(lane_element[l]))
        for (std::size_t k = 0; k < nn; ++k) lanes(B, k)[l] += block[k];
  // The right-hand side, row by row: rhs minus the known upwind u^+ parts lifted.
  // Four rows at a time: four independent accumulations hide the FMA latency.
  for (std::size_t i = 0; i < n; i += 4) {
    const std::size_t rows = std::min<std::size_t>(4, n - i);
    V v[4] = {};
    for (std::size_t m = 0; m < rows; ++m)
      for (int l = 0; l < W; ++l) v[m][l] = in.rhs[lane_element[l] * n + i + m];
    for (std::size_t f = 0; f < 4; ++f) {
      if (!inflow[f]) continue;
      for (std::size_t j = 0; j < nfp_; ++j) {
        const V t = lanes(upwind_terms, f * nfp_ + j);
        const double* lj = lift + (f * nfp_ + j) * n + i;
        for (std::size_t m = 0; m < 4; ++m) v[m] -= t * lj[std::min(m, rows - 1)];
      }
    }
    for (std::size_t m = 0; m < rows; ++m) lanes(r, i + m) = v[m];
  }
  V balance_lhs{}, balance_rhs{};
  if (in.positivity)  // as solve_element: the element balance m^T B 1 u0 = m^T r
    for (std::size_t i = 0; i < n; ++i) {
      double* col = B + i * n * W;
      for (std::size_t k = 0; k < n; ++k) balance_lhs += in.lm.mean_weight[k] * lanes(col, k);
      balance_rhs += in.lm.mean_weight[i] * lanes(r, i);
    }
  double* __restrict B_assembled = B + nn * W;
  double* __restrict r_assembled = r + (n + 4 * nfp_) * W;
  if (in.element_residuals) {
    std::copy(B, B + nn * W, B_assembled);
    std::copy(r, r + n * W, r_assembled);
  }
  // LU, left-looking (column j is brought up to date from the finished columns k < j, then its
  // pivot chosen): the updates accumulate in registers, four rows at a time, and each entry is
  // stored once per column instead of once per elimination step (measured no faster than the
  // right-looking order on this machine, within its noise; kept for the fewer stores). Pivoting per
  // lane as lu_solve (threshold partial pivoting), rows interchanged over the whole row (LAPACK's
  // P A = L U) only in the lanes whose pivot is off the diagonal.
  auto at = [&](std::size_t i, std::size_t j) -> V& { return lanes(B, j * n + i); };
  for (std::size_t j = 0; j < n; ++j) {
    // a_ij minus the sum over k < kmax of l_ik u_kj, in four partial sums (the FMA latency).
    auto reduce = [&](std::size_t i, std::size_t kmax) {
      V acc[4] = {at(i, j), V{}, V{}, V{}};
      std::size_t k = 0;
      for (; k + 4 <= kmax; k += 4)
        for (std::size_t m = 0; m < 4; ++m) acc[m] -= at(i, k + m) * at(k + m, j);
      for (; k < kmax; ++k) acc[0] -= at(i, k) * at(k, j);
      at(i, j) = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    };
    // Four rows i.. at once: a_ij minus the sum over k < kmax of l_ik u_kj (four independent chains).
    auto four_rows = [&](std::size_t i, std::size_t kmax, V* acc) {
      for (std::size_t m = 0; m < 4; ++m) acc[m] = at(i + m, j);
      for (std::size_t k = 0; k < kmax; ++k) {
        const V ukj = at(k, j);
        for (std::size_t m = 0; m < 4; ++m) acc[m] -= at(i + m, k) * ukj;
      }
    };
    std::size_t i = 0;
    for (; i + 4 <= j; i += 4) {  // U part: forward substitution with unit L, four rows at a time
      V acc[4];
      four_rows(i, i, acc);
      for (std::size_t m = 1; m < 4; ++m)  // the rows of this four that come before row i + m
        for (std::size_t q = 0; q < m; ++q) acc[m] -= at(i + m, i + q) * acc[q];
      for (std::size_t m = 0; m < 4; ++m) at(i + m, j) = acc[m];
    }
    for (; i < j; ++i) reduce(i, i);
    for (; i + 4 <= n; i += 4) {  // L part
      V acc[4];
      four_rows(i, j, acc);
      for (std::size_t m = 0; m < 4; ++m) at(i + m, j) = acc[m];
    }
    for (; i < n; ++i) reduce(i, j);
    V best = at(j, j), pivot = V{} + static_cast<double>(j);
    best = best < 0 ? -best : best;
    for (std::size_t i2 = j + 1; i2 < n; ++i2) {
      V v = at(i2, j);
      v = v < 0 ? -v : v;
      const auto larger = v > best;  // strictly, as lu_solve: the first largest wins
      best = larger ? v : best;
      pivot = larger ? V{} + static_cast<double>(i2) : pivot;
    }
    V diagonal = at(j, j);
    diagonal = diagonal < 0 ? -diagonal : diagonal;
    pivot = diagonal >= kPivotThreshold * best ? V{} + static_cast<double>(j) : pivot;  // as lu_solve
    // Interchange rows j and p in the lanes whose pivot row is p, one distinct p at a time, with
    // whole-vector loads, blends and stores (no lane-wise scalar stores under the vector loads that
    // follow).
    double done_rows[W];
    int distinct = 0;
    for (int l = 0; l < W; ++l) {
      const double p = pivot[l];
      if (p == static_cast<double>(j) || std::find(done_rows, done_rows + distinct, p) != done_rows + distinct) continue;
      done_rows[distinct++] = p;
      const auto take = pivot == V{} + p;  // the lanes that pivot on row p
      const auto swap_rows = [&](V& row_j, V& row_p) {
        const V old_j = row_j, old_p = row_p;
        row_j = take ? old_p : old_j;
        row_p = take ? old_j : old_p;
      };
      const auto row = static_cast<std::size_t>(p);
      for (std::size_t k = 0; k < n; ++k) swap_rows(at(j, k), at(row, k));
      swap_rows(lanes(r, j), lanes(r, row));
    }
    const V inv = (V{} + 1.0) / at(j, j);
    for (std::size_t i2 = j + 1; i2 < n; ++i2) at(i2, j) *= inv;  // the multipliers l_ij
  }
  for (std::size_t k = 0; k < n; ++k) {  // L y = P r
    const V rk = lanes(r, k);
    for (std::size_t i2 = k + 1; i2 < n; ++i2) lanes(r, i2) -= at(i2, k) * rk;
  }
  for (std::size_t k = n; k-- > 0;) {  // U x = y, by columns of U
    const V rk = lanes(r, k) /= at(k, k);
    for (std::size_t i2 = 0; i2 < k; ++i2) lanes(r, i2) -= at(i2, k) * rk;
  }
  long limited = 0;
  for (int l = 0; l < count; ++l) {
    double* ue = in.u + lane_element[l] * n;
    for (std::size_t i = 0; i < n; ++i) ue[i] = lanes(r, i)[l];
    if (!in.positivity) continue;
    const double low = *std::min_element(ue, ue + n);
    if (low >= 0) continue;
    ++limited;  // as solve_element: blend towards the conservative constant u0 >= 0
    const double u0 = std::max(0.0, balance_rhs[l] / balance_lhs[l]);
    const double theta = u0 / (u0 - low);
    for (std::size_t i = 0; i < n; ++i) ue[i] = u0 + theta * (ue[i] - u0);
  }
  if (in.element_residuals) {  // r_e - B_e u_e with u_e as written, lane by lane in the vectors
    for (std::size_t k = 0; k < n; ++k) {
      V uk{};
      for (int l = 0; l < count; ++l) uk[l] = in.u[lane_element[l] * n + k];
      for (std::size_t i = 0; i < n; ++i) lanes(r_assembled, i) -= lanes(B_assembled, k * n + i) * uk;
    }
    V sum{};
    for (std::size_t i = 0; i < n; ++i) sum += lanes(r_assembled, i) * lanes(r_assembled, i);
    for (int l = 0; l < count; ++l) in.element_residuals[lane_element[l]] = sum[l];
  }
  return limited;
}

// The kernels' workspace, aligned to 64 bytes so that no lane vector straddles two cache lines
// (a std::vector's 16-byte alignment cost the interleaved kernel ~20 % at P3).
class Workspace {
 public:
  explicit Workspace(std::size_t values) : storage_(values + 8) {}
  double* data() {
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    return reinterpret_cast<double*>((address + 63) & ~std::uintptr_t{63});
  }

 private:
  std::vector<double> storage_;
};

// One thread's workspace for the element solves of a pass, lanes elements at a time, sized as
// solve_element (lanes 1) and solve_group<NP, lanes> need it, residual copies included.
struct SolveWorkspace {
  Workspace B, r;
  SolveWorkspace(const LocalMatrices& lm, std::size_t lanes)
      : B(2 * static_cast<std::size_t>(lm.np * lm.np) * lanes), r((2 * static_cast<std::size_t>(lm.np) + 4 * static_cast<std::size_t>(lm.nfp)) * lanes) {}
};

// The kernels compiled for AVX2 + FMA (and the group kernel 8 lanes wide for AVX-512), picked at
// run time where the CPU has them: flatten inlines the block assembly and the LU into them, so
// their loops use the wide FMAs (P4 sweep on 179k tets 0.61 -> 0.42 s with AVX2 on the scalar
// kernel). Per function rather than -march=native for the build: a native-flagged translation unit
// would change Eigen's alignment ABI against prebuilt libraries that carry their own Eigen
// instantiations (libgmsh crashed that way), and the binary stays portable.
using ElementKernel = bool (*)(const Discretization&, const LocalMatrices&, const Vec3&, std::uint8_t, const double*, bool,
                               std::size_t, const double*, const double*, const double*, double*, double* __restrict,
                               double* __restrict, double*);
struct GroupKernel {
  long (*solve)(const PassInputs&, const int*, int, double* __restrict, double* __restrict);
  int lanes;
};
#if defined(__GNUC__) && defined(__x86_64__)
template <int NP>
[[gnu::target("avx2,fma"), gnu::flatten]] bool solve_element_avx2(const Discretization& disc, const LocalMatrices& lm,
                                                                   const Vec3& s, std::uint8_t lagged_mask, const double* lagged,
                                                                   bool positivity, std::size_t e, const double* sigma_t_e,
                                                                   const double* sigma_block_e, const double* rhs_e, double* u,
                                                                   double* __restrict B, double* __restrict r, double* residual_e) {
  return solve_element<NP>(disc, lm, s, lagged_mask, lagged, positivity, e, sigma_t_e, sigma_block_e, rhs_e, u, B, r, residual_e);
}
template <int NP>
[[gnu::target("avx2,fma"), gnu::flatten]] long solve_group_avx2(const PassInputs& in, const int* elements, int count,
                                                                 double* __restrict B, double* __restrict r) {
  return solve_group<NP, 4>(in, elements, count, B, r);
}
template <int NP>
[[gnu::target("avx512f,avx512vl,avx512dq,fma,prefer-vector-width=512"), gnu::flatten]] long solve_group_avx512(
    const PassInputs& in, const int* elements, int count, double* __restrict B, double* __restrict r) {
  return solve_group<NP, 8>(in, elements, count, B, r);
}
inline bool cpu_has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
inline bool cpu_has_avx512() { return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"); }
template <int NP>
ElementKernel element_kernel() {
  static const bool avx2 = cpu_has_avx2();
  return avx2 ? &solve_element_avx2<NP> : &solve_element<NP>;
}
template <int NP>
GroupKernel group_kernel() {
  static const bool avx2 = cpu_has_avx2(), avx512 = cpu_has_avx512();
  if (avx512) return {&solve_group_avx512<NP>, 8};
  if (avx2) return {&solve_group_avx2<NP>, 4};
  return {&solve_group<NP, 4>, 4};
}
#else
template <int NP>
ElementKernel element_kernel() {
  return &solve_element<NP>;
}
template <int NP>
GroupKernel group_kernel() {
  return {&solve_group<NP, 4>, 4};
}
#endif

}  // namespace dgrte::transport::element_solve
