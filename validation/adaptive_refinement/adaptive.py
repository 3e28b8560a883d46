#!/usr/bin/python3
"""Adaptive refinement (`refine:`, issue 32) against uniform refinement on the isothermal cube (kappa = 10).

Runs `dgrte run` on cube.yaml (README.md):
  * adaptive h: from P2 at mesh size 0.25 with refine {target, strategy: h};
  * adaptive p: from P2 at size 0.25 with refine {target, strategy: p};
  * uniform: P2 on meshes of decreasing size until the true error is at most the adaptive h run's.
Each run reports the true relative L2 error of G (`error.G_relative_l2`, against the exact
discrete-ordinates solution of its own S4 set) and the indicator's estimate. Writes results.json,
results.md and cube_meshes.png (the z = 0.5 slice of the first and last adaptive h meshes).

    /usr/bin/python3 validation/adaptive_refinement/adaptive.py --dgrte build/src/app/dgrte          # ~3 min
    /usr/bin/python3 validation/adaptive_refinement/adaptive.py --target 0.01 --check --no-write     # CTest

--check exits 1 unless both adaptive runs reach the target and their true error is below twice it.
"""
import argparse
import json
import os
import pathlib
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
import dgrte_io as dio  # noqa: E402

UNIFORM_SIZES = [0.25, 0.18, 0.13, 0.1, 0.08, 0.065, 0.055, 0.045]


def run(dgrte, work, label, size, order, refine=None, vtk=False):
    case = yaml.safe_load((HERE / "cube.yaml").read_text())
    case["mesh"]["size"] = size
    case["order"] = order
    if refine:
        case["refine"] = refine
    case["output"]["vtk"] = vtk
    if vtk:
        case["output"]["linear"] = True
    r = dio.run_case(dgrte, case, work / label, base=HERE)
    s = r.summary
    row = {"run": label, "order": s["order"], "elements": s["mesh"]["elements"], "dofs": s["dofs"],
           "true_relative": s["error"]["G_relative_l2"], "estimate": s["error_indicator"]["G_relative"],
           "effectivity": s["error_indicator"]["effectivity_G"], "wall_seconds": s["wall_seconds"]}
    if refine:
        ref = s["refinement"]
        row.update({"cycles": len(ref["cycles"]), "target_reached": ref["target_reached"],
                    "seconds": sum(c["seconds"] + c["remesh_seconds"] for c in ref["cycles"]),
                    "cycle_rows": ref["cycles"]})
    else:
        # A uniform run needs no indicator: its time without it.
        row.update({"cycles": 1, "seconds": s["timing"]["total_seconds"] - s["error_indicator"]["seconds"]})
    return row, r.outdir


def slice_plot(files, titles, out, origin=(0.5, 0.5, 0.5), normal=(0, 0, 1), coords=(0, 1), limits=((0, 1), (0, 1)),
               labels=("x [m]", "y [m]")):
    """The mesh edges cut by the plane (origin, normal), drawn in the coordinates `coords` (indices of x, y, z)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
    fig, axes = plt.subplots(1, len(files), figsize=(4.2 * len(files), 4.2))
    for ax, f, title in zip(axes, files, titles):
        reader = vtk.vtkXMLUnstructuredGridReader()
        reader.SetFileName(str(f))
        reader.Update()
        plane = vtk.vtkPlane()
        plane.SetOrigin(*origin)
        plane.SetNormal(*normal)
        cut = vtk.vtkCutter()
        cut.SetCutFunction(plane)
        cut.SetInputConnection(reader.GetOutputPort())
        cut.Update()
        poly = cut.GetOutput()
        pts = vtk_to_numpy(poly.GetPoints().GetData())
        segs = []
        for c in range(poly.GetNumberOfCells()):
            ids = poly.GetCell(c).GetPointIds()
            n = ids.GetNumberOfIds()
            for k in range(n):
                a, b = ids.GetId(k), ids.GetId((k + 1) % n)
                segs.append([pts[a, list(coords)], pts[b, list(coords)]])
        ax.add_collection(LineCollection(segs, linewidths=0.3, colors="k"))
        ax.set_xlim(*limits[0])
        ax.set_ylim(*limits[1])
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
    fig.tight_layout()
    tmp = out.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=130)
    os.replace(tmp, out)


def table(rows):
    return dio.markdown_table(
        ["run", "order", "tets", "DOFs per ordinate", "cycles", "true error of G", "estimate", "effectivity", "seconds"],
        [[r["run"], r["order"], r["elements"], r["dofs"], r["cycles"], f"{100 * r['true_relative']:.3f} %", f"{100 * r['estimate']:.3f} %",
          f"{r['effectivity']:.3f}", f"{r['seconds']:.2f}"] for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", default=None)
    ap.add_argument("--target", type=float, default=0.002)
    ap.add_argument("--work", default="/tmp/dgrte-adaptive")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--json", default=None, help="also write the rows here (benchmarks/results/...)")
    a = ap.parse_args()
    dgrte = dio.find_dgrte(a.dgrte)
    work = pathlib.Path(a.work)
    rows = []
    write = not a.no_write
    h, h_dir = run(dgrte, work, "adaptive h (P2 from size 0.25)", 0.25, 2, {"target": a.target, "strategy": "h"}, vtk=write)
    rows.append(h)
    p, _ = run(dgrte, work, "adaptive p (from P2, size 0.25)", 0.25, 2, {"target": a.target, "strategy": "p"})
    rows.append(p)
    for r in (h, p):
        print(f"{r['run']}: {r['cycles']} cycles, {r['elements']} tets, P{r['order']}, {r['dofs']} DOFs, true {r['true_relative']:.3e}, "
              f"estimate {r['estimate']:.3e}, {r['seconds']:.2f} s", flush=True)
    uniform = []
    if not a.check:
        for size in UNIFORM_SIZES:
            u, _ = run(dgrte, work, f"uniform P2 size {size}", size, 2)
            uniform.append(u)
            print(f"{u['run']}: {u['elements']} tets, true {u['true_relative']:.3e}, estimate {u['estimate']:.3e}, {u['seconds']:.2f} s",
                  flush=True)
            if u["true_relative"] <= h["true_relative"]:
                break
    rows += uniform
    if write:
        first = work / "first"
        run(dgrte, work, "first", 0.25, 2, None, vtk=True)
        slice_plot([first / "solution.vtu", h_dir / "solution.vtu"],
                   [f"start: size 0.25, {rows[0]['cycle_rows'][0]['elements']} tets",
                    f"adaptive h, cycle {h['cycles']}: {h['elements']} tets"], HERE / "cube_meshes.png")
        head = ("# Adaptive refinement on the isothermal cube (kappa = 10)\n\nGenerated by `validation/adaptive_refinement/adaptive.py` "
                f"(README.md); target {a.target} (relative L2 error of G); true error against the exact discrete-ordinates solution "
                "of the S4 set; seconds: adaptive runs, all cycles (meshing, solve, indicator, re-meshing); uniform runs, the run without the indicator (`timing.total_seconds` - `error_indicator.seconds`); on the 2-core machine.\n\n")
        dio.write_text_atomic(HERE / "results.md", head + table(rows) + "\n")
        dio.write_text_atomic(HERE / "results.json", json.dumps({"target": a.target, "rows": rows}, indent=1) + "\n")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"case": "isothermal cube kappa 10, S4", "target": a.target, "rows": rows}, indent=1) + "\n")
    if a.check:
        bad = [r for r in (h, p) if not (r["target_reached"] and r["true_relative"] < 2 * a.target)]
        for r in bad:
            print(f"FAIL {r['run']}: target reached {r['target_reached']}, true error {r['true_relative']:.3e} (target {a.target})")
        if bad:
            sys.exit(1)
        print("both adaptive runs reached the target with a true error below twice it")


if __name__ == "__main__":
    main()
