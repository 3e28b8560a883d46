#!/usr/bin/env python3
"""Gray-solver benchmark: source iteration against GMRES on the direction coupling, and the
time of a gray solve, through `dgrte run` (reads summary.json; prints one JSON document).

  /usr/bin/python3 benchmarks/gray/gray_benchmark.py --dgrte build/src/app/dgrte [--quick]

Cases: cube [-1, 1]^3 of cold black walls (300 K) around an emitting, scattering medium at
1000 K, LQ_N S6, P2; extinction beta = 10 1/m (optical side 20), albedo 0.9 and 0.99; outer
tolerance 1e-6. And the S8 / P3 gray solve of the issue on ~19k tets (albedo 0.9, beta = 1), with
--compare-inner also with Bi-CGSTAB inner solves instead of sweeps. And
threads over ordinates against threads over the elements of each sweep level (solver.threads), the
same S8 / P3 case on a coarser mesh, side by side in the same run.
Timings are medians of --repeat runs, OMP_WAIT_POLICY=passive.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CUBE = ROOT / "validation" / "mms" / "cube.geo"


def case(size, order, angular, beta, albedo, outer, tol, threads="directions", inner="sweep"):
    kappa, sigma = beta * (1 - albedo), beta * albedo
    # Bi-CGSTAB inner solves to rtol 1e-8 (partial block Jacobi): the one-direction benchmark's bar.
    inner_keys = "inner: sweep" if inner == "sweep" else "inner: bicgstab, rtol: 1.0e-8"
    return (f"mesh: {{geo: {CUBE}, size: {size}}}\norder: {order}\nangular: {angular}\n"
            f"media: {{\"*\": {{kappa: \"{kappa}\", scattering: \"{sigma}\", temperature: \"1000\"}}}}\n"
            f"boundaries: {{\"*\": {{type: black, temperature: 300}}}}\n"
            f"solver: {{outer: {outer}, outer_tolerance: {tol}, outer_max_iterations: 5000, threads: {threads}, {inner_keys}}}\n"
            f"output: {{vtk: false}}\n")


def run(dgrte, text, repeat):
    times, summary = [], None
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "case.yaml"
        f.write_text(text)
        for _ in range(repeat):
            out = Path(tmp) / "out"
            env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
            subprocess.run([dgrte, "run", str(f), "-o", str(out), "-q"], check=True, env=env)
            summary = json.loads((out / "summary.json").read_text())
            times.append(summary["timing"]["solve_seconds"])
    s = summary["solver"]
    return {"elements": summary["mesh"]["elements"], "dofs": summary["dofs"], "ordinates": summary["directions"],
            "outer": s["outer"], "outer_iterations": s["outer_iterations"], "transport_sweeps": s["transport_sweeps"],
            "solve_seconds_median": statistics.median(times), "solve_seconds_all": times,
            "grind_ns_per_dof_ordinate_sweep": summary["grind_ns_per_dof"],
            "relative_energy_imbalance": summary["energy_balance"]["relative_imbalance"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", required=True)
    ap.add_argument("--quick", action="store_true", help="tiny meshes, one repeat (smoke test)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compare-inner", action="store_true",
                    help="also solve the S8 / P3 case with Bi-CGSTAB inner solves (about 10 min on 2 cores)")
    a = ap.parse_args()
    repeat = 1 if a.quick else a.repeat
    size = 0.6 if a.quick else 0.3
    res = {"benchmark": "gray", "outer_methods": [], "s8_p3": None, "threads_over": []}
    for albedo in (0.9, 0.99):
        for outer in ("source-iteration", "gmres"):
            r = run(a.dgrte, case(size, 2, "{quadrature: sn, order: 6}", 10.0, albedo, outer, 1e-6), repeat)
            r.update({"albedo": albedo, "beta": 10.0})
            res["outer_methods"].append(r)
    for threads in ("directions", "levels"):
        r = run(a.dgrte, case(0.6 if a.quick else 0.2, 3, "{quadrature: sn, order: 8}", 1.0, 0.9, "gmres", 1e-6, threads), repeat)
        r.update({"threads": threads, "omp_threads": int(os.environ.get("OMP_NUM_THREADS", "2"))})
        res["threads_over"].append(r)
    if not a.quick:
        res["s8_p3"] = run(a.dgrte, case(0.125, 3, "{quadrature: sn, order: 8}", 1.0, 0.9, "gmres", 1e-6), 1)
        if a.compare_inner:
            r = run(a.dgrte, case(0.125, 3, "{quadrature: sn, order: 8}", 1.0, 0.9, "gmres", 1e-6, inner="bicgstab"), 1)
            r["sweep_speedup"] = r["solve_seconds_median"] / res["s8_p3"]["solve_seconds_median"]
            res["s8_p3_bicgstab_inner"] = r
    json.dump(res, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
