// The line-by-line absorption coefficient on a wavenumber grid (gas/lbl.hpp):
//   kappa[p] += sum_l amp_l K(xs_l (grid[p] - center_l), y_l)   over |grid[p] - center_l| <= cutoff,
// K = Re w, the Voigt function of gas/voigt.cpp with the same split and the same arithmetic:
// Humlicek (1982) region II where |x| + y >= VOIGT_S, else Weideman (1994) with WEIDEMAN_N terms.
// One work-item per grid point, LS_WG points per work-group; the group's lines [range[2 b],
// range[2 b + 1]) (the host's binary searches, as lbl_accumulate_voigt's blocks) pass through local
// memory in tiles of LS_WG. Each point sums its lines in line order, as the host twin
// (gas::lbl_accumulate_voigt) does. Double precision only.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF  // no fused multiply-adds the host's arithmetic does not have

inline double voigt_k(double x, double y, __constant const double* a, const double L) {
  const double ax = fabs(x);
  if (ax + y >= VOIGT_S) {  // Humlicek region II, real part: t (c1 + c2 u) / (0.75 + u (3 + u)), t = y - i x
    const double c2 = 0.56418958354775628695;  // 1/sqrt(pi)
    const double c1 = 2.5 * c2;
    const double ur = y * y - ax * ax;
    const double ui = -2.0 * ax * y;
    const double ar = c1 + c2 * ur, ai = c2 * ui;
    const double nr = y * ar + ax * ai;
    const double ni = y * ai - ax * ar;
    const double br = 3.0 + ur;
    const double dr = 0.75 + ur * br - ui * ui;
    const double di = ur * ui + ui * br;
    return (nr * dr + ni * di) / (dr * dr + di * di);
  }
  // Weideman: w = 2 sum_n a_n Z^(n-1) / (L - i z)^2 + 1/(sqrt(pi)(L - i z)), Z = (L + i z)/(L - i z).
  const double lpy = L + y;
  const double inv_den = 1.0 / (lpy * lpy + ax * ax);
  const double zr = (L * L - y * y - ax * ax) * inv_den;
  const double zi = 2.0 * L * ax * inv_den;
  const double qr = lpy * inv_den;
  const double qi = ax * inv_den;
  double pr = a[WEIDEMAN_N], pi = 0;
  for (int k = WEIDEMAN_N - 1; k >= 1; --k) {
    const double nr = pr * zr - pi * zi + a[k];
    const double ni = pr * zi + pi * zr;
    pr = nr;
    pi = ni;
  }
  const double q2r = qr * qr - qi * qi;
  const double q2i = 2.0 * qr * qi;
  return 2.0 * (pr * q2r - pi * q2i) + 0.56418958354775628695 * qr;
}

__kernel void lbl_line_sum(const long npts, __global const double* grid, __global const long* range,
                           __global const double* center, __global const double* amp, __global const double* xs,
                           __global const double* y, const double cutoff, __constant const double* weideman,
                           const double L, __global double* kappa) {
  __local double lc[LS_WG], la[LS_WG], lx[LS_WG], ly[LS_WG];
  const long p = get_global_id(0);
  const int lid = get_local_id(0);
  const long b = get_group_id(0);
  const bool live = p < npts;
  const double nu = live ? grid[p] : 0.0;
  const long l0 = range[2 * b], l1 = range[2 * b + 1];
  double k = 0;
  for (long t0 = l0; t0 < l1; t0 += LS_WG) {
    const int count = (int)min((long)LS_WG, l1 - t0);
    if (lid < count) {
      lc[lid] = center[t0 + lid];
      la[lid] = amp[t0 + lid];
      lx[lid] = xs[t0 + lid];
      ly[lid] = y[t0 + lid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < count; ++i) {
      const double d = nu - lc[i];
      if (fabs(d) <= cutoff) k += la[i] * voigt_k(lx[i] * d, ly[i], weideman, L);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (live) kappa[p] += k;
}
