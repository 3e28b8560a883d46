// What the Monte Carlo tracer (mc_forward.cl) and the final gather (final_gather.cl) share, built
// first in each of their programs: double precision, pi, the face-to-face walk's exit test and the
// direction frame (host twins: exit_face in src/mc/tracing_mesh.hpp, scatter_direction in
// src/mc/phase_sampler.cpp).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MC_PI 3.14159265358979323846

// ---- geometry ----
// The face through which the ray at x along d leaves the element (planes: 4 x (n, offset)); -1 for a
// degenerate direction. Exact ties go to the face crossed most squarely (mc/tracing_mesh.hpp).
int exit_face(__global const double* p, const double* x, const double* d, double* distance) {
  int best = -1;
  double t_best = INFINITY, dn_best = 0;
  for (int f = 0; f < 4; ++f) {
    __global const double* q = p + 4 * f;
    const double dn = q[0] * d[0] + q[1] * d[1] + q[2] * d[2];
    if (!(dn > 0)) continue;
    const double t = (q[3] - (q[0] * x[0] + q[1] * x[1] + q[2] * x[2])) / dn;
    if (t < t_best || (t == t_best && dn > dn_best)) t_best = t, best = f, dn_best = dn;
  }
  *distance = best < 0 ? 0.0 : fmax(t_best, 0.0);
  return best;
}

// A unit direction at cosine mu from unit d, azimuth 2 pi u about it (Duff et al. 2017 frame).
void scatter_direction(double* d, double mu, double u) {
  const double phi = 2 * MC_PI * u;
  const double st = sqrt(fmax(0.0, 1 - mu * mu));
  const double sign = copysign(1.0, d[2]);
  const double a = -1.0 / (sign + d[2]);
  const double b = d[0] * d[1] * a;
  const double t1[3] = {1 + sign * d[0] * d[0] * a, sign * b, -sign * d[0]};
  const double t2[3] = {b, sign + d[1] * d[1] * a, -d[1]};
  const double c = st * cos(phi), s = st * sin(phi);
  const double n[3] = {c * t1[0] + s * t2[0] + mu * d[0], c * t1[1] + s * t2[1] + mu * d[1], c * t1[2] + s * t2[2] + mu * d[2]};
  d[0] = n[0], d[1] = n[1], d[2] = n[2];
}
