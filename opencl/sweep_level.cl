// One level of a transport sweep for a batch of columns: the elements of level `level` of each
// column's plan are independent, so each is solved with its full block (element_solve.cl), its
// upwind neighbour traces (solved in earlier levels, or read from `lagged` on the faces the plan
// lagged to cut a cycle; zero there when has_lagged = 0) moved to the right-hand side. One launch
// per level serves every column: column c follows plan plan_of_column[c] (orders[p K + t],
// level_begin[p level_stride + l], lagged_faces[p K + e]). Host twin: host_sweep_level.
// sweep_level_stored does the same with the blocks' stored inverses (element_solve.cl).

// c_ef u^+ of the element's upwind neighbours (the lagged copy on lagged faces), staged in local
// memory by the element's NP work-items.
inline void stage_upwind(__local REAL* upwind, int i, bool live, int e, __global const REAL* g, REAL sx, REAL sy, REAL sz,
                         uchar lag, int has_lagged, __global const REAL* lc, __global const REAL* uc,
                         __global const int* neighbour_node) {
  for (int q = i; q < FACE_VALUES; q += NP) {
    const int f = q / NFP;
    const REAL cf = live ? inflow_coefficient(g, f, sx, sy, sz) : (REAL)0;
    REAL v = 0;
    if (cf != (REAL)0) {
      const int nb = neighbour_node[(long)e * FACE_VALUES + q];
      if (nb >= 0) v = cf * (((lag >> f) & 1) ? (has_lagged ? lc[nb] : (REAL)0) : uc[nb]);
    }
    upwind[q] = v;
  }
}

// r_i - (LIFT c u^+)_i with the staged upwind values: the element's right-hand side in a sweep.
inline REAL minus_lifted_upwind(REAL r, __global const REAL* lift, __local const REAL* upwind, int i) {
  for (int q = 0; q < FACE_VALUES; ++q) r -= lift[q * NP + i] * upwind[q];
  return r;
}

__kernel void sweep_level(const int K, const long n, const int level, const int level_stride,
                          __global const int* plan_of_column, __global const int* level_begin,
                          __global const int* orders, __global const uchar* lagged_faces, const int has_lagged,
                          __global const REAL* lagged, __global const REAL* directions, __global const REAL* geometry,
                          __global const int* neighbour_node, __global const int* face_nodes,
                          __global const REAL* d_ref, __global const REAL* lift, __global const REAL* sigma_t,
                          __global const int* sigma_block_of, __global const REAL* sigma_blocks,
                          __global const int* active, __global const REAL* rhs, __global REAL* u) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  __local REAL A[SOLVE_EPG * NP * ROW];
  __local REAL x[SOLVE_EPG * NP];
  __local REAL upwind[SOLVE_EPG * FACE_VALUES];
  __local int pivot_row[SOLVE_EPG * NP];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int p = plan_of_column[c];
  const int begin = level_begin[p * level_stride + level], end = level_begin[p * level_stride + level + 1];
  const int t = begin + get_group_id(0) * SOLVE_EPG + le;
  const bool live = t < end;
  const int e = live ? orders[(long)p * K + t] : 0;
  __global const REAL* g = geometry + (long)e * GEO_STRIDE;
  const REAL sx = directions[3 * c], sy = directions[3 * c + 1], sz = directions[3 * c + 2];
  __global const REAL* uc = u + c * n;
  __global const REAL* lc = lagged + (has_lagged ? c * n : 0);
  const uchar lag = live ? lagged_faces[(long)p * K + e] : 0;
  stage_upwind(upwind + le * FACE_VALUES, i, live, e, g, sx, sy, sz, lag, has_lagged, lc, uc, neighbour_node);
  barrier(CLK_LOCAL_MEM_FENCE);
  __local REAL* Ae = A + le * NP * ROW;
  const long k = (long)e * NP + i;
  if (live) {
    REAL ri = rhs[c * n + k];
    ri = minus_lifted_upwind(ri, lift, upwind + le * FACE_VALUES, i);
    assemble_row(Ae + i * ROW, i, g, sx, sy, sz, d_ref, lift, face_nodes, sigma_block(sigma_block_of, sigma_blocks, e),
                 sigma_t[k], ri);
  } else {
    identity_row(Ae + i * ROW, i);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  eliminate(Ae, pivot_row + le * NP, x + le * NP, i);
  if (live) u[c * n + k] = x[le * NP + i];
}

// One level with the stored inverses: r = rhs - LIFT(c u^+), then u = B^-1 r (two barriers, no
// elimination). APPLY_EPG elements per work-group.
__kernel void sweep_level_stored(const int K, const long n, const int level, const int level_stride,
                                 __global const int* plan_of_column, __global const int* level_begin,
                                 __global const int* orders, __global const uchar* lagged_faces, const int has_lagged,
                                 __global const REAL* lagged, __global const REAL* directions,
                                 __global const REAL* geometry, __global const int* neighbour_node,
                                 __global const REAL* lift, __global const REAL* inverses, __global const int* active,
                                 __global const REAL* rhs, __global REAL* u) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  __local REAL upwind[APPLY_EPG * FACE_VALUES];
  __local REAL r[APPLY_EPG * NP];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int p = plan_of_column[c];
  const int begin = level_begin[p * level_stride + level], end = level_begin[p * level_stride + level + 1];
  const int t = begin + get_group_id(0) * APPLY_EPG + le;
  const bool live = t < end;
  const int e = live ? orders[(long)p * K + t] : 0;
  __global const REAL* g = geometry + (long)e * GEO_STRIDE;
  const REAL sx = directions[3 * c], sy = directions[3 * c + 1], sz = directions[3 * c + 2];
  __global const REAL* uc = u + c * n;
  __global const REAL* lc = lagged + (has_lagged ? c * n : 0);
  const uchar lag = live ? lagged_faces[(long)p * K + e] : 0;
  stage_upwind(upwind + le * FACE_VALUES, i, live, e, g, sx, sy, sz, lag, has_lagged, lc, uc, neighbour_node);
  barrier(CLK_LOCAL_MEM_FENCE);
  const long k = (long)e * NP + i;
  REAL ri = 0;
  if (live) {
    ri = rhs[c * n + k];
    ri = minus_lifted_upwind(ri, lift, upwind + le * FACE_VALUES, i);
  }
  r[lid] = ri;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (live) u[c * n + k] = apply_inverse(inverses + ((long)c * K + e) * (NP * NP), r + le * NP, i);
}

// Every level of a column's sweep in one work-group, the levels in order with a barrier between them:
// no launch per level (a level launch costs ~9 us on an H100, most of a P1 sweep), and no group ever
// waits for another (columns are independent), so nothing relies on forward progress across groups.
// Chunks of SWEEP_SLOTS elements per level; stored inverses. Host twin: host_sweep with inverses.
#if SWEEP_SLOTS > 0
__kernel void sweep_columns_stored(const int K, const long n, const int levels, const int level_stride,
                                   __global const int* plan_of_column, __global const int* level_begin,
                                   __global const int* orders, __global const uchar* lagged_faces, const int has_lagged,
                                   __global const REAL* lagged, __global const REAL* directions,
                                   __global const REAL* geometry, __global const int* neighbour_node,
                                   __global const REAL* lift, __global const REAL* inverses, __global const int* active,
                                   __global const REAL* rhs, __global REAL* u) {
  const int c = get_group_id(0);
  if (!active[c]) return;  // the whole group: one column per group
  __local REAL upwind[SWEEP_SLOTS * FACE_VALUES];
  __local REAL r[SWEEP_SLOTS * NP];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int p = plan_of_column[c];
  const REAL sx = directions[3 * c], sy = directions[3 * c + 1], sz = directions[3 * c + 2];
  __global const REAL* uc = u + c * n;
  __global const REAL* lc = lagged + (has_lagged ? c * n : 0);
  __global const int* bounds = level_begin + p * level_stride;
  int begin = bounds[0];
  for (int l = 0; l < levels; ++l) {
    const int end = bounds[l + 1];
    for (int t0 = begin; t0 < end; t0 += SWEEP_SLOTS) {
      const int t = t0 + le;
      const bool live = t < end;
      const int e = live ? orders[(long)p * K + t] : 0;
      __global const REAL* g = geometry + (long)e * GEO_STRIDE;
      const uchar lag = live ? lagged_faces[(long)p * K + e] : 0;
      const long k = (long)e * NP + i;
      REAL row[NP];
      REAL ri = 0;
      if (live) {
        load_inverse_row(inverses + ((long)c * K + e) * (NP * NP), i, row);
        ri = rhs[c * n + k];
      }
      stage_upwind(upwind + le * FACE_VALUES, i, live, e, g, sx, sy, sz, lag, has_lagged, lc, uc, neighbour_node);
      barrier(CLK_LOCAL_MEM_FENCE);
      if (live)
        ri = minus_lifted_upwind(ri, lift, upwind + le * FACE_VALUES, i);
      r[lid] = ri;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (live) u[c * n + k] = apply_inverse_row(row, r + le * NP);
      // The chunk's u before any later level reads it, and the local arrays free for the next chunk.
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    begin = end;
  }
}
#endif
