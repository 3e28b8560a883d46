#!/usr/bin/python3
"""Jendoubi, Lee & Kim (1993) cylinder: cold scattering medium irradiated by a normal collimated beam.

Set-up (README.md): cylinder R = H = 1 m (cylinder.geo, axis z, bottom wall z = 0, top wall z = H),
cold gray medium with beta = kappa + sigma_s = 1 1/m, isotropic scattering; a collimated beam of flux
F = pi W/m^2 (normal to the beam) enters through the top wall travelling in -z; side and top walls
black at 0 K. Case 1: kappa = 0, sigma_s = 1, bottom wall black. Case 2: kappa = 0.3, sigma_s = 0.7,
bottom wall gray, emissivity 0.5, at 0 K. Result: q* = q_net / F on the bottom wall (against r/R) and
on the side wall (against z/H), each along two azimuths (phi = 0 and phi = 2 pi / 3; cylinder.geo puts
vertical mesh edges along both side-wall lines; the mesh is the disk's extruded in layers, so that the
side wall is made of exactly vertical triangles, see cylinder.geo).

Reference: no tabulated data of Jendoubi et al. is available here. The q* curves are compared with
dgrte's own finest run (level `fine`) of the same case, which shows the convergence but is not an
independent reference. Exact checks, every run:
  * beam: the collimated part on the axis and on an off-axis vertical line, G_c = -qz_c = F exp(-beta (H - z));
  * energy: the beam power F A_top (A_top: area of the faceted top wall) = power absorbed by the walls
    (q_net of bottom and side, q_in of the black top wall) + power absorbed in the medium (-integral of
    div q; 0 in case 1);
  * gray bottom wall at 0 K (case 2): q_net = emissivity x q_in at every probe point;
  * axisymmetry: q* along phi = 0 and phi = 2 pi / 3 agree (the mesh and the angular sets are not
    symmetric about the axis, so this measures the discretisation's asymmetry).
The coarse CTest (--coarse) also compares the coarse q* with the fine curves stored in wall_flux.csv.
Monte Carlo: where montecarlo.csv exists (written by validation/montecarlo/dg_vs_mc.py: dgrte's Monte Carlo
solver on this case), the plot shows it as markers with +-2 sigma bars, and Monte Carlo minus fine below.

Examples:
    jendoubi_cylinder.py --dgrte build/src/app/dgrte                   # all levels, both cases (~7 min)
    jendoubi_cylinder.py --dgrte build/src/app/dgrte --coarse --no-plot  # CTest: coarse level only (~10 s)
    jendoubi_cylinder.py --plot-only      # no dgrte run: redraw jendoubi_cylinder.png from wall_flux.csv,
                                          # wall_flux_levels.csv (the other levels) and montecarlo.csv
"""
import argparse
import math
import pathlib
import re
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
import dgrte_io as dio  # noqa: E402

F_BEAM = math.pi                      # W/m^2, beam flux normal to the beam (q* = q / F)
BETA = 1.0                            # 1/m, kappa + sigma_s in both cases
CASES = {
    1: {"kappa": 0.0, "sigma_s": 1.0, "eps_bottom": 1.0},
    2: {"kappa": 0.3, "sigma_s": 0.7, "eps_bottom": 0.5},
}
# Refinement levels: (mesh size [m], DG order, angular set). `coarse` is the CTest; `fine` is the
# reference. From `coarse`, `angle` refines the angular set, `order` the DG order, `space` the mesh;
# `paper` is the setting of the seed paper (T4, P3, 6,872 tets there, 7,665 here).
LEVELS = {
    "coarse": (0.2, 2, "tn4"),
    "angle": (0.2, 2, "tn8"),
    "order": (0.2, 3, "tn4"),
    "space": (0.12, 2, "tn4"),
    "paper": (0.15, 3, "tn4"),
    "fine": (0.12, 3, "product8x32z"),
}
N_WALL = 41                           # points on each wall line (r/R or z/H = 0, 0.025, ..., 1)
N_BEAM = 21                           # points on each beam line
PHI2 = 2 * math.pi / 3                # second azimuth (must match cylinder.geo's phi2)
OFF_AXIS = (0.5 * math.cos(0.7), 0.5 * math.sin(0.7))   # the off-axis beam line, r = 0.5 m
# Bounds, as fractions (README.md "Asserted bounds"; measured values there).
BOUNDS = {
    "beam": {"coarse": 1.5e-4, "default": 1.5e-4},   # max |G_c - F exp(-beta (H - z))| / F, both lines
    "energy": 1e-9,                                   # |beam power - absorbed| / beam power
    "dgrte_energy": 1e-9,                             # dgrte's relative_imbalance
    "gray": 3e-8,                                     # max |q_net - eps q_in| / max q_in on the gray bottom wall
    "asym_bottom": {"coarse": 0.01, "default": 0.01}, # max |q*(phi=0) - q*(phi2)| / max q*, bottom wall
    "asym_side": {"coarse": 0.012, "default": 0.02},  # the same, side wall
    # coarse level vs the stored fine curves (wall_flux.csv), per case: max and mean over both walls
    "coarse_max": {1: 0.055, 2: 0.045},
    "coarse_mean": {1: 0.015, 2: 0.025},
}


def geo_constants():
    text = (HERE / "cylinder.geo").read_text()
    vals = {}
    for name in ("R", "H"):
        m = re.search(name + r"\s*=\s*\{\s*([0-9.eE+-]+)", text)
        if not m:
            sys.exit(f"cylinder.geo: cannot read {name} from DefineConstant")
        vals[name] = float(m.group(1))
    if "phi2 = {2 * Pi / 3," not in text:
        sys.exit("cylinder.geo: phi2 is not 2 * Pi / 3 (PHI2 in jendoubi_cylinder.py)")
    return vals["R"], vals["H"]


def level_text(level):
    size, order, label = LEVELS[level]
    return f"size {size:g}, P{order}, {dio.set_name(label, 'z')}"


def geo_for(size, work):
    """A copy of cylinder.geo in `work` whose lc (the layer height, see cylinder.geo) is `size`."""
    text = (HERE / "cylinder.geo").read_text()
    new, k = re.subn(r"lc = \{\s*[0-9.eE+-]+,", f"lc = {{{size!r},", text, count=1)
    if k != 1:
        sys.exit("cylinder.geo: cannot find 'lc = {...,' in DefineConstant")
    path = pathlib.Path(work) / f"cylinder_{size:g}.geo"
    path.write_text(new)
    return str(path.resolve())


def make_case(template, case_no, level, R, H, work):
    size, order, label = LEVELS[level]
    c = CASES[case_no]
    case = dict(template)
    case["mesh"] = dict(template["mesh"], geo=geo_for(size, work), size=size)
    case["order"] = order
    case["angular"] = dio.parse_set(label, axis="z")
    case["media"] = {"*": {"kappa": f"{c['kappa']:g}", "scattering": f"{c['sigma_s']:g}", "Ib": "0"}}
    bottom = {"type": "black", "temperature": 0} if c["eps_bottom"] == 1.0 else \
        {"type": "gray", "emissivity": c["eps_bottom"], "temperature": 0}
    case["boundaries"] = {"bottom": bottom, "*": {"type": "black", "temperature": 0}}
    case["collimated"] = [{"boundary": "top", "direction": [0, 0, -1], "flux": F_BEAM}]
    c2, s2 = R * math.cos(PHI2), R * math.sin(PHI2)
    ox, oy = OFF_AXIS
    probes = [{"name": "axis", "from": [0.0, 0.0, 0.0], "to": [0.0, 0.0, H], "points": N_BEAM},
              {"name": "offaxis", "from": [ox, oy, 0.0], "to": [ox, oy, H], "points": N_BEAM},
              {"name": "bottom0", "from": [0.0, 0.0, 0.0], "to": [R, 0.0, 0.0], "points": N_WALL, "wall": "bottom"},
              {"name": "bottom2", "from": [0.0, 0.0, 0.0], "to": [c2, s2, 0.0], "points": N_WALL, "wall": "bottom"},
              {"name": "side0", "from": [R, 0.0, 0.0], "to": [R, 0.0, H], "points": N_WALL, "wall": "side"},
              {"name": "side2", "from": [c2, s2, 0.0], "to": [c2, s2, H], "points": N_WALL, "wall": "side"}]
    case["output"] = dict(template.get("output", {}), vtk=False, probes=probes)
    return case


def bound(key, level):
    b = BOUNDS[key]
    return b.get(level, b["default"]) if isinstance(b, dict) else b


def evaluate(run, case_no, level, H):
    """Everything compared or checked, from one finished run."""
    c = CASES[case_no]
    r = {"case": case_no, "level": level, "seconds": run.seconds, "tets": run.elements, "M": run.directions,
         "threads": run.summary.get("threads"), "outer": run.summary.get("solver", {}).get("outer_iterations")}
    # (a) the uncollided beam
    beam = 0.0
    for name in ("axis", "offaxis"):
        p = run.probe(name)
        exact = F_BEAM * np.exp(-BETA * (H - p["z"]))
        beam = max(beam, float(np.max(np.abs(p["G_collimated"] - exact))), float(np.max(np.abs(-p["qz_collimated"] - exact))),
                   float(np.max(np.abs(p["qx_collimated"]))), float(np.max(np.abs(p["qy_collimated"]))))
    r["beam"] = beam / F_BEAM
    # (b) energy: beam power in = power absorbed by the walls and the medium
    w = run.summary["walls"]
    eb = run.summary["energy_balance"]
    A_top = w["top"]["area"]
    P_in = F_BEAM * A_top
    absorbed_walls = w["bottom"]["q_net_W"] + w["side"]["q_net_W"] + w["top"]["q_in_W"]
    absorbed_medium = -eb["volume_W"]
    r.update(A_top=A_top, P_in=P_in, P_bottom=w["bottom"]["q_net_W"], P_side=w["side"]["q_net_W"], P_top=w["top"]["q_in_W"],
             P_medium=absorbed_medium, top_out=w["top"]["q_out_W"])
    r["energy"] = abs(P_in - absorbed_walls - absorbed_medium) / P_in
    r["dgrte_energy"] = abs(eb["relative_imbalance"])
    # the wall lines
    lines = {k: run.probe(k) for k in ("bottom0", "bottom2", "side0", "side2")}
    r["r"] = np.hypot(lines["bottom0"]["x"], lines["bottom0"]["y"])
    r["z"] = lines["side0"]["z"] / H
    for k, p in lines.items():
        r[k] = p["q_net"] / F_BEAM
    r["bottom"] = 0.5 * (r["bottom0"] + r["bottom2"])    # azimuthal means of the two lines
    r["side"] = 0.5 * (r["side0"] + r["side2"])
    # (c) axisymmetry
    r["asym_bottom"] = float(np.max(np.abs(r["bottom0"] - r["bottom2"])) / np.max(np.abs(r["bottom0"])))
    r["asym_side"] = float(np.max(np.abs(r["side0"] - r["side2"])) / np.max(np.abs(r["side0"])))
    # (d) the gray bottom wall at 0 K absorbs eps q_in
    qin = np.concatenate([lines["bottom0"]["q_in"], lines["bottom2"]["q_in"]])
    qnet = np.concatenate([lines["bottom0"]["q_net"], lines["bottom2"]["q_net"]])
    r["gray"] = float(np.max(np.abs(qnet - c["eps_bottom"] * qin)) / np.max(qin))
    r["uncollided_bottom"] = c["eps_bottom"] * math.exp(-BETA * H)   # the beam's share of q*_bottom
    return r


def compare(r, ref_bottom0, ref_bottom2, ref_side0, ref_side2):
    """Errors of run r against reference curves, relative to max |reference| of each wall (both azimuths)."""
    out = {}
    for wall, (a, b) in (("bottom", (ref_bottom0, ref_bottom2)), ("side", (ref_side0, ref_side2))):
        out[wall] = dio.error_stats(np.concatenate([r[wall + "0"], r[wall + "2"]]), np.concatenate([a, b]))
    return out


def reuse_run(case, outdir):
    """--reuse: the finished run in `outdir` if its case.yaml is this case, else None."""
    outdir = pathlib.Path(outdir)
    if not (outdir / "summary.json").exists() or not (outdir / "case.yaml").exists():
        return None
    import json
    import yaml
    if dio.load_case(outdir / "case.yaml") != yaml.safe_load(dio.dump_case(dio.absolute_mesh(case, HERE))):
        return None
    summary = json.loads((outdir / "summary.json").read_text())
    summary["wall_seconds"] = summary.get("timing", {}).get("total_seconds", float("nan"))
    print(f"{outdir.name}: reusing the finished run in {outdir}")
    return dio.Run(outdir, summary)


def read_stored_fine(path):
    d = dio.read_csv_columns(path)
    return {n: {k: d[f"case{n}_{k}"] for k in ("bottom0", "bottom2", "side0", "side2")} for n in CASES}


def run_all(args, out):
    template = dio.load_case(HERE / "jendoubi_cylinder.yaml")
    dgrte = dio.find_dgrte(args.dgrte)
    R, H = geo_constants()
    runs, failures = {}, []
    if args.coarse and not (HERE / "wall_flux.csv").exists():
        failures.append("wall_flux.csv (the fine curves) is missing: run the full script first")
    stored = read_stored_fine(HERE / "wall_flux.csv") if (args.coarse and (HERE / "wall_flux.csv").exists()) else None
    with dio.WorkDir(args.work, prefix="dgrte_jendoubi_cylinder_") as work:
        for n in args.cases:
            for level in args.levels:
                tag = f"case{n}_{level}"
                case = make_case(template, n, level, R, H, work)
                try:
                    run = reuse_run(case, work / tag) if args.reuse else None
                    if run is None:
                        run = dio.run_case(dgrte, case, work / tag, base=HERE, timeout=args.timeout)
                except dio.DgrteError as e:
                    print(f"[{tag}] dgrte failed: {e}", file=sys.stderr)
                    failures.append(f"{tag}: dgrte failed")
                    continue
                r = evaluate(run, n, level, H)
                runs[(n, level)] = r
                print(f"{tag}: {r['tets']} tets, {r['M']} directions, {r['seconds']:.1f} s; beam {r['beam']:.1e}, energy "
                      f"{r['energy']:.1e} (dgrte {r['dgrte_energy']:.1e}), gray {r['gray']:.1e}, asymmetry bottom "
                      f"{100 * r['asym_bottom']:.2f} % side {100 * r['asym_side']:.2f} %; q*_bottom(0) = {r['bottom'][0]:.4f}, "
                      f"q*_side(0.5) = {r['side'][N_WALL // 2]:.4f}", flush=True)
                checks = [("beam", r["beam"], bound("beam", level)), ("energy", r["energy"], bound("energy", level)),
                          ("dgrte energy imbalance", r["dgrte_energy"], bound("dgrte_energy", level)),
                          ("gray wall q_net = eps q_in", r["gray"], bound("gray", level)),
                          ("asymmetry bottom", r["asym_bottom"], bound("asym_bottom", level)),
                          ("asymmetry side", r["asym_side"], bound("asym_side", level))]
                if args.coarse and stored is not None:
                    s = stored[n]
                    e = compare(r, s["bottom0"], s["bottom2"], s["side0"], s["side2"])
                    r["vs_stored"] = e
                    emax = max(e["bottom"]["max"], e["side"]["max"])
                    emean = max(e["bottom"]["mean"], e["side"]["mean"])
                    print(f"{tag}: vs stored fine curves (wall_flux.csv): max {100 * emax:.2f} %, mean {100 * emean:.2f} %")
                    checks += [("max error vs stored fine", emax, BOUNDS["coarse_max"][n]),
                               ("mean error vs stored fine", emean, BOUNDS["coarse_mean"][n])]
                for name, v, b in checks:
                    if not v <= b:
                        failures.append(f"{tag}: {name} {v:.3g} > {b:.3g}")
    if "fine" in args.levels:
        for (n, level), r in runs.items():
            f = runs.get((n, "fine"))
            if f is not None and level != "fine":
                r["vs"] = compare(r, f["bottom0"], f["bottom2"], f["side0"], f["side2"])
        if not args.coarse:
            write_csv(HERE if args.write_csv else out, runs, args)
    complete = not args.coarse and all((n, "fine") in runs for n in CASES)
    write_levels_csv(HERE if (complete and args.write_csv) else out, runs)
    write_results(args, out, runs, failures)
    if not args.no_plot and runs:
        plot(out, runs, args)
    return failures


def write_csv(folder, runs, args):
    fin = [(n, runs[(n, "fine")]) for n in args.cases if (n, "fine") in runs]
    if len(fin) != len(CASES):
        return
    r0 = fin[0][1]
    with open(folder / "wall_flux.csv", "w") as f:
        f.write(f"# Jendoubi et al. cylinder, dgrte level fine ({level_text('fine')}): q* = q_net / F on the bottom wall "
                "(against s = r/R) along phi = 0 and phi = 2 pi/3, and on the side wall (against s = z/H, z from the "
                "bottom) along the same azimuths; F = pi W/m^2 the beam flux\n")
        cols = [f"case{n}_{k}" for n, _ in fin for k in ("bottom0", "bottom2", "side0", "side2")]
        f.write("s," + ",".join(cols) + "\n")
        for i, s in enumerate(r0["z"]):
            f.write(f"{s:.4f}," + ",".join(f"{r[k][i]:.6f}" for _, r in fin for k in ("bottom0", "bottom2", "side0", "side2")) + "\n")


LINES = ("bottom0", "bottom2", "side0", "side2")


def write_levels_csv(folder, runs):
    """wall_flux_levels.csv: the q* lines of every level but `fine` that ran (the plot's other curves, for
    --plot-only); columns case<n>_<level>_<line>."""
    keys = sorted((k for k in runs if k[1] != "fine"), key=lambda k: (k[0], list(LEVELS).index(k[1])))
    if not keys:
        return
    with open(folder / "wall_flux_levels.csv", "w") as f:
        f.write("# Jendoubi et al. cylinder, dgrte levels " + ", ".join(sorted({k[1] for k in keys}, key=list(LEVELS).index))
                + ": q* = q_net / F as in wall_flux.csv (s = r/R on the bottom lines, z/H on the side lines); "
                + "; ".join(f"{lv}: {level_text(lv)}" for lv in LEVELS if lv != "fine") + "\n")
        f.write("s," + ",".join(f"case{n}_{lv}_{k}" for n, lv in keys for k in LINES) + "\n")
        for i, sv in enumerate(runs[keys[0]]["z"]):
            f.write(f"{sv:.4f}," + ",".join(f"{runs[key][k][i]:.6f}" for key in keys for k in LINES) + "\n")


def stored_run(s, lines):
    """A run dict for plot() from stored lines (s and {line: q*})."""
    r = {"r": s, "z": s, **lines}
    r["bottom"] = 0.5 * (r["bottom0"] + r["bottom2"])
    r["side"] = 0.5 * (r["side0"] + r["side2"])
    return r


def plot_only(args, out):
    """Redraw jendoubi_cylinder.png from the stored curves, without running dgrte."""
    d = dio.read_csv_columns(HERE / "wall_flux.csv")
    runs = {(n, "fine"): stored_run(d["s"], {k: d[f"case{n}_{k}"] for k in LINES}) for n in args.cases}
    path = HERE / "wall_flux_levels.csv"
    if path.exists():
        d = dio.read_csv_columns(path)
        for name in d:
            m = re.fullmatch(r"case(\d)_(\w+)_bottom0", name)
            if m and int(m.group(1)) in args.cases and m.group(2) in LEVELS:
                n, lv = int(m.group(1)), m.group(2)
                runs[(n, lv)] = stored_run(d["s"], {k: d[f"case{n}_{lv}_{k}"] for k in LINES})
    else:
        print("wall_flux_levels.csv is missing: the plot shows the fine level only")
    args.levels = sorted({lv for _, lv in runs}, key=list(LEVELS).index)
    plot(out, runs, args)
    print(f"wrote {out / 'jendoubi_cylinder.png'} (levels {', '.join(args.levels)}; Monte Carlo: "
          f"{'yes' if (HERE / dio.MONTECARLO_CSV).exists() else 'no montecarlo.csv'})")


def write_results(args, out, runs, failures):
    R, H = geo_constants()
    lines = ["# Jendoubi, Lee & Kim (1993) cylinder with collimated irradiation: dgrte", "",
             f"R = H = {R:g} m, beta = 1 1/m, isotropic scattering, cold medium and walls; beam F = pi W/m^2 through the top "
             "wall in -z. Case 1: kappa = 0, sigma_s = 1, bottom black. Case 2: kappa = 0.3, sigma_s = 0.7, bottom gray "
             "with emissivity 0.5. q* = q_net / F. Errors: |q* - q*_fine| over both azimuths of a wall, relative to "
             "max |q*_fine| of that wall (percent). run s = dgrte's total time (threads = OMP threads). Generated by "
             "jendoubi_cylinder.py.", ""]
    order = sorted(runs, key=lambda k: (k[0], list(LEVELS).index(k[1])))
    if any("vs" in runs[k] for k in order):
        lines += [f"## Convergence towards the finest run (`fine`, {level_text('fine')})", "",
                  "No tabulated reference of Jendoubi et al. is available: the differences below are from dgrte's own "
                  "finest run of the same case. Paths from `coarse`: `angle` (T4 -> T8), `order` (P2 -> P3), `space` "
                  "(size 0.2 -> 0.12); `paper` is the seed paper's setting (T4, P3, 6,872 tets there, 7,665 here).", ""]
        hdr = ["case", "level", "settings", "tets", "M", "bottom: max", "bottom: mean", "side: max", "side: mean",
               "outer it.", "run s"]
        body = []
        for k in order:
            r = runs[k]
            v = r.get("vs")
            body.append([r["case"], r["level"], level_text(r["level"]), r["tets"], r["M"],
                         dio.pct(v["bottom"]["max"]) if v else "(reference)", dio.pct(v["bottom"]["mean"]) if v else "",
                         dio.pct(v["side"]["max"]) if v else "", dio.pct(v["side"]["mean"]) if v else "",
                         r["outer"], f"{r['seconds']:.1f}"])
        lines += [dio.markdown_table(hdr, body), ""]
    if any("vs_stored" in runs[k] for k in order):
        lines += ["## Coarse level vs the stored fine curves (`wall_flux.csv`)", ""]
        hdr = ["case", "bottom: max", "bottom: mean", "side: max", "side: mean"]
        body = [[runs[k]["case"], dio.pct(runs[k]["vs_stored"]["bottom"]["max"]), dio.pct(runs[k]["vs_stored"]["bottom"]["mean"]),
                 dio.pct(runs[k]["vs_stored"]["side"]["max"]), dio.pct(runs[k]["vs_stored"]["side"]["mean"])]
                for k in order if "vs_stored" in runs[k]]
        lines += [dio.markdown_table(hdr, body), ""]
    lines += ["## Exact checks, every run", "",
              "beam: max |G_c - F e^{-beta(H-z)}|, |-qz_c - F e^{-beta(H-z)}|, |qx_c|, |qy_c| over the axis and an off-axis "
              "line (r = 0.5 m), / F. energy: |F A_top - (P_bottom + P_side + P_top + P_medium)| / (F A_top), with P_wall "
              "the absorbed power (q_net of bottom and side, q_in of the black top) and P_medium = -integral of div q; "
              "dgrte: summary.json relative_imbalance. gray: max |q_net - eps q_in| / max q_in on the bottom lines. "
              "asymmetry: max |q*(phi = 0) - q*(phi = 2 pi/3)| / max q* of the wall.", ""]
    hdr = ["case", "level", "beam", "energy", "dgrte energy", "gray", "asym. bottom", "asym. side",
           "P_bottom / P_in", "P_side / P_in", "P_top / P_in", "P_medium / P_in"]
    body = [[runs[k]["case"], runs[k]["level"], f"{runs[k]['beam']:.1e}", f"{runs[k]['energy']:.1e}",
             f"{runs[k]['dgrte_energy']:.1e}", f"{runs[k]['gray']:.1e}", dio.pct(runs[k]["asym_bottom"]),
             dio.pct(runs[k]["asym_side"])] +
            [f"{runs[k][p] / runs[k]['P_in']:.4f}" for p in ("P_bottom", "P_side", "P_top", "P_medium")] for k in order]
    lines += [dio.markdown_table(hdr, body), ""]
    if order:
        r = runs[order[0]]
        lines += [f"Top wall (faceted) area A_top = {r['A_top']:.6f} m^2 (pi R^2 = {math.pi * R * R:.6f}); "
                  f"q_out of the top wall = {r['top_out']:.6f} W = F A_top + what it emits (0): the beam is counted as "
                  "leaving the top wall.", ""]
    best = args.levels[-1]
    fin = [(n, runs[(n, best)]) for n in args.cases if (n, best) in runs]
    if fin:
        ss = [0.0, 0.25, 0.5, 0.75, 1.0]
        idx = [int(round(s * (N_WALL - 1))) for s in ss]
        hdr = ["case"] + [f"bottom r/R = {s:g}" for s in ss] + [f"side z/H = {s:g}" for s in ss]
        body = [[n] + [f"{r['bottom'][i]:.4f}" for i in idx] + [f"{r['side'][i]:.4f}" for i in idx] for n, r in fin]
        lines += [f"## q* at level `{best}` ({level_text(best)}), mean of the two azimuths", "", dio.markdown_table(hdr, body), "",
                  f"The uncollided beam alone gives q*_bottom = eps e^(-beta H) = {math.exp(-1):.4f} (case 1), "
                  f"{0.5 * math.exp(-1):.4f} (case 2) at every r < R. All {N_WALL} points of the fine level: `wall_flux.csv`.", ""]
    if not args.no_plot:
        lines += ["![wall fluxes](jendoubi_cylinder.png)", ""]
    lines += ["**Failed bounds:** " + "; ".join(failures) if failures else "All asserted bounds hold (README.md).", ""]
    (out / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))


def plot_montecarlo(axes, mc, settings, run_of, args, best):
    """Monte Carlo markers (+-2 sigma) on the upper panels, Monte Carlo minus the `best` level on the lower ones.
    Each wall shows the mean of the azimuths (phi = 0, 2 pi/3) that montecarlo.csv holds, as the lines do.
    Returns the legend handles (upper, lower)."""
    one_az = sorted({wall for n in args.cases for wall in ("bottom", "side")
                     if (f"case{n}_{wall}0" in mc) != (f"case{n}_{wall}2" in mc)})
    label = dio.montecarlo_label(settings) + (f" ({' and '.join(one_az)} wall: φ = 0 line only)" if one_az else "")
    upper, lower = [], []
    for n in args.cases:
        col = f"C{n - 1}"
        f = run_of((n, best))
        for j, wall in enumerate(("bottom", "side")):
            az = [k for k in (f"{wall}0", f"{wall}2") if f"case{n}_{k}" in mc]
            if not az:
                continue
            v = np.mean([mc[f"case{n}_{k}"] for k in az], axis=0)
            e = np.sqrt(np.sum([mc[f"case{n}_{k}_stderr"] ** 2 for k in az], axis=0)) / len(az)
            h = dio.montecarlo_errorbar(axes[0, j], mc["s"], v, e, col, label=None if upper else label)
            if not upper:   # one legend entry (in the side wall's legend) for all the Monte Carlo markers
                upper.append(h)
            if f is not None:
                ref = np.mean([f[k] for k in az], axis=0)   # the same azimuths of the reference level
                h = dio.montecarlo_errorbar(axes[1, j], mc["s"], v - np.interp(mc["s"], f["r"], ref), e, col,
                                            label=f"case {n}: Monte Carlo − {best}, bars ±{dio.MC_SIGMAS}σ", ms=2.5)
                if j == 0 or f"case{n}_bottom0" not in mc:
                    lower.append(h)
    return upper, lower


def plot(out, runs, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    best = args.levels[-1]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    styles = {"coarse": ":", "angle": "-.", "order": "--", "space": (0, (5, 1, 1, 1)), "paper": (0, (1, 1)), "fine": "-"}
    for n in args.cases:
        col = f"C{n - 1}"
        f = runs.get((n, best))
        for level in args.levels:
            r = runs.get((n, level))
            if r is None:
                continue
            lw = 1.6 if level == best else 0.9
            lab = f"case {n}, {level} ({level_text(level)})"
            axes[0, 0].plot(r["r"], r["bottom"], linestyle=styles.get(level, "-"), color=col, lw=lw, label=lab)
            axes[0, 1].plot(r["z"], r["side"], linestyle=styles.get(level, "-"), color=col, lw=lw, label=lab)
            if f is not None and level != best:
                axes[1, 0].plot(r["r"], r["bottom"] - f["bottom"], linestyle=styles.get(level, "-"), color=col, lw=0.9, label=lab)
                axes[1, 1].plot(r["z"], r["side"] - f["side"], linestyle=styles.get(level, "-"), color=col, lw=0.9, label=lab)
        axes[0, 0].axhline(CASES[n]["eps_bottom"] * math.exp(-BETA), color=col, lw=0.6, alpha=0.5)
    mc, settings = dio.read_montecarlo(HERE)
    mc_upper, mc_lower = plot_montecarlo(axes, mc, settings, runs.get, args, best) if mc is not None else ([], [])
    if mc_lower:   # room for the legend above the curves
        lo, hi = axes[1, 0].get_ylim()
        axes[1, 0].set_ylim(lo, hi + 0.25 * (hi - lo))
        axes[1, 0].legend(handles=mc_lower, fontsize=7, loc="upper left")
    for a in axes[1, :]:
        if not a.lines and not a.collections:
            a.text(0.5, 0.5, "no other level stored (wall_flux_levels.csv)\nand no Monte Carlo curve for this wall "
                   "(montecarlo.csv)", ha="center", va="center", fontsize=8, color="0.4", transform=a.transAxes)
    axes[0, 0].set_title("bottom wall (thin: uncollided beam alone, eps e^-1)", fontsize=9)
    axes[0, 1].set_title("side wall", fontsize=9)
    axes[0, 0].set_ylabel("q* = q_net / F (mean of phi = 0, 2 pi/3)")
    axes[1, 0].set_ylabel(f"q* - q*_{best}")
    for a in axes[:, 0]:
        a.set_xlabel("r / R")
    for a in axes[:, 1]:
        a.set_xlabel("z / H (beam enters at z = H)")
    for a in axes.flat:
        a.grid(alpha=0.3)
    lines = [h for h in axes[0, 1].get_legend_handles_labels()[0] if h not in mc_upper]
    axes[0, 1].legend(handles=lines + mc_upper, fontsize=6)
    fig.suptitle("Jendoubi et al. (1993) cylinder, R = H = 1 m, beta = 1 1/m, collimated beam F through the top wall", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "jendoubi_cylinder.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", help="path of the dgrte executable")
    ap.add_argument("--out", default=str(HERE), help="folder for results.md and the PNG (default: this folder)")
    ap.add_argument("--work", help="folder for the dgrte runs (kept); default: a temporary folder, removed")
    ap.add_argument("--coarse", action="store_true", help="CTest variant: level `coarse` only (size 0.2, P2, T4), both "
                                                          "cases, exact checks and the comparison with wall_flux.csv")
    ap.add_argument("--cases", nargs="+", type=int, default=list(CASES), choices=list(CASES))
    ap.add_argument("--levels", nargs="+", default=list(LEVELS), choices=list(LEVELS),
                    help="refinement levels (the convergence table needs `fine`)")
    ap.add_argument("--no-write-csv", dest="write_csv", action="store_false",
                    help="write wall_flux.csv (the fine curves) to --out instead of this folder")
    ap.add_argument("--reuse", action="store_true", help="with --work: reuse runs already there whose case.yaml "
                                                         "is unchanged (regenerates the tables without running dgrte)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds allowed per dgrte run")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--plot-only", action="store_true",
                    help="run nothing: redraw jendoubi_cylinder.png (in --out) from the stored wall_flux.csv, "
                         "wall_flux_levels.csv and montecarlo.csv of this folder")
    args = ap.parse_args()
    if args.coarse:
        args.levels = ["coarse"]
    args.levels = sorted(set(args.levels), key=list(LEVELS).index)
    args.cases = sorted(set(args.cases))
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
