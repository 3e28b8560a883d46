#!/usr/bin/env python3
"""Monte Carlo throughput through `dgrte run` (solver.method: montecarlo): forward paths/s and
segments/s (a segment = one element crossing, scattering event or wall hit) on the manufactured
case's cube [-1, 1]^3 (validation/mms/cube.geo) at ~23k and ~179k tets, for

  absorbing:  kappa = 1, I_b = 1, cold black walls (no scattering, no reflection);
  scattering: kappa = 0.1, sigma_s = 0.9 (HG g = 0.8), I_b = 1, gray walls eps = 0.5 (diffuse).

--backends cpu opencl runs each case on the host tracer (OpenMP) and on the OpenCL kernel
(opencl/mc_forward.cl; PoCL here, a GPU where one is lent), side by side. --lbl adds a line-by-line
case (CO 2025-2275 cm^-1 every 0.01 cm^-1: 25,002 spectral points; a hot and a cold layer, cold
black walls) traced with spectral sampling by path and per point: forward seconds, the standard
error of the wall power and the efficiency 1 / (sigma^2 t), relative, per sampling.

Median of --repeats runs. Prints JSON (and writes it with --json FILE). The tracer's inner loop
reads per segment 4 face planes (128 B), 4 neighbour entries (16 B) and kappa, sigma_s (16 B) and
writes 5 fixed-point tallies (40 B): `bytes_per_segment` = 200 gives an effective traffic to put
beside the machine's STREAM bandwidth (benchmarks/results/transport-*.json), but the loop is
latency-bound (a dependent chain of face crossings), not bandwidth-bound.

  /usr/bin/python3 benchmarks/montecarlo/montecarlo_benchmark.py --dgrte build/src/app/dgrte [--quick]
"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "validation" / "common"))
import dgrte_io as dio  # noqa: E402

CASES = {
    "absorbing": {"media": {"*": {"kappa": "1", "Ib": "1"}}, "boundaries": {"*": {"type": "black", "temperature": 0}}},
    "scattering": {"media": {"*": {"kappa": "0.1", "scattering": "0.9", "phase_function": {"type": "henyey-greenstein", "g": 0.8},
                                   "Ib": "1"}},
                   "boundaries": {"*": {"type": "gray", "emissivity": 0.5, "temperature": 0}}},
}
BYTES_PER_SEGMENT = 200


def lbl_case(dgrte, tmp, paths, repeats):
    """Spectral sampling by path against per point on a line-by-line case (forward paths only)."""
    out = []
    for sampling in ["per_path", "per_point"]:
        case = {"mesh": {"geo": str(REPO / "tests" / "solver" / "slab.geo"), "size": 0.1},
                "model": {"type": "lbl", "par_files": [str(REPO / "gasdata" / "lbl" / "hitran_fragments" / "hitran_co_3iso_2000_2300cm.par")],
                          "nu_min": 2025, "nu_max": 2275, "dnu": 0.01},
                "media": {"*": {"temperature": "x < 0.5 ? 1500 : 400", "x_co": "0.2"}},
                "boundaries": {"left": {"type": "black", "temperature": 0}, "right": {"type": "black", "temperature": 0},
                               "sides": {"type": "symmetry"}},
                "solver": {"method": "montecarlo", "paths": paths, "batches": 20, "seed": 1, "spectral_sampling": sampling},
                "output": {"vtk": False}}
        runs = [dio.run_case(dgrte, case, tmp / f"lbl_{sampling}_{r}").summary for r in range(repeats)]
        s = runs[0]
        t = statistics.median(r["montecarlo"]["forward_seconds"] for r in runs)
        right = s["walls"]["right"]
        out.append({"sampling": sampling, "spectral_points": s["spectral"]["spectral_points"],
                    "spectral_points_traced": s["montecarlo"]["spectral_points_traced"], "paths": s["montecarlo"]["paths"],
                    "forward_seconds_median": t, "property_seconds": s["spectral"]["property_seconds"],
                    "total_seconds_median": statistics.median(r["timing"]["total_seconds"] for r in runs),
                    "right_wall_q_net_W": right["q_net_W"], "right_wall_q_net_W_stderr": right["q_net_W_stderr"],
                    "efficiency": 1.0 / (right["q_net_W_stderr"] ** 2 * t) if right["q_net_W_stderr"] > 0 and t > 0 else None})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte")
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.124, 0.059])
    ap.add_argument("--paths", type=float, default=2e6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backends", nargs="+", default=["cpu"], choices=["cpu", "opencl"])
    ap.add_argument("--lbl", action="store_true", help="also the line-by-line case, sampling by path and per point")
    ap.add_argument("--quick", action="store_true", help="one small mesh, few paths (smoke test)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.paths, args.repeats = [0.5], 2e4, 1
    dgrte = dio.find_dgrte(args.dgrte)
    rows, lbl_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            for name, spec in CASES.items():
                for backend in args.backends:
                    case = {"mesh": {"geo": str(REPO / "validation" / "mms" / "cube.geo"), "size": size}, **spec,
                            "solver": {"method": "montecarlo", "paths": args.paths, "batches": 20, "seed": 1, "backend": backend},
                            "output": {"vtk": False}}
                    runs = [dio.run_case(dgrte, case, pathlib.Path(tmp) / f"{name}_{size}_{backend}_{r}").summary for r in range(args.repeats)]
                    mc = [r["montecarlo"] for r in runs]
                    seg = statistics.median(m["segments_per_second"] for m in mc)
                    rows.append({"case": name, "backend": backend, "device": runs[0].get("backend", {}).get("device", "host (OpenMP)"),
                                 "mesh_size": size, "tets": runs[0]["mesh"]["elements"], "paths": int(args.paths),
                                 "repeats": args.repeats,
                                 "paths_per_second": statistics.median(m["paths_per_second"] for m in mc),
                                 "segments_per_second": seg,
                                 "segments_per_path": mc[0]["segments"] / mc[0]["paths"],
                                 "scattering_events_per_path": mc[0]["scattering_events"] / mc[0]["paths"],
                                 "wall_reflections_per_path": mc[0]["wall_reflections"] / mc[0]["paths"],
                                 "lost_rays": max(m["lost_rays"] for m in mc),
                                 "effective_GB_per_second": seg * BYTES_PER_SEGMENT / 1e9,
                                 "forward_seconds_median": statistics.median(m["forward_seconds"] for m in mc)})
        if args.lbl:
            lbl_rows = lbl_case(dgrte, pathlib.Path(tmp), 2e4 if args.quick else 1e6, 1 if args.quick else args.repeats)
    out = {"benchmark": "montecarlo", "date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or platform.machine(),
           "threads": os.environ.get("OMP_NUM_THREADS", "all"), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
           "bytes_per_segment": BYTES_PER_SEGMENT, "target_segments_per_second": 1e7, "rows": rows, "lbl": lbl_rows}
    text = json.dumps(out, indent=1)
    if args.json:
        pathlib.Path(args.json).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
