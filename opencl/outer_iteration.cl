// The device side of the outer (direction-coupling) iteration: the fields of a batch of ordinates
// stay on the device; the host sends the scattering moments once per transport sweep and the wall
// inflow of each batch (boundary values only), and reads back the new moments and the boundary
// traces its wall model needs. Host twins: host_scatter_source, host_lift_inflow,
// host_gather_traces, host_accumulate_moments, host_max_change (host_kernels.cpp); the CPU path
// does the same in solver::TransportSweep (build_base, Walls::lift, accumulate, Walls::record).
//
// One work-item per node and column (dim 0 node, dim 1 column), no grid-stride loops.

// base[c] = (has_base ? base[c] : 0) + sigma_s sum_j Y[op(e), m_c, j] phi[k R + j]: the in-scattering
// of ordinate m_c = ordinate[c] from the moments phi (R per node; Y = the element's scattering
// operator's to_direction table [op][m][R], zero-padded to R). In place: base holds the fixed
// source (emission, user source, scattered beams) when has_base. Where sigma_s varies on an element
// (sigma_s_block_of[e] >= 0), its Galerkin block times the element's nodal sums replaces sigma_s.
inline REAL scattered_at(__global const REAL* Y, const int R, __global const REAL* phi, const long node) {
  ACC a = 0;
  for (int j = 0; j < R; ++j) a += (ACC)Y[j] * (ACC)phi[node * R + j];
  return (REAL)a;
}

__kernel void scatter_source(const long n, const int M, const int R, const int has_base, __global const int* ordinate,
                             __global const int* op_of_element, __global const REAL* to_direction,
                             __global const REAL* sigma_s, __global const int* sigma_s_block_of,
                             __global const REAL* sigma_s_blocks, __global const REAL* phi, __global REAL* base) {
  const long k = get_global_id(0);
  const int c = get_global_id(1);
  if (k >= n) return;
  REAL s = has_base ? base[c * n + k] : (REAL)0;
  const int e = (int)(k / NP);
  const int op = R > 0 ? op_of_element[e] : -1;
  if (op >= 0) {
    __global const REAL* Y = to_direction + ((long)op * M + ordinate[c]) * R;
    __global const REAL* Kb = sigma_block(sigma_s_block_of, sigma_s_blocks, e);
    if (Kb) {
      const int i = (int)(k - (long)e * NP);
      for (int j = 0; j < NP; ++j) s += Kb[j * NP + i] * scattered_at(Y, R, phi, (long)e * NP + j);
    } else {
      s += sigma_s[k] * scattered_at(Y, R, phi, k);
    }
  }
  base[c * n + k] = s;
}

// rhs[c] -= LIFT (c_ef g) on the boundary faces where column c's direction enters (Walls::lift):
// the wall inflow g (NFP values per boundary face b, b * NFP + j) moved to the right-hand side.
// Work-items: node i of boundary element t (its faces boundary_face[4 t + f] = b, or -1), so no
// two work-items write the same value.
__kernel void lift_inflow(const int boundary_elements, const long n, const int faces, __global const int* boundary_element,
                          __global const int* boundary_face, __global const REAL* directions,
                          __global const REAL* geometry, __global const REAL* lift, __global const REAL* inflow,
                          __global REAL* rhs) {
  const long w = get_global_id(0);
  const int c = get_global_id(1);
  const int t = (int)(w / NP), i = (int)(w - (long)t * NP);
  if (t >= boundary_elements) return;
  const int e = boundary_element[t];
  __global const REAL* g = geometry + (long)e * GEO_STRIDE;
  const REAL sx = directions[3 * c], sy = directions[3 * c + 1], sz = directions[3 * c + 2];
  __global const REAL* gc = inflow + (long)c * faces * NFP;
  REAL total = 0;
  for (int f = 0; f < 4; ++f) {
    const int b = boundary_face[4 * t + f];
    if (b < 0) continue;
    const REAL cf = inflow_coefficient(g, f, sx, sy, sz);
    if (cf == (REAL)0) continue;
    REAL a = 0;
    for (int q = 0; q < NFP; ++q) a += lift[(f * NFP + q) * NP + i] * gc[(long)b * NFP + q];
    total += cf * a;
  }
  rhs[c * n + (long)e * NP + i] -= total;
}

// traces[c][b NFP + j] = u[c] at node j of boundary face b (element_face[b] = 4 e + f): all the
// wall model reads of a solution (Walls::record, record_specular, tally).
__kernel void gather_traces(const int faces, const long n, __global const int* element_face,
                            __global const int* face_nodes, __global const REAL* u, __global REAL* traces) {
  const long w = get_global_id(0);
  const int c = get_global_id(1);
  if (w >= (long)faces * NFP) return;
  const int b = (int)(w / NFP), j = (int)(w - (long)b * NFP);
  const int ef = element_face[b];
  traces[(long)c * faces * NFP + w] = u[c * n + (long)(ef / 4) * NP + face_nodes[(ef % 4) * NFP + j]];
}

// phi_out[k R + j] += sum_c Z[op(e), m_c, j] u_c[k] (to_moment tables, zero-padded to R), and with
// `outputs` G, qx, qy, qz (at fluxes[0, n, 2n, 3n) + k) += sum_c (w, s_bar) u_c[k]. Columns are
// summed in order: the result does not depend on the work decomposition.
__kernel void accumulate_moments(const long n, const int columns, const int M, const int R, const int outputs,
                                 __global const int* ordinate, __global const int* op_of_element,
                                 __global const REAL* to_moment, __global const REAL* weights,
                                 __global const REAL* s_bar, __global const REAL* u, __global ACC* phi_out,
                                 __global ACC* fluxes) {
  const long k = get_global_id(0);
  if (k >= n) return;
  const int op = R > 0 ? op_of_element[k / NP] : -1;
  if (op >= 0) {
    for (int j = 0; j < R; ++j) {
      ACC a = 0;
      for (int c = 0; c < columns; ++c) a += (ACC)to_moment[((long)op * M + ordinate[c]) * R + j] * (ACC)u[c * n + k];
      phi_out[k * R + j] += a;
    }
  }
  if (outputs) {
    ACC G = 0, qx = 0, qy = 0, qz = 0;
    for (int c = 0; c < columns; ++c) {
      const int m = ordinate[c];
      const ACC I = u[c * n + k];
      G += (ACC)weights[m] * I;
      qx += (ACC)s_bar[3 * m] * I;
      qy += (ACC)s_bar[3 * m + 1] * I;
      qz += (ACC)s_bar[3 * m + 2] * I;
    }
    fluxes[k] += G;
    fluxes[n + k] += qx;
    fluxes[2 * n + k] += qy;
    fluxes[3 * n + k] += qz;
  }
}

// Per column, per group: max |u - previous| (slot 0) and max |u| (slot 1), the convergence test of
// the sweep passes over lagged faces (finished on the host from DOT_GROUPS partials per column).
__kernel void max_change(const long n, __global const int* active, __global const REAL* u, __global const REAL* previous,
                         __global ACC* partial) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  __local ACC change[BLAS_WG], size[BLAS_WG];
  const int lid = get_local_id(0);
  ACC d = 0, m = 0;
  for (long k = get_global_id(0); k < n; k += (long)DOT_GROUPS * BLAS_WG) {
    const ACC v = u[c * n + k];
    d = fmax(d, fabs(v - (ACC)previous[c * n + k]));
    m = fmax(m, fabs(v));
  }
  change[lid] = d;
  size[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BLAS_WG / 2; s > 0; s >>= 1) {
    if (lid < s) {
      change[lid] = fmax(change[lid], change[lid + s]);
      size[lid] = fmax(size[lid], size[lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    partial[((long)c * NSLOT + 0) * DOT_GROUPS + get_group_id(0)] = change[0];
    partial[((long)c * NSLOT + 1) * DOT_GROUPS + get_group_id(0)] = size[0];
  }
}
