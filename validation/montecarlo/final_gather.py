#!/usr/bin/env python3
"""The ray-traced final gather (output.final_gather) against exact and Monte Carlo references.

1. Isothermal cube, kappa = 1, cold black walls (exact solid-angle integrals): the wall flux on the
   line x = 0, y = 0.5 and the mean flux of the wall, from DG with T4 and T6 sets (P2), without and
   with the gather.
2. Coelho's combustor (validation/coelho_combustor, omega = 0.5, scattering; the `coarse` DG level:
   h 2, P2, S8) against Monte Carlo on the same case: q_net on the wall lines, without and with the
   gather, and the cost of the gather.

  /usr/bin/python3 final_gather.py [--dgrte PATH] [--rays N] [--mc-paths N] [--mc-rays N] [--out DIR]
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
VALIDATION = HERE.parent
sys.path.insert(0, str(VALIDATION / "common"))
sys.path.insert(0, str(VALIDATION / "isothermal_cube"))
import dgrte_io as dio  # noqa: E402
import isothermal_cube as cube  # noqa: E402
from dg_vs_mc import load, montecarlo  # noqa: E402


def rel(v, ref):
    v, ref = np.asarray(v, float), np.asarray(ref, float)
    return float(np.max(np.abs(v - ref)) / np.max(np.abs(ref)))


def cube_part(args, dgrte, work, rows):
    import montecarlo as mcv
    exact_mean = mcv.face_average_qin(1.0)
    for label, order in (("T4", 4), ("T6", 6)):
        res = {}
        for gather in (False, True):
            case = {"mesh": {"geo": str(VALIDATION / "isothermal_cube" / "cube.geo"), "size": 0.2}, "order": 2,
                    "angular": {"quadrature": "tn", "order": order},
                    "media": {"*": {"kappa": "1", "Ib": "1"}}, "boundaries": {"*": {"type": "black", "temperature": 0}},
                    "output": {"vtk": False, "probes": [{"name": "wall", "from": [0, 0.5, 0.025], "to": [0, 0.5, 0.975], "points": 20,
                                                         "wall": "xmin"}]}}
            case["output"]["final_gather"] = gather_settings(args) if gather else False
            run = dio.run_case(dgrte, case, work / f"cube_{label}_{gather}", timeout=1800)
            w = run.probe("wall")
            exact = cube.exact_qin(np.stack([w["x"], w["y"], w["z"]], axis=1), 1.0)
            walls = run.summary["walls"]
            mean = np.array([walls[g]["q_in_W"] / walls[g]["area"] for g in walls])
            res[gather] = (rel(w["q_in"], exact), float(np.max(np.abs(mean / exact_mean - 1))),
                           run.summary["timing"].get("gather_seconds", 0.0), run.summary["timing"]["solve_seconds"],
                           run.summary.get("final_gather", {}).get("rays_per_point", {}).get("mean", 0.0))
        rows.append({"case": f"isothermal cube kappa 1, {label}, P2, h 0.2", "reference": "exact",
                     "line_dg": res[False][0], "line_gather": res[True][0], "walls_dg": res[False][1], "walls_gather": res[True][1],
                     "gather_seconds": res[True][2], "dg_seconds": res[False][3], "rays_per_point": res[True][4]})


def coelho_part(args, dgrte, work, rows):
    """Coelho omega 0.5, DG coarse with and without the gather against Monte Carlo; returns the cost line."""
    class MC:  # the Monte Carlo settings dg_vs_mc.montecarlo reads
        paths, rays = args.paths, args.rays_mc
    co = load("coelho_combustor", "coelho_combustor")
    template = dio.load_case(VALIDATION / "coelho_combustor" / "coelho_combustor.yaml")
    base = co.make_case(template, "coarse", 0.5)
    mc_run = dio.run_case(dgrte, montecarlo(base, MC), work / "coelho_mc", base=VALIDATION / "coelho_combustor", timeout=3600)
    runs = {}
    for gather in (False, True):
        case = dict(base)
        case["output"] = dict(base["output"])
        case["output"]["final_gather"] = gather_settings(args) if gather else False
        runs[gather] = dio.run_case(dgrte, case, work / f"coelho_{gather}", base=VALIDATION / "coelho_combustor", timeout=3600)
    for name in co.WALL_LINES:
        mc = mc_run.probe(name)
        rows.append({"case": f"Coelho omega 0.5, {name} (DG h 2, P2, S8)", "reference": "Monte Carlo",
                     "line_dg": rel(runs[False].probe(name)["q_net"], mc["q_net"]),
                     "line_gather": rel(runs[True].probe(name)["q_net"], mc["q_net"]),
                     "sigma": float(np.max(mc["q_net_stderr"]) / np.max(np.abs(mc["q_net"])))})
    fg = runs[True].summary["final_gather"]
    for r in rows[-len(co.WALL_LINES):]:
        r.update(dg_seconds=runs[False].summary["timing"]["solve_seconds"], gather_seconds=fg["seconds"],
                 rays_per_point=fg["rays_per_point"]["mean"])
    return (f"Coelho: DG solve {runs[False].summary['timing']['solve_seconds']:.1f} s; gather {fg['seconds']:.1f} s for "
            f"{fg['receiver_points']} points x {fg['rays_per_point']['mean']:.0f} rays on average ({fg['rays_per_second']:.3g} rays/s, "
            f"{fg['segments'] / fg['rays']:.1f} elements per ray)")


def gather_settings(args):
    """output.final_gather: its defaults (adaptive rays), or a fixed count with --rays."""
    return {"rays": args.rays} if args.rays else {}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte")
    ap.add_argument("--rays", type=int, default=0, help="a fixed number of rays per point (default: the gather's own tolerance)")
    ap.add_argument("--paths", type=float, default=4e6, help="Monte Carlo paths (reference)")
    ap.add_argument("--mc-rays", dest="rays_mc", type=float, default=4e4)
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    dgrte = dio.find_dgrte(args.dgrte)
    rows = []
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        cube_part(args, dgrte, work, rows)
        cost = coelho_part(args, dgrte, work, rows)
    seconds = time.time() - t0
    table = dio.markdown_table(["case", "reference", "line: DG", "line: gathered", "wall means: DG", "wall means: gathered", "sigma_MC / max",
                                "DG solve [s]", "gather [s]", "rays per point"],
                               [[r["case"], r["reference"], dio.pct(r["line_dg"]), dio.pct(r["line_gather"]),
                                 dio.pct(r["walls_dg"]) if "walls_dg" in r else "", dio.pct(r["walls_gather"]) if "walls_gather" in r else "",
                                 dio.pct(r["sigma"]) if "sigma" in r else "", f"{r['dg_seconds']:.2f}", f"{r['gather_seconds']:.2f}",
                                 f"{r['rays_per_point']:.0f}"] for r in rows])
    cube_cost = "; ".join(f"{r['case']}: DG {r['dg_seconds']:.1f} s, gather {r['gather_seconds']:.1f} s" for r in rows if "walls_dg" in r)
    text = "\n".join(["# Final gather against exact and Monte Carlo references", "",
                      f"`final_gather.py`, {time.strftime('%Y-%m-%d')}, {seconds:.0f} s, "
                      f"{f'{args.rays} rays per point' if args.rays else 'the gather defaults (tolerance 0.005, 128 to 4096 rays per point)'}. "
                      "Errors: max |value - "
                      "reference| over the line / max |reference| (cube lines: 20 points of q_in on x = 0; wall means: the six walls' "
                      "mean q_in against the exact face average; Coelho: q_net on each wall line against Monte Carlo, whose own sigma "
                      "is the last column).", "", table, "", f"Cost: {cube_cost}. {cost}.", ""])
    out = pathlib.Path(args.out)
    (out / "final_gather.md").write_text(text)
    (out / "final_gather.json").write_text(json.dumps(rows, indent=1))
    print(text)


if __name__ == "__main__":
    main()
