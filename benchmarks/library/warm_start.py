"""Warm start of a kept solver (issue 29, item 5): a CFD-like loop of 10 calls on the quick-start
furnace (docs/examples/furnace.yaml: gray, scattering, gray walls, GMRES), the gas temperature
perturbed by 1-5 % per call. Each call is solved twice, side by side: by a kept dgrte.Solver (warm:
it starts from the last call's solution) and by a fresh one (cold: from zero). Records outer
iterations and seconds of each, and how far the two answers differ (relative max of G and div q),
against the solver tolerance.

  PYTHONPATH=build/python OMP_WAIT_POLICY=passive /usr/bin/python3 benchmarks/library/warm_start.py \
      [--out benchmarks/results/warm-start-DATE.json]

Exit status 1 if a warm answer differs from the cold one by more than 100 x the outer tolerance.
"""
import argparse
import datetime
import json
import os
import pathlib
import statistics
import sys
import time

import numpy as np

import dgrte

root = pathlib.Path(__file__).resolve().parents[2]
parser = argparse.ArgumentParser()
parser.add_argument("--case", default=str(root / "docs" / "examples" / "furnace.yaml"))
parser.add_argument("--calls", type=int, default=10)
parser.add_argument("--out", default=None)
args = parser.parse_args()

warm = dgrte.Solver(args.case)
first = warm.solve()
T0 = first.fields["temperature"].copy()
z = first.fields["z"]
rng = np.random.default_rng(29)
rows = []
T = T0.copy()
for call in range(args.calls):
    # 1-5 % per call, varying along the furnace (a CFD field between two radiation calls).
    amplitude = rng.uniform(0.01, 0.05) * rng.choice([-1, 1])
    T = T * (1 + amplitude * (0.5 + 0.5 * np.cos(np.pi * z / 2 + call)))
    warm.set_field("temperature", T)
    t = time.perf_counter()
    w = warm.solve()
    warm_seconds = time.perf_counter() - t
    cold_solver = dgrte.Solver(args.case)
    cold_solver.set_field("temperature", T)
    t = time.perf_counter()
    c = cold_solver.solve()
    cold_seconds = time.perf_counter() - t
    diff = {q: float(np.max(np.abs(w.fields[q] - c.fields[q])) / np.max(np.abs(c.fields[q]))) for q in ("G", "divq")}
    row = {"call": call + 1, "max_change": abs(amplitude),
           "warm": {"outer_iterations": w.summary["solver"]["outer_iterations"],
                    "transport_sweeps": w.summary["solver"]["transport_sweeps"], "seconds": warm_seconds,
                    "solve_seconds": w.summary["timing"]["solve_seconds"]},
           "cold": {"outer_iterations": c.summary["solver"]["outer_iterations"],
                    "transport_sweeps": c.summary["solver"]["transport_sweeps"], "seconds": cold_seconds,
                    "solve_seconds": c.summary["timing"]["solve_seconds"]},
           "relative_difference": diff}
    rows.append(row)
    print(f"call {call + 1:2d}: T change up to {abs(amplitude) * 100:.1f} %: warm {row['warm']['outer_iterations']:3d} outer "
          f"iterations {warm_seconds:6.2f} s, cold {row['cold']['outer_iterations']:3d} {cold_seconds:6.2f} s; "
          f"G differs {diff['G']:.1e}, div q {diff['divq']:.1e}")

tol = first.summary["solver"]["outer_tolerance"]
result = {
    "benchmark": "warm_start",
    "date": datetime.date.today().isoformat(),
    "case": os.path.relpath(args.case, root),
    "cpus": os.cpu_count(),
    "threads": os.environ.get("OMP_NUM_THREADS", ""),
    "elements": first.summary["mesh"]["elements"], "order": first.summary["order"], "directions": first.summary["directions"],
    "outer": first.summary["solver"]["outer"], "outer_tolerance": tol,
    "calls": rows,
    "median_warm_outer_iterations": statistics.median(r["warm"]["outer_iterations"] for r in rows),
    "median_cold_outer_iterations": statistics.median(r["cold"]["outer_iterations"] for r in rows),
    "median_warm_transport_sweeps": statistics.median(r["warm"]["transport_sweeps"] for r in rows),
    "median_cold_transport_sweeps": statistics.median(r["cold"]["transport_sweeps"] for r in rows),
    "median_warm_seconds": statistics.median(r["warm"]["seconds"] for r in rows),
    "median_cold_seconds": statistics.median(r["cold"]["seconds"] for r in rows),
    "max_relative_difference": max(max(r["relative_difference"].values()) for r in rows),
    "bound": 100 * tol,
}
result["pass"] = result["max_relative_difference"] <= result["bound"]
print(json.dumps({k: v for k, v in result.items() if k != "calls"}, indent=1))
if args.out:
    tmp = pathlib.Path(args.out + ".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(args.out)
sys.exit(0 if result["pass"] else 1)
