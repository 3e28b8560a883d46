#!/usr/bin/env python3
"""Markdown summary of a transport_benchmark JSON file (benchmarks/README.md shows its output).

usage: benchmarks/transport_summary.py benchmarks/results/transport-DATE.json
"""
import json
import sys

PCS = [("partial-block-jacobi", "partial BJ"), ("block-jacobi", "BJ"), ("sweep", "sweep-PC"), ("none", "none")]


def fmt_pc(pc):
    if pc is None:
        return "–", "–"
    if not pc.get("converged", False):
        return "failed", "–"
    return str(pc["iterations"]), f"{pc['solve_median_seconds']:.3g} s / {pc['grind_ns_per_dof']:.0f}"


def main(path):
    d = json.load(open(path))
    s = d["stream"]
    print(f"Run {d['date']}, {d['threads']} OpenMP threads, OMP_WAIT_POLICY={d.get('omp_wait_policy')}, "
          f"load average at start {d.get('load_average_at_start')}; "
          f"STREAM triad best {s['best_gb_per_s']:.1f} GB/s (median {s['median_gb_per_s']:.1f}); "
          f"complete: {d.get('complete')}; process peak RSS {d.get('process_peak_rss_bytes', 0) / 2**30:.2f} GiB.\n")
    head = ["tets", "P", "DOFs", "apply ms", "GB/s (STREAM %)", "GFLOP/s"]
    for _, short in PCS:
        head += [f"it {short}", f"solve / grind ns/DOF {short}"]
    head += ["sweep s / grind ns/DOF", "sweep GFLOP/s", "sweep vs partial BJ", "PC blocks", "L2 error", "peak RSS GiB"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for c in d["cases"]:
        a = c["apply"]
        row = [f"{c['elements']:,}", str(c["order"]), f"{c['dofs']:,}", f"{a['median_seconds'] * 1e3:.3g}",
               f"{a['gb_per_s']:.2f} ({100 * a['stream_fraction']:.0f}%)", f"{a['gflop_per_s']:.1f}"]
        pcs = c["preconditioners"]
        for key, _ in PCS:
            row += list(fmt_pc(pcs.get(key)))
        sw = c.get("sweep")
        if sw:
            row += [f"{sw['solve_median_seconds']:.3g} s / {sw['grind_ns_per_dof']:.1f}",
                    f"{sw['gflop_per_s']:.1f}" if "gflop_per_s" in sw else "–",
                    f"{sw['speedup_over_bicgstab'].get('partial-block-jacobi', float('nan')):.0f}x"]
        else:
            row += ["–", "–", "–"]
        blocks = pcs.get("partial-block-jacobi") or pcs.get("block-jacobi") or {}
        blk = blocks.get("preconditioner_blocks", "–")
        if blk == "cached":
            blk += f" {blocks['preconditioner_bytes'] / 2**20:.1f} MiB"
        err = next((p["error"]["l2"] for p in pcs.values() if "error" in p), float("nan"))
        row += [blk, f"{err:.3e}", f"{c['peak_rss_bytes'] / 2**30:.2f}"]
        if c.get("restricted"):
            row[1] += "*"
        print("| " + " | ".join(row) + " |")
    restricted = [c for c in d["cases"] if c.get("restricted")]
    if restricted:
        print("\n\\* restricted:")
        for c in restricted:
            print(f"- {c['elements']:,} tets P{c['order']}: {c['restricted']}.")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
