// Batched BLAS-1 and the per-column scalars of Bi-CGSTAB (van der Vorst 1992, right-preconditioned):
// every vector holds `columns` columns of n values (column c at c n); every kernel skips columns
// whose active flag is 0, so converged columns cost nothing. Reductions are deterministic: each of
// DOT_GROUPS work-groups sums a fixed strided share in a fixed tree order, and finish kernels add the
// group partials in index order. Host twins: host_blas.cpp.

// partial[(c NSLOT + slot) DOT_GROUPS + group] = this group's share of (a_c, b_c).
__kernel void dot_partial(const long n, const int slot, __global const int* active, __global const REAL* a,
                          __global const REAL* b, __global ACC* partial) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  __local ACC sum[BLAS_WG];
  const int lid = get_local_id(0);
  __global const REAL* ac = a + c * n;
  __global const REAL* bc = b + c * n;
  ACC s = 0;
  for (long k = get_global_id(0); k < n; k += (long)DOT_GROUPS * BLAS_WG) s += (ACC)ac[k] * (ACC)bc[k];
  sum[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = BLAS_WG / 2; w > 0; w >>= 1) {
    if (lid < w) sum[lid] += sum[lid + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[((long)c * NSLOT + slot) * DOT_GROUPS + get_group_id(0)] = sum[0];
}

inline ACC total(__global const ACC* partial, int c, int slot) {
  ACC s = 0;
  __global const ACC* p = partial + ((long)c * NSLOT + slot) * DOT_GROUPS;
  for (int g = 0; g < DOT_GROUPS; ++g) s += p[g];
  return s;
}

// Per-column state of the iteration, BICG_STATE values per column (device_transport.cpp, same order).
#define RHO 0
#define RHO_OLD 1
#define ALPHA 2
#define OMEGA 3
#define BETA 4
#define RNORM 5
#define TOL 6
#define BNORM 7
#define HALF 8  // the iteration (from 1) whose first half step finished the column, else 0
#define BICG_STATE 9
// Slots of the partial sums.
#define SLOT_A 0
#define SLOT_B 1

// Status codes per column (status[c]): 0 running, 1 converged, 2 breakdown (rho = 0 or (v, r^) = 0),
// 3 not a number.

// After r = b - A x and ||b||: tolerance, initial residual, the start values.
__kernel void bicg_start(const ACC rtol, __global ACC* state, __global const ACC* partial, __global int* active,
                         __global int* status) {
  const int c = get_global_id(0);
  if (!active[c]) return;
  __global ACC* st = state + c * BICG_STATE;
  const ACC bnorm = sqrt(total(partial, c, SLOT_A)), rnorm = sqrt(total(partial, c, SLOT_B));
  st[RHO_OLD] = 1;
  st[ALPHA] = 1;
  st[OMEGA] = 1;
  st[RNORM] = rnorm;
  st[BNORM] = bnorm;
  st[TOL] = rtol * bnorm;  // PETSc's default test: ||r|| <= rtol ||b|| (right preconditioning)
  st[HALF] = 0;
  if (!isfinite(rnorm)) status[c] = 3, active[c] = 0;
  else if (rnorm <= st[TOL]) status[c] = 1, active[c] = 0;
}

// rho = (r, r^); beta = (rho / rho_old)(alpha / omega).
__kernel void bicg_rho(__global ACC* state, __global const ACC* partial, __global int* active, __global int* status) {
  const int c = get_global_id(0);
  if (!active[c]) return;
  __global ACC* st = state + c * BICG_STATE;
  const ACC rho = total(partial, c, SLOT_A);
  if (rho == 0) {
    status[c] = 2, active[c] = 0;
    return;
  }
  st[BETA] = (rho / st[RHO_OLD]) * (st[ALPHA] / st[OMEGA]);
  st[RHO] = rho;
}

// alpha = rho / (v, r^).
__kernel void bicg_alpha(__global ACC* state, __global const ACC* partial, __global int* active, __global int* status) {
  const int c = get_global_id(0);
  if (!active[c]) return;
  __global ACC* st = state + c * BICG_STATE;
  const ACC d = total(partial, c, SLOT_A);
  if (d == 0) {
    status[c] = 2, active[c] = 0;
    return;
  }
  st[ALPHA] = st[RHO] / d;
}

// omega = (t, s) / (t, t); t = 0 means s = 0: the step alpha p^ alone finishes the column.
__kernel void bicg_omega(__global ACC* state, __global const ACC* partial, __global const int* active) {
  const int c = get_global_id(0);
  if (!active[c]) return;
  __global ACC* st = state + c * BICG_STATE;
  const ACC ts = total(partial, c, SLOT_A), tt = total(partial, c, SLOT_B);
  st[OMEGA] = tt > 0 ? ts / tt : (ACC)0;
}

// After s = r - alpha v: ||s|| <= tol means x + alpha p^ already meets the test (s is its residual),
// so the column stops before its second preconditioner and apply, as PETSc's KSPBCGS does. An
// exact preconditioner (a sweep without lagged faces or scattering) then costs one sweep.
__kernel void bicg_half(__global ACC* state, __global const ACC* partial, __global int* active, __global int* status,
                        __global int* iterations, const int iteration) {
  const int c = get_global_id(0);
  if (!active[c]) return;
  __global ACC* st = state + c * BICG_STATE;
  const ACC snorm = sqrt(total(partial, c, SLOT_A));
  if (isfinite(snorm) && snorm <= st[TOL]) {
    st[RNORM] = snorm;
    st[HALF] = iteration;
    iterations[c] += 1;
    status[c] = 1, active[c] = 0;
  }
}

// x += alpha p^ for the columns bicg_half finished in this iteration (they are inactive by now).
__kernel void bicg_finish_half(const long n, const int iteration, __global const ACC* state, __global const REAL* p_hat,
                               __global REAL* x) {
  const int c = get_global_id(1);
  if (state[c * BICG_STATE + HALF] != (ACC)iteration) return;
  const REAL alpha = (REAL)state[c * BICG_STATE + ALPHA];
  for (long k = get_global_id(0); k < n; k += get_global_size(0)) x[c * n + k] += alpha * p_hat[c * n + k];
}

// ||r|| and the convergence test; iterations counts the finished iteration of every live column.
__kernel void bicg_check(__global ACC* state, __global const ACC* partial, __global int* active, __global int* status,
                         __global int* iterations) {
  const int c = get_global_id(0);
  if (!active[c]) return;
  __global ACC* st = state + c * BICG_STATE;
  const ACC rnorm = sqrt(total(partial, c, SLOT_A));
  st[RNORM] = rnorm;
  st[RHO_OLD] = st[RHO];
  iterations[c] += 1;
  if (!isfinite(rnorm)) status[c] = 3, active[c] = 0;
  else if (rnorm <= st[TOL]) status[c] = 1, active[c] = 0;
  else if (st[OMEGA] == 0) status[c] = 2, active[c] = 0;  // (t, s) = 0: Bi-CGSTAB stagnates
}

// r = b - y; r^ = r; p = v = 0.
__kernel void bicg_residual(const long n, __global const int* active, __global const REAL* b, __global const REAL* y,
                            __global REAL* r, __global REAL* r_hat, __global REAL* p, __global REAL* v) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  for (long k = get_global_id(0); k < n; k += get_global_size(0)) {
    const long i = c * n + k;
    const REAL ri = b[i] - y[i];
    r[i] = ri;
    r_hat[i] = ri;
    p[i] = 0;
    v[i] = 0;
  }
}

// p = r + beta (p - omega v).
__kernel void bicg_update_p(const long n, __global const int* active, __global const ACC* state, __global const REAL* r,
                            __global const REAL* v, __global REAL* p) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  const REAL beta = (REAL)state[c * BICG_STATE + BETA], omega = (REAL)state[c * BICG_STATE + OMEGA];
  for (long k = get_global_id(0); k < n; k += get_global_size(0)) {
    const long i = c * n + k;
    p[i] = r[i] + beta * (p[i] - omega * v[i]);
  }
}

// s = r - alpha v.
__kernel void bicg_update_s(const long n, __global const int* active, __global const ACC* state, __global const REAL* r,
                            __global const REAL* v, __global REAL* s) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  const REAL alpha = (REAL)state[c * BICG_STATE + ALPHA];
  for (long k = get_global_id(0); k < n; k += get_global_size(0)) {
    const long i = c * n + k;
    s[i] = r[i] - alpha * v[i];
  }
}

// x += alpha p^ + omega s^;  r = s - omega t.
__kernel void bicg_update_xr(const long n, __global const int* active, __global const ACC* state,
                             __global const REAL* p_hat, __global const REAL* s_hat, __global const REAL* s,
                             __global const REAL* t, __global REAL* x, __global REAL* r) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  const REAL alpha = (REAL)state[c * BICG_STATE + ALPHA], omega = (REAL)state[c * BICG_STATE + OMEGA];
  for (long k = get_global_id(0); k < n; k += get_global_size(0)) {
    const long i = c * n + k;
    x[i] += alpha * p_hat[i] + omega * s_hat[i];
    r[i] = s[i] - omega * t[i];
  }
}

// y = a (copy), for the unpreconditioned path (z = r).
__kernel void copy_columns(const long n, __global const int* active, __global const REAL* a, __global REAL* y) {
  const int c = get_global_id(1);
  if (!active[c]) return;
  for (long k = get_global_id(0); k < n; k += get_global_size(0)) y[c * n + k] = a[c * n + k];
}

// Bandwidth probe: y = a over the whole buffer (the copy kernel the benchmark's fraction refers to),
// one value per work-item as BabelStream's copy: a grid-stride loop measured 1.9 GB/s on PoCL
// (which vectorises across work-items, not along such loops) where this reaches the host's STREAM.
__kernel void stream_copy(const long n, __global const REAL* a, __global REAL* y) {
  const long k = get_global_id(0);
  if (k < n) y[k] = a[k];
}
