// Element-local solves with the diagonal block of the upwind operator,
//   B_e = sum_d a_d D_d + K_e - LIFT (c_ef on the element's own inflow-face nodes),
// K_e = diag(sigma_t), or the element's extinction block where sigma_t varies on it,
// assembled and factorised in local memory by the work-group at every call: nothing is stored per
// element x direction. Block Jacobi (block_jacobi) and the sweep (sweep_level.cl) use it.
// Host twins: host_block_jacobi and host_sweep_level (host_kernels.cpp).
//
// Layout: SOLVE_EPG elements per work-group, one work-item per row; each element's block is an
// augmented NP x (NP + 1) array in local memory (column NP = right-hand side).
#define ROW (NP + 1)
#define MASK_WORDS ((NP + 63) / 64)

// Row i of the block of the element with geometry g, direction s; Kb: the element's extinction
// block, or null and sigma_i = sigma_t at node i (0 for the "partial" block without absorption);
// rhs_i into the augmented column.
inline void assemble_row(__local REAL* Ar, int i, __global const REAL* g, REAL sx, REAL sy, REAL sz,
                         __global const REAL* d_ref, __global const REAL* lift, __global const int* face_nodes,
                         __global const REAL* Kb, REAL sigma_i, REAL rhs_i) {
  const REAL a0 = stream_coefficient(g, 0, sx, sy, sz);
  const REAL a1 = stream_coefficient(g, 1, sx, sy, sz);
  const REAL a2 = stream_coefficient(g, 2, sx, sy, sz);
  for (int j = 0; j < NP; ++j)
    Ar[j] = a0 * d_ref[j * NP + i] + a1 * d_ref[NP * NP + j * NP + i] + a2 * d_ref[2 * NP * NP + j * NP + i];
  if (Kb)
    for (int j = 0; j < NP; ++j) Ar[j] += Kb[j * NP + i];
  else
    Ar[i] += sigma_i;
  for (int f = 0; f < 4; ++f) {
    const REAL cf = inflow_coefficient(g, f, sx, sy, sz);
    if (cf == (REAL)0) continue;
    for (int jj = 0; jj < NFP; ++jj) {  // the -u^- part of c (u+ - u-) couples the element to itself
      const int q = f * NFP + jj;
      Ar[face_nodes[q]] -= cf * lift[q * NP + i];
    }
  }
  Ar[NP] = rhs_i;
}

// Identity row for work-items of a group's padding element (they must still reach the barriers).
inline void identity_row(__local REAL* Ar, int i) {
  for (int j = 0; j <= NP; ++j) Ar[j] = (REAL)(j == i);
}

// Gaussian elimination with partial pivoting on the augmented block A of one element; the solution
// goes to x[0, NP). Pivot rows are chosen, not swapped: every work-item finds the same pivot (the
// first largest |A(r, k)| among unused rows, held in a private bit mask), so one barrier per step.
// Numerically the same as row-swapping GEPP. All work-items of the group must call it.
inline void eliminate(__local REAL* A, __local int* pivot_row, __local REAL* x, int i) {
  ulong used[MASK_WORDS];
  for (int w = 0; w < MASK_WORDS; ++w) used[w] = 0;
  int my_step = -1;
  for (int k = 0; k < NP; ++k) {
    int p = -1;
    REAL best = (REAL)-1;
    for (int r = 0; r < NP; ++r) {
      if ((used[r >> 6] >> (r & 63)) & 1) continue;
      const REAL a = fabs(A[r * ROW + k]);
      if (a > best) best = a, p = r;
    }
    used[p >> 6] |= (ulong)1 << (p & 63);
    if (i == p) {
      my_step = k;
      pivot_row[k] = p;
    } else if (my_step < 0) {
      __local REAL* Ai = A + i * ROW;
      __local const REAL* Ap = A + p * ROW;
      const REAL l = Ai[k] / Ap[k];
      for (int j = k + 1; j <= NP; ++j) Ai[j] -= l * Ap[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  // Back substitution by columns: x_k from its pivot row, then every earlier pivot row drops A(., k) x_k.
  __local REAL* Ai = A + i * ROW;
  for (int k = NP - 1; k >= 0; --k) {
    if (my_step == k) x[k] = Ai[NP] / Ai[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (my_step < k) Ai[NP] -= Ai[k] * x[k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

// z = B^-1 r per element and column (block Jacobi preconditioner). include_sigma = 0 gives the
// "partial" block (streaming and faces only), 1 the full block.
__kernel void block_jacobi(const int K, const long n, const int include_sigma, __global const REAL* directions,
                           __global const REAL* geometry, __global const int* face_nodes, __global const REAL* d_ref,
                           __global const REAL* lift, __global const REAL* sigma_t, __global const int* sigma_block_of,
                           __global const REAL* sigma_blocks, __global const int* active,
                           __global const REAL* r, __global REAL* z) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  __local REAL A[SOLVE_EPG * NP * ROW];
  __local REAL x[SOLVE_EPG * NP];
  __local int pivot_row[SOLVE_EPG * NP];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int e = get_group_id(0) * SOLVE_EPG + le;
  __local REAL* Ae = A + le * NP * ROW;
  const long k = (long)e * NP + i;
  if (e < K) {
    assemble_row(Ae + i * ROW, i, geometry + (long)e * GEO_STRIDE, directions[3 * c], directions[3 * c + 1],
                 directions[3 * c + 2], d_ref, lift, face_nodes,
                 include_sigma ? sigma_block(sigma_block_of, sigma_blocks, e) : (__global const REAL*)0,
                 include_sigma ? sigma_t[k] : (REAL)0, r[c * n + k]);
  } else {
    identity_row(Ae + i * ROW, i);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  eliminate(Ae, pivot_row + le * NP, x + le * NP, i);
  if (e < K) z[c * n + k] = x[le * NP + i];
}
