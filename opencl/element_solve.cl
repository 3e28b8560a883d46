// Element-local solves with the diagonal block of the upwind operator,
//   B_e = sum_d a_d D_d + K_e - LIFT (c_ef on the element's own inflow-face nodes),
// K_e = diag(sigma_t), or the element's extinction block where sigma_t varies on it,
// either assembled and factorised in local memory by the work-group at every call (block_jacobi,
// sweep_level: nothing stored per element x direction), or inverted once per element and column
// (invert_blocks) and then applied as a dense product (apply_block_inverses, sweep_level_stored):
// the block depends only on the direction and sigma_t, so every later solve with the same batch is
// a matrix-vector product with no barrier per pivot step.
// Host twins: host_block_jacobi, host_sweep_level, host_block_inverses (host_kernels.cpp).
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
      if (p < 0 || a > best) best = a, p = r;  // p < 0: a NaN column still picks a row
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

// ---- Stored inverses ------------------------------------------------------------------------------
// Layout: the inverse of element e for column c at inverses[(c K + e) NP^2], column-major, so that
// the work-items of an element (one per row) read consecutive values at every step of the product.
#define INV_ROW (2 * NP)

// Gauss-Jordan elimination with partial pivoting on [B | I] (NP x 2 NP in local memory, one row per
// work-item), pivot rows chosen, not swapped, as in eliminate: afterwards row pivot_row[k] holds
// row k of B^-1 times its pivot A(pivot_row[k], k). All work-items of the group must call it.
inline void gauss_jordan(__local REAL* A, __local int* pivot_row, int i) {
  ulong used[MASK_WORDS];
  for (int w = 0; w < MASK_WORDS; ++w) used[w] = 0;
  __local REAL* Ai = A + i * INV_ROW;
  for (int k = 0; k < NP; ++k) {
    int p = -1;
    REAL best = (REAL)-1;
    for (int r = 0; r < NP; ++r) {
      if ((used[r >> 6] >> (r & 63)) & 1) continue;
      const REAL a = fabs(A[r * INV_ROW + k]);
      if (p < 0 || a > best) best = a, p = r;  // p < 0: a NaN column still picks a row
    }
    used[p >> 6] |= (ulong)1 << (p & 63);
    if (i == p) {
      pivot_row[k] = p;
    } else {  // every other row, earlier pivot rows included (the Jordan step)
      __local const REAL* Ap = A + p * INV_ROW;
      const REAL l = Ai[k] / Ap[k];
      if (l != (REAL)0)
        for (int j = k + 1; j < INV_ROW; ++j) Ai[j] -= l * Ap[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// inverses of the full blocks (streaming, extinction, own inflow faces) of every element for every
// column (active or not: the inverses serve the batch until its directions or sigma_t change).
// INVERT_EPG = 0: [B | I] does not fit the device's local memory at this order; no kernel.
#if INVERT_EPG > 0
__kernel void invert_blocks(const int K, __global const REAL* directions, __global const REAL* geometry,
                            __global const int* face_nodes, __global const REAL* d_ref, __global const REAL* lift,
                            __global const REAL* sigma_t, __global const int* sigma_block_of,
                            __global const REAL* sigma_blocks, __global REAL* inverses) {
  const int c = get_global_id(1);
  __local REAL A[INVERT_EPG * NP * INV_ROW];
  __local int pivot_row[INVERT_EPG * NP];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int e = get_group_id(0) * INVERT_EPG + le;
  __local REAL* Ae = A + le * NP * INV_ROW;
  __local REAL* Ar = Ae + i * INV_ROW;
  if (e < K) {
    assemble_row(Ar, i, geometry + (long)e * GEO_STRIDE, directions[3 * c], directions[3 * c + 1], directions[3 * c + 2], d_ref,
                 lift, face_nodes, sigma_block(sigma_block_of, sigma_blocks, e), sigma_t[(long)e * NP + i], (REAL)0);
  } else {
    identity_row(Ar, i);
  }
  for (int j = 0; j < NP; ++j) Ar[NP + j] = (REAL)(j == i);
  barrier(CLK_LOCAL_MEM_FENCE);
  gauss_jordan(Ae, pivot_row + le * NP, i);
  if (e < K) {  // work-item i writes row i of B^-1: consecutive addresses across the element's rows
    __local const REAL* Ap = Ae + pivot_row[le * NP + i] * INV_ROW;
    const REAL scale = (REAL)1 / Ap[i];
    __global REAL* out = inverses + ((long)c * K + e) * (NP * NP);
    for (int j = 0; j < NP; ++j) out[j * NP + i] = Ap[NP + j] * scale;
  }
}
#endif

// x_i = sum_j (B^-1)_ij r_j for the element's work-item i, r staged in local memory.
inline REAL apply_inverse(__global const REAL* inv, __local const REAL* r, int i) {
  REAL x = 0;
  for (int j = 0; j < NP; ++j) x += inv[j * NP + i] * r[j];
  return x;
}

// Row i of an element's stored inverse into private memory: the sweeps load it (and the right-hand
// side) before they wait for the upwind values, so that its latency overlaps theirs.
inline void load_inverse_row(__global const REAL* inv, int i, REAL* row) {
  for (int j = 0; j < NP; ++j) row[j] = inv[j * NP + i];
}
inline REAL apply_inverse_row(const REAL* row, __local const REAL* r) {
  REAL x = 0;
  for (int j = 0; j < NP; ++j) x += row[j] * r[j];
  return x;
}

// z = B^-1 r with the stored inverses (block Jacobi with the full block).
__kernel void apply_block_inverses(const int K, const long n, __global const REAL* inverses, __global const int* active,
                                   __global const REAL* r, __global REAL* z) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  __local REAL rl[APPLY_EPG * NP];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int e = get_group_id(0) * APPLY_EPG + le;
  const long k = (long)e * NP + i;
  rl[lid] = e < K ? r[c * n + k] : (REAL)0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (e < K) z[c * n + k] = apply_inverse(inverses + ((long)c * K + e) * (NP * NP), rl + le * NP, i);
}
