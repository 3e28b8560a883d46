#!/usr/bin/python3
"""Coelho et al. (1998) 3-D combustor with five thin baffles, omega = 0 and 0.5 (README.md).

Set-up: gray, emitting, absorbing, isotropically scattering medium in four zones of z,
    z <= 5 m: kappa = 0.20 1/m, T = 1600 K;   5-10 m: 0.25, 2000 K;   10-20 m: 0.20, 1600 K;
    20-30 m: 0.18, 1200 K;
scattering albedo omega = 0 and 0.5 (sigma_s = omega / (1 - omega) kappa); the outlet (x = 10 m,
22 <= z <= 30 m) black at 1200 K; every other wall, the baffles included, gray diffuse, emissivity
0.65, 800 K. The geometry of the paper's figure is not available: combustor.geo is an ASSUMED
boiler (30 m high, 10 m in x, 12 m deep in y, hopper, nose, five platens hanging from the roof near
the outlet), see README.md.

Reference: no tabulated data exists. Each run is compared with dgrte's own finest run (level
`fine`: 52,280 tets, P3, S8 heat-transfer set, the seed paper's resolution) of the same albedo: that
shows the spatial convergence of the wall-flux and volume lines, not an independent reference.
Exact checks, which can fail:
  * energy balance: int div q dV = oint q_net dA (summary.json), every run;
  * isothermal variant: medium and every wall at one temperature T_iso (any kappa, omega, emissivity):
    I = I_b exactly, so G = 4 sigma T^4, q = 0, div q = 0 everywhere and q_net = 0 on every wall;
  * in that variant the incident flux on the inclined nose is sigma T^4 H_n / pi, H_n = sum over the
    incoming half of the set of w |s.n| (from OUT/quadrature.csv): the set's own half-range flux on a
    wall that is not normal to an axis.

Monte Carlo: where montecarlo.csv exists (written by validation/montecarlo/dg_vs_mc.py: dgrte's Monte Carlo
solver on this case, both albedos), coelho_combustor.png shows its lines as markers with +-2 sigma bars.

Examples:
    coelho_combustor.py --dgrte build/src/app/dgrte                    # all levels (~15 min, 1 thread)
    coelho_combustor.py --dgrte build/src/app/dgrte --coarse --no-plot  # CTest (~10 s): coarse vs
                                                                        # the stored fine lines
    coelho_combustor.py --plot-only      # no dgrte run: redraw coelho_combustor.png from fine_lines_*.csv,
                                         # coarse_lines_*.csv (dashed) and montecarlo.csv
"""
import argparse
import math
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
import dgrte_io as dio  # noqa: E402

OMEGAS = [0.0, 0.5]
ZONES = {  # volume group: (kappa [1/m], T [K])
    "z0_5": (0.20, 1600.0),
    "z5_10": (0.25, 2000.0),
    "z10_20": (0.20, 1600.0),
    "z20_30": (0.18, 1200.0),
}
T_OUTLET, T_WALL, EPS_WALL = 1200.0, 800.0, 0.65
T_ISO = 1000.0                            # the isothermal exact check
# Refinement levels: (mesh size [m], DG order, angular set). `coarse` is the CTest; `fine` is the
# reference; `angle` (T6, 288 ordinates) shows the angular error of S8 at size 1, P2 (compare h1p2).
LEVELS = {
    "h2p1": (2.0, 1, "sn-heat8"),
    "coarse": (2.0, 2, "sn-heat8"),
    "h1.5p2": (1.5, 2, "sn-heat8"),
    "h1p2": (1.0, 2, "sn-heat8"),
    "h1p3": (1.0, 3, "sn-heat8"),
    "fine": (0.7, 3, "sn-heat8"),
    "angle": (1.0, 2, "tn6"),
}
ISO_LEVELS = ["coarse", "h1p2"]           # levels of the isothermal check (both albedos)
# Probe lines: points at cell centres (half a spacing from the ends), so that no point lies on an
# edge between two walls or on a zone interface (where q_net or div q is two-valued).
W_DEPTH = 12.0
NOSE = ((10.0, 15.0), (7.5, 19.0))        # lower nose face in (x, z), from the back wall to the tip


def _cc(a, b, n):
    """n cell-centred points of the segment a-b: (first, last)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return (a + (b - a) * 0.5 / n).tolist(), (a + (b - a) * (n - 0.5) / n).tolist(), n


WALL_LINES = {  # name: (wall group, from, to, points); compared quantity q_net
    "front": ("front",) + _cc([0, 6, 5], [0, 6, 30], 50),
    "side": ("side1",) + _cc([5, 0, 0], [5, 0, 30], 60),
    "back": ("back",) + _cc([10, 6, 5], [10, 6, 15], 20),
    "nose": ("nose",) + _cc([NOSE[0][0], 6, NOSE[0][1]], [NOSE[1][0], 6, NOSE[1][1]], 20),
    "roof": ("roof",) + _cc([0, 5, 30], [10, 5, 30], 40),
    "baffle": ("baffles",) + _cc([7.75, 5.9, 23], [7.75, 5.9, 30], 28),
}
VOLUME_LINES = {  # name: (from, to, points); compared quantities G and div q
    "axis": _cc([5, 6, 0], [5, 6, 30], 60),
    "platens": _cc([0, 5, 26], [10, 5, 26], 40),
}
# compared series: (line, quantity)
SERIES = [(n, "q_net") for n in WALL_LINES] + [(n, q) for n in VOLUME_LINES for q in ("G", "divq")]
LINE_TEXT = {"front": "front wall x = 0, y = 6, along z", "side": "side wall y = 0, x = 5, along z",
             "back": "back wall x = 10, y = 6, z 5-15", "nose": "nose (lower face), y = 6, (10, 15) to (7.5, 19)",
             "roof": "roof z = 30, y = 5, along x", "baffle": "middle baffle, face y = 5.9, x = 7.75, z 23-30",
             "axis": "vertical axis x = 5, y = 6", "platens": "z = 26, y = 5 (between two baffles), along x"}
NOSE_NORMAL = np.array([4.0, 0.0, 2.5]) / math.hypot(4.0, 2.5)   # outward normal of the lower nose face
# Bounds (README.md "Asserted bounds"; the values measured when the test was set up are there too).
BOUNDS = {
    "energy": 1e-8,         # |relative energy imbalance| of every non-isothermal run (outer tolerance 1e-8)
    "iso": 1e-7,            # isothermal: |G/(4 sigma T^4) - 1|, |q_net|/(sigma T^4), |div q|/(4 kappa_max sigma T^4)
    "nose_H": 1e-7,         # isothermal: |q_in/(sigma T^4) - H_n/pi| on the nose line
    # coarse level vs the stored fine lines: max |q - q_fine| / max |q_fine| per series, both albedos
    "coarse_line": {"front": 0.010, "side": 0.015, "back": 0.010, "nose": 0.015, "roof": 0.10, "baffle": 0.06,
                    "axis:G": 0.03, "axis:divq": 0.06, "platens:G": 0.04, "platens:divq": 0.10},
    "coarse_power": 0.0015,  # coarse level: |P - P_fine| / |P_fine| of the wall power of every group but the outlet
}


def omega_tag(omega):
    return f"omega{omega:g}"


def level_text(level):
    size, order, label = LEVELS[level]
    return f"size {size:g}, P{order}, {dio.set_name(label)}"


def make_case(template, level, omega=None, iso=False):
    size, order, label = LEVELS[level]
    case = dict(template)
    case["mesh"] = dict(template["mesh"], size=size)
    case["order"] = order
    case["angular"] = dio.parse_set(label)
    media = {}
    for g, (kappa, T) in ZONES.items():
        m = {"kappa": f"{kappa:g}", "scattering": f"{omega / (1 - omega) * kappa:g}",
             "temperature": f"{T_ISO if iso else T:g}"}
        media[g] = m
    case["media"] = media
    case["boundaries"] = {"outlet": {"type": "black", "temperature": T_ISO if iso else T_OUTLET},
                          "*": {"type": "gray", "emissivity": EPS_WALL, "temperature": T_ISO if iso else T_WALL}}
    probes = [{"name": n, "from": a, "to": b, "points": k, "wall": g} for n, (g, a, b, k) in WALL_LINES.items()]
    probes += [{"name": n, "from": a, "to": b, "points": k} for n, (a, b, k) in VOLUME_LINES.items()]
    case["output"] = dict(template.get("output", {}), vtk=False, probes=probes)
    return case


def read_series(run):
    out = {}
    for n, q in SERIES:
        p = run.probe(n)
        out[(n, q)] = p[q]
        out[(n, "xyz")] = np.column_stack([p["x"], p["y"], p["z"]])
    return out


def series_key(n, q):
    return n if q == "q_net" else f"{n}:{q}"


# ---------------------------------------------------------------------------------------------
# Stored fine lines (read by the coarse CTest; written by a full run).

def fine_csv(omega):
    return HERE / f"fine_lines_{omega_tag(omega)}.csv"


def write_lines(path, omega, level, r):
    with open(path, "w") as f:
        f.write(f"# Coelho combustor (assumed geometry combustor.geo), omega = {omega:g}, dgrte level {level} "
                f"({level_text(level)}, {r['tets']} tets): q_net [W/m^2] on the wall lines, G [W/m^2] and "
                "div q [W/m^3] on the volume lines. Written by coelho_combustor.py.\n")
        f.write("line,quantity,x,y,z,value\n")
        for n, q in SERIES:
            for (x, y, z), v in zip(r["s"][(n, "xyz")], r["s"][(n, q)]):
                f.write(f"{n},{q},{x:.6g},{y:.6g},{z:.6g},{v:.9g}\n")


def read_lines(path):
    """A stored lines file (fine_lines_*.csv, coarse_lines_*.csv) -> {(line, quantity): values, (line, 'xyz'): points}."""
    s, xyz = {}, {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or line.startswith("line,"):
                continue
            n, q, x, y, z, v = line.strip().split(",")
            s.setdefault((n, q), []).append(float(v))
            if q == SERIES[[k for k, _ in SERIES].index(n)][1]:   # the points once per line
                xyz.setdefault(n, []).append((float(x), float(y), float(z)))
    out = {k: np.array(v) for k, v in s.items()}
    out.update({(n, "xyz"): np.array(p) for n, p in xyz.items()})
    return out


def write_fine(omega, r):
    write_lines(fine_csv(omega), omega, "fine", r)
    with open(HERE / f"fine_walls_{omega_tag(omega)}.csv", "w") as f:
        f.write(f"# Coelho combustor, omega = {omega:g}, level fine: wall power per surface group [W]\n")
        f.write("group,area,q_net_W,q_in_W,q_out_W,emitted_W\n")
        for g, w in r["walls"].items():
            f.write(f"{g},{w['area']:.9g},{w['q_net_W']:.9g},{w['q_in_W']:.9g},{w['q_out_W']:.9g},{w['emitted_W']:.9g}\n")


def read_fine(omega):
    """The stored fine run of `omega`: {'s': {(line, q): values}, 'walls': {group: {...}}} or None."""
    p = fine_csv(omega)
    if not p.exists():
        return None
    s = read_lines(p)
    walls = {}
    with open(HERE / f"fine_walls_{omega_tag(omega)}.csv") as f:
        rows = [r.strip().split(",") for r in f if not r.startswith("#")]
    hdr = rows[0]
    for r in rows[1:]:
        walls[r[0]] = {h: float(v) for h, v in zip(hdr[1:], r[1:])}
    return {"s": s, "walls": walls, "stored": True}


# ---------------------------------------------------------------------------------------------

def run_all(args, out):
    template = dio.load_case(HERE / "coelho_combustor.yaml")
    dgrte = dio.find_dgrte(args.dgrte)
    runs, iso, failures = {}, {}, []
    with dio.WorkDir(args.work, prefix="dgrte_coelho_combustor_") as work:
        for omega in args.omegas:
            for level in args.levels:
                tag = f"{omega_tag(omega)}_{level}"
                try:
                    run = dio.run_case(dgrte, make_case(template, level, omega), work / tag, base=HERE,
                                       timeout=args.timeout)
                except dio.DgrteError as e:
                    print(f"[{tag}] dgrte failed: {e}", file=sys.stderr)
                    failures.append(f"{tag}: dgrte failed")
                    continue
                eb = run.summary["energy_balance"]
                r = {"omega": omega, "level": level, "s": read_series(run), "walls": run.summary["walls"],
                     "seconds": run.seconds, "tets": run.elements, "M": run.directions,
                     "threads": run.summary.get("threads"), "energy": abs(eb["relative_imbalance"]),
                     "volume_W": eb["volume_W"], "walls_W": eb["walls_W"],
                     "outer": run.summary.get("solver", {}).get("outer_iterations"),
                     "sweeps": run.summary.get("solver", {}).get("transport_sweeps"),
                     "minG": min(float(np.min(run.probe(n)["G"])) for n in VOLUME_LINES)}
                runs[(omega, level)] = r
                print(f"{tag}: {r['tets']} tets, {r['M']} directions, {r['seconds']:.1f} s, {r['outer']} outer "
                      f"iterations; energy imbalance {r['energy']:.1e}; total wall power {r['walls_W']:.6e} W",
                      flush=True)
                if not r["energy"] <= BOUNDS["energy"]:
                    failures.append(f"{tag}: energy imbalance {r['energy']:.3g} > {BOUNDS['energy']:.3g}")
                if not r["minG"] > 0:
                    failures.append(f"{tag}: G <= 0 on a line ({r['minG']:.4g})")
        for omega in args.omegas:
            for level in args.iso_levels:
                tag = f"iso_{omega_tag(omega)}_{level}"
                try:
                    run = dio.run_case(dgrte, make_case(template, level, omega, iso=True), work / tag, base=HERE,
                                       timeout=args.timeout)
                except dio.DgrteError as e:
                    print(f"[{tag}] dgrte failed: {e}", file=sys.stderr)
                    failures.append(f"{tag}: dgrte failed")
                    continue
                c = iso_check(run)
                c.update({"omega": omega, "level": level, "tets": run.elements, "seconds": run.seconds})
                iso[(omega, level)] = c
                print(f"{tag}: max |G/4sT^4 - 1| {c['G']:.1e}, |q|/sT^4 {c['q']:.1e}, |q_net|/sT^4 {c['q_net']:.1e}, "
                      f"|div q| {c['divq']:.1e}, group power {c['power']:.1e}, balance {c['balance']:.1e}; "
                      f"nose q_in/sT^4 = {c['nose_qin']:.6f}, H_n/pi = {c['nose_H']:.6f}", flush=True)
                for k in ("G", "q", "q_net", "divq", "power", "balance"):
                    if not c[k] <= BOUNDS["iso"]:
                        failures.append(f"{tag}: isothermal {k} {c[k]:.3g} > {BOUNDS['iso']:.3g}")
                if not abs(c["nose_qin"] - c["nose_H"]) <= BOUNDS["nose_H"]:
                    failures.append(f"{tag}: nose q_in/sT^4 - H_n/pi = {c['nose_qin'] - c['nose_H']:.3g}")
    # the fine reference of each albedo: this run's, else the stored one
    refs = {}
    for omega in args.omegas:
        if (omega, "fine") in runs:
            refs[omega] = runs[(omega, "fine")]
            write_fine(omega, refs[omega])
        else:
            refs[omega] = read_fine(omega)
        if (omega, "coarse") in runs:   # the dashed lines of the plot, for --plot-only
            write_lines(out / f"coarse_lines_{omega_tag(omega)}.csv", omega, "coarse", runs[(omega, "coarse")])
    for (omega, level), r in runs.items():
        f = refs.get(omega)
        if f is None or level == "fine":
            continue
        r["err"] = {}
        for n, q in SERIES:
            r["err"][series_key(n, q)] = dio.error_stats(r["s"][(n, q)], f["s"][(n, q)])
        r["power_err"] = {g: abs(w["q_net_W"] - f["walls"][g]["q_net_W"]) / abs(f["walls"][g]["q_net_W"])
                          for g, w in r["walls"].items()}
        if level == "coarse":
            for k, b in BOUNDS["coarse_line"].items():
                v = r["err"][k]["max"]
                if not v <= b:
                    failures.append(f"{omega_tag(omega)}_coarse: {k} max error {v:.3g} > {b:.3g}")
            for g, v in r["power_err"].items():
                if g != "outlet" and not v <= BOUNDS["coarse_power"]:
                    failures.append(f"{omega_tag(omega)}_coarse: wall power of {g} off by {v:.3g} > "
                                    f"{BOUNDS['coarse_power']:.3g}")
    write_results(args, out, runs, iso, refs, failures)
    if not args.no_plot:
        plot(out, runs, refs, args)
    return failures


def sym(r):
    a, b = r["walls"]["side1"]["q_net_W"], r["walls"]["side2"]["q_net_W"]
    return abs(a - b) / abs(a)


def iso_check(run):
    """Errors of the isothermal run against the exact equilibrium I = I_b(T_ISO)."""
    E = dio.SIGMA * T_ISO ** 4
    kmax = max(k for k, _ in ZONES.values())
    c = {"G": 0.0, "q": 0.0, "divq": 0.0, "q_net": 0.0}
    for n in VOLUME_LINES:
        p = run.probe(n)
        c["G"] = max(c["G"], float(np.max(np.abs(p["G"] / (4 * E) - 1))))
        c["q"] = max(c["q"], float(max(np.max(np.abs(p[k])) for k in ("qx", "qy", "qz")) / E))
        c["divq"] = max(c["divq"], float(max(np.max(np.abs(p["divq"])), np.max(np.abs(p["divq_from_q"])))
                                         / (4 * kmax * E)))
    for n in WALL_LINES:
        p = run.probe(n)
        c["q_net"] = max(c["q_net"], float(np.max(np.abs(p["q_net"])) / E))
    walls = run.summary["walls"]
    c["power"] = max(abs(w["q_net_W"]) / (E * w["area"]) for w in walls.values())
    area = sum(w["area"] for w in walls.values())
    eb = run.summary["energy_balance"]
    # relative to the emitted scale sigma T^4 A (summary's relative_imbalance divides by ~0 here)
    c["balance"] = max(abs(eb["volume_W"]), abs(eb["walls_W"])) / (E * area)
    c["relative_imbalance"] = eb["relative_imbalance"]
    s, w = run.quadrature()
    mu = s @ NOSE_NORMAL
    c["nose_H"] = float(np.sum(w[mu < 0] * -mu[mu < 0]) / math.pi)
    qin = run.probe("nose")["q_in"] / E
    c["nose_qin"] = float(np.mean(qin))
    c["nose_qin_spread"] = float(np.max(qin) - np.min(qin))
    return c


def write_results(args, out, runs, iso, refs, failures):
    L = ["# Coelho et al. (1998) combustor with baffles: dgrte convergence and exact checks", "",
         "Assumed boiler geometry `combustor.geo` (README.md): 10 m (x) × 12 m (y) × 30 m (z), hopper, nose, "
         "five platens 0.2 m thick hanging from the roof near the outlet. Four property zones in z; outlet black "
         f"{T_OUTLET:g} K, other walls (baffles included) ε = {EPS_WALL:g}, {T_WALL:g} K. Reference: dgrte's own "
         f"finest run, level `fine` ({level_text('fine')}) of the same albedo — not an independent solution. "
         "Errors: max and mean of |v − v_fine| over the points of a line, relative to max |v_fine| of that line, "
         "in percent. run s: dgrte's total time. Generated by coelho_combustor.py.", ""]
    cols = [series_key(n, q) for n, q in SERIES]
    for omega in args.omegas:
        rows = [r for (o, lv), r in runs.items() if o == omega]
        rows.sort(key=lambda r: list(LEVELS).index(r["level"]))
        if not rows:
            continue
        src = "stored `fine_lines_" + omega_tag(omega) + ".csv`" if refs.get(omega, {}) and refs[omega].get("stored") \
            else "this run's level `fine`"
        L += [f"## ω = {omega:g}: max / mean error (%) against {src}", ""]
        hdr = ["level", "settings", "tets", "M"] + [c.replace(":", " ") for c in cols] + ["wall power (max group)",
                                                                                              "outer it.", "run s"]
        body = []
        for r in rows:
            if "err" in r:
                cells = [f"{100 * r['err'][c]['max']:.3g} / {100 * r['err'][c]['mean']:.2g}" for c in cols]
                pe = max(v for g, v in r["power_err"].items() if g != "outlet")
                cells.append(dio.pct(pe))
            else:
                cells = ["(reference)" if r["level"] == "fine" else "n/a"] * len(cols) + [""]
            body.append([r["level"], level_text(r["level"]), r["tets"], r["M"]] + cells + [r["outer"], f"{r['seconds']:.1f}"])
        L += [dio.markdown_table(hdr, body), ""]
        L += ["Lines: " + "; ".join(f"`{n}` {LINE_TEXT[n]}" for n in list(WALL_LINES) + list(VOLUME_LINES)) +
              ". Wall lines: q_net; `axis`, `platens`: G and div q. Wall power: max over the groups but the "
              "outlet (whose net power is a small difference of large terms) of |P − P_fine| / |P_fine|.", ""]
    # wall power per group, both albedos
    fins = {o: refs.get(o) for o in args.omegas if refs.get(o)}
    if len(fins) == 2 and all(o in fins for o in (0.0, 0.5)):
        f0, f5 = fins[0.0]["walls"], fins[0.5]["walls"]
        L += ["## Wall power per group, level `fine` (q_net: absorbed − emitted, into the wall)", ""]
        hdr = ["group", "area m²", "ω = 0: q_net MW", "ω = 0: mean kW/m²", "ω = 0.5: q_net MW", "ω = 0.5: mean kW/m²",
               "ω 0.5 vs 0"]
        body = []
        for g in f0:
            a = f0[g]["area"]
            body.append([g, f"{a:.2f}", f"{f0[g]['q_net_W'] / 1e6:.4f}", f"{f0[g]['q_net_W'] / a / 1e3:.2f}",
                         f"{f5[g]['q_net_W'] / 1e6:.4f}", f"{f5[g]['q_net_W'] / a / 1e3:.2f}",
                         f"{100 * (f5[g]['q_net_W'] / f0[g]['q_net_W'] - 1):+.2f} %"])
        t0 = sum(w["q_net_W"] for w in f0.values())
        t5 = sum(w["q_net_W"] for w in f5.values())
        body.append(["**total**", f"{sum(w['area'] for w in f0.values()):.2f}", f"{t0 / 1e6:.4f}", "",
                     f"{t5 / 1e6:.4f}", "", f"{100 * (t5 / t0 - 1):+.2f} %"])
        L += [dio.markdown_table(hdr, body), ""]
        s0 = refs[0.0]["s"]
        s5 = refs[0.5]["s"]
        hdr = ["line", "quantity", "max |ω 0.5 − ω 0| / max |ω 0|", "mean"]
        body = []
        for n, q in SERIES:
            e = dio.error_stats(s5[(n, q)], s0[(n, q)])
            body.append([n, q, dio.pct(e["max"]), dio.pct(e["mean"])])
        L += ["Effect of scattering (level `fine`, ω = 0.5 against ω = 0):", "", dio.markdown_table(hdr, body), ""]
    # exact checks
    if runs:
        L += ["## Exact checks", "",
              "Energy balance (summary.json: ∫∇·q dV against ∮q_net dA, relative to the larger of ∫|∇·q| dV and "
              "∮|q_net| dA), every run: max " + f"{max(r['energy'] for r in runs.values()):.1e}" +
              f" (bound {BOUNDS['energy']:g}). Smallest G on the volume lines: "
              f"{min(r['minG'] for r in runs.values()):.4g} W/m² (must be > 0). Not exact but a check of the "
              "discretisation: the geometry is symmetric about y = 6 m, the meshes are not; |P_side1 − P_side2| / "
              "P_side1, max over the runs: " + f"{max(sym(r) for r in runs.values()):.1e}" + ".", ""]
    if iso:
        L += [f"Isothermal variant (same geometry, zones and albedo; medium and every wall at {T_ISO:g} K, outlet "
              "black, other walls ε = 0.65): exact I = I_b, G = 4σT⁴, q = 0, ∇·q = 0. Errors relative to 4σT⁴ (G), "
              "σT⁴ (q, q_net on the six wall lines, group power |P|/A), 4κ_max σT⁴ (∇·q and the DG divergence of q), "
              "σT⁴ × wall area (|∫∇·q dV|, |∮q_net dA|: the summary's relative imbalance divides by a vanishing "
              "total here). Nose: mean q_in/(σT⁴) on the nose line against H_n/π, the half-range sum of the set "
              "over the nose's normal (exact: a constant intensity I_b gives q_in = I_b H_n).", ""]
        hdr = ["ω", "level", "tets", "G", "q", "q_net", "∇·q", "group power", "balance", "nose q_in/σT⁴",
               "H_n/π", "difference", "run s"]
        body = [[f"{c['omega']:g}", c["level"], c["tets"], f"{c['G']:.1e}", f"{c['q']:.1e}", f"{c['q_net']:.1e}",
                 f"{c['divq']:.1e}", f"{c['power']:.1e}", f"{c['balance']:.1e}", f"{c['nose_qin']:.7f}",
                 f"{c['nose_H']:.7f}", f"{c['nose_qin'] - c['nose_H']:+.1e}", f"{c['seconds']:.1f}"]
                for c in sorted(iso.values(), key=lambda c: (c["omega"], ISO_LEVELS.index(c["level"])
                                                              if c["level"] in ISO_LEVELS else 9))]
        L += [dio.markdown_table(hdr, body), "",
              f"Bounds: {BOUNDS['iso']:g} for every column up to the balance, {BOUNDS['nose_H']:g} for the nose "
              "difference.", ""]
    if not args.no_plot:
        L += ["![lines](coelho_combustor.png)", "", "![convergence](coelho_combustor_convergence.png)", "",
              "![geometry](coelho_combustor_geometry.png)", ""]
    L += ["**Failed bounds:** " + "; ".join(failures) if failures else "All asserted bounds hold (README.md).", ""]
    (out / "results.md").write_text("\n".join(L))
    print("\n".join(L))


# ---------------------------------------------------------------------------------------------

def read_montecarlo():
    """montecarlo.csv of this folder -> ({(omega, line, quantity): {'xyz', 'value', 'stderr'}}, settings), or
    ({}, None) when there is none."""
    path = HERE / dio.MONTECARLO_CSV
    if not path.exists():
        return {}, None
    comments, header, rows = dio.read_csv_table(path)
    col = {h: i for i, h in enumerate(header)}
    mc = {}
    for r in rows:
        d = mc.setdefault((float(r[col["omega"]]), r[col["line"]], r[col["quantity"]]), {"xyz": [], "value": [], "stderr": []})
        d["xyz"].append([float(r[col[c]]) for c in "xyz"])
        d["value"].append(float(r[col["value"]]))
        d["stderr"].append(float(r[col["value_stderr"]]))
    return {k: {kk: np.array(v) for kk, v in d.items()} for k, d in mc.items()}, dio.montecarlo_settings(comments)


def plot_lines(out, solid, dashed, first, omegas):
    """coelho_combustor.png: the lines of `solid` ({omega: fine run or stored lines}) and `dashed` ({omega: level
    `first`}), and the Monte Carlo curves of montecarlo.csv (markers, +-2 sigma bars)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [("front", "q_net", "z"), ("side", "q_net", "z"), ("back", "q_net", "z"), ("nose", "q_net", "z"),
              ("roof", "q_net", "x"), ("baffle", "q_net", "z"), ("axis", "G", "z"), ("axis", "divq", "z"),
              ("platens", "G", "x")]
    mc, settings = read_montecarlo()
    mc_label = dio.montecarlo_label(settings) if mc else None
    if not mc:
        fig, axes = plt.subplots(3, 3, figsize=(13, 11))
        axes = list(axes.flat)
    else:   # a fourth row: fine minus Monte Carlo, in % of each line's maximum, one panel per albedo
        fig = plt.figure(figsize=(13, 14.6))
        gs = fig.add_gridspec(4, 6, height_ratios=[1, 1, 1, 1.05])
        axes = [fig.add_subplot(gs[i, 2 * j:2 * j + 2]) for i in range(3) for j in range(3)]
        diff_axes = [fig.add_subplot(gs[3, 3 * j:3 * j + 3]) for j in range(2)]
    scale = 1e-3
    for ax, (n, q, coord) in zip(axes, panels):
        ci = "xyz".index(coord)
        for k, omega in enumerate(omegas):
            col = f"C{k}"
            f = solid.get(omega)
            if f is not None:
                ax.plot(f["s"][(n, "xyz")][:, ci], scale * f["s"][(n, q)], "-", color=col, lw=1.5,
                        label=f"ω = {omega:g}, fine")
            c = dashed.get(omega)
            if c is not None:
                ax.plot(c["s"][(n, "xyz")][:, ci], scale * c["s"][(n, q)], "--", color=col, lw=0.9,
                        label=f"ω = {omega:g}, {first}")
            m = mc.get((omega, n, q))
            if m is not None:
                dio.montecarlo_errorbar(ax, m["xyz"][:, ci], scale * m["value"], scale * m["stderr"], col, ms=2.6,
                                        label=f"ω = {omega:g}, Monte Carlo, ±{dio.MC_SIGMAS}σ")
        unit = {"q_net": "q_net [kW/m²]", "G": "G [kW/m²]", "divq": "∇·q [kW/m³]"}[q]
        ax.set_title(f"{n}: {LINE_TEXT[n]}", fontsize=8)
        ax.set_xlabel(f"{coord} [m]")
        ax.set_ylabel(unit)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="upper right")
    if mc:
        plot_fine_minus_mc(diff_axes, solid, mc, omegas)
    title = f"Coelho combustor (assumed geometry): solid {level_text('fine')}"
    if dashed:
        title += f"; dashed {level_text(first)}"
    if mc:
        have = sorted({(n, q) for _, n, q in mc}, key=SERIES.index)
        bar = max(dio.MC_SIGMAS * np.max(m["stderr"]) / np.max(np.abs(m["value"])) for m in mc.values())
        title += (f"\nmarkers: {mc_label} (bars ≤ {100 * bar:.2g} % of the line's maximum, mostly hidden by the "
                  "markers; bottom row: fine − Monte Carlo)")
        if len(have) < len(SERIES):
            title += "\nMonte Carlo stored for " + ", ".join(f"{n} {q}" for n, q in have)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.0075 * title.count("\n")))
    fig.savefig(out / "coelho_combustor.png", dpi=100)
    plt.close(fig)


def plot_fine_minus_mc(axes, solid, mc, omegas):
    """(fine - Monte Carlo) / max |Monte Carlo| of the line, in %, against the position along the line (0 at its
    first point, 1 at its last), every line that montecarlo.csv holds; bars +-2 sigma_MC on the same scale."""
    for ax, omega in zip(axes, omegas):
        f = solid.get(omega)
        keys = [(n, q) for n, q in SERIES if (omega, n, q) in mc]
        for j, (n, q) in enumerate(keys):
            if f is None:
                continue
            m = mc[(omega, n, q)]
            pts, dg = f["s"][(n, "xyz")], f["s"][(n, q)]
            if pts.shape != m["xyz"].shape or not np.allclose(pts, m["xyz"], atol=1e-4):
                raise ValueError(f"{n}: the Monte Carlo points are not the stored fine points")
            t = np.linspace(0.0, 1.0, len(dg))
            ref = np.max(np.abs(m["value"]))
            dio.montecarlo_errorbar(ax, t, 100 * (dg - m["value"]) / ref, 100 * m["stderr"] / ref, f"C{j + 2}", ms=2.6,
                                    marker="os^vD<>p*h"[j % 10], label=f"{n} {q}")
        ax.axhline(0.0, color="k", lw=0.7)
        ax.set_title(f"ω = {omega:g}: (fine − Monte Carlo) / max |Monte Carlo| of the line [%], bars "
                     f"±{dio.MC_SIGMAS}σ_MC", fontsize=8)
        ax.set_xlabel("position along the line (0: first point, 1: last; the coordinates of the panels above)")
        ax.set_ylabel("fine − MC [%]")
        ax.grid(alpha=0.3)
        if keys and f is not None:   # room for the legend above the markers
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi + (0.12 + 0.08 * ((len(keys) - 1) // 5)) * (hi - lo))
            ax.legend(fontsize=7, ncol=5, loc="upper center")


def plot_only(args, out):
    """Redraw coelho_combustor.png from the stored lines, without running dgrte."""
    solid = {o: read_fine(o) for o in args.omegas if fine_csv(o).exists()}
    dashed = {}
    for o in args.omegas:
        path = HERE / f"coarse_lines_{omega_tag(o)}.csv"
        if path.exists():
            dashed[o] = {"s": read_lines(path)}
        else:
            print(f"{path.name} is missing: no dashed (coarse) line for ω = {o:g}")
    plot_lines(out, solid, dashed, "coarse", args.omegas)
    print(f"wrote {out / 'coelho_combustor.png'} (Monte Carlo: "
          f"{'yes' if (HERE / dio.MONTECARLO_CSV).exists() else 'no montecarlo.csv'})")


def plot(out, runs, refs, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plot_geometry(out, plt)
    first = "coarse" if "coarse" in args.levels else args.levels[0]
    dashed = {o: runs[(o, first)] for o in args.omegas if (o, first) in runs} if first != "fine" else {}
    plot_lines(out, {o: refs[o] for o in args.omegas if refs.get(o)}, dashed, first, args.omegas)
    # convergence: max error per series against the level
    levels = [lv for lv in args.levels if lv not in ("fine", "angle")]
    has_angle = "angle" in args.levels
    if not levels and not has_angle:
        return
    fig, axes = plt.subplots(1, len(args.omegas), figsize=(6.5 * len(args.omegas), 4.6), squeeze=False)
    for ax, omega in zip(axes.flat, args.omegas):
        x = np.arange(len(levels))
        for j, (n, q) in enumerate(SERIES):
            k = series_key(n, q)
            e = [runs[(omega, lv)]["err"][k]["max"] if (omega, lv) in runs and "err" in runs[(omega, lv)] else np.nan
                 for lv in levels]
            ax.semilogy(x, 100 * np.array(e), "o-", color=f"C{j}", ms=4, label=k)
            if has_angle and (omega, "angle") in runs and "err" in runs[(omega, "angle")]:
                ax.semilogy([len(levels) + 0.5], [100 * runs[(omega, "angle")]["err"][k]["max"]], "x", color=f"C{j}", ms=6)
        ticks = [f"{lv}\n{level_text(lv).replace(', S8 (heat)', '')}" for lv in levels]
        if has_angle:
            ticks.append("angle: T6 vs S8\n" + level_text("angle").replace(", T6", ""))
        ax.set_xticks(list(x) + ([len(levels) + 0.5] if has_angle else []))
        ax.set_xticklabels(ticks, fontsize=7)
        ax.set_title(f"ω = {omega:g}: max |v − v_fine| / max |v_fine| [%] (fine: {level_text('fine')})", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes.flat[0].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "coelho_combustor_convergence.png", dpi=100)
    plt.close(fig)


def plot_geometry(out, plt):
    """The assumed geometry: x-z section (walls, zones, platens, probe lines) and the top view."""
    geo = {}
    import re
    txt = (HERE / "combustor.geo").read_text()
    for k in ("W", "XH1", "XH2", "ZN1", "XT", "ZT", "XB1", "XB2", "ZB", "TB"):
        m = re.search(rf"\b{k}\s*=\s*\{{\s*([0-9.eE+-]+)", txt)
        geo[k] = float(m.group(1))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 8.5), gridspec_kw={"width_ratios": [1, 1.1]})
    sec = [(geo["XH1"], 0), (geo["XH2"], 0), (10, 5), (10, geo["ZN1"]), (geo["XT"], geo["ZT"]), (10, 22), (10, 30),
           (0, 30), (0, 5), (geo["XH1"], 0)]
    xs, zs = zip(*sec)
    a1.plot(xs, zs, "k-", lw=1.5)
    a1.plot([10, 10], [22, 30], "r-", lw=4, label="outlet (black, 1200 K)")
    a1.fill_between([geo["XB1"], geo["XB2"]], geo["ZB"], 30, color="0.6", alpha=0.6, label="platens (5, in y)")
    for zc in (5, 10, 20):
        a1.axhline(zc, color="0.5", ls=":", lw=0.8)
    for zc, (g, (k, T)) in zip((2.5, 7.5, 15, 25), ZONES.items()):
        a1.text(0.3, zc, f"κ {k:g}, {T:g} K", fontsize=8, color="0.3")
    for n, (g, a, b, k) in WALL_LINES.items():
        if n in ("front", "back", "nose", "side", "baffle"):
            a1.plot([a[0], b[0]], [a[2], b[2]], "-", lw=2.5, alpha=0.7, label=f"{n} ({g})")
    for n, (a, b, k) in VOLUME_LINES.items():
        a1.plot([a[0], b[0]], [a[2], b[2]], "--", lw=1.2, label=f"{n} (volume)")
    a1.set_aspect("equal")
    a1.set_xlabel("x [m]")
    a1.set_ylabel("z [m]")
    a1.set_title("x-z section (side1 line at y = 0; others at y = 5-6)", fontsize=9)
    h1, l1 = a1.get_legend_handles_labels()
    W, TB = geo["W"], geo["TB"]
    a2.plot([0, 10, 10, 0, 0], [0, 0, W, W, 0], "k-", lw=1.5)
    for k in range(1, 6):
        yc = k * W / 6
        a2.fill_between([geo["XB1"], geo["XB2"]], yc - TB / 2, yc + TB / 2, color="0.4")
    a2.plot([0.125, 9.875], [5, 5], "-", lw=2, label="roof line (y = 5) / platens line (z = 26)")
    a2.plot([10, 10], [0, W], "r-", lw=4, label="outlet side x = 10")
    a2.set_aspect("equal")
    a2.set_xlabel("x [m]")
    a2.set_ylabel("y [m]")
    a2.set_title(f"top view: five platens {TB:g} m thick, x {geo['XB1']:g}-{geo['XB2']:g}, z {geo['ZB']:g}-30",
                 fontsize=9)
    h2, l2 = a2.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="lower center", ncol=4, fontsize=7.5)
    fig.suptitle("Coelho et al. (1998) combustor: ASSUMED geometry (combustor.geo)", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(out / "coelho_combustor_geometry.png", dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", help="path of the dgrte executable")
    ap.add_argument("--out", default=str(HERE), help="folder for results.md and the PNGs (default: this folder)")
    ap.add_argument("--work", help="folder for the dgrte runs (kept); default: a temporary folder, removed")
    ap.add_argument("--coarse", action="store_true",
                    help="CTest variant: level `coarse` only (size 2, P2, S8 heat), both albedos, isothermal check at "
                         "`coarse`, compared with the stored fine lines (fine_lines_*.csv)")
    ap.add_argument("--levels", nargs="+", default=list(LEVELS), choices=list(LEVELS))
    ap.add_argument("--iso-levels", nargs="*", default=ISO_LEVELS, choices=list(LEVELS))
    ap.add_argument("--omegas", nargs="+", type=float, default=OMEGAS)
    ap.add_argument("--timeout", type=float, default=None, help="seconds allowed per dgrte run")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--plot-only", action="store_true",
                    help="run nothing: redraw coelho_combustor.png (in --out) from the stored fine_lines_*.csv, "
                         "coarse_lines_*.csv and montecarlo.csv of this folder")
    args = ap.parse_args()
    if args.coarse:
        args.levels = ["coarse"]
        args.iso_levels = ["coarse"]
    args.levels = sorted(set(args.levels), key=list(LEVELS).index)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        plot_only(args, out)
        return 0
    failures = run_all(args, out)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
