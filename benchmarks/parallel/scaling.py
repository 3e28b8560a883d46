#!/usr/bin/env python3
"""Strong scaling of a distributed `directions:` run (mpirun -np N dgrte run) on this machine: the
manufactured case (validation/mms, one direction, P2, partial block Jacobi) on the cube at ~23k and
~179k tets, solved by

  1 process x 1 thread, 2 processes x 1 thread, and 1 process x 2 threads (OpenMP, for comparison).

Median of --repeats runs of summary.json timing.solve_seconds (the Krylov solve; setup and output
excluded). Reports iterations (they must not change with the rank count), the speedup and the
parallel efficiency, and the ghost values exchanged per operator apply. Prints JSON (--json FILE
writes it). On 2 cores the honest figure is 1 -> 2 processes; what would limit 100 nodes is in
benchmarks/README.md.

  /usr/bin/python3 benchmarks/parallel/scaling.py --dgrte build/src/app/dgrte [--quick]
"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]


def run(dgrte, case, out, ranks, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    cmd = [dgrte, "run", str(case), "-o", str(out), "-q"]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks), "--bind-to", "none"] + cmd
    subprocess.run(cmd, check=True, env=env, capture_output=True, text=True)
    return json.loads((out / "summary.json").read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", required=True)
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.124, 0.059])
    ap.add_argument("--order", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.repeats = [0.35], 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for size in args.sizes:
            case = yaml.safe_load((REPO / "validation" / "mms" / "mms.yaml").read_text())
            case["mesh"] = {"geo": str(REPO / "validation" / "mms" / "cube.geo"), "size": size}
            case["order"] = args.order
            case["output"] = {"vtk": False}
            f = tmp / f"mms_{size}.yaml"
            f.write_text(yaml.safe_dump(case))
            results = {}
            for ranks, threads in [(1, 1), (2, 1), (1, 2)]:
                runs = [run(args.dgrte, f, tmp / f"o_{size}_{ranks}_{threads}_{r}", ranks, threads) for r in range(args.repeats)]
                s = runs[0]
                results[(ranks, threads)] = {
                    "ranks": ranks, "threads": threads, "tets": s["mesh"]["elements"], "dofs": s["dofs"],
                    "solve_seconds_median": statistics.median(r["timing"]["solve_seconds"] for r in runs),
                    "iterations": [d["iterations"] for d in s["solves"]],
                    "l2_error": s["error"]["l2"],
                    "parallel": s.get("parallel")}
            base = results[(1, 1)]["solve_seconds_median"]
            for key, r in results.items():
                r["speedup"] = base / r["solve_seconds_median"]
                r["efficiency"] = r["speedup"] / (key[0] * key[1])
                rows.append(r)
    out = {"benchmark": "parallel_strong_scaling", "date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or platform.machine(),
           "cores": os.cpu_count(), "case": "validation/mms (directions, 1 direction), partial block Jacobi", "order": args.order, "rows": rows}
    text = json.dumps(out, indent=1)
    if args.json:
        pathlib.Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
