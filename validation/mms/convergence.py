#!/usr/bin/python3
"""Convergence study of the manufactured solution (He et al. 2013, sec. 5, Eq. 30).

Runs `dgrte run` on validation/mms/mms.yaml for several mesh sizes and DG orders, reads each
run's summary.json, and writes an error table (results.md), a plot (convergence.png) and the
observed orders  p_obs = log(e1/e2) / log(h1/h2)  with h = (volume / elements)^(1/3).
With --assert-order, exits 1 unless every observed order between the two finest meshes is
>= p + 0.5 (the CTest `mms_convergence`).
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def find_dgrte(explicit):
    if explicit:
        return explicit
    for cand in [HERE.parents[1] / "build" / "src" / "app" / "dgrte"]:
        if cand.exists():
            return str(cand)
    return "dgrte"


def run_case(dgrte, case_file, size, order, outdir, extra=()):
    case = (HERE / case_file).read_text()
    case = case.replace("size: 0.35", f"size: {size}").replace("order: 3", f"order: {order}")
    case = case.replace("geo: cube.geo", f"geo: {HERE / 'cube.geo'}")
    outdir.mkdir(parents=True, exist_ok=True)
    cfile = outdir / "case.yaml"
    cfile.write_text(case)
    t0 = time.time()
    proc = subprocess.run([dgrte, "run", str(cfile), "-o", str(outdir), "-q", *extra], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"dgrte failed for size {size}, order {order}:\n{proc.stderr}")
    summary = json.loads((outdir / "summary.json").read_text())
    summary["wall_seconds"] = time.time() - t0
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", help="path of the dgrte executable")
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.6, 0.4, 0.27, 0.18])
    ap.add_argument("--orders", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for runs, results.md and convergence.png")
    ap.add_argument("--assert-order", action="store_true", help="fail unless observed order >= p + 0.5")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    dgrte = find_dgrte(args.dgrte)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rows = []
    for p in args.orders:
        for size in args.sizes:
            s = run_case(dgrte, "mms.yaml", size, p, out / f"p{p}_h{size}")
            h = (8.0 / s["mesh"]["elements"]) ** (1.0 / 3.0)
            rows.append({"order": p, "size": size, "h": h, "elements": s["mesh"]["elements"], "dofs": s["dofs"],
                         "l2": s["error"]["l2"], "linf": s["error"]["linf"], "rel_l2": s["error"]["relative_l2"],
                         "iterations": s["solves"][0]["iterations"], "solve_s": s["timing"]["solve_seconds"]})
            print(f"P{p} size {size}: {s['mesh']['elements']} tets, L2 error {s['error']['l2']:.3e}, "
                  f"{s['solves'][0]['iterations']} its", flush=True)
    # Observed orders between consecutive meshes.
    failures = []
    for p in args.orders:
        r = [x for x in rows if x["order"] == p]
        for a, b in zip(r, r[1:]):
            b["rate"] = math.log(a["l2"] / b["l2"]) / math.log(a["h"] / b["h"])
        if len(r) >= 2 and r[-1]["rate"] < p + 0.5:
            failures.append(f"P{p}: observed order {r[-1]['rate']:.2f} < {p + 0.5}")

    # A second check: the inflow case with negative direction components.
    inflow = run_case(dgrte, "mms_inflow.yaml", args.sizes[-1], 3, out / "inflow_p3")

    lines = ["# Manufactured-solution convergence (He et al. 2013, Eq. 30)", "",
             f"dgrte {inflow.get('dgrte_version', '')}; cube [-1,1]^3, kappa = 0.1 1/m, "
             "s = (0.62402, 0.52802, 0.57602), partial block Jacobi, rtol 1e-10.", "",
             "| order | size | tets | DOFs | L2 error | max error | observed order | iterations | solve s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for x in rows:
        rate = f"{x['rate']:.2f}" if "rate" in x else "–"
        lines.append(f"| P{x['order']} | {x['size']} | {x['elements']} | {x['dofs']} | {x['l2']:.3e} | {x['linf']:.3e} | "
                     f"{rate} | {x['iterations']} | {x['solve_s']:.2f} |")
    lines += ["", "Inflow case (validation/mms/mms_inflow.yaml, P3, size "
              f"{args.sizes[-1]}): directions with negative components, exact intensity on inflow faces:", ""]
    for i, s in enumerate(inflow["solves"]):
        lines.append(f"- direction {s['direction']}: {s['iterations']} iterations, relative L2 error "
                     f"{s['error']['relative_l2']:.3e}")
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

    if not args.no_plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for p in args.orders:
            r = [x for x in rows if x["order"] == p]
            ax.loglog([x["h"] for x in r], [x["l2"] for x in r], "o-", label=f"P{p}")
            h0, e0 = r[0]["h"], r[0]["l2"]
            ax.loglog([x["h"] for x in r], [e0 * (x["h"] / h0) ** (p + 1) for x in r], "k:", lw=0.8)
        from matplotlib.ticker import NullFormatter, ScalarFormatter
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks([x["h"] for x in rows if x["order"] == args.orders[0]])
        ax.set_xlabel("h = (V / K)^(1/3) [m]")
        ax.set_ylabel("L2 error of I")
        ax.set_title("dgrte: manufactured solution, dotted = slope p+1")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / "convergence.png", dpi=120)
    for s in inflow["solves"]:
        if s["error"]["relative_l2"] > 1e-3:
            failures.append(f"inflow case: relative L2 error {s['error']['relative_l2']:.2e} > 1e-3")
    if args.assert_order and failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
