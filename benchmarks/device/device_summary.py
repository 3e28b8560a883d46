#!/usr/bin/env python3
"""Markdown tables from device_benchmark JSON files (benchmarks/README.md, "device_benchmark"); the
cases of several runs (e.g. one interrupted and one finishing the remaining cases) are listed together,
each file's run described first.

  /usr/bin/python3 benchmarks/device/device_summary.py results.json [more.json ...]
"""
import json
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cases = []
    for name in sys.argv[1:]:
        with open(name) as f:
            d = json.load(f)
        print(f"- `{name}`: {d['device']['label']} (driver {d['device']['driver']}); CPU path: {d['threads']} threads, "
              f"STREAM triad {d['stream']['best_gb_per_s']:.1f} GB/s; CLBlast: {d['clblast']}; "
              f"{'complete' if d.get('complete') else 'interrupted'} run, {len(d['cases'])} cases, {d.get('total_seconds', 0):.0f} s.")
        cases += d["cases"]
    print()
    print("Grind time, ns per DOF x direction (fraction of the bandwidth measured in the run: CPU STREAM triad, "
          "OpenCL copy kernel):\n")
    print("| tets | P | DOFs | apply CPU | apply OpenCL | apply CLBlast GEMM | block solve CPU | block solve OpenCL "
          "| sweep CPU | sweep OpenCL | copy GB/s |")
    print("|---:|---:|---:|---|---|---|---|---|---|---|---:|")
    for c in cases:
        cpu, ocl = c["cpu"], c["opencl"]

        def cell(e):
            return f"{e['grind_ns']:.1f} ({100 * e['bandwidth_fraction']:.0f} %)" if e else "—"
        print(f"| {c['elements']:,} | {c['order']} | {c['dofs']:,} | {cell(cpu['apply'])} | {cell(ocl['apply'])} "
              f"| {cell(ocl.get('apply_clblast_gemm'))} | {cell(cpu['block_jacobi_partial'])} "
              f"| {cell(ocl['block_jacobi_partial'])} | {cell(cpu['sweep'])} | {cell(ocl['sweep'])} "
              f"| {ocl['copy_bandwidth_GBps']:.1f} |")
    print("\nWhole S8 gray solve (GMRES outer, sweeps inner; `dgrte run`):\n")
    print("| tets | P | DOFs | CPU s | OpenCL s | OpenCL / CPU | outer its CPU / OpenCL | wall q_in max rel. diff |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|")
    for c in cases:
        s = c["s8_solve"]
        if "cpu" not in s:
            print(f"| {c['elements']:,} | {c['order']} | {c['dofs']:,} | — | — | — | {s.get('restricted', '')} | — |")
            continue
        cpu, ocl = s["cpu"], s["opencl"]
        print(f"| {c['elements']:,} | {c['order']} | {c['dofs']:,} | {cpu['solve_seconds']:.2f} | {ocl['solve_seconds']:.2f} "
              f"| {ocl['solve_seconds'] / cpu['solve_seconds']:.2f} | {cpu['outer_iterations']} / {ocl['outer_iterations']} "
              f"| {s['wall_q_in_max_relative_difference']:.1e} |")


if __name__ == "__main__":
    main()
