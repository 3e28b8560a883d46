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

Besides dg_vs_mc.md, dg_vs_mc.json and dg_vs_mc.png (here), every case folder gets its Monte Carlo
curves, values and standard errors, as `montecarlo.csv` (kim_lee_square: y, G_<phase>, q_<phase>;
jendoubi_cylinder: s, case<n>_<line>; coelho_combustor: omega, line, quantity, x, y, z, value; each
value column followed by its standard error `*_stderr`), which the case's own script overlays on
its plot. `--from-json` writes those CSVs from a stored dg_vs_mc.json without running anything (a
json written before the CSVs existed holds only the curves of dg_vs_mc.png: Kim & Lee G*,
Jendoubi's bottom0 line, Coelho's front q_net and axis G).

  /usr/bin/python3 dg_vs_mc.py [--dgrte PATH] [--rays N] [--paths N] [--no-plot] [--out DIR]
  /usr/bin/python3 dg_vs_mc.py --from-json [dg_vs_mc.json] [--no-plot]
"""
import argparse
import importlib.util
import json
import pathlib
import re
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
VALIDATION = HERE.parent
sys.path.insert(0, str(VALIDATION / "common"))
import dgrte_io as dio  # noqa: E402

BATCHES, SEED = 20, 1
MC_LEVEL = "coarse"      # the DG level whose case (mesh, probes) each Monte Carlo run is built from


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
    case["solver"] = {"method": "montecarlo", "paths": float(args.paths), "batches": BATCHES, "seed": SEED,
                      "probe_rays": float(args.rays)}
    return case


def compare(name, quantity, dg, mc, err):
    dg, mc, err = np.asarray(dg, float), np.asarray(mc, float), np.asarray(err, float)
    scale = max(np.max(np.abs(dg)), 1e-300)
    diff = np.abs(dg - mc)
    z = (dg - mc) / np.maximum(err, 1e-300)
    return {"case": name, "quantity": quantity, "points": int(dg.size), "max_diff": float(np.max(diff) / scale),
            "mean_diff": float(np.mean(diff) / scale), "max_sigma": float(np.max(err) / scale),
            "max_abs_z": float(np.max(np.abs(z))), "within_3sigma": float(np.mean(np.abs(z) < 3))}


def kim_lee(args, dgrte, work, rows, curves, tables):
    kl = load("kim_lee_square", "kim_lee_square")
    cols = {}
    template = dio.load_case(VALIDATION / "kim_lee_square" / "kim_lee_square.yaml")
    H = kl.geo_height()
    stored = dio.read_csv_columns(VALIDATION / "kim_lee_square" / "centre_line.csv")
    E = dio.SIGMA * 1000.0 ** 4
    for phase in ("iso", "F2", "B1"):
        case = kl.make_case(template, phase, MC_LEVEL, [], H)
        case["output"]["probes"] = [p for p in case["output"]["probes"] if p["name"] == "centre"]
        run = dio.run_case(dgrte, montecarlo(case, args), work / f"kimlee_{phase}", base=VALIDATION / "kim_lee_square", timeout=1800)
        c = run.probe("centre")
        G, Ge = c["G"] / (4 * E), c["G_stderr"] / (4 * E)
        q, qe = c["qy"] / E, c["qy_stderr"] / E
        rows.append(compare(f"Kim & Lee {phase}", "G* centre line", stored[f"G_{phase}"], G, Ge))
        rows.append(compare(f"Kim & Lee {phase}", "q* centre line", stored[f"q_{phase}"], q, qe))
        curves[f"kimlee_{phase}"] = {"x": c["y"].tolist(), "dg": stored[f"G_{phase}"].tolist(), "mc": G.tolist(), "err": Ge.tolist()}
        cols.setdefault("y", c["y"].tolist())
        cols.update({f"G_{phase}": G.tolist(), f"G_{phase}_stderr": Ge.tolist(), f"q_{phase}": q.tolist(),
                     f"q_{phase}_stderr": qe.tolist()})
    tables["kim_lee_square"] = {"mesh": mesh_text(kl), "columns": cols}


def jendoubi(args, dgrte, work, rows, curves, tables):
    jd = load("jendoubi_cylinder", "jendoubi_cylinder")
    cols = {}
    template = dio.load_case(VALIDATION / "jendoubi_cylinder" / "jendoubi_cylinder.yaml")
    R, H = jd.geo_constants()
    stored = jd.read_stored_fine(VALIDATION / "jendoubi_cylinder" / "wall_flux.csv")
    for n in (1, 2):
        case = jd.make_case(template, n, MC_LEVEL, R, H, work)
        run = dio.run_case(dgrte, montecarlo(case, args), work / f"jendoubi{n}", base=VALIDATION / "jendoubi_cylinder", timeout=1800)
        for line in ("bottom0", "bottom2", "side0", "side2"):
            p = run.probe(line)
            mc, err = p["q_net"] / jd.F_BEAM, p["q_net_stderr"] / jd.F_BEAM
            dg = stored[n][line]
            rows.append(compare(f"Jendoubi case {n}", f"q*_net {line}", dg, mc, err))
            s = p["distance"] / (R if line.startswith("bottom") else H)   # r/R on the bottom, z/H on the side
            if "s" in cols and not np.allclose(s, cols["s"], atol=1e-6):
                raise RuntimeError(f"Jendoubi {line}: probe positions differ from the other lines")
            cols.setdefault("s", s.tolist())
            cols.update({f"case{n}_{line}": mc.tolist(), f"case{n}_{line}_stderr": err.tolist()})
            if line == "bottom0":
                curves[f"jendoubi{n}"] = {"x": (p["distance"] / R).tolist(), "dg": dg.tolist(), "mc": mc.tolist(), "err": err.tolist()}
    tables["jendoubi_cylinder"] = {"mesh": mesh_text(jd), "columns": cols}


def coelho(args, dgrte, work, rows, curves, tables):
    co = load("coelho_combustor", "coelho_combustor")
    table = []
    template = dio.load_case(VALIDATION / "coelho_combustor" / "coelho_combustor.yaml")
    for omega in (0.0, 0.5):
        case = co.make_case(template, MC_LEVEL, omega)
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
            table += [[omega, name, quantity, float(x), float(y), float(z), float(v), float(e)]
                      for x, y, z, v, e in zip(p["x"], p["y"], p["z"], p[quantity], p[f"{quantity}_stderr"])]
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
    tables["coelho_combustor"] = {"mesh": mesh_text(co), "rows": table}


# ---------------------------------------------------------------------------------------------
# The Monte Carlo curves of each case folder (montecarlo.csv)

def mesh_text(module):
    return f"mesh size {module.LEVELS[MC_LEVEL][0]:g}"


def tables_from_curves(curves):
    """The case tables from the `curves` of a dg_vs_mc.json written before the tables were stored: the
    curves of dg_vs_mc.png only (Kim & Lee G*, Jendoubi bottom0, Coelho front q_net and axis G). The
    Coelho points' coordinates are rebuilt from coelho_combustor.py's line definitions (the json holds
    the distance along the line) and checked against that distance."""
    tables = {}
    kl = {k[len("kimlee_"):]: c for k, c in curves.items() if k.startswith("kimlee_")}
    if kl:
        cols = {"y": next(iter(kl.values()))["x"]}
        for phase, c in kl.items():
            if not np.allclose(c["x"], cols["y"]):
                raise ValueError(f"kimlee_{phase}: positions differ from the other phases")
            cols.update({f"G_{phase}": c["mc"], f"G_{phase}_stderr": c["err"]})
        tables["kim_lee_square"] = {"mesh": mesh_text(load("kim_lee_square", "kim_lee_square")), "columns": cols}
    jd = {int(k[len("jendoubi"):]): c for k, c in curves.items() if re.fullmatch(r"jendoubi\d+", k)}
    if jd:
        cols = {"s": next(iter(jd.values()))["x"]}
        for n, c in sorted(jd.items()):
            if not np.allclose(c["x"], cols["s"]):
                raise ValueError(f"jendoubi{n}: positions differ from the other case")
            cols.update({f"case{n}_bottom0": c["mc"], f"case{n}_bottom0_stderr": c["err"]})
        tables["jendoubi_cylinder"] = {"mesh": mesh_text(load("jendoubi_cylinder", "jendoubi_cylinder")),
                                       "columns": cols}
    co_keys = [k for k in curves if re.fullmatch(r"coelho[0-9.]+_\w+", k)]
    if co_keys:
        co = load("coelho_combustor", "coelho_combustor")
        table = []
        for k in co_keys:
            m = re.fullmatch(r"coelho([0-9.]+)_(\w+)", k)
            omega, name = float(m.group(1)), m.group(2)
            quantity = "q_net" if name in co.WALL_LINES else "G"
            a, b, npts = co.WALL_LINES[name][1:] if name in co.WALL_LINES else co.VOLUME_LINES[name]
            a, b = np.asarray(a, float), np.asarray(b, float)
            t = np.linspace(0.0, 1.0, npts)
            xyz = a + np.outer(t, b - a)
            c = curves[k]
            if len(c["x"]) != npts or not np.allclose(t * np.linalg.norm(b - a), c["x"], atol=1e-6):
                raise ValueError(f"{k}: the distances along the line do not match coelho_combustor.py's `{name}` line")
            table += [[omega, name, quantity, *map(float, p), float(v), float(e)] for p, v, e in zip(xyz, c["mc"], c["err"])]
        tables["coelho_combustor"] = {"mesh": mesh_text(co), "rows": table}
    return tables


def write_case_csvs(tables, settings, root=VALIDATION):
    """validation/<case>/montecarlo.csv for every case in `tables`; returns the paths written."""
    common = (f"Monte Carlo reference of this case: dgrte `solver.method: montecarlo` on the case that this folder's "
              f"script builds at level `{MC_LEVEL}` ({{mesh}}, same probes), with the same media, walls and beams. "
              "Properties are piecewise constant, so Monte Carlo has no discretisation error here. "
              "Columns *_stderr: the standard error (1 sigma) of the value, from the spread of the "
              f"{settings.get('batches', BATCHES)} independent batches. Written by validation/montecarlo/dg_vs_mc.py.")
    written = []
    for folder, t in tables.items():
        head = common.replace("{mesh}", t["mesh"])
        if folder == "kim_lee_square":
            what = ("Kim & Lee square, centre line x = 0.5: y [m]; G_<phase> = G / (4 E_bw), q_<phase> = q_y / E_bw "
                    "(the quantities of centre_line.csv).")
        elif folder == "jendoubi_cylinder":
            what = ("Jendoubi cylinder: q* = q_net / F (F = pi W/m^2, the beam flux), column case<n>_<line> as in "
                    "wall_flux.csv; s = r/R on the bottom lines, z/H on the side lines.")
        else:
            what = ("Coelho combustor: one row per probe point; omega the albedo, line and quantity as in "
                    "fine_lines_omega*.csv (q_net [W/m^2] on the wall lines, G [W/m^2], divq [W/m^3] on the volume "
                    "lines), x, y, z [m] the point.")
        if "columns" in t:
            cols = t["columns"]
            header = list(cols)
            rows = [[cols[h][i] for h in header] for i in range(len(cols[header[0]]))]
        else:
            header = ["omega", "line", "quantity", "x", "y", "z", "value", "value_stderr"]
            rows = [[f"{r[0]:g}", r[1], r[2]] + r[3:] for r in t["rows"]]
        path = pathlib.Path(root) / folder / dio.MONTECARLO_CSV
        dio.write_montecarlo_csv(path, [what, head], settings, header, rows)
        written.append(path)
    return written


def settings_text(settings):
    return (f"Monte Carlo {settings['paths']} paths, {settings['probe_rays']} rays per probe point, "
            f"{settings['batches']} batches")


def settings_from_md(path, args):
    """The Monte Carlo settings of an older dg_vs_mc.json, from the header of dg_vs_mc.md beside it (else the
    command line's --paths and --rays)."""
    s = {"paths": f"{args.paths:g}", "probe_rays": f"{args.rays:g}", "batches": BATCHES, "seed": SEED}
    if path.exists():
        m = re.search(r"Monte Carlo (\S+) paths, (\S+) rays per probe point, (\d+) batches", path.read_text())
        if m:
            s.update(paths=f"{float(m.group(1)):g}", probe_rays=f"{float(m.group(2)):g}", batches=int(m.group(3)))
    return s


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
    ap.add_argument("--from-json", nargs="?", const=str(HERE / "dg_vs_mc.json"), metavar="JSON",
                    help="run nothing: write each case folder's montecarlo.csv (and, unless --no-plot, dg_vs_mc.png in "
                         "--out) from a stored dg_vs_mc.json (default: the one here)")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    if args.from_json:
        path = pathlib.Path(args.from_json)
        data = json.loads(path.read_text())
        settings = data.get("settings") or settings_from_md(path.with_suffix(".md"), args)
        tables = data.get("tables") or tables_from_curves(data["curves"])
        for p in write_case_csvs(tables, settings):
            print(f"wrote {p}")
        if not args.no_plot:
            plot(out, data["curves"])
        return
    dgrte = dio.find_dgrte(args.dgrte)
    rows, curves, tables = [], {}, {}
    settings = {"paths": f"{args.paths:g}", "probe_rays": f"{args.rays:g}", "batches": BATCHES, "seed": SEED}
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for name in args.cases:
            {"kim_lee": kim_lee, "jendoubi": jendoubi, "coelho": coelho}[name](args, dgrte, work, rows, curves, tables)
    seconds = time.time() - t0
    table = dio.markdown_table(["case", "quantity", "points", "max abs(DG - MC) / max", "mean", "max sigma_MC / max", "max abs z",
                                "within 3 sigma"],
                               [[r["case"], r["quantity"], r["points"], dio.pct(r["max_diff"]), dio.pct(r["mean_diff"]),
                                 dio.pct(r["max_sigma"]), f"{r['max_abs_z']:.1f}", f"{100 * r['within_3sigma']:.0f} %"] for r in rows])
    text = "\n".join(["# DG against Monte Carlo on the literature cases", "",
                      f"`dg_vs_mc.py`, {time.strftime('%Y-%m-%d')}, {seconds:.0f} s; {settings_text(settings)}; "
                      "DG: the stored `fine` results of each case folder. z = (DG - MC) / sigma_MC: "
                      "|z| < 3 means DG agrees with the exact solution to within the Monte Carlo noise.", "", table, ""])
    (out / "dg_vs_mc.md").write_text(text)
    (out / "dg_vs_mc.json").write_text(json.dumps({"settings": settings, "rows": rows, "curves": curves, "tables": tables},
                                                  indent=1))
    for p in write_case_csvs(tables, settings):
        print(f"wrote {p}")
    if not args.no_plot:
        plot(out, curves)
    print(text)


if __name__ == "__main__":
    main()
