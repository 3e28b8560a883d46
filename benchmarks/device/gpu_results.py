#!/usr/bin/env python3
"""Tables from the results.txt of benchmarks/device/gpu-run.sh (one JSON object per dgrte-bench-device
run, each after a "== name: arguments" line), and checks of issue 30's GPU targets on them.

  /usr/bin/python3 benchmarks/device/gpu_results.py results.txt [--check]

--check exits 1 when a measured figure misses its target (double: sweep P1 <= 0.1, P3 <= 0.3, P4 <= 1
ns per DOF x direction; single P3 <= 0.2; P4 block solves <= 0.6; device-resident Bi-CGSTAB with the
sweep preconditioner <= 3x the bare sweep; the two level walks of the sweep equal to 1e-12; line-by-line
sums >= 1e10 line x grid-point pairs per second with transfers), and prints each figure with its target.
"""
import json
import re
import sys


def runs(path):
    """[(name, dict)] for every run whose JSON parsed; a run without JSON (failed) is reported."""
    text = open(path).read()
    out = []
    for m in re.finditer(r"^== (\S+?): (.*)$", text, re.M):
        start = text.find("{", m.end())
        nxt = text.find("\n== ", m.end())
        if start < 0 or (nxt >= 0 and start > nxt):
            out.append((m.group(1), None))
            continue
        depth, end = 0, start
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        out.append((m.group(1), json.loads(text[start:end + 1])))
    return out


def kernels(d):
    k = d.get("sweep_kernels")
    if not k:
        return "—"
    diff = k.get("max_relative_difference")
    return f"{k['levels_grind_ns']:.3f} / {k['columns_grind_ns']:.3f}" + (f" (diff {diff:.1e})" if diff is not None else "")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    check = "--check" in sys.argv
    results = runs(args[0])
    failed = [name for name, d in results if d is None]
    transport = [(n, d) for n, d in results if d and "sweep" in d]
    gather = [(n, d) for n, d in results if d and d.get("kind") == "final_gather"]
    line_sums = [(n, d) for n, d in results if d and d.get("kind") == "line_sum"]
    if transport:
        d0 = transport[0][1]
        print(f"{d0['device']} ({d0['platform']}, driver {d0['driver']}). Grind time, ns per DOF x direction; "
              f"columns = directions per batch.\n")
        print("| run | tets | P | columns | apply (copy-BW %) | block solve, stored (refactorised) | sweep, stored (refactorised) "
              "| sweep by levels / by columns | levels | inversion | Bi-CGSTAB + sweep, resident (x sweep) |")
        print("|---|---:|---:|---:|---|---|---|---|---:|---:|---|")
        for name, d in transport:
            si = d.get("stored_inverses") or {}
            res = d.get("solve_resident") or {}
            print(f"| {name} | {d['elements']:,} | {d['order']} | {d['columns_per_batch']} "
                  f"| {d['apply']['grind_ns']:.3f} ({100 * d['apply']['bandwidth_fraction']:.0f} %) "
                  f"| {d['block_jacobi_full']['grind_ns']:.3f} ({si.get('block_jacobi_full_refactorised_grind_ns', float('nan')):.3f}) "
                  f"| {d['sweep']['grind_ns']:.3f} ({si.get('sweep_refactorised_grind_ns', float('nan')):.3f}) "
                  f"| {kernels(d)} | {d['sweep']['levels']} | {si.get('invert_grind_ns', float('nan')):.2f} "
                  f"| {res.get('grind_ns', float('nan')):.3f} ({res.get('over_sweep', float('nan')):.2f}) |")
    for name, d in line_sums:
        print(f"\n{name}: line-by-line sum, {d['lines']:,} lines x {d['grid_points']:,} grid points, {d['pairs_within_cutoff']:.3g} pairs "
              f"within {d['cutoff_cm']:g} cm-1: {d['kernel_pairs_per_second']:.3g} pairs/s in the kernel, {d['pairs_per_second']:.3g} "
              f"with transfers ({d['device']}).")
    for name, d in gather:
        print(f"\n{name}: final gather kernel, {d['receivers']:,} receivers x {d['rays_per_receiver']} rays: "
              f"{d['rays_per_second']:.3g} rays/s, {d['segments_per_second']:.3g} segments/s ({d['device']}).")
    for name in failed:
        print(f"\n{name}: no result (the run failed)")
    if not check:
        return 0
    misses = list(failed)
    targets = {("double", 1): 0.1, ("double", 3): 0.3, ("double", 4): 1.0, ("single", 3): 0.2}
    print()
    for name, d in transport:
        key = (d["precision"], d["order"])
        if key in targets:
            ok = d["sweep"]["grind_ns"] <= targets[key]
            print(f"{name}: sweep {d['sweep']['grind_ns']:.3f} ns (target <= {targets[key]}) {'ok' if ok else 'MISSED'}")
            misses += [] if ok else [name + " sweep"]
        if d["precision"] == "double" and d["order"] == 4:
            ok = d["block_jacobi_full"]["grind_ns"] <= 0.6
            print(f"{name}: block solves {d['block_jacobi_full']['grind_ns']:.3f} ns (target <= 0.6) {'ok' if ok else 'MISSED'}")
            misses += [] if ok else [name + " block solves"]
        k = d.get("sweep_kernels") or {}
        if k.get("max_relative_difference", -1) >= 0:
            ok = k["max_relative_difference"] <= 1e-12
            print(f"{name}: the two level walks differ by {k['max_relative_difference']:.1e} (<= 1e-12) {'ok' if ok else 'MISSED'}")
            misses += [] if ok else [name + " kernel parity"]
        res = d.get("solve_resident")
        if d["precision"] == "double" and res and res["preconditioner"] == "sweep":
            ok = res["over_sweep"] <= 3
            print(f"{name}: Bi-CGSTAB + sweep {res['over_sweep']:.2f} x the sweep (target <= 3) {'ok' if ok else 'MISSED'}")
            misses += [] if ok else [name + " Krylov"]
    for name, d in line_sums:
        ok = d["pairs_per_second"] >= 1e10
        print(f"{name}: {d['pairs_per_second']:.3g} line x grid-point pairs/s with transfers (target >= 1e10) {'ok' if ok else 'MISSED'}")
        misses += [] if ok else [name]
    print(f"\n{len(misses)} missed: {', '.join(misses) if misses else 'none'}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
