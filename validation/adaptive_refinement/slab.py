#!/usr/bin/python3
"""Adaptive refinement (`refine:`, issue 32) on the tau_L = 10 gray slab, against the exact solution.

The slab of validation/gray_slab (Coelho 2005): gray gas at 1500 K between diffuse gray walls at
500 K, emissivity 0.5, kappa = 10 /m, L = 1 m, as a 1 x 0.2 x 0.2 m box with mirror sides; product
set 16 x 8 about x. Its solution has boundary layers 1/kappa = 0.1 m thick at both walls. Runs:
  * adaptive h and adaptive p from P2 on the uniform 0.25 m mesh (slab.geo), refine {target,
    quantity: divq} (div q = kappa (4 pi I_b - G): the thick slab's G is within a fraction of a per cent
    of 4 pi I_b inside, so G is accurate long before div q is), with the L2 norm and with norm: max
    (a pointwise target: the largest nodal difference of orders p + 1 and p relative to max |div q|),
    and with norm: probes (the estimate on the axis line itself, relative to its max |div q|);
  * uniform P2 on slab.geo of decreasing size until both errors are at most the adaptive h run's.
Errors (gray_slab.py's exact E_n solution): max |dq*/dtau| along the axis relative to its maximum
(101 points, the wall points included), its spatial part (against the set's discrete-ordinates
limit), and the mean net flux into the wall x = 0 relative to the exact value.

    /usr/bin/python3 validation/adaptive_refinement/slab.py --dgrte build/src/app/dgrte \
        --json benchmarks/results/adaptive-refinement-slab-2026-11-28.json     # slab_results.md/json
"""
import argparse
import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
SLAB = HERE.parent / "gray_slab"
sys.path.insert(0, str(HERE.parent / "common"))
sys.path.insert(0, str(SLAB))
import dgrte_io as dio  # noqa: E402
from gray_slab import do_limit_slab, dqstar, exact_slab  # noqa: E402

TAU_L = 10.0
UNIFORM_SIZES = [0.25, 0.18, 0.13, 0.1, 0.08, 0.065, 0.055]


def run(dgrte, work, label, size, order, refine=None):
    case = dio.load_case(SLAB / "gray_slab.yaml")
    case["mesh"] = {"geo": "slab.geo", "size": size}
    case["order"] = order
    case["media"] = {"*": {"kappa": f"{TAU_L:g}", "temperature": "1500"}}
    case["output"]["error_indicator"] = True
    if refine:
        case["refine"] = refine
    r = dio.run_case(dgrte, case, work / label.replace(" ", "_"), base=SLAB)
    s = r.summary
    ax = r.probe("axis")
    tau = TAU_L * ax["x"]
    ex = exact_slab(TAU_L, tau)
    ref = dqstar(ex["dqdtau"])
    dg = dqstar(ax["divq"] / TAU_L)
    scale = float(np.max(np.abs(ref)))
    qs, qw = r.quadrature()
    do = dqstar(do_limit_slab(qs, qw, TAU_L, tau)["dqdtau"])
    q_net = s["walls"]["xmin"]["q_net_mean"]
    row = {"run": label, "order": s["order"], "elements": s["mesh"]["elements"], "dofs": s["dofs"],
           "divq_error": float(np.max(np.abs(dg - ref))) / scale, "divq_spatial": float(np.max(np.abs(dg - do))) / scale,
           "wall_error": abs(q_net - ex["qwall"][0]) / abs(ex["qwall"][0]),
           "estimate_G": s["error_indicator"]["G_relative"], "estimate_wall": s["error_indicator"]["wall_flux_relative"],
           "estimate_divq": s["error_indicator"]["divq_relative"], "estimate_divq_max": s["error_indicator"]["divq_max_relative"],
           "estimate_divq_probes": s["error_indicator"]["divq_probes_relative"]}
    if refine:
        ref_ = s["refinement"]
        row.update({"cycles": len(ref_["cycles"]), "target_reached": ref_["target_reached"],
                    "seconds": sum(c["seconds"] + c["remesh_seconds"] for c in ref_["cycles"]), "cycle_rows": ref_["cycles"]})
    else:
        row.update({"cycles": 1, "seconds": s["timing"]["total_seconds"] - s["error_indicator"]["seconds"]})
    print(f"{label}: {row['cycles']} cycles, {row['elements']} tets, P{row['order']}, div q* {100 * row['divq_error']:.3f} % "
          f"(spatial {100 * row['divq_spatial']:.3f} %), wall {100 * row['wall_error']:.4f} %, estimates div q "
          f"{100 * row['estimate_divq']:.3f} % (probes {100 * row['estimate_divq_probes']:.3f} %) G {100 * row['estimate_G']:.3f} % wall {100 * row['estimate_wall']:.3f} %, "
          f"{row['seconds']:.2f} s", flush=True)
    return row


def table(rows):
    return dio.markdown_table(
        ["run", "order", "tets", "DOFs per ordinate", "cycles", "div q* max error", "of which spatial", "wall q_net error",
         "estimate div q", "estimate div q (max norm)", "estimate div q (probes)", "estimate G", "estimate wall flux", "seconds"],
        [[r["run"], r["order"], r["elements"], r["dofs"], r["cycles"], f"{100 * r['divq_error']:.3f} %", f"{100 * r['divq_spatial']:.3f} %",
          f"{100 * r['wall_error']:.4f} %", f"{100 * r['estimate_divq']:.3f} %", f"{100 * r['estimate_divq_max']:.3f} %",
          f"{100 * r['estimate_divq_probes']:.3f} %", f"{100 * r['estimate_G']:.3f} %",
          f"{100 * r['estimate_wall']:.3f} %", f"{r['seconds']:.2f}"] for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", default=None)
    ap.add_argument("--target", type=float, default=0.005)
    ap.add_argument("--work", default="/tmp/dgrte-adaptive-slab")
    ap.add_argument("--json", default=None, help="also write the rows here (benchmarks/results/...)")
    a = ap.parse_args()
    dgrte = dio.find_dgrte(a.dgrte)
    work = pathlib.Path(a.work)
    refine = {"target": a.target, "quantity": "divq"}
    h = run(dgrte, work, "adaptive h (P2 from size 0.25)", 0.25, 2, {**refine, "strategy": "h"})
    p = run(dgrte, work, "adaptive p (from P2, size 0.25)", 0.25, 2, {**refine, "strategy": "p"})
    # norm: max, a pointwise target: what the max over the axis points measures.
    hm = run(dgrte, work, "adaptive h, norm max (P2 from size 0.25)", 0.25, 2, {**refine, "strategy": "h", "norm": "max"})
    pm = run(dgrte, work, "adaptive p, norm max (from P2, size 0.25)", 0.25, 2, {**refine, "strategy": "p", "norm": "max"})
    # norm: probes, the target on the axis line itself (what the errors below measure).
    hp = run(dgrte, work, "adaptive h, norm probes (P2 from size 0.25)", 0.25, 2, {**refine, "strategy": "h", "norm": "probes"})
    pp = run(dgrte, work, "adaptive p, norm probes (from P2, size 0.25)", 0.25, 2, {**refine, "strategy": "p", "norm": "probes"})
    rows = [h, p, hm, pm, hp, pp]
    for size in UNIFORM_SIZES:
        u = run(dgrte, work, f"uniform P2 size {size}", size, 2)
        rows.append(u)
        if u["divq_error"] <= h["divq_error"] and u["wall_error"] <= h["wall_error"]:
            break
    head = ("# Adaptive refinement on the tau_L = 10 gray slab\n\nGenerated by `validation/adaptive_refinement/slab.py` (README.md); "
            f"refine target {a.target} for div q (quantity: divq; the relative L2 estimate, with norm max the largest nodal difference relative to max |div q|, with norm probes the largest difference on the axis line relative to its max |div q|); product 16 x 8 set about x; errors against the exact "
            "E_n solution (gray_slab.py): div q* = dq*/dtau along the axis, max over 101 points relative to its maximum, its spatial "
            "part against the set's discrete-ordinates limit, and the mean net flux into x = 0; seconds as in results.md (adaptive: all "
            "cycles; uniform: without the indicator); 2-core machine.\n\n")
    dio.write_text_atomic(HERE / "slab_results.md", head + table(rows) + "\n")
    dio.write_text_atomic(HERE / "slab_results.json", json.dumps({"target": a.target, "rows": rows}, indent=1) + "\n")
    if a.json:
        dio.write_text_atomic(pathlib.Path(a.json), json.dumps(
            {"case": "tau_L = 10 gray slab (Coelho 2005), product 16 x 8, exact E_n solution", "target": a.target, "rows": rows},
            indent=1) + "\n")

if __name__ == "__main__":
    main()
