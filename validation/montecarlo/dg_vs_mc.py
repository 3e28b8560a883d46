#!/usr/bin/env python3
"""DG against Monte Carlo on the literature cases that have no closed form: Kim & Lee's square,
Jendoubi's cylinder and Coelho's combustor (the folders next to this one).

Each case is built by that folder's own script (`make_case`), switched to `solver.method:
montecarlo` (the angular set dropped; mesh, media, walls, beams and probes unchanged), and its probe
lines and wall powers are compared with the DG results stored there (the `fine` level of each
case: centre_line.csv, wall_flux.csv, fine_lines_omega*.csv, fine_walls_omega*.csv). Properties are
piecewise constant in every case, so the Monte Carlo answer has no discretisation error: the table
gives |DG - MC| (max and mean over each line, relative to the line's maximum) beside the Monte Carlo
standard error, and z = (DG - MC) / sigma_MC.

  /usr/bin/python3 dg_vs_mc.py [--dgrte PATH] [--rays N] [--paths N] [--no-plot] [--out DIR]
"""
import argparse
import importlib.util
import json
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
VALIDATION = HERE.parent
sys.path.insert(0, str(VALIDATION / "common"))
import dgrte_io as dio  # noqa: E402


def load(folder, module):
    sys.path.insert(0, str(VALIDATION / folder))
    spec = importlib.util.spec_from_file_location(module, VALIDATION / folder / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def montecarlo(case, args):
    case = dict(case)
    case.pop("angular", None)
    case.pop("order", None)
    case["solver"] = {"method": "montecarlo", "paths": float(args.paths), "batches": 20, "seed": 1, "probe_rays": float(args.rays)}
    return case


def compare(name, quantity, dg, mc, err):
    dg, mc, err = np.asarray(dg, float), np.asarray(mc, float), np.asarray(err, float)
    scale = max(np.max(np.abs(dg)), 1e-300)
    diff = np.abs(dg - mc)
    z = (dg - mc) / np.maximum(err, 1e-300)
    return {"case": name, "quantity": quantity, "points": int(dg.size), "max_diff": float(np.max(diff) / scale),
            "mean_diff": float(np.mean(diff) / scale), "max_sigma": float(np.max(err) / scale),
            "max_abs_z": float(np.max(np.abs(z))), "within_3sigma": float(np.mean(np.abs(z) < 3))}


def kim_lee(args, dgrte, work, rows, curves):
    kl = load("kim_lee_square", "kim_lee_square")
    template = dio.load_case(VALIDATION / "kim_lee_square" / "kim_lee_square.yaml")
    H = kl.geo_height()
    stored = dio.read_csv_columns(VALIDATION / "kim_lee_square" / "centre_line.csv")
    E = dio.SIGMA * 1000.0 ** 4
    for phase in ("iso", "F2", "B1"):
        case = kl.make_case(template, phase, "coarse", [], H)
        case["output"]["probes"] = [p for p in case["output"]["probes"] if p["name"] == "centre"]
        run = dio.run_case(dgrte, montecarlo(case, args), work / f"kimlee_{phase}", base=VALIDATION / "kim_lee_square", timeout=1800)
        c = run.probe("centre")
        G, Ge = c["G"] / (4 * E), c["G_stderr"] / (4 * E)
        q, qe = c["qy"] / E, c["qy_stderr"] / E
        rows.append(compare(f"Kim & Lee {phase}", "G* centre line", stored[f"G_{phase}"], G, Ge))
        rows.append(compare(f"Kim & Lee {phase}", "q* centre line", stored[f"q_{phase}"], q, qe))
        curves[f"kimlee_{phase}"] = {"x": c["y"].tolist(), "dg": stored[f"G_{phase}"].tolist(), "mc": G.tolist(), "err": Ge.tolist()}


def jendoubi(args, dgrte, work, rows, curves):
    jd = load("jendoubi_cylinder", "jendoubi_cylinder")
    template = dio.load_case(VALIDATION / "jendoubi_cylinder" / "jendoubi_cylinder.yaml")
    R, H = jd.geo_constants()
    stored = jd.read_stored_fine(VALIDATION / "jendoubi_cylinder" / "wall_flux.csv")
    for n in (1, 2):
        case = jd.make_case(template, n, "coarse", R, H, work)
        run = dio.run_case(dgrte, montecarlo(case, args), work / f"jendoubi{n}", base=VALIDATION / "jendoubi_cylinder", timeout=1800)
        for line in ("bottom0", "bottom2", "side0", "side2"):
            p = run.probe(line)
            mc, err = p["q_net"] / jd.F_BEAM, p["q_net_stderr"] / jd.F_BEAM
            dg = stored[n][line]
            rows.append(compare(f"Jendoubi case {n}", f"q*_net {line}", dg, mc, err))
            if line == "bottom0":
                curves[f"jendoubi{n}"] = {"x": (p["distance"] / R).tolist(), "dg": dg.tolist(), "mc": mc.tolist(), "err": err.tolist()}


def coelho(args, dgrte, work, rows, curves):
    co = load("coelho_combustor", "coelho_combustor")
    template = dio.load_case(VALIDATION / "coelho_combustor" / "coelho_combustor.yaml")
    for omega in (0.0, 0.5):
        case = co.make_case(template, "coarse", omega)
        run = dio.run_case(dgrte, montecarlo(case, args), work / f"coelho{omega:g}", base=VALIDATION / "coelho_combustor", timeout=3600)
        lines = {}
        with open(co.fine_csv(omega)) as f:
            for line in f:
                if line.startswith("#") or line.startswith("line,"):
                    continue
                name, quantity, _, _, _, value = line.strip().split(",")
                lines.setdefault((name, quantity), []).append(float(value))
        for (name, quantity), dg in lines.items():
            p = run.probe(name)
            rows.append(compare(f"Coelho omega={omega:g}", f"{quantity} {name}", dg, p[quantity], p[f"{quantity}_stderr"]))
            if (name, quantity) in (("front", "q_net"), ("axis", "G")):
                curves[f"coelho{omega:g}_{name}"] = {"x": p["distance"].tolist(), "dg": dg, "mc": p[quantity].tolist(),
                                                    "err": p[f"{quantity}_stderr"].tolist()}
        walls = {}
        with open(VALIDATION / "coelho_combustor" / f"fine_walls_omega{omega:g}.csv") as f:
            for line in f:
                if line.startswith("#") or line.startswith("group,"):
                    continue
                g, area, q_net = line.strip().split(",")[:3]
                walls[g] = float(q_net)
        mw = run.summary["walls"]
        groups = [g for g in walls if g in mw]
        rows.append(compare(f"Coelho omega={omega:g}", "wall power per group (forward)", [walls[g] for g in groups],
                            [mw[g]["q_net_W"] for g in groups], [mw[g]["q_net_W_stderr"] for g in groups]))


def plot(out, curves):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [("Kim & Lee: G* on the centre line", "y [m]", [k for k in curves if k.startswith("kimlee")]),
              ("Jendoubi: q*_net on the bottom wall", "r / R", [k for k in curves if k.startswith("jendoubi")]),
              ("Coelho: q_net on the front wall [W/m^2]", "z [m]", [k for k in curves if k.endswith("_front")]),
              ("Coelho: G on the axis [W/m^2]", "distance [m]", [k for k in curves if k.endswith("_axis")])]
    fig, ax = plt.subplots(1, 4, figsize=(19, 4.3))
    for a, (title, xlabel, keys) in zip(ax, panels):
        for k in keys:
            c = curves[k]
            line, = a.plot(c["x"], c["dg"], "-", lw=1, label=f"{k} DG")
            a.errorbar(c["x"], c["mc"], yerr=c["err"], fmt="o", ms=2.5, capsize=1.5, color=line.get_color(), label=f"{k} MC")
        a.set(title=title, xlabel=xlabel)
        a.grid(alpha=0.3)
        a.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "dg_vs_mc.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte")
    ap.add_argument("--paths", type=float, default=4e6)
    ap.add_argument("--rays", type=float, default=4e4)
    ap.add_argument("--cases", nargs="+", default=["kim_lee", "jendoubi", "coelho"])
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    dgrte = dio.find_dgrte(args.dgrte)
    rows, curves = [], {}
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for name in args.cases:
            {"kim_lee": kim_lee, "jendoubi": jendoubi, "coelho": coelho}[name](args, dgrte, work, rows, curves)
    seconds = time.time() - t0
    table = dio.markdown_table(["case", "quantity", "points", "max abs(DG - MC) / max", "mean", "max sigma_MC / max", "max abs z",
                                "within 3 sigma"],
                               [[r["case"], r["quantity"], r["points"], dio.pct(r["max_diff"]), dio.pct(r["mean_diff"]),
                                 dio.pct(r["max_sigma"]), f"{r['max_abs_z']:.1f}", f"{100 * r['within_3sigma']:.0f} %"] for r in rows])
    text = "\n".join(["# DG against Monte Carlo on the literature cases", "",
                      f"`dg_vs_mc.py`, {time.strftime('%Y-%m-%d')}, {seconds:.0f} s; Monte Carlo {args.paths:g} paths, {args.rays:g} rays "
                      "per probe point, 20 batches; DG: the stored `fine` results of each case folder. z = (DG - MC) / sigma_MC: "
                      "|z| < 3 means DG agrees with the exact solution to within the Monte Carlo noise.", "", table, ""])
    (out / "dg_vs_mc.md").write_text(text)
    (out / "dg_vs_mc.json").write_text(json.dumps({"rows": rows, "curves": curves}, indent=1))
    if not args.no_plot:
        plot(out, curves)
    print(text)


if __name__ == "__main__":
    main()
