#!/usr/bin/python3
"""Isothermal gray cube with cold black walls: exact reference, discrete-ordinates limit, DG comparison.

Unit cube [0,1]^3, gray non-scattering medium with blackbody intensity I_b = 1 W/(m^2 sr)
(`Ib: "1"`), absorption coefficient kappa = 0.1, 1, 10 1/m, black walls at 0 K. The intensity
arriving at p from the upwind direction u (u = -s, s the propagation direction) is

    I(p, s) = I_b (1 - exp(-kappa L(p, u))),   L = distance from p along u to the boundary,

so
    G(p)     = int_{4 pi} I dOmega                       (compared along the axis (0,.5,.5)-(1,.5,.5))
    q_in(p)  = int_{u.n > 0} I (u.n) dOmega             (on the wall x = 0 along y = 0.5, z = 0..1)

with n the wall's inward normal; for a cold black wall the net flux (absorbed - emitted, into the
wall) equals q_in. Exact values: the sphere of directions is split by the face each ray exits
through (the chord switches faces there); on each face, polar coordinates about the foot of the
perpendicular from p, split into 8 triangles, with logarithmic substitutions in both angles
(sphere_integral) make the integrand smooth for fixed Gauss-Legendre rules. `--self-test` checks convergence (n vs
2n), the kappa -> infinity limits 4 pi I_b and pi I_b, an independent adaptive integration over
(theta, phi) with a ray-box chord, and the global energy balance (walls absorb what the medium
loses: 6 int_wall q_in dA = kappa int_V (4 pi I_b - G) dV).

Discrete-ordinates (DO) limit of a set (s_m, w_m) from OUT/quadrature.csv:
    G_DO = sum_m w_m I(p, s_m),   q_DO = sum_{s_m . n < 0} w_m |s_m . n| I(p, s_m),
what a perfect spatial discretisation with that set gives. The table splits the DG error into
spatial (DG - DO limit) and ray-effect (DO limit - exact) parts.

Examples:
    isothermal_cube.py --self-test
    isothermal_cube.py --dgrte build/src/app/dgrte                 # sets x orders x kappa
    isothermal_cube.py --dgrte build/src/app/dgrte --coarse --no-plot
"""
import argparse
import copy
import math
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
import dgrte_io as dio  # noqa: E402

IB = 1.0
KAPPAS = [0.1, 1.0, 10.0]
AXIS = ((0.0, 0.5, 0.5), (1.0, 0.5, 0.5))    # volume probe: G
WALL = ((0.0, 0.5, 0.0), (0.0, 0.5, 1.0))    # wall probe on x = 0 (group xmin): q_in, q_net
WALL_NORMAL = np.array([1.0, 0.0, 0.0])      # inward normal of the wall x = 0


# ---------------------------------------------------------------------------------------------
# Exact integrals over the sphere of directions.

def _face_pieces(p):
    """Triangles of the angular domain of each face seen from p: (axis a, sign of u_a, d, in-plane
    axes b, c, signs sb, sc, extents A, B, triangle 0|1)."""
    pieces = []
    for a in range(3):
        b, c = [k for k in range(3) if k != a]
        for side in (0, 1):
            d = p[a] if side == 0 else 1.0 - p[a]
            if d <= 0:
                continue  # p lies on this face's plane: no direction reaches the face's interior
            ua = -1.0 if side == 0 else 1.0
            for sb, A in ((-1.0, p[b]), (1.0, 1.0 - p[b])):
                for sc, B in ((-1.0, p[c]), (1.0, 1.0 - p[c])):
                    if A <= 0 or B <= 0:
                        continue
                    for tri in (0, 1):
                        pieces.append((a, ua, d, b, c, sb, sc, A, B, tri))
    return pieces


def _rule(n):
    x, w = np.polynomial.legendre.leggauss(n)
    return (x + 1) / 2, w / 2  # on [0, 1]


def sphere_integral(p, kappa, weight=None, n=48):
    """int over upwind directions u of (1 - exp(-kappa L(p,u))) * weight(u) dOmega (times I_b = 1),
    weight: None (1, gives G) or a unit normal vector nw (weight max(u.nw, 0), gives q_in on a wall
    with inward normal nw). kappa = inf gives the solid-angle integral of the weight alone.

    The directions through one face triangle (foot of the perpendicular from p, and an edge at
    in-plane distance h spanning a length l from the point nearest the foot) are parametrised by
    s in [0, asinh(l / h)] along the edge (in-plane angle beta = atan(sinh s) from the edge's
    perpendicular, distance to the edge h cosh s) and v = asinh(tan alpha) (alpha = angle from the
    face normal, chord L = d cosh v): dOmega = (sinh v / cosh^2 v) dv ds / cosh s. Both variables
    turn the layers of width ~d (p near the face) and ~h (p near an edge) into smooth stretches of
    logarithmic length, so fixed Gauss-Legendre rules converge fast everywhere."""
    p = np.asarray(p, float)
    x, wx = _rule(n)
    total = 0.0
    for (a, ua, d, b, c, sb, sc, A, B, tri) in _face_pieces(p):
        h, ell = (A, B) if tri == 0 else (B, A)
        smax = math.asinh(ell / h)
        s = smax * x                                            # (n,)
        ws = smax * wx / np.cosh(s)                             # includes d beta / ds
        cb, sbeta = 1.0 / np.cosh(s), np.tanh(s)                # cos, sin of beta
        cpsi, spsi = (cb, sbeta) if tri == 0 else (sbeta, cb)   # in-plane direction along e_b, e_c
        vmax = np.arcsinh(h * np.cosh(s) / d)                   # (n,)
        v = vmax[:, None] * x[None, :]                          # (n, n)
        wv = vmax[:, None] * wx[None, :]
        ch, th = np.cosh(v), np.tanh(v)
        f = np.ones_like(v) if math.isinf(kappa) else -np.expm1(-kappa * d * ch)
        if weight is not None:
            u = np.zeros(v.shape + (3,))
            u[..., a] = ua / ch
            u[..., b] = sb * th * cpsi[:, None]
            u[..., c] = sc * th * spsi[:, None]
            f = f * np.maximum(u @ np.asarray(weight, float), 0.0)
        total += float(np.sum(ws[:, None] * wv * f * th / ch))
    return IB * total

def area_integral(p, kappa, normal=None, tol=1e-12):
    """Independent check of sphere_integral: for each face, int (1 - exp(-kappa r)) w d / r^3 dA
    over the face area (r = distance from p to the face point), scipy dblquad, split at the foot
    of the perpendicular from p."""
    from scipy import integrate
    p = np.asarray(p, float)
    total = 0.0
    for a in range(3):
        b, c = [k for k in range(3) if k != a]
        for side in (0.0, 1.0):
            d = abs(side - p[a])
            if d == 0:
                continue

            def f(yc, yb):
                r = -p.copy()
                r[a] += side
                r[b] += yb
                r[c] += yc
                L = math.sqrt(r @ r)
                val = -math.expm1(-kappa * L) * d / L ** 3
                return val * max((r @ normal) / L, 0.0) if normal is not None else val
            for b0, b1 in ((0.0, p[b]), (p[b], 1.0)):
                for c0, c1 in ((0.0, p[c]), (p[c], 1.0)):
                    if b1 > b0 and c1 > c0:
                        total += integrate.dblquad(f, b0, b1, c0, c1, epsabs=tol, epsrel=tol)[0]
    return IB * total


def graded_rule(breaks, n):
    """Composite Gauss-Legendre rule with n points on each interval between consecutive breaks."""
    x, w = _rule(n)
    xs, ws = [], []
    for a, b in zip(breaks[:-1], breaks[1:]):
        xs.append(a + (b - a) * x)
        ws.append((b - a) * w)
    return np.concatenate(xs), np.concatenate(ws)


def exact_G(points, kappa, n=48):
    return np.array([sphere_integral(p, kappa, None, n) for p in points])


def exact_qin(points, kappa, normal=WALL_NORMAL, n=48):
    return np.array([sphere_integral(p, kappa, normal, n) for p in points])


def chord(p, u):
    """Distance from points p (..., 3) along unit directions u (..., 3) to the boundary of [0,1]^3."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(u > 0, (1.0 - p) / u, np.where(u < 0, -p / u, np.inf))
    return np.min(t, axis=-1)


# ---------------------------------------------------------------------------------------------
# Discrete-ordinates limit of a set.

def do_limit(points, s, w, kappa, normal=None):
    """G (normal None) or q_in on a wall with inward normal `normal` for the set (s (M,3), w (M,))."""
    points = np.asarray(points, float)
    u = -np.asarray(s, float)                                    # upwind directions
    L = chord(points[:, None, :], u[None, :, :])                 # (P, M)
    I = IB * -np.expm1(-kappa * L)
    if normal is None:
        return I @ w
    cosn = u @ np.asarray(normal, float)                         # = -s.n_out = |s.n| for incoming
    wq = np.where(cosn > 0, w * cosn, 0.0)
    return I @ wq


# ---------------------------------------------------------------------------------------------
# Self-test.

def line(a, b, n):
    t = np.linspace(0, 1, n)[:, None]
    return np.asarray(a) + t * (np.asarray(b) - np.asarray(a))


def plot_reference(out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (aG, aq) = plt.subplots(1, 2, figsize=(10, 4.2))
    tf = np.linspace(0, 1, 201)
    for kappa in KAPPAS:
        aG.plot(tf, exact_G(line(*AXIS, 201), kappa) / (4 * math.pi), label=f"kappa = {kappa:g}")
        aq.plot(tf, exact_qin(line(*WALL, 201), kappa) / math.pi, label=f"kappa = {kappa:g}")
    aG.set_xlabel("x (y = z = 0.5)")
    aG.set_ylabel("G / (4 pi I_b)")
    aq.set_xlabel("z (wall x = 0, y = 0.5)")
    aq.set_ylabel("q_net / (pi I_b)")
    for a in (aG, aq):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle("Isothermal unit cube, cold black walls: exact G on the axis and net wall flux")
    fig.tight_layout()
    fig.savefig(out / "reference.png", dpi=110)
    plt.close(fig)


def self_test(out):
    from scipy import integrate
    checks = []

    def check(name, value, bound):
        checks.append((name, float(value), bound))

    t0 = time.time()
    axis, wall = line(*AXIS, 51), line(*WALL, 51)
    # 1. convergence in the number of Gauss points, on the probe lines and at points very close to
    #    faces, edges and corners
    near = np.array([[0.0, 1e-4, 0.3], [0.0, 1e-4, 1e-4], [1e-4, 1e-4, 0.5], [1e-3, 2e-3, 1e-4], [0.999, 0.5, 0.9999]])
    for kappa in KAPPAS:
        g1, g2 = exact_G(near, kappa, 48), exact_G(near, kappa, 96)
        check(f"kappa={kappa:g}: G at points 1e-4 from faces/edges/corners, n = 48 vs 96 (rel.)", np.max(np.abs(g1 - g2) / g2), 1e-12)
        q1, q2 = exact_qin(near[:2], kappa, n=48), exact_qin(near[:2], kappa, n=96)
        check(f"kappa={kappa:g}: q_in at wall points 1e-4 from an edge / a corner, n = 48 vs 96 (rel.)",
              np.max(np.abs(q1 - q2) / q2), 1e-12)
        g1, g2 = exact_G(axis, kappa, 48), exact_G(axis, kappa, 96)
        check(f"kappa={kappa:g}: G on the axis, n = 48 vs 96 (rel. to max)", np.max(np.abs(g1 - g2)) / np.max(g2), 1e-10)
        q1, q2 = exact_qin(wall, kappa, n=48), exact_qin(wall, kappa, n=96)
        check(f"kappa={kappa:g}: q_in on the wall line, n = 48 vs 96 (rel. to max)", np.max(np.abs(q1 - q2)) / np.max(q2), 1e-10)
    # 2. kappa -> infinity: solid angles tile the sphere / hemisphere
    g = exact_G(np.array([[0.5, 0.5, 0.5], [0.1, 0.7, 0.3], [0.02, 0.97, 0.5]]), math.inf)
    check("kappa = inf: G / (4 pi I_b) - 1 at interior points", np.max(np.abs(g / (4 * math.pi) - 1)), 1e-12)
    g = exact_G(np.array([[0.0, 0.5, 0.5], [0.0, 0.03, 0.9]]), math.inf)
    check("kappa = inf: G / (2 pi I_b) - 1 at points on a wall", np.max(np.abs(g / (2 * math.pi) - 1)), 1e-12)
    q = exact_qin(np.array([[0.0, 0.5, 0.5], [0.0, 0.03, 0.9]]), math.inf)
    check("kappa = inf: q_in / (pi I_b) - 1 on the wall x = 0", np.max(np.abs(q / math.pi - 1)), 1e-12)
    q = exact_qin(np.array([[0.0, 0.5, 0.0], [0.0, 0.5, 1.0]]), math.inf)
    check("kappa = inf: q_in / (pi I_b / 2) - 1 on the edges z = 0, 1 of the wall (quarter space)",
          np.max(np.abs(q / (math.pi / 2) - 1)), 1e-12)
    # 3. independent integrations: (a) over each face's area, dOmega = d dA / r^3 with the chord r
    #    from the face point, adaptive 2-D quadrature (scipy dblquad) split at the foot of the
    #    perpendicular; (b) over (theta, phi) about the x axis with a ray-box chord, no splitting
    #    at all (slow: the kinks where the chord switches faces are left to the adaptive rule)
    for kappa in KAPPAS:
        for p in ([0.5, 0.5, 0.5], [0.23, 0.5, 0.5], [0.0, 0.5, 0.5], [0.77, 0.31, 0.12]):
            ex = sphere_integral(p, kappa)
            check(f"kappa={kappa:g}: G{tuple(p)} vs adaptive integration over the face areas (rel.)",
                  abs(ex - area_integral(p, kappa)) / ex, 1e-11)
        for p in ([0.0, 0.5, 0.5], [0.0, 0.5, 0.15], [0.0, 0.5, 0.0], [0.0, 0.93, 0.04]):
            ex = sphere_integral(p, kappa, WALL_NORMAL)
            check(f"kappa={kappa:g}: q_in{tuple(p)} vs adaptive integration over the face areas (rel.)",
                  abs(ex - area_integral(p, kappa, WALL_NORMAL)) / ex, 1e-11)

    def brute(p, kappa, flux):
        p = np.asarray(p, float)

        def f(theta, phi):
            u = np.array([math.cos(theta), math.sin(theta) * math.cos(phi), math.sin(theta) * math.sin(phi)])
            val = -math.expm1(-kappa * chord(p, u)) * math.sin(theta)
            return val * max(u[0], 0.0) if flux else val
        return integrate.dblquad(f, 0, 2 * math.pi, 0, math.pi / 2 if flux else math.pi, epsabs=1e-9, epsrel=1e-9)[0]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = sphere_integral([0.23, 0.5, 0.5], 1.0)
        check("kappa=1: G(0.23, 0.5, 0.5) vs adaptive (theta, phi) integration, ray-box chord (rel.)",
              abs(ex - brute([0.23, 0.5, 0.5], 1.0, False)) / ex, 1e-8)
    # 4. energy balance at kappa = 1: the six walls absorb kappa int_V (4 pi I_b - G) dV.
    #    Composite Gauss graded towards the edges (q and G have x log x terms there); by symmetry
    #    the volume integral is 8 times the one over [0, 1/2]^3.
    kappa = 1.0
    xg, wg = graded_rule([0.0, 1e-2, 0.1, 0.5, 0.9, 0.99, 1.0], 8)
    Y, Z = np.meshgrid(xg, xg, indexing="ij")
    qw = exact_qin(np.column_stack([np.zeros(Y.size), Y.ravel(), Z.ravel()]), kappa, n=16)
    absorbed = 6 * float(np.outer(wg, wg).ravel() @ qw)
    xv, wv = graded_rule([0.0, 1e-3, 1e-2, 0.1, 0.5], 5)
    P = np.array(np.meshgrid(xv, xv, xv, indexing="ij")).reshape(3, -1).T
    Wv = np.einsum("i,j,k->ijk", wv, wv, wv).ravel()
    lost = 8 * kappa * float(Wv @ (4 * math.pi * IB - exact_G(P, kappa, n=16)))
    check("kappa=1: energy balance, 6 int q_in dA vs kappa int (4 pi I_b - G) dV (rel.)", abs(absorbed - lost) / lost, 2e-6)
    # 5. DO-limit routine: a fine product set (Gauss in mu_x x 256 azimuths) approaches the exact values
    nmu, nphi = 64, 256
    gx, gw = np.polynomial.legendre.leggauss(nmu)
    phi = (np.arange(nphi) + 0.5) * 2 * math.pi / nphi
    M, PH = np.meshgrid(gx, phi, indexing="ij")
    S = np.column_stack([M.ravel(), np.sqrt(1 - M.ravel() ** 2) * np.cos(PH.ravel()),
                         np.sqrt(1 - M.ravel() ** 2) * np.sin(PH.ravel())])
    W = np.repeat(gw * 2 * math.pi / nphi, nphi)
    for kappa in KAPPAS:
        ex, do = exact_G(axis, kappa), do_limit(axis, S, W, kappa)
        check(f"kappa={kappa:g}: DO limit of a 64 x 256 product set vs exact G on the axis (rel. to max)",
              np.max(np.abs(ex - do)) / np.max(ex), 2e-3)
        ex, do = exact_qin(wall, kappa), do_limit(wall, S, W, kappa, WALL_NORMAL)
        check(f"kappa={kappa:g}: DO limit of a 64 x 256 product set vs exact q_in on the wall (rel. to max)",
              np.max(np.abs(ex - do)) / np.max(ex), 2e-3)
    seconds = time.time() - t0

    # reference values
    xs = [0.0, 0.1, 0.25, 0.5]
    rows = []
    for kappa in KAPPAS:
        G = exact_G([(x, 0.5, 0.5) for x in xs], kappa, 96)
        q = exact_qin([(0.0, 0.5, z) for z in xs], kappa, n=96)
        rows.append([f"{kappa:g}"] + [f"{v:.10f}" for v in G] + [f"{v:.10f}" for v in q])
    failures = [c for c in checks if not c[1] <= c[2]]
    lines = ["# Isothermal cube: reference self-test", "",
             f"Unit cube, I_b = {IB:g} W/(m^2 sr), cold black walls. {len(checks)} checks, {len(failures)} failed, "
             f"{seconds:.1f} s.", "", "## Exact values (n = 96 Gauss points per direction and face triangle)", "",
             dio.markdown_table(["kappa"] + [f"G({x:g}, .5, .5)" for x in xs] + [f"q_in(0, .5, {z:g})" for z in xs], rows),
             "", "G in W/m^2 (4 pi = 12.566 for an optically thick medium); q_in on the wall x = 0 in W/m^2 (pi at most);"
             " symmetric about 0.5.", "", "## Checks", "",
             dio.markdown_table(["check", "value", "bound", ""],
                                [[n, f"{v:.2e}", f"{b:.0e}", "ok" if v <= b else "FAILED"] for n, v, b in checks])]
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "reference.md").write_text(text)
    print(text)
    return failures


# ---------------------------------------------------------------------------------------------
# DG runs.

def cube_case(template, kappa, angular, order, size, points):
    case = copy.deepcopy(template)
    case["mesh"] = {"geo": "cube.geo", "size": size}
    case["order"] = order
    case["angular"] = dict(angular)
    case["media"] = {"*": {"kappa": f"{kappa:.12g}", "Ib": f"{IB:g}"}}
    for p in case["output"]["probes"]:
        p["points"] = points
    return case


def compare(args, out):
    template = dio.load_case(HERE / "isothermal_cube.yaml")
    dgrte = dio.find_dgrte(args.dgrte)
    rows, curves, failures = [], [], []
    cache = {}
    with dio.WorkDir(args.work, prefix="dgrte_isothermal_cube_") as work:
        for kappa in args.kappas:
            for label in args.sets:
                for p in args.orders:
                    ang = dio.parse_set(label, axis="z")
                    tag = f"kappa{kappa:g}_{label}_p{p}"
                    case = cube_case(template, kappa, ang, p, args.size, args.points)
                    try:
                        run = dio.run_case(dgrte, case, work / tag, base=HERE, timeout=args.timeout)
                    except dio.DgrteError as e:
                        print(f"[{tag}] dgrte failed: {e}", file=sys.stderr)
                        failures.append(f"{tag}: dgrte failed")
                        continue
                    ax, wl = run.probe("axis"), run.probe("wall")
                    pa = np.column_stack([ax["x"], ax["y"], ax["z"]])
                    pw = np.column_stack([wl["x"], wl["y"], wl["z"]])
                    key = (kappa, pa.tobytes(), pw.tobytes())
                    if key not in cache:
                        cache[key] = (exact_G(pa, kappa), exact_qin(pw, kappa))
                    Gx, qx = cache[key]
                    s, w = run.quadrature()
                    Gd, qd = do_limit(pa, s, w, kappa), do_limit(pw, s, w, kappa, WALL_NORMAL)
                    Gs, qs = max(np.max(np.abs(Gx)), 1e-300), max(np.max(np.abs(qx)), 1e-300)
                    r = {"kappa": kappa, "set": dio.set_name(label, "z"), "M": run.directions or len(w), "order": p,
                         "tets": run.elements, "seconds": run.seconds,
                         "G": {"total": dio.error_stats(ax["G"], Gx, Gs), "spatial": dio.error_stats(ax["G"], Gd, Gs),
                               "ray": dio.error_stats(Gd, Gx, Gs)},
                         "q": {"total": dio.error_stats(wl["q_net"], qx, qs), "spatial": dio.error_stats(wl["q_net"], qd, qs),
                               "ray": dio.error_stats(qd, qx, qs),
                               "q_in_vs_q_net": float(np.max(np.abs(wl["q_in"] - wl["q_net"])) / qs)}}
                    rows.append(r)
                    curves.append((kappa, label, p, ax["x"], ax["G"], Gd, wl["z"], wl["q_net"], qd))
                    print(f"kappa {kappa:4g} {r['set']:10s} P{p} {r['tets']} tets: G total {100 * r['G']['total']['max']:.3f} % "
                          f"(spatial {100 * r['G']['spatial']['max']:.3f} %, interior {100 * r['G']['spatial']['interior']:.3f} %, "
                          f"ray {100 * r['G']['ray']['max']:.3f} %); q_wall total {100 * r['q']['total']['max']:.3f} % (spatial "
                          f"{100 * r['q']['spatial']['max']:.3f} %, interior {100 * r['q']['spatial']['interior']:.3f} %, "
                          f"ray {100 * r['q']['ray']['max']:.3f} %); {r['seconds']:.2f} s", flush=True)
                    bG, bq = dio.bound_for(args.max_spatial_G, args.kappas, kappa), dio.bound_for(args.max_spatial_q, args.kappas, kappa)
                    # all points, the wall points included (dgrte gives them the walls' values)
                    if bG is not None and not r["G"]["spatial"]["max"] <= bG:
                        failures.append(f"{tag}: spatial G error {100 * r['G']['spatial']['max']:.3f} % > {100 * bG:g} %")
                    if bq is not None and not r["q"]["spatial"]["max"] <= bq:
                        failures.append(f"{tag}: spatial wall-flux error {100 * r['q']['spatial']['max']:.3f} % > {100 * bq:g} %")
                    if not r["q"]["q_in_vs_q_net"] <= 1e-8:
                        failures.append(f"{tag}: q_in != q_net on a cold black wall ({r['q']['q_in_vs_q_net']:.1e})")
    write_results(args, out, rows, failures)
    if not args.no_plot and curves:
        plot(out, curves, rows)
    return failures


def write_results(args, out, rows, failures):
    hdr = ["kappa", "set", "M", "order", "tets", "G: max total", "G: mean total", "G: spatial", "G: spatial, interior",
           "G: ray effect", "q_wall: max total", "q_wall: mean total", "q_wall: spatial", "q_wall: spatial, interior",
           "q_wall: ray effect", "run s"]
    body = [[f"{r['kappa']:g}", r["set"], r["M"], f"P{r['order']}", r["tets"],
             dio.pct(r["G"]["total"]["max"]), dio.pct(r["G"]["total"]["mean"]), dio.pct(r["G"]["spatial"]["max"]),
             dio.pct(r["G"]["spatial"]["interior"]), dio.pct(r["G"]["ray"]["max"]), dio.pct(r["q"]["total"]["max"]),
             dio.pct(r["q"]["total"]["mean"]), dio.pct(r["q"]["spatial"]["max"]), dio.pct(r["q"]["spatial"]["interior"]),
             dio.pct(r["q"]["ray"]["max"]), f"{r['seconds']:.2f}"] for r in rows]
    lines = ["# Isothermal cube with cold black walls: dgrte vs exact and vs the discrete-ordinates limit", "",
             f"Unit cube, I_b = {IB:g}, mesh cube.geo size {args.size}. G along (0,.5,.5)-(1,.5,.5) and the net wall flux "
             f"along (0,.5,0)-(0,.5,1) on x = 0, {args.points} points each. Errors relative to the maximum of the exact "
             "curve: total = DG - exact, spatial = DG - DO limit of the same set, ray effect = DO limit - exact; 'interior' "
             "leaves out the two end points of each line (G at the walls x = 0, 1; q at the wall's edges z = 0, 1).", "",
             dio.markdown_table(hdr, body), ""]
    if not args.no_plot:
        lines += ["![isothermal cube](isothermal_cube.png)", "", "![errors against the order](isothermal_cube_orders.png)", ""]
    if failures:
        lines += ["**Failed bounds:** " + "; ".join(failures), ""]
    (out / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))


def plot(out, curves, rows):
    """isothermal_cube.png: profiles of the highest order run per set (dots: DG, dotted: DO limit);
    isothermal_cube_orders.png: spatial and ray-effect errors against the order."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    kappas = sorted({c[0] for c in curves})
    pmax = max(c[2] for c in curves)
    fig, axes = plt.subplots(2, len(kappas), figsize=(4.6 * len(kappas), 7.5), squeeze=False)
    tf = np.linspace(0, 1, 201)
    for j, kappa in enumerate(kappas):
        aG, aq = axes[0, j], axes[1, j]
        aG.plot(tf, exact_G(line(*AXIS, 201), kappa), "k-", lw=1.5, label="exact")
        aq.plot(tf, exact_qin(line(*WALL, 201), kappa), "k-", lw=1.5, label="exact")
        for (k, label, p, xa, G, Gd, zw, q, qd) in curves:
            if k != kappa or p != pmax:
                continue
            lab = f"{dio.set_name(label, 'z')}, P{p}"
            l1, = aG.plot(xa, G, ".", ms=3.5, label=lab)
            aG.plot(xa, Gd, ":", lw=0.9, color=l1.get_color())
            l2, = aq.plot(zw, q, ".", ms=3.5, label=lab)
            aq.plot(zw, qd, ":", lw=0.9, color=l2.get_color())
        aG.set_title(f"kappa = {kappa:g} 1/m: G on the axis")
        aG.set_xlabel("x")
        aG.set_ylabel("G [W/m^2], I_b = 1")
        aq.set_title(f"kappa = {kappa:g} 1/m: net flux into x = 0, y = 0.5")
        aq.set_xlabel("z")
        aq.set_ylabel("q_net [W/m^2]")
        for a in (aG, aq):
            a.grid(alpha=0.3)
            a.legend(fontsize=7)
    fig.suptitle(f"dgrte: isothermal cube, cold black walls, P{pmax} (dots: DG; dotted: DO limit of the set)")
    fig.tight_layout()
    fig.savefig(out / "isothermal_cube.png", dpi=110)
    plt.close(fig)
    # errors against the order
    sets = list(dict.fromkeys(r["set"] for r in rows))
    fig, axes = plt.subplots(2, len(kappas), figsize=(4.6 * len(kappas), 7.5), squeeze=False)
    for j, kappa in enumerate(kappas):
        for i, qty in enumerate(("G", "q")):
            ax = axes[i, j]
            for k, sname in enumerate(sets):
                rr = sorted([r for r in rows if r["kappa"] == kappa and r["set"] == sname], key=lambda r: r["order"])
                if not rr:
                    continue
                ps = [r["order"] for r in rr]
                ax.semilogy(ps, [100 * r[qty]["spatial"]["max"] for r in rr], "o-", color=f"C{k}", label=f"{sname}: spatial")
                ax.semilogy(ps, [100 * r[qty]["spatial"]["interior"] for r in rr], "s--", color=f"C{k}", ms=4,
                            label=f"{sname}: spatial, interior")
                ax.semilogy(ps, [100 * r[qty]["ray"]["max"] for r in rr], ":", color=f"C{k}", label=f"{sname}: ray effect")
            ax.set_xticks(sorted({r["order"] for r in rows}))
            ax.set_xlabel("DG order p")
            ax.set_ylabel("max error [% of max exact]")
            ax.set_title(f"kappa = {kappa:g}: {'G on the axis' if qty == 'G' else 'net wall flux'}")
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=6)
    fig.suptitle(f"dgrte: isothermal cube, errors against the order ({rows[0]['tets']} tets)")
    fig.tight_layout()
    fig.savefig(out / "isothermal_cube_orders.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", help="path of the dgrte executable")
    ap.add_argument("--out", default=str(HERE), help="folder for results.md / reference.md and the PNG (default: this folder)")
    ap.add_argument("--work", help="folder for the dgrte runs (kept); default: a temporary folder, removed")
    ap.add_argument("--self-test", action="store_true", help="check the exact reference only (no dgrte); writes reference.md")
    ap.add_argument("--coarse", action="store_true", help="CTest variant: size 0.25 (382 tets), P3, tn4, kappa 0.1 1 10; "
                                                          "asserts the spatial errors per kappa (see main())")
    ap.add_argument("--kappas", type=float, nargs="+", default=KAPPAS)
    ap.add_argument("--sets", nargs="+", default=["tn4", "tn8", "tn16", "sn8"], help="angular sets")
    ap.add_argument("--orders", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--size", type=float, default=0.2, help="mesh size (m)")
    ap.add_argument("--points", type=int, default=51, help="points per probe line")
    ap.add_argument("--max-spatial-G", type=float, nargs="+",
                    help="fail if max |DG - DO limit| of G / max G (all points) exceeds this (one value, or one per kappa)")
    ap.add_argument("--max-spatial-q", type=float, nargs="+",
                    help="fail if max |DG - DO limit| of q_wall / max q (all points) exceeds this (one value, or one per kappa)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds allowed per dgrte run")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.self_test:
        failures = self_test(out)
        if not args.no_plot:
            plot_reference(out)
        if failures:
            print("FAILED: " + "; ".join(f"{n}: {v:.2e} > {b:.0e}" for n, v, b in failures))
            return 1
        return 0
    if args.coarse:
        args.size, args.orders, args.sets, args.kappas = 0.25, [3], ["tn4"], KAPPAS
        # regression guards ~25 % above the spatial errors (all points) measured on this set-up (README.md)
        args.max_spatial_G = args.max_spatial_G or [0.0135, 0.0125, 0.023]
        args.max_spatial_q = args.max_spatial_q or [0.0073, 0.0048, 0.042]
    failures = compare(args, out)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
