// Monte Carlo forward tracer: one work-item per energy bundle. The host twin is
// trace_forward_path in src/mc/monte_carlo.cpp: the same sources, draws in the same order from the
// same Philox4x64-10 streams, the same face-to-face walk (exit_face), continuous absorption,
// scattering sampled from the phase function, wall absorption and diffuse/specular reflection,
// Russian roulette. Tallies are fixed point (integer atomics: exact and order-independent, so a
// launch gives the same bits however the work-items are scheduled): deposits scaled by 2^40 per
// unit weight, tracks by 2^32 per domain diameter; a launch of at most 2^20 paths keeps every
// 64-bit sum far from overflow (docs/montecarlo.md). Double precision is required.
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

// ---- Philox4x64-10 (Salmon, Moraes, Dror & Shaw, SC11), as Random123's r123::Philox4x64 ----
typedef struct {
  ulong counter[4], key[2], block[4];
  int next;
} PathRandom;

void philox4x64_10(const ulong* in, const ulong* key_in, ulong* out) {
  ulong c0 = in[0], c1 = in[1], c2 = in[2], c3 = in[3];
  ulong k0 = key_in[0], k1 = key_in[1];
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k0 += 0x9E3779B97F4A7C15UL, k1 += 0xBB67AE8584CAA73BUL;
    const ulong lo0 = 0xD2E7470EE14C6C93UL * c0, hi0 = mul_hi(0xD2E7470EE14C6C93UL, c0);
    const ulong lo1 = 0xCA5A826395121157UL * c2, hi1 = mul_hi(0xCA5A826395121157UL, c2);
    const ulong n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

void rng_init(PathRandom* r, ulong seed, ulong stream, ulong path) {
  r->key[0] = seed, r->key[1] = stream;
  r->counter[0] = 0, r->counter[1] = path, r->counter[2] = 0, r->counter[3] = 0;
  r->next = 4;
}

// Uniform in (0, 1): 53 random bits offset by half a step (mc/random.hpp).
double uniform(PathRandom* r) {
  if (r->next == 4) {
    philox4x64_10(r->counter, r->key, r->block);
    ++r->counter[0];
    r->next = 0;
  }
  return ((double)(r->block[r->next++] >> 11) + 0.5) * 0x1.0p-53;
}

// The parity test's view of the generator: n uniforms of the stream (seed, stream, path).
__kernel void random_uniforms(const ulong seed, const ulong stream, const ulong path, const int n, __global double* out) {
  if (get_global_id(0) != 0) return;
  PathRandom r;
  rng_init(&r, seed, stream, path);
  for (int i = 0; i < n; ++i) out[i] = uniform(&r);
}

void isotropic_direction(PathRandom* rng, double* d) {
  const double mu = 2 * uniform(rng) - 1, phi = 2 * MC_PI * uniform(rng);
  const double s = sqrt(fmax(0.0, 1 - mu * mu));
  d[0] = s * cos(phi), d[1] = s * sin(phi), d[2] = mu;
}

// Cosine-weighted about the unit normal n.
void lambertian_direction(const double* n, PathRandom* rng, double* d) {
  const double mu = sqrt(uniform(rng));
  d[0] = n[0], d[1] = n[1], d[2] = n[2];
  scatter_direction(d, mu, uniform(rng));
}

// ---- phase functions: 0 isotropic, 1 Henyey-Greenstein, 2 Legendre series (mc/phase_sampler.cpp) ----
double legendre_series(__global const double* a, int N, double mu) {
  double p0 = 1, p1 = mu, s = a[0];
  if (N > 1) s += a[1] * mu;
  for (int n = 1; n + 1 < N; ++n) {
    const double p2 = ((2.0 * n + 1) * mu * p1 - n * p0) / (n + 1);
    s += a[n + 1] * p2;
    p0 = p1, p1 = p2;
  }
  return s;
}

double legendre_cdf(__global const double* a, int N, double mu) {
  // (1/2)[(mu + 1) + sum_{n>=1} a_n (P_{n+1} - P_{n-1}) / (2n + 1)]
  double pm = 1, pn = mu, s = mu + 1;  // P_{n-1}, P_n for n = 1
  for (int n = 1; n < N; ++n) {
    const double pp = ((2.0 * n + 1) * mu * pn - n * pm) / (n + 1);
    s += a[n] * (pp - pm) / (2.0 * n + 1);
    pm = pn, pn = pp;
  }
  return 0.5 * s;
}

double phase_cosine(__global const int* phase_int, __global const double* phase_real, __global const double* coefficients,
                    __global const double* tables, const int table_size, int ph, double u) {
  const int type = phase_int[4 * ph];
  if (type == 0) return 2 * u - 1;
  if (type == 1) {
    const double g = phase_real[ph];
    if (fabs(g) < 1e-12) return 2 * u - 1;
    const double f = (1 - g * g) / (1 - g + 2 * g * u);
    return clamp((1 + g * g - f * f) / (2 * g), -1.0, 1.0);
  }
  __global const double* a = coefficients + phase_int[4 * ph + 1];
  const int N = phase_int[4 * ph + 2];
  __global const double* table = tables + phase_int[4 * ph + 3];
  const int K = table_size - 1;
  // upper_bound of u in the table, then Newton on cdf(mu) = u safeguarded by bisection.
  int lo_i = 0, hi_i = table_size;
  while (lo_i < hi_i) {
    const int mid = (lo_i + hi_i) / 2;
    if (table[mid] <= u) lo_i = mid + 1; else hi_i = mid;
  }
  const int k = clamp(lo_i - 1, 0, K - 1);
  double lo = -1.0 + 2.0 * k / K, hi = -1.0 + 2.0 * (k + 1) / K;
  double mu = 0.5 * (lo + hi);
  for (int iter = 0; iter < 60; ++iter) {
    const double r = legendre_cdf(a, N, mu) - u;
    if (r > 0) hi = mu; else lo = mu;
    const double pdf = 0.5 * legendre_series(a, N, mu);
    double next = pdf > 0 ? mu - r / pdf : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (fabs(next - mu) <= 1e-15 || hi - lo <= 1e-15) return next;
    mu = next;
  }
  return mu;
}

// ---- fixed-point tallies ----
void tally(__global long* t, double x) { atom_add(t, convert_long_rte(x)); }

// Russian roulette (mc/monte_carlo.cpp survives_roulette).
bool survives_roulette(double* w, PathRandom* rng, const double below, const double weight) {
  if (*w >= below) return true;
  if (uniform(rng) * weight >= *w) return false;
  *w = weight;
  return true;
}

// element: K x 5 (absorbed weight x 2^40, track, track x, y, z x lscale); face: F x 2 (incident,
// absorbed weight x 2^40); counters: segments, scattering events, wall reflections, lost paths.
__kernel void mc_forward(const ulong seed, const ulong stream, const ulong first_id, const uint count, const double lscale,
                         const double roulette_below, const double roulette_weight, const long max_segments, const int max_zero_steps,
                         __global const double* planes, __global const int* across, __global const double* properties,
                         __global const int* phase_of_element, __global const int* tets, __global const double* vertices,
                         __global const int* face_int, __global const double* face_real, const int num_sources,
                         __global const int* source_int, __global const double* source_cdf, __global const double* beam_direction,
                         __global const int* phase_int, __global const double* phase_real, __global const double* coefficients,
                         __global const double* tables, const int table_size, __global long* element_tally,
                         __global long* face_tally, __global ulong* counters) {
  const uint gid = get_global_id(0);
  if (gid >= count) return;
  const double wscale = 0x1.0p40;
  PathRandom rng;
  rng_init(&rng, seed, stream, first_id + gid);

  // The source, by power (upper_bound on the cumulative power).
  const double target = uniform(&rng) * source_cdf[num_sources - 1];
  int lo = 0, hi = num_sources;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (source_cdf[mid] <= target) lo = mid + 1; else hi = mid;
  }
  const int s = min(lo, num_sources - 1);
  const int kind = source_int[3 * s], index = source_int[3 * s + 1];
  double x[3], d[3];
  int e;
  if (kind == 0) {  // element: uniform point (sorted uniforms -> barycentrics), isotropic direction
    e = index;
    double u0 = uniform(&rng), u1 = uniform(&rng), u2 = uniform(&rng), t;
    if (u0 > u1) t = u0, u0 = u1, u1 = t;
    if (u1 > u2) t = u1, u1 = u2, u2 = t;
    if (u0 > u1) t = u0, u0 = u1, u1 = t;
    const double bary[4] = {u0, u1 - u0, u2 - u1, 1 - u2};
    x[0] = x[1] = x[2] = 0;
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 3; ++c) x[c] += bary[k] * vertices[3 * tets[4 * e + k] + c];
    isotropic_direction(&rng, d);
  } else {  // wall face or beam entering through it
    e = face_int[4 * index];
    double r1 = uniform(&rng), r2 = uniform(&rng);
    if (r1 + r2 > 1) r1 = 1 - r1, r2 = 1 - r2;
    __global const double* a = vertices + 3 * face_int[4 * index + 1];  // the face's vertices, in mesh::kFaceVertices order
    __global const double* b = vertices + 3 * face_int[4 * index + 2];
    __global const double* c = vertices + 3 * face_int[4 * index + 3];
    for (int k = 0; k < 3; ++k) x[k] = a[k] + r1 * (b[k] - a[k]) + r2 * (c[k] - a[k]);
    if (kind == 2) {
      const int beam = source_int[3 * s + 2];
      for (int k = 0; k < 3; ++k) d[k] = beam_direction[3 * beam + k];
    } else {
      const double n[3] = {face_real[5 * index], face_real[5 * index + 1], face_real[5 * index + 2]};
      lambertian_direction(n, &rng, d);
    }
  }

  double w = 1, tau_s = -log(uniform(&rng));
  int zero_steps = 0;
  ulong segments = 0, scatters = 0, reflections = 0, lost = 0;
  for (long seg = 0;; ++seg) {
    double distance;
    const int f = exit_face(planes + 16 * e, x, d, &distance);
    const double k = properties[2 * e], sigma = properties[2 * e + 1];
    double l = distance;
    bool scatter = false;
    if (sigma > 0 && tau_s < sigma * l) {
      l = tau_s / sigma;
      scatter = true;
    } else {
      tau_s -= sigma * l;
    }
    if (f < 0 || seg > max_segments || zero_steps > max_zero_steps) {
      ++lost;
      break;
    }
    double deposit = 0, track = w * l;
    if (k > 0) {
      deposit = -w * expm1(-k * l);
      track = deposit / k;
    }
    if (l > 0) {
      __global long* t = element_tally + 5 * e;
      tally(t, deposit * wscale);
      tally(t + 1, track * lscale);
      tally(t + 2, track * d[0] * lscale);
      tally(t + 3, track * d[1] * lscale);
      tally(t + 4, track * d[2] * lscale);
    }
    ++segments;
    w -= deposit;
    if (!survives_roulette(&w, &rng, roulette_below, roulette_weight)) break;
    for (int c = 0; c < 3; ++c) x[c] += l * d[c];
    if (scatter) {
      const double mu = phase_cosine(phase_int, phase_real, coefficients, tables, table_size, phase_of_element[e], uniform(&rng));
      scatter_direction(d, mu, uniform(&rng));
      tau_s = -log(uniform(&rng));
      ++scatters;
      zero_steps = 0;
      continue;
    }
    zero_steps = l > 0 ? 0 : zero_steps + 1;
    const int next = across[4 * e + f];
    if (next >= 0) {
      e = next;
      continue;
    }
    const int fb = -1 - next;
    __global const double* fr = face_real + 5 * fb;  // inward normal, absorptivity, specular share
    tally(face_tally + 2 * fb, w * wscale);
    tally(face_tally + 2 * fb + 1, w * fr[3] * wscale);
    w *= 1 - fr[3];
    if (!(w > 0)) break;
    const double share = fr[4];
    if (share > 0 && (share >= 1 || uniform(&rng) < share)) {
      const double dn = d[0] * fr[0] + d[1] * fr[1] + d[2] * fr[2];
      for (int c = 0; c < 3; ++c) d[c] -= 2 * dn * fr[c];
    } else {
      const double n[3] = {fr[0], fr[1], fr[2]};
      lambertian_direction(n, &rng, d);
    }
    ++reflections;
    if (!survives_roulette(&w, &rng, roulette_below, roulette_weight)) break;
  }
  atom_add(counters, segments);
  atom_add(counters + 1, scatters);
  atom_add(counters + 2, reflections);
  atom_add(counters + 3, lost);
}
