#!/usr/bin/env python3
"""One-direction sweeps as a user sees them: `dgrte run` on a `directions:` case with
`solver.inner: sweep`, reading `solves[]` of summary.json (prints one JSON document).

  /usr/bin/python3 benchmarks/sweep/directions_benchmark.py --dgrte build/src/app/dgrte [--out FILE] [--check]

The case (issue 30, item 5): cube [-1, 1]^3 meshed at h 0.125 (19,404 tets), P3 (388,080 DOFs),
kappa = 1 1/m, I_b = 1, cold black walls, four directions in four octants. solves[].seconds covers
the right-hand side, the sweep plan, the sweep and the residual check; the JSON keeps each part.
Medians over the directions of --repeat runs, 2 OpenMP threads, OMP_WAIT_POLICY=passive. --check
exits 1 when the median per-direction time misses the target (0.0075 s).
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
TARGET_SECONDS = 0.0075
PARTS = ["rhs_seconds", "plan_seconds", "sweep_seconds", "check_seconds"]


def case_text(size, order):
    return (f"mesh: {{geo: {CUBE}, size: {size}}}\norder: {order}\n"
            "directions:\n  - [0.6, 0.5, 0.6245]\n  - [-0.3, 0.5, 0.8124]\n  - [0.9, -0.2, 0.3873]\n  - [0.2, 0.2, -0.9592]\n"
            "media: {\"*\": {kappa: \"1\", Ib: \"1\"}}\n"
            "boundaries: {\"*\": {type: black, temperature: 0}}\n"
            "solver: {inner: sweep}\noutput: {vtk: false}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", required=True)
    ap.add_argument("--size", type=float, default=0.125)
    ap.add_argument("--order", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    solves, summary = [], None
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "case.yaml"
        f.write_text(case_text(a.size, a.order))
        env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
        for _ in range(a.repeat):
            out = Path(tmp) / "out"
            subprocess.run([a.dgrte, "run", str(f), "-o", str(out), "-q"], check=True, env=env,
                           stderr=subprocess.DEVNULL)
            summary = json.loads((out / "summary.json").read_text())
            solves += summary["solves"]
    median = statistics.median(s["seconds"] for s in solves)
    doc = {"benchmark": "directions-sweep", "elements": summary["mesh"]["elements"], "order": a.order,
           "dofs": summary["dofs"], "directions_per_run": summary["directions"], "repeat": a.repeat,
           "threads": int(env["OMP_NUM_THREADS"]), "omp_wait_policy": "passive",
           "seconds_per_direction_median": median,
           "ns_per_dof": median / summary["dofs"] * 1e9,
           "parts_median": {p: statistics.median(s[p] for s in solves) for p in PARTS},
           "residual_from": sorted({s["residual_from"] for s in solves}),
           "relative_residual_max": max(s["relative_residual"] for s in solves),
           "target_seconds_per_direction": TARGET_SECONDS, "meets_target": median <= TARGET_SECONDS,
           "solves": solves}
    text = json.dumps(doc, indent=1) + "\n"
    if a.out:
        tmp_out = Path(a.out + ".tmp")
        tmp_out.write_text(text)
        tmp_out.replace(a.out)
    print(text, end="")
    if a.check and not doc["meets_target"]:
        print(f"directions_benchmark: {median:.4f} s per direction > target {TARGET_SECONDS}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
