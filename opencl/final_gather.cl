// Final gather: one work-item per task (a receiver's samples [first, last)), the sum of its
// samples' radiance (wall points: the cosine-weighted hemisphere, edges split into their open and
// blocked parts; volume points: antipodal pairs on the sphere). The host twin is
// src/mc/final_gather.cpp (sample_receiver, RayIntegrator::radiance and ::segment) for elements
// whose source is a polynomial (emission and isotropic scattering; the host keeps anisotropic
// scattering, user sources and the case's collimated beams). Built in one program after
// tracer_common.cl (exit_face, scatter_direction). Double precision.

// ---- the nested 2-D Sobol' sequence, Owen-scrambled (Burley 2020), as sobol2 in the host twin ----
uint reverse_bits32(uint x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

uint owen_scramble(uint x, uint seed) {
  x = reverse_bits32(x);
  x += seed;
  x ^= x * 0x6c50b47cu;
  x ^= x * 0xb82f1e52u;
  x ^= x * 0xc7afe638u;
  x ^= x * 0x8d22f6e6u;
  return reverse_bits32(x);
}

void sobol2(uint k, uint scramble, double* u, double* v) {
  uint a = 0, b = 0, w = 1u << 31;
  for (int j = 0; k != 0; ++j, k >>= 1, w ^= w >> 1)
    if (k & 1u) a ^= 1u << (31 - j), b ^= w;
  const uint key = scramble * 0x9e3779b9u;
  const double scale = 1.0 / 4294967296.0;
  *u = ((double)owen_scramble(a, 0x8a3f21c5u ^ key) + 0.5) * scale;
  *v = ((double)owen_scramble(b, 0x3c6ef372u ^ ((key >> 7) | (key << 25))) + 0.5) * scale;
}

// M_k(x) = integral_0^1 s^k exp(-x s) ds, k = 0..n (exp_moments in the host twin); returns exp(-x).
double exp_moments(double x, int n, double* M) {
  const double e = exp(-x);
  if (x < 2) {
    double term = 1, sum = 1.0 / (n + 1);
    for (int j = 1; j < 40; ++j) {
      term *= -x / j;
      const double add = term / (n + j + 1);
      sum += add;
      if (fabs(add) < 1e-17 * sum) break;
    }
    M[n] = sum;
    for (int k = n; k > 0; --k) M[k - 1] = (x * M[k] + e) / k;
    return e;
  }
  const double rx = 1 / x;
  M[0] = -expm1(-x) * rx;
  for (int k = 1; k <= n; ++k) M[k] = (k * M[k - 1] - e) * rx;
  return e;
}

// What a chord reads: per mesh element (element: centre x, y, z, 1 / size, max sigma_t, uniform
// flag) the monomial coefficients of sigma_t and of the source (terms each); the monomials'
// exponents; the Gauss rules (rules: p + 1 points, their weights, the (p + 1)^2 map to monomial
// coefficients, then the thin rule's m points, weights and m^2 map, then the fit rule's).
typedef struct {
  __global const double* element;
  __global const double* sigma_t;
  __global const double* source;
  __global const int* exponents;
  __global const double* rules;
  int order, terms, thin_points, fit_points;
} GatherFields;

void gather_monomials(const GatherFields* f, int e, const double* y, double* out) {
  __global const double* el = f->element + 6 * e;
  double p[3][9];
  for (int d = 0; d < 3; ++d) {
    const double xi = (y[d] - el[d]) * el[3];
    p[d][0] = 1;
    for (int k = 1; k <= f->order; ++k) p[d][k] = p[d][k - 1] * xi;
  }
  for (int k = 0; k < f->terms; ++k) out[k] = p[0][f->exponents[3 * k]] * p[1][f->exponents[3 * k + 1]] * p[2][f->exponents[3 * k + 2]];
}

double dot_global(const double* a, __global const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

double horner(const double* c, int count, double x) {
  double v = c[count - 1];
  for (int k = count - 2; k >= 0; --k) v = v * x + c[k];
  return v;
}

// integral_0^l S exp(-tau) along the chord from x along d in element e; *T times its transmission;
// *tail = S / sigma_t at its end (RayIntegrator::segment).
double gather_segment(const GatherFields* f, int e, const double* x, const double* d, double l, double* T, double* tail) {
  __global const double* el = f->element + 6 * e;
  __global const double* c_source = f->source + (size_t)e * f->terms;
  __global const double* c_beta = f->sigma_t + (size_t)e * f->terms;
  const int flat = el[5] != 0;  // sigma_t uniform in the element
  const int n = f->order + 1;
  __global const double* gauss_s = f->rules;
  __global const double* to_mono = f->rules + 2 * n;
  __global const double* thin_s = f->rules + 2 * n + n * n;
  __global const double* thin_w = thin_s + f->thin_points;
  __global const double* thin_to_mono = thin_w + f->thin_points;
  const int nf = f->fit_points;
  __global const double* fit_s = thin_to_mono + f->thin_points * f->thin_points;
  __global const double* fit_to_mono = fit_s + 2 * nf;
  double mono[165];
  if (el[4] * l <= 0.1) {  // kThinChord
    const int m = f->thin_points;
    double S_val[9], moments[9], tau = 0;
    for (int i = 0; i < m; ++i) {
      const double t = l * thin_s[i];
      const double y[3] = {x[0] + t * d[0], x[1] + t * d[1], x[2] + t * d[2]};
      gather_monomials(f, e, y, mono);
      S_val[i] = dot_global(mono, c_source, f->terms);
      tau += thin_w[i] * (flat ? el[4] : dot_global(mono, c_beta, f->terms));
    }
    tau = fmax(0.0, tau * l);
    const double transmission = exp_moments(tau, m - 1, moments);
    double integral = 0, S_end = 0;
    for (int k = 0; k < m; ++k) {
      double c = 0;
      for (int i = 0; i < m; ++i) c += thin_to_mono[k * m + i] * S_val[i];
      integral += c * moments[k];
      S_end += c;
    }
    *T *= transmission;
    *tail = tau > 0 ? S_end * l / tau : 0.0;
    return l * integral;
  }
  double S_val[9], beta_val[9], S_coef[9], beta_coef[9], tau_coef[10];
  for (int i = 0; i < n; ++i) {
    const double t = l * gauss_s[i];
    const double y[3] = {x[0] + t * d[0], x[1] + t * d[1], x[2] + t * d[2]};
    gather_monomials(f, e, y, mono);
    S_val[i] = dot_global(mono, c_source, f->terms);
    beta_val[i] = flat ? el[4] : dot_global(mono, c_beta, f->terms);
  }
  double beta_lo = beta_val[0], beta_hi = beta_val[0];
  for (int i = 0; i < n; ++i) beta_lo = fmin(beta_lo, beta_val[i]), beta_hi = fmax(beta_hi, beta_val[i]);
  tau_coef[0] = 0;
  for (int k = 0; k < n; ++k) {
    double a = 0, b = 0;
    for (int i = 0; i < n; ++i) a += to_mono[k * n + i] * S_val[i], b += to_mono[k * n + i] * beta_val[i];
    if (flat) b = k == 0 ? beta_val[0] : 0.0;
    S_coef[k] = a, beta_coef[k] = b;
    tau_coef[k + 1] = l * b / (k + 1);
  }
  const int n_sub = flat ? 1 : max(1, (int)ceil(sqrt((beta_hi - beta_lo) * l / (8 * 0.02))));  // kMaxDelta
  const double step = 1.0 / n_sub, h = l * step;
  double integral = 0, tau_a = 0, T_a = 1;
  for (int sub = 0; sub < n_sub; ++sub) {
    const double s_a = sub * step;
    const double tau_b = flat ? beta_val[0] * l : fmax(tau_a, horner(tau_coef, n + 1, s_a + step));
    const double beta = (tau_b - tau_a) / h;
    double f_val[9], moments[9];
    for (int i = 0; i < nf; ++i) {
      const double u = fit_s[i], xs = s_a + step * u;
      const double S = n_sub == 1 && nf == n ? S_val[i] : horner(S_coef, n, xs);
      const double delta = flat ? 0.0 : fmax(horner(tau_coef, n + 1, xs), tau_a) - tau_a - beta * h * u;
      f_val[i] = delta == 0 ? S : S * exp(-delta);
    }
    const double transmission = exp_moments(beta * h, nf - 1, moments);
    double part = 0;
    for (int k = 0; k < nf; ++k) {
      double c = 0;
      for (int i = 0; i < nf; ++i) c += fit_to_mono[k * nf + i] * f_val[i];
      part += c * moments[k];
    }
    integral += T_a * h * part;
    T_a *= transmission;
    tau_a = tau_b;
  }
  *T *= T_a;
  const double beta_end = flat ? beta_val[0] : horner(beta_coef, n, 1.0), S_end = horner(S_coef, n, 1.0);
  *tail = beta_end > 0 ? S_end / beta_end : 0.0;
  return integral;
}

// Radiance arriving at x (tracer cell t) from direction d (RayIntegrator::radiance). faces: per
// boundary face the radiance it leaves with (emission, irradiation and diffuse reflection) / pi,
// absorptivity, specular share, inward normal (6 each).
double gather_radiance(const GatherFields* f, __global const double* planes, __global const int* across, __global const int* original,
                       __global const double* faces, int t, double* x, double* d, ulong* segments) {
  double L = 0, T = 1, tail = 0;
  int mirrors = 0, zero_steps = 0;
  while (T > 1e-6) {  // kMinTransmission
    double distance;
    const int face = exit_face(planes + 16 * t, x, d, &distance);
    if (face < 0 || zero_steps > 64) break;
    zero_steps = distance > 0 ? 0 : zero_steps + 1;
    ++*segments;
    if (distance > 0) {
      const double T0 = T;
      L += T0 * gather_segment(f, original[t], x, d, distance, &T, &tail);
    }
    for (int k = 0; k < 3; ++k) x[k] += distance * d[k];
    const int next = across[4 * t + face];
    if (next >= 0) {
      t = next;
      continue;
    }
    __global const double* w = faces + 6 * (-1 - next);
    L += T * w[0];
    const double specular = (1 - w[1]) * w[2];
    if (!(specular > 0) || ++mirrors > 10000) break;
    T *= specular;
    const double dn = d[0] * w[3] + d[1] * w[4] + d[2] * w[5];
    for (int k = 0; k < 3; ++k) d[k] -= 2 * dn * w[3 + k];
  }
  if (!(T > 1e-6)) L += T * tail;
  return L;
}

// receivers: per receiver x (3), normal or axis (3), adjacent wall's inward normal (3); receiver_int:
// tracer cell, sphere flag. tasks: receiver, first, last. sums: 4 per task; segments: per task.
__kernel void final_gather(__global const double* planes, __global const int* across, __global const int* original,
                           __global const double* faces, __global const double* element, __global const double* sigma_t,
                           __global const double* source, __global const int* exponents, __global const double* rules,
                           const int order, const int terms, const int thin_points, const int fit_points, __global const double* receivers,
                           __global const int* receiver_int, __global const uint* tasks, const uint num_tasks, const uint scramble,
                           __global double* sums, __global ulong* segment_counts) {
  const uint id = get_global_id(0);
  if (id >= num_tasks) return;
  const GatherFields f = {element, sigma_t, source, exponents, rules, order, terms, thin_points, fit_points};
  const uint r = tasks[3 * id];
  __global const double* rr = receivers + 9 * r;
  const int t = receiver_int[2 * r];
  const int sphere = receiver_int[2 * r + 1];
  const double n[3] = {rr[3], rr[4], rr[5]}, adjacent[3] = {rr[6], rr[7], rr[8]};
  double acc[4] = {0, 0, 0, 0};
  ulong segments = 0;
  for (uint k = tasks[3 * id + 1]; k < tasks[3 * id + 2]; ++k) {
    double u, v;
    sobol2(k, scramble, &u, &v);
    if (sphere) {
      double d[3] = {n[0], n[1], n[2]};
      scatter_direction(d, 1 - u, v);
      for (int s = 0; s < 2; ++s) {
        const double sign = s == 0 ? 1.0 : -1.0;
        double ds[3] = {sign * d[0], sign * d[1], sign * d[2]};
        const double dir[3] = {ds[0], ds[1], ds[2]};
        double x[3] = {rr[0], rr[1], rr[2]};
        const double L = gather_radiance(&f, planes, across, original, faces, t, x, ds, &segments);
        acc[0] += 0.5 * L, acc[1] -= 0.5 * L * dir[0], acc[2] -= 0.5 * L * dir[1], acc[3] -= 0.5 * L * dir[2];
      }
      continue;
    }
    const double cn = adjacent[0] * n[0] + adjacent[1] * n[1] + adjacent[2] * n[2];
    double t1[3] = {adjacent[0] - cn * n[0], adjacent[1] - cn * n[1], adjacent[2] - cn * n[2]};
    const double a = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    if (!(a > 1e-6)) {
      double d[3] = {n[0], n[1], n[2]};
      scatter_direction(d, sqrt(1 - u), v);
      double x[3] = {rr[0], rr[1], rr[2]};
      acc[0] += gather_radiance(&f, planes, across, original, faces, t, x, d, &segments);
      continue;
    }
    for (int c = 0; c < 3; ++c) t1[c] /= a;
    const double t2[3] = {n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]};
    const double ct = sqrt(1 - u), st = sqrt(u);
    const double phi0 = st > 0 ? acos(clamp(-cn * ct / (a * st), -1.0, 1.0)) : (cn >= 0 ? MC_PI : 0.0);
    const double open = phi0 / MC_PI;
    for (int part = 0; part < 2; ++part) {
      const double share = part == 0 ? open : 1 - open;
      if (!(share > 0)) continue;
      const double phi = part == 0 ? phi0 * (2 * v - 1) : phi0 + (2 * MC_PI - 2 * phi0) * v;
      const double cp = cos(phi), sp = sin(phi);
      double d[3] = {st * cp * t1[0] + st * sp * t2[0] + ct * n[0], st * cp * t1[1] + st * sp * t2[1] + ct * n[1],
                     st * cp * t1[2] + st * sp * t2[2] + ct * n[2]};
      double x[3] = {rr[0], rr[1], rr[2]};
      acc[0] += share * gather_radiance(&f, planes, across, original, faces, t, x, d, &segments);
    }
  }
  for (int c = 0; c < 4; ++c) sums[4 * id + c] = acc[c];
  segment_counts[id] = segments;
}
