// Shared definitions of the transport kernels. Sizes and types arrive as build options
// (-DNP=20 -DNFP=10 -DREAL=double ...), so loops over nodes have compile-time trip counts.
//   REAL: storage and arithmetic type of fields and geometry (double, or float in single mode)
//   ACC:  type of reductions (double where the device has fp64)
//   NP, NFP: nodes per element and per face; TANGENT_TOL: |s.n| below it = tangent face
#if USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// Per-element geometry, GEO_STRIDE values (device_problem.hpp, same order):
// [0, 9) grad r, grad s, grad t; [9, 21) outward unit normals of faces 0..3; [21, 25) sJ/J.
#define GEO_STRIDE 25
#define FACE_VALUES (4 * NFP)

// The extinction term of element e (transport/reaction.hpp): its Galerkin block (np x np,
// column-major) where sigma_t varies on the element, else null (sigma_t at the nodes).
// sigma_block_of holds one entry per element, -1 for diagonal elements.
inline __global const REAL* sigma_block(__global const int* sigma_block_of, __global const REAL* sigma_blocks, int e) {
  const int b = sigma_block_of[e];
  return b < 0 ? (__global const REAL*)0 : sigma_blocks + (long)b * (NP * NP);
}

// a_d = s . grad(r_d): streaming coefficient along reference direction d (He et al. 2013, Eq. 18).
inline REAL stream_coefficient(__global const REAL* g, int d, REAL sx, REAL sy, REAL sz) {
  return sx * g[3 * d] + sy * g[3 * d + 1] + sz * g[3 * d + 2];
}

// c_ef = (sJ/J)(s.n) on inflow faces (s.n < -TANGENT_TOL), else 0: the host twin is
// transport::inflow_coefficient, the only upwind test of the CPU path.
inline REAL inflow_coefficient(__global const REAL* g, int f, REAL sx, REAL sy, REAL sz) {
  const REAL sn = sx * g[9 + 3 * f] + sy * g[9 + 3 * f + 1] + sz * g[9 + 3 * f + 2];
  return sn < -(REAL)TANGENT_TOL ? g[21 + f] * sn : (REAL)0;
}
