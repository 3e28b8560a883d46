#!/usr/bin/python3
"""Ray-tracing reference for the 3-D nongray enclosure of Liu, Smallwood & Guelder (2000).

Case (Liu, Smallwood & Guelder, Int. J. Heat Mass Transfer 43, 3119-3135, 2000, as restated in
seed paper section 4.1):

* box [-1, 1] x [-1, 1] x [0, 4] m, all six walls black at 300 K, non-scattering gas;
* x_H2O = 0.2, x_CO2 = 0.1 (rest N2), 1 atm, uniform composition;
* centre-line temperature T_c(z) = 400 + 1400 z / 0.375 (0 <= z <= 0.375),
  T_c(z) = 1800 - 1000 (z - 0.375) / 3.625 (z > 0.375);
* T(x, y, z) = (T_c(z) - T_e) f(r / R) + T_e, f(u) = 1 - 3u^2 + 2u^3, R = 1 m, T_e = 800 K,
  r = sqrt(x^2 + y^2).
  ASSUMPTION: in the box corners (r > R) T = T_e.  f would grow again beyond u = 1 (f(1) = 0,
  f'(1) = 0, f(sqrt 2) = 0.66); the paper's profile is meant to decay to T_e at r = R.  With
  T = T_e for r > R the field is C1 across the cylinder r = R (its second derivative jumps).

What is computed (no DG, no discrete ordinates): the correlated-k RTE is integrated along exact
rays.  A spectral point j (from `dgrte gas kdistribution`) keeps its index along the path; its
kappa_j(T) and emission weight a_j(T) follow the local temperature through tables on a uniform T
grid (ln kappa and a interpolated linearly in T; the grid spacing is checked by doubling it).
For a point P and a look direction d the ray runs from P to the wall (exact box exit distance);
the path has nodes at the kinks of the field (plane z = 0.375, cylinder r = 1) and steps that
start at ds0 = 1e-5 m at P, grow as grade * (distance from P) (grade 0.1) and are capped at
ds = 0.02 m, so every optical scale 1/kappa_j near P is resolved (optically thick points see
only the gas next to P; gray kappa = 100/m: uniform 0.02 m steps put div q at z = 2 off by
0.3 % of the maximum div q, the graded steps by 1e-5).
Default scheme `linear`: kappa trapezoidal and the source S_j = a_j I_b
linear in optical depth on each step, integrated exactly,
    I_j = sum_k e^{-tau_k} [S_k (1 - e^{-D}) + (S_{k+1} - S_k) ((1 - e^{-D})/D - e^{-D})]
          + a_j(300 K) sigma 300^4 / pi e^{-tau_total},   D = optical thickness of step k,
which is second order in the step where the step is optically thin and keeps S + S'/kappa
where it is thick (the graded steps make the steps near P thin for every kappa).  Option
`--scheme const` is the piecewise-constant variant (properties at step midpoints,
I_j = sum_k S_k (1 - e^{-D_k}) e^{-tau_k} + wall term), first order in thick steps.

Angular integration: Gauss-Legendre on panels whose edges are the directions in which the
integrand has kinks (rays through box edges and corners, rays grazing the kink plane or the r = 1
cylinder at a wall), so each panel integrand is smooth:
* axis point (0, 0, z): G = int_4pi I dOmega; phi in [0, pi/4] (8-fold symmetry of the square box
  and the axisymmetric field), mu = cos(theta) about z on panels split at the bottom/top box edges,
  at the r = 1 crossing on the end walls and at mu = 0;
* wall point (-1, 0, z): q_in = int_{d.n > 0} I mu dOmega about the inward normal n = +x;
  azimuth psi in [-pi/2, pi/2] (symmetry y -> -y) split at the box corners and psi = 0; polar
  angle theta (Gauss in theta, weight cos(theta) sin(theta): I is smooth in theta at the normal,
  not in mu) split at the edge between the far wall x = 1 and the side walls.
Outputs: q_in and q_net = q_in - sigma 300^4 at the wall centre line; G = sum_j G_j and
div q = sum_j kappa_j (4 pi a_j I_b - G_j) (positive: the gas loses energy) on the axis.

Usage (see README.md):
    /usr/bin/python3 validation/liu2000/raytrace_reference.py --label snbck-full \
        --model snbck --model-option overlap=mixture --out validation/liu2000/reference
    /usr/bin/python3 validation/liu2000/raytrace_reference.py --selftest --out validation/liu2000/reference
Single-threaded (plain numpy).
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse
import hashlib
import io
import json
import math
import subprocess
import sys
import time

import numpy as np

SIGMA = 5.670374419e-8
T_WALL = 300.0
XMIN, XMAX, YMIN, YMAX, ZMIN, ZMAX = -1.0, 1.0, -1.0, 1.0, 0.0, 4.0
ZK = 0.375          # z of the peak (kink of T_c)
TC0, TCP, TCL = 400.0, 1800.0, 800.0
T_E = 800.0
R_CYL = 1.0
DEFAULT_Z = [0.05, 0.1, 0.2, 0.3, 0.375, 0.45, 0.55, 0.65, 0.8, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25,
             2.5, 2.75, 3.0, 3.25, 3.5, 3.75, 3.9, 3.95]
DEFAULT_CHECK_Z = [0.1, 0.375, 1.0, 2.5]


# --------------------------------------------------------------------------------------------
# temperature fields
# --------------------------------------------------------------------------------------------
def t_centre(z):
    z = np.asarray(z, dtype=float)
    return np.where(z <= ZK, TC0 + (TCP - TC0) * z / ZK,
                    TCP + (TCL - TCP) * (z - ZK) / (ZMAX - ZK))


def liu_field(x, y, z):
    """T(x, y, z) of Liu et al. (2000); T = T_e for r > R (assumption, see the docstring)."""
    u = np.sqrt(np.asarray(x) ** 2 + np.asarray(y) ** 2) / R_CYL
    f = np.where(u < 1.0, 1.0 - 3.0 * u * u + 2.0 * u ** 3, 0.0)
    return (t_centre(z) - T_E) * f + T_E


def uniform_field(value):
    def field(x, y, z):
        return np.full(np.broadcast(np.asarray(x), np.asarray(y), np.asarray(z)).shape, value)
    return field


# --------------------------------------------------------------------------------------------
# spectral models
# --------------------------------------------------------------------------------------------
class TabulatedModel:
    """kappa_j(T), a_j(T) on a uniform T grid; ln kappa and a linear in T."""

    def __init__(self, tgrid, kappa, weight):
        self.T = np.asarray(tgrid, dtype=float)
        self.dT = self.T[1] - self.T[0]
        if not np.allclose(np.diff(self.T), self.dT):
            raise ValueError("T grid must be uniform")
        kappa = np.asarray(kappa, dtype=float)
        self.zero = np.all(kappa <= 0.0, axis=0)          # clear part: kappa = 0 at every T
        self.lnk = np.log(np.maximum(kappa, 1e-250))
        self.a = np.asarray(weight, dtype=float)
        self.n = kappa.shape[1]

    def _interp(self, T):
        T = np.asarray(T, dtype=float)
        if T.min() < self.T[0] - 1e-9 or T.max() > self.T[-1] + 1e-9:
            raise ValueError(f"T {T.min()}..{T.max()} outside the table {self.T[0]}..{self.T[-1]}")
        s = (T - self.T[0]) / self.dT
        i = np.clip(np.floor(s).astype(np.int64), 0, len(self.T) - 2)
        w = (s - i)[:, None]
        return i, w

    def kappa(self, T):
        i, w = self._interp(T)
        k = np.exp(self.lnk[i] + w * (self.lnk[i + 1] - self.lnk[i]))
        if self.zero.any():
            k[:, self.zero] = 0.0
        return k

    def eval(self, T):
        """kappa (n_T x J) and source a_j I_b (n_T x J) at temperatures T."""
        T = np.asarray(T, dtype=float)
        i, w = self._interp(T)
        lo = self.lnk[i]
        k = np.exp(lo + w * (self.lnk[i + 1] - lo))
        if self.zero.any():
            k[:, self.zero] = 0.0
        ao = self.a[i]
        a = ao + w * (self.a[i + 1] - ao)
        return k, a * (SIGMA / math.pi * T ** 4)[:, None]

    def wall_source(self, Tw):
        return self.eval(np.array([Tw]))[1][0]

    def coarsened(self):
        """The same table on every other T node (for the interpolation check)."""
        kap = np.exp(self.lnk[::2])
        kap[:, self.zero] = 0.0
        return TabulatedModel(self.T[::2], kap, self.a[::2])


class GrayModel:
    def __init__(self, kappa):
        self.k = float(kappa)
        self.n = 1

    def kappa(self, T):
        return np.full((len(np.atleast_1d(T)), 1), self.k)

    def eval(self, T):
        T = np.atleast_1d(np.asarray(T, dtype=float))
        return self.kappa(T), (SIGMA / math.pi * T ** 4)[:, None]

    def wall_source(self, Tw):
        return np.array([SIGMA / math.pi * Tw ** 4])


def kdistribution(binary, T, model, options, P, xh2o, xco2):
    cmd = [binary, "gas", "kdistribution", "--T", repr(float(T)), "--P", repr(float(P)),
           "--xh2o", repr(float(xh2o)), "--xco2", repr(float(xco2)), "--model", model]
    for o in options:
        cmd += ["--model-option", o]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stderr[-2000:]}")
    data = np.loadtxt(io.StringIO(res.stdout), delimiter=",", skiprows=1, ndmin=2)
    if not np.array_equal(data[:, 0], np.arange(len(data))):
        raise RuntimeError("unexpected point numbering in kdistribution output")
    return data[:, 1], data[:, 2]


def build_table(binary, model, options, dT, cache_dir, P=1.0, xh2o=0.2, xco2=0.1,
                tmin=300.0, tmax=1800.0, log=print):
    tgrid = np.arange(tmin, tmax + 0.5 * dT, dT)
    meta = json.dumps({"model": model, "options": list(options), "P": P, "xh2o": xh2o,
                       "xco2": xco2, "T": [tmin, tmax, dT]}, sort_keys=True)
    key = hashlib.sha1(meta.encode()).hexdigest()[:10]
    path = os.path.join(cache_dir, f"kdist_{model}_{key}.npz")
    if os.path.exists(path):
        d = np.load(path)
        if str(d["meta"]) == meta:
            log(f"spectral table: cached {path} ({d['kappa'].shape[1]} points, {len(tgrid)} T)")
            return TabulatedModel(d["T"], d["kappa"], d["weight"]), path
    t0 = time.time()
    kap, wts = [], []
    for T in tgrid:
        k, w = kdistribution(binary, T, model, options, P, xh2o, xco2)
        if kap and len(k) != len(kap[0]):
            raise RuntimeError(f"number of spectral points changes with T ({len(k)} at {T} K)")
        kap.append(k)
        wts.append(w)
    kap, wts = np.array(kap), np.array(wts)
    os.makedirs(cache_dir, exist_ok=True)
    np.savez_compressed(path, T=tgrid, kappa=kap, weight=wts, meta=meta)
    log(f"spectral table: {kap.shape[1]} points x {len(tgrid)} T built in "
        f"{time.time() - t0:.1f} s -> {path}")
    return TabulatedModel(tgrid, kap, wts), path


# --------------------------------------------------------------------------------------------
# rays
# --------------------------------------------------------------------------------------------
def exit_distance(p, d):
    t = math.inf
    for c, lo, hi in ((0, XMIN, XMAX), (1, YMIN, YMAX), (2, ZMIN, ZMAX)):
        if d[c] > 1e-300:
            t = min(t, (hi - p[c]) / d[c])
        elif d[c] < -1e-300:
            t = min(t, (lo - p[c]) / d[c])
    return t


def ray_cuts(p, d, L, kinks):
    """Distances along the ray at which the field has kinks (plane z = ZK, cylinder r = 1)."""
    cuts = [0.0, L]
    if not kinks:
        return cuts
    eps = 1e-12 * max(L, 1.0)
    if abs(d[2]) > 1e-300:
        t = (ZK - p[2]) / d[2]
        if eps < t < L - eps:
            cuts.append(t)
    a = d[0] ** 2 + d[1] ** 2
    if a > 1e-300:
        b = 2.0 * (p[0] * d[0] + p[1] * d[1])
        c = p[0] ** 2 + p[1] ** 2 - R_CYL ** 2
        disc = b * b - 4.0 * a * c
        if disc > 0.0:
            sq = math.sqrt(disc)
            q = -0.5 * (b + math.copysign(sq, b))
            roots = [q / a] + ([c / q] if q != 0.0 else [])
            for t in roots:
                if eps < t < L - eps:
                    cuts.append(t)
    return sorted(cuts)


_BASE_CACHE = {}


def base_nodes(ds, grade, ds0, tmax=6.0):
    """Distances from P: first step ds0, then steps growing as grade * t up to ds, then ds.
    The grading resolves every optical scale 1/kappa near P (thick spectral points see only a
    short path; their div q and wall flux depend on the source within a few 1/kappa of P)."""
    key = (ds, grade, ds0)
    if key not in _BASE_CACHE:
        t = [0.0, ds0]
        while t[-1] < tmax:
            t.append(t[-1] + min(ds, max(ds0, grade * t[-1])))
        _BASE_CACHE[key] = np.array(t)
    return _BASE_CACHE[key]


def ray_nodes(cuts, ds, grade, ds0):
    L = cuts[-1]
    base = base_nodes(ds, grade, ds0)
    t = np.union1d(base[base < L], cuts)
    keep = np.ones(len(t), bool)
    keep[1:] = np.diff(t) > 1e-10          # drop slivers next to a cut (keep the cut itself)
    keep[-1] = True
    t = t[keep]
    if len(t) > 2 and t[-1] - t[-2] < 1e-10:
        t = np.delete(t, -2)
    return t


def _g_linear(D, E1):
    """((1 - e^-D)/D - e^-D), with E1 = 1 - e^-D; series for small D."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = E1 / D - (1.0 - E1)
    small = D < 1e-3
    if small.any():
        Ds = D[small]
        g[small] = Ds * (0.5 - Ds * (1.0 / 3.0 - Ds * 0.125))
    return g


def trace(p, d, field, model, s_wall, ds, scheme="linear", kinks=True):
    """Spectral intensity (J-vector) arriving at p from direction d (looking along d).
    ds = (ds_max, grade, ds0), see base_nodes."""
    L = exit_distance(p, d)
    t = ray_nodes(ray_cuts(p, d, L, kinks), *ds)
    dt = np.diff(t)
    if scheme == "linear":
        T = field(p[0] + t * d[0], p[1] + t * d[1], p[2] + t * d[2])
        k, S = model.eval(T)
        D = 0.5 * (k[:-1] + k[1:]) * dt[:, None]
        tau = np.cumsum(D, axis=0)
        att = np.exp(-tau)                      # transmissivity to the far end of each step
        E1 = -np.expm1(-D)
        att_b = np.empty_like(att)              # to the near end
        att_b[0] = 1.0
        att_b[1:] = att[:-1]
        S0 = S[:-1]
        I = np.einsum("kj,kj->j", att_b, S0 * E1 + (S[1:] - S0) * _g_linear(D, E1))
    elif scheme == "const":
        tm = 0.5 * (t[:-1] + t[1:])
        T = field(p[0] + tm * d[0], p[1] + tm * d[1], p[2] + tm * d[2])
        k, S = model.eval(T)
        D = k * dt[:, None]
        tau = np.cumsum(D, axis=0)
        att = np.exp(-tau)
        E1 = -np.expm1(-D)
        att_b = np.empty_like(att)
        att_b[0] = 1.0
        att_b[1:] = att[:-1]
        I = np.einsum("kj,kj->j", att_b * E1, S)
    else:
        raise ValueError(scheme)
    return I + s_wall * att[-1], len(t)


# --------------------------------------------------------------------------------------------
# angular quadratures
# --------------------------------------------------------------------------------------------
def gauss(a, b, n):
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (a + b) + 0.5 * (b - a) * x, 0.5 * (b - a) * w


def panels(edges, n, tol=1e-12):
    e = sorted(edges)
    xs, ws = [], []
    for a, b in zip(e[:-1], e[1:]):
        if b - a > tol:
            x, w = gauss(a, b, n)
            xs.append(x)
            ws.append(w)
    return np.concatenate(xs), np.concatenate(ws)


def axis_directions(z, n):
    """Directions and weights for G at (0, 0, z): sum w = 4 pi."""
    dirs, wts = [], []
    phis, wphi = gauss(0.0, math.pi / 4.0, n)
    for phi, wp in zip(phis, wphi):
        h = 1.0 / math.cos(phi)                 # horizontal distance to the wall x = 1
        zt, zb = ZMAX - z, z - ZMIN
        edges = [-1.0, 1.0, 0.0,
                 -zb / math.hypot(zb, h), zt / math.hypot(zt, h),        # box edges
                 -zb / math.hypot(zb, 1.0), zt / math.hypot(zt, 1.0)]    # r = 1 on the end walls
        mus, wmu = panels(edges, n)
        st = np.sqrt(np.maximum(0.0, 1.0 - mus ** 2))
        dirs.append(np.column_stack([st * math.cos(phi), st * math.sin(phi), mus]))
        wts.append(8.0 * wp * wmu)
    return np.vstack(dirs), np.concatenate(wts)


def wall_directions(z, n):
    """Look directions and weights (incl. cos) for q_in at (-1, 0, z): sum w = pi."""
    dirs, wts = [], []
    zt, zb = ZMAX - z, z - ZMIN
    psis, wpsi = panels([-math.pi / 2, math.pi / 2, 0.0, math.atan2(-zb, 1.0),
                         math.atan2(zt, 1.0)], n)
    for psi, wp in zip(psis, wpsi):
        c, s = math.cos(psi), math.sin(psi)
        rho = math.inf                          # lateral distance to the rim of the far wall
        if c > 1e-300:
            rho = min(rho, (YMAX - 0.0) / c)
        if s > 1e-300:
            rho = min(rho, zt / s)
        elif s < -1e-300:
            rho = min(rho, -zb / s)
        th_star = math.atan(0.5 * rho)                  # tan(theta*) = rho / 2
        # Gauss in theta (not mu): near the normal I ~ I0 + theta g(psi), smooth in theta but
        # not in mu = cos(theta)
        ths, wth = panels([0.0, th_star, 0.5 * math.pi], n)
        mus, st = np.cos(ths), np.sin(ths)
        dirs.append(np.column_stack([mus, st * c, st * s]))
        wts.append(2.0 * wp * wth * mus * st)
    return np.vstack(dirs), np.concatenate(wts)


# --------------------------------------------------------------------------------------------
# point evaluations
# --------------------------------------------------------------------------------------------
def axis_point(z, field, model, s_wall, ds, n_ang, scheme="linear"):
    p = np.array([0.0, 0.0, z])
    dirs, w = axis_directions(z, n_ang)
    G = np.zeros(model.n)
    nodes = 0
    for d, wi in zip(dirs, w):
        I, m = trace(p, d, field, model, s_wall, ds, scheme)
        G += wi * I
        nodes += m
    TP = np.atleast_1d(field(0.0, 0.0, z)).astype(float)
    k, S = model.eval(TP)
    divq = float(np.sum(k[0] * (4.0 * math.pi * S[0] - G)))
    return {"G": float(G.sum()), "divq": divq, "rays": len(w), "nodes": nodes}


def wall_point(z, field, model, s_wall, ds, n_ang, scheme="linear"):
    p = np.array([XMIN, 0.0, z])
    dirs, w = wall_directions(z, n_ang)
    q = 0.0
    nodes = 0
    for d, wi in zip(dirs, w):
        I, m = trace(p, d, field, model, s_wall, ds, scheme)
        q += wi * I.sum()
        nodes += m
    return {"q_in": float(q), "q_net": float(q - SIGMA * T_WALL ** 4), "rays": len(w),
            "nodes": nodes}


def run_points(zs, field, model, s_wall, ds, n_ang, scheme, log=None):
    """n_ang = (Gauss points per panel at the wall, on the axis)."""
    rows = []
    for z in zs:
        t0 = time.time()
        w = wall_point(z, field, model, s_wall, ds, n_ang[0], scheme)
        a = axis_point(z, field, model, s_wall, ds, n_ang[1], scheme)
        rows.append({"z": z, "q_in_wall": w["q_in"], "q_net_wall": w["q_net"],
                     "divq_axis": a["divq"], "G_axis": a["G"],
                     "rays": w["rays"] + a["rays"], "nodes": w["nodes"] + a["nodes"],
                     "seconds": time.time() - t0})
        if log:
            r = rows[-1]
            log(f"  z={z:7.4f}  q_in={r['q_in_wall']:12.2f}  q_net={r['q_net_wall']:12.2f}  "
                f"divq={r['divq_axis']:13.2f}  G={r['G_axis']:12.2f}  "
                f"({r['rays']} rays, {r['nodes'] / r['rays']:.0f} nodes/ray, {r['seconds']:.1f} s)")
    return rows


def compare(rows_a, rows_b, scale_q, scale_d):
    """Differences of b against a: max relative to the max |q_net| / |div q| of the scale."""
    out = {"z": [r["z"] for r in rows_a]}
    for key, scale in (("q_in_wall", None), ("q_net_wall", scale_q), ("divq_axis", scale_d),
                       ("G_axis", None)):
        da = np.array([r[key] for r in rows_a])
        db = np.array([r[key] for r in rows_b])
        diff = np.abs(db - da)
        out[key] = {"max_abs": float(diff.max()),
                    "max_rel_pointwise": float(np.max(diff / np.maximum(np.abs(da), 1e-300)))}
        if scale:
            out[key]["max_rel_to_max"] = float(diff.max() / scale)
    return out


# --------------------------------------------------------------------------------------------
# self-test against independent integrations (scipy)
# --------------------------------------------------------------------------------------------
FACES = [  # (axis, value, outward normal sign)
    (0, XMIN, -1.0), (0, XMAX, 1.0), (1, YMIN, -1.0), (1, YMAX, 1.0), (2, ZMIN, -1.0), (2, ZMAX, 1.0)]
BOUNDS = [(XMIN, XMAX), (YMIN, YMAX), (ZMIN, ZMAX)]


def independent_integral(p, normal, field, kappa, Tw, tol=1e-10):
    """G (normal None) or q_in (normal = inward unit normal at p) by integrating over the wall
    area, dOmega = cos(theta_w) dA / d^2, with the intensity from an adaptive quadrature of the
    formal solution along the straight line (gray, constant kappa). Independent of the tracer's
    angular panels and path steps."""
    from scipy import integrate
    Ib_w = SIGMA / math.pi * Tw ** 4
    isothermal = getattr(field, "isothermal", None)

    def intensity(dvec, L):
        if isothermal is not None:
            Ib = SIGMA / math.pi * isothermal ** 4
            return Ib * (-math.expm1(-kappa * L)) + Ib_w * math.exp(-kappa * L)
        pts = [t for t in ray_cuts(p, dvec, L, True)[1:-1]]

        def f(t):
            T = float(field(p[0] + t * dvec[0], p[1] + t * dvec[1], p[2] + t * dvec[2]))
            return kappa * SIGMA / math.pi * T ** 4 * math.exp(-kappa * t)
        val, _ = integrate.quad(f, 0.0, L, points=pts or None, epsabs=0.0, epsrel=tol, limit=200)
        return val + Ib_w * math.exp(-kappa * L)

    total = 0.0
    for ax, val, sgn in FACES:
        if abs(p[ax] - val) < 1e-12:
            continue                       # the face the point lies on
        u_ax, v_ax = [a for a in range(3) if a != ax]
        (u0, u1), (v0, v1) = BOUNDS[u_ax], BOUNDS[v_ax]

        def integrand(v, u):
            q = np.empty(3)
            q[ax], q[u_ax], q[v_ax] = val, u, v
            dv = q - p
            L = math.sqrt(dv @ dv)
            dvec = dv / L
            cw = abs(dvec[ax])
            wgt = cw / (L * L)
            if normal is not None:
                wgt *= max(0.0, float(dvec @ normal))
            if wgt == 0.0:
                return 0.0
            return wgt * intensity(dvec, L)
        # split the face at the foot of p and at the kink lines so the adaptive rule sees
        # smooth pieces
        us = sorted({u0, u1, *[x for x in (p[u_ax], 0.0) if u0 < x < u1]})
        vs = sorted({v0, v1, *[x for x in (p[v_ax], 0.0) if v0 < x < v1]})
        for ua, ub in zip(us[:-1], us[1:]):
            for va, vb in zip(vs[:-1], vs[1:]):
                r, _ = integrate.dblquad(integrand, ua, ub, va, vb, epsabs=0.0, epsrel=tol)
                total += r
    return total


def path_res(args, f):
    """(ds_max, grade, ds0) scaled by f (f = 0.5: every step halved)."""
    return (args.ds * f, args.grade * f, args.ds0 * f)


def selftest(args, log):
    """Gray checks of the tracer against independent integrations (see independent_integral)."""
    prod = path_res(args, 1.0)
    nprod = (args.n_wall, args.n_axis)
    res = {"resolution": {"path_ds_grade_ds0": prod, "n_wall_n_axis": nprod}, "cases": []}
    iso = uniform_field(1000.0)
    iso.isothermal = 1000.0
    cases = [
        ("isothermal 1000 K, kappa 1/m, walls 0 K", iso, 1.0, 0.0, "linear", prod, nprod),
        ("isothermal 1000 K, kappa 1/m, walls 0 K, n_ang/2", iso, 1.0, 0.0, "linear", prod,
         tuple(max(2, n // 2) for n in nprod)),
        ("Liu T field, kappa 1/m, walls 300 K", liu_field, 1.0, T_WALL, "linear", prod, nprod),
        ("Liu T field, kappa 10/m, walls 300 K", liu_field, 10.0, T_WALL, "linear", prod, nprod),
        ("Liu T field, kappa 100/m, walls 300 K", liu_field, 100.0, T_WALL, "linear", prod,
         nprod),
        ("Liu T field, kappa 10/m, walls 300 K, ds/4, 2 n_ang", liu_field, 10.0, T_WALL,
         "linear", path_res(args, 0.25), tuple(2 * n for n in nprod)),
        ("Liu T field, kappa 10/m, walls 300 K, scheme const", liu_field, 10.0, T_WALL, "const",
         prod, nprod),
        ("Liu T field, kappa 100/m, walls 300 K, scheme const", liu_field, 100.0, T_WALL,
         "const", prod, nprod),
    ]
    exact_cache = {}
    for name, field, kap, Tw, scheme, ds, n_ang in cases:
        model = GrayModel(kap)
        s_wall = model.wall_source(Tw)
        for z in (0.375, 2.0):
            key = (id(field), kap, Tw, z)
            t0 = time.time()
            if key not in exact_cache:
                pa = np.array([0.0, 0.0, z])
                pw = np.array([XMIN, 0.0, z])
                exact_cache[key] = (independent_integral(pa, None, field, kap, Tw),
                                    independent_integral(pw, np.array([1.0, 0.0, 0.0]), field,
                                                         kap, Tw))
            t_ex = time.time() - t0
            G_ex, q_ex = exact_cache[key]
            t0 = time.time()
            a = axis_point(z, field, model, s_wall, ds, n_ang[1], scheme)
            w = wall_point(z, field, model, s_wall, ds, n_ang[0], scheme)
            t_tr = time.time() - t0
            TP = float(field(0.0, 0.0, z))
            divq_ex = kap * (4.0 * SIGMA * TP ** 4 - G_ex)
            qnet_ex = q_ex - SIGMA * Tw ** 4
            entry = {"case": name, "scheme": scheme, "path_ds_grade_ds0": ds,
                     "n_wall_n_axis": n_ang, "z": z,
                     "G_independent": G_ex, "G_tracer": a["G"], "G_rel": a["G"] / G_ex - 1.0,
                     "divq_independent": divq_ex, "divq_tracer": a["divq"],
                     "divq_rel": a["divq"] / divq_ex - 1.0,
                     "q_in_independent": q_ex, "q_in_tracer": w["q_in"],
                     "q_in_rel": w["q_in"] / q_ex - 1.0,
                     "q_net_rel": (w["q_net"] - qnet_ex) / qnet_ex if Tw > 0 else None,
                     "seconds_independent": t_ex, "seconds_tracer": t_tr}
            res["cases"].append(entry)
            log(f"{name:52s} z={z:5.3f}: G {a['G']:.7e} vs {G_ex:.7e} ({entry['G_rel']:+.1e}),"
                f" div q {a['divq']:.5e} vs {divq_ex:.5e} ({entry['divq_rel']:+.1e}),"
                f" q_in {w['q_in']:.7e} vs {q_ex:.7e} ({entry['q_in_rel']:+.1e})"
                f"  [{t_ex:.0f} s / {t_tr:.1f} s]")
    for z in (0.05, 0.375, 2.0, 3.95):
        _, wa = axis_directions(z, args.n_axis)
        _, ww = wall_directions(z, args.n_wall)
        res.setdefault("weight_sums", []).append(
            {"z": z, "axis_minus_4pi": float(wa.sum() - 4 * math.pi),
             "wall_minus_pi": float(ww.sum() - math.pi)})
    log("angular weight sums - exact:", json.dumps(res["weight_sums"]))
    return res


CHECKS = {  # name: (path factor, angular factor, coarser T table)
    "ds/2": (0.5, 1, False),
    "2 n_ang": (1.0, 2, False),
    "ds/2 and 2 n_ang": (0.5, 2, False),
    "T table 2 dT": (1.0, 1, True),
}
CHECK_KEYS = {"ds": "ds/2", "ang": "2 n_ang", "both": "ds/2 and 2 n_ang", "table": "T table 2 dT"}


# --------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--label", default=None, help="output label (reference_<label>.csv/json)")
    ap.add_argument("--binary", default="/tmp/dgrte-ref/dgrte", help="dgrte executable")
    ap.add_argument("--model", default="snbck")
    ap.add_argument("--model-option", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to `dgrte gas kdistribution --model-option` (repeatable)")
    ap.add_argument("--dT", type=float, default=5.0, help="T grid spacing of the tables [K]")
    ap.add_argument("--ds", type=float, default=0.02, help="max path step [m]")
    ap.add_argument("--grade", type=float, default=0.1,
                    help="near P the step is grade * (distance from P)")
    ap.add_argument("--ds0", type=float, default=1e-5, help="first (smallest) path step [m]")
    ap.add_argument("--n-wall", type=int, default=8,
                    help="Gauss points per angular panel, wall points")
    ap.add_argument("--n-axis", type=int, default=6,
                    help="Gauss points per angular panel, axis points")
    ap.add_argument("--scheme", choices=["linear", "const"], default="linear")
    ap.add_argument("--z", type=str, default=None, help="comma-separated z values")
    ap.add_argument("--check-z", type=str, default=",".join(map(str, DEFAULT_CHECK_Z)),
                    help="z values of the convergence checks ('' to skip)")
    ap.add_argument("--checks", type=str, default="ds,ang,both,table",
                    help="which checks: ds (ds/2), ang (2 n), both (ds/2 and 2 n), "
                         "table (T table with 2 dT)")
    ap.add_argument("--selftest", action="store_true", help="gray checks against scipy")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    logf = None

    def log(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        if logf:
            logf.write(s + "\n")
            logf.flush()

    t_start = time.time()
    cpu_start = time.process_time()
    if args.selftest:
        logf = open(os.path.join(args.out, "selftest.log"), "w")
        log("command:", " ".join(sys.argv))
        res = selftest(args, log)
        res["wall_seconds"] = time.time() - t_start
        with open(os.path.join(args.out, "selftest.json"), "w") as f:
            json.dump(res, f, indent=1)
        log(f"selftest: {res['wall_seconds']:.0f} s")
        return

    label = args.label or args.model
    logf = open(os.path.join(args.out, f"reference_{label}.log"), "w")
    log("command:", " ".join(sys.argv))
    model, table_path = build_table(args.binary, args.model, args.model_option, args.dT,
                                    os.path.join(args.out, "cache"), log=log)
    s_wall = model.wall_source(T_WALL)
    zs = [float(v) for v in args.z.split(",")] if args.z else DEFAULT_Z
    prod = path_res(args, 1.0)
    nprod = (args.n_wall, args.n_axis)
    t0 = time.time()
    log(f"production: path (ds, grade, ds0) = {prod}, Gauss points per panel (wall, axis) = "
        f"{nprod}, scheme {args.scheme}, {len(zs)} points, {model.n} spectral points")
    rows = run_points(zs, liu_field, model, s_wall, prod, nprod, args.scheme, log)
    t_prod = time.time() - t0
    scale_q = max(abs(r["q_net_wall"]) for r in rows)
    scale_d = max(abs(r["divq_axis"]) for r in rows)

    checks = {}
    check_z = [float(v) for v in args.check_z.split(",") if v.strip()]
    wanted = [CHECK_KEYS[c.strip()] for c in args.checks.split(",") if c.strip()]
    if check_z and wanted:
        base = [r for r in rows if any(abs(r["z"] - c) < 1e-12 for c in check_z)]
        missing = [c for c in check_z if not any(abs(r["z"] - c) < 1e-12 for r in rows)]
        if missing:
            log("production resolution at the extra check points:")
            base += run_points(missing, liu_field, model, s_wall, prod, nprod, args.scheme, log)
            base.sort(key=lambda r: r["z"])
        zc = [r["z"] for r in base]
        for name in wanted:
            fpath, fang, coarse = CHECKS[name]
            m = model.coarsened() if coarse else model
            t0 = time.time()
            log(f"check {name}:")
            other = run_points(zc, liu_field, m, m.wall_source(T_WALL), path_res(args, fpath),
                               tuple(fang * n for n in nprod), args.scheme, log)
            c = compare(base, other, scale_q, scale_d)
            c["seconds"] = time.time() - t0
            checks[name] = c
            log(f"  -> max |diff| / max |q_net| = {c['q_net_wall']['max_rel_to_max']:.1e}, "
                f"max |diff| / max |div q| = {c['divq_axis']['max_rel_to_max']:.1e}; pointwise "
                f"q_in {c['q_in_wall']['max_rel_pointwise']:.1e}, "
                f"G {c['G_axis']['max_rel_pointwise']:.1e}")

    wall = time.time() - t_start
    csv_path = os.path.join(args.out, f"reference_{label}.csv")
    with open(csv_path, "w") as f:
        f.write("z,q_in_wall,q_net_wall,divq_axis,G_axis\n")
        for r in rows:
            f.write(f"{r['z']:.6g},{r['q_in_wall']:.8e},{r['q_net_wall']:.8e},"
                    f"{r['divq_axis']:.8e},{r['G_axis']:.8e}\n")
    summary = {
        "case": "Liu, Smallwood & Guelder (2000) 3-D nongray box, seed paper section 4.1",
        "label": label, "model": args.model, "model_options": args.model_option,
        "gas": {"P_atm": 1.0, "x_h2o": 0.2, "x_co2": 0.1}, "walls": "black, 300 K",
        "assumption": "T = T_e = 800 K for r > 1 m (box corners)",
        "units": {"q": "W/m^2", "divq_axis": "W/m^3 (positive: gas loses energy)",
                  "G_axis": "W/m^2"},
        "spectral_points": int(model.n),
        "table": {"T_min": float(model.T[0]), "T_max": float(model.T[-1]),
                  "dT": float(model.dT), "interpolation": "ln kappa and a linear in T",
                  "file": os.path.relpath(table_path, args.out)},
        "binary": args.binary,
        "resolution": {"ds_max_m": args.ds, "grade": args.grade, "ds0_m": args.ds0,
                       "gauss_points_per_panel_wall": args.n_wall,
                       "gauss_points_per_panel_axis": args.n_axis,
                       "scheme": args.scheme,
                       "rays_per_wall_point": int(wall_directions(1.0, args.n_wall)[1].size),
                       "rays_per_axis_point": int(axis_directions(1.0, args.n_axis)[1].size),
                       "mean_nodes_per_ray": sum(r["nodes"] for r in rows)
                       / sum(r["rays"] for r in rows)},
        "z": zs,
        "min_max": {k: [min(r[k] for r in rows), max(r[k] for r in rows)]
                    for k in ("q_in_wall", "q_net_wall", "divq_axis", "G_axis")},
        "convergence": checks,
        "convergence_note": "differences of each check run against the production run at "
                            "check z; max_rel_to_max = max |diff| / max over all z of |q_net| "
                            "or |div q| of the production run",
        "seconds_production": t_prod, "wall_seconds": wall,
        "cpu_seconds": time.process_time() - cpu_start,
        "rows": rows,
    }
    with open(os.path.join(args.out, f"reference_{label}.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"wrote {csv_path}; wall {wall:.1f} s (production {t_prod:.1f} s), "
        f"cpu {summary['cpu_seconds']:.1f} s")
    log("min/max:", json.dumps(summary["min_max"]))


if __name__ == "__main__":
    # numpy's large temporaries: keep freed memory in the heap instead of mmap/munmap per
    # array (halves the run time: the page faults otherwise cost as much as the arithmetic)
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") is None:
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="33554432",
                   MALLOC_TRIM_THRESHOLD_="4294967296")
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    main()
