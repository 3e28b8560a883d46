// y = A u for a batch of columns (one direction each): the upwind DG operator
//   (A u)_e = sum_d a_d D_d u_e + K_e u_e + LIFT (c_ef (u+ - u-) on inflow faces)
// (K_e: sigma_t at the nodes, or the element's extinction block)
// (He et al. 2013, Eqs. 15-25, strong form, M^-1-scaled). Host twin: host_apply (host_kernels.cpp).
//
// Work: dim 0 = APPLY_EPG elements x NP nodes per work-group, one work-item per node; dim 1 = column.
// The group stages its elements' values in local memory with one coalesced read (the layout is
// node-fastest, so the elements of a group are contiguous), forms the face jumps there, then each
// work-item does its rows of the volume GEMM and the lift. Reference matrices are column-major so
// that neighbouring work-items read neighbouring addresses.
//
// The volume gradients [Dr;Ds;Dt] u_e are formed here (use_gradients = 0), or read from `gradients`
// (use_gradients = 1): the output of one BLAS GEMM C = [Dr;Ds;Dt] U over all elements and columns
// (CLBlast, when built with it), 3 NP values per element and column at (c K + e) 3 NP, rows r|s|t.
// The benchmark compares the two.

// Stages the element values in ul, forms the face jumps and returns this node's lift term.
// Every work-item of the group must call it (barriers).
inline REAL stage_and_lift(const int K, __global const REAL* uc, __global const REAL* g, const REAL sx, const REAL sy,
                           const REAL sz, __global const int* neighbour_node, __global const int* face_nodes,
                           __global const REAL* lift, __local REAL* ul, __local REAL* jump, const int e, const int le,
                           const int i, const int lid) {
  const bool live = e < K;
  ul[lid] = live ? uc[(long)e * NP + i] : (REAL)0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int q = i; q < FACE_VALUES; q += NP) {
    const int f = q / NFP;
    const REAL cf = live ? inflow_coefficient(g, f, sx, sy, sz) : (REAL)0;
    REAL jq = 0;
    if (cf != (REAL)0) {
      const int nb = neighbour_node[(long)e * FACE_VALUES + q];
      const REAL up = nb >= 0 ? uc[nb] : (REAL)0;  // boundary inflow lives in the right-hand side
      jq = cf * (up - ul[le * NP + face_nodes[q]]);
    }
    jump[le * FACE_VALUES + q] = jq;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  REAL lifted = 0;
  __local const REAL* je = jump + le * FACE_VALUES;
  for (int q = 0; q < FACE_VALUES; ++q) lifted += lift[q * NP + i] * je[q];
  return lifted;
}

__kernel void apply_operator(const int K, const long n, __global const REAL* directions,
                             __global const REAL* geometry, __global const int* neighbour_node,
                             __global const int* face_nodes, __global const REAL* d_ref,  // Dr|Ds|Dt, NP x NP each
                             __global const REAL* gradients, const int use_gradients,
                             __global const REAL* lift,                                   // NP x 4 NFP
                             __global const REAL* sigma_t, __global const int* sigma_block_of,
                             __global const REAL* sigma_blocks, __global const int* active,
                             __global const REAL* u, __global REAL* y) {
  const int c = get_global_id(1);
  if (!active[c]) return;  // uniform over the work-group: the whole group leaves
  __local REAL ul[APPLY_EPG * NP];
  __local REAL jump[APPLY_EPG * FACE_VALUES];
  const int lid = get_local_id(0);
  const int le = lid / NP, i = lid - le * NP;
  const int e = get_group_id(0) * APPLY_EPG + le;
  const REAL sx = directions[3 * c], sy = directions[3 * c + 1], sz = directions[3 * c + 2];
  __global const REAL* g = geometry + (long)(e < K ? e : 0) * GEO_STRIDE;
  const REAL lifted = stage_and_lift(K, u + c * n, g, sx, sy, sz, neighbour_node, face_nodes, lift, ul, jump, e, le, i, lid);
  if (e >= K) return;
  __local const REAL* ue = ul + le * NP;
  REAL gr = 0, gs = 0, gt = 0;
  if (use_gradients) {  // uniform over the launch
    __global const REAL* w = gradients + ((long)c * K + e) * (3 * NP);
    gr = w[i];
    gs = w[NP + i];
    gt = w[2 * NP + i];
  } else {
    for (int j = 0; j < NP; ++j) {
      const REAL uj = ue[j];
      gr += d_ref[j * NP + i] * uj;
      gs += d_ref[NP * NP + j * NP + i] * uj;
      gt += d_ref[2 * NP * NP + j * NP + i] * uj;
    }
  }
  const long k = (long)e * NP + i;
  __global const REAL* Kb = sigma_block(sigma_block_of, sigma_blocks, e);
  REAL reaction = 0;
  if (Kb)
    for (int j = 0; j < NP; ++j) reaction += Kb[j * NP + i] * ue[j];
  else
    reaction = sigma_t[k] * ue[i];
  y[c * n + k] = stream_coefficient(g, 0, sx, sy, sz) * gr + stream_coefficient(g, 1, sx, sy, sz) * gs +
                 stream_coefficient(g, 2, sx, sy, sz) * gt + reaction + lifted;
}
