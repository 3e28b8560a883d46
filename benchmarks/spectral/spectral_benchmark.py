#!/usr/bin/env python3
"""Nongray benchmark: the spectral loop's throughput and memory per gas model, through `dgrte run`
(reads summary.json; prints one JSON document).

  /usr/bin/python3 benchmarks/spectral/spectral_benchmark.py --dgrte build/src/app/dgrte [--quick]

Case: the quick-start furnace (docs/examples/furnace.geo, 1 x 1 x 2 m, a flame cylinder in hot
gas, gray walls and an open exit) with H2O/CO2 of a methane-air flame (docs/examples/furnace_wsgg.yaml)
and isotropic scattering 0.1 1/m, meshed at --size (default 0.085 m: ~20k tets), P2, heat-transfer
S8 (80 ordinates), GMRES to 1e-6. Models: WSGG (Bordbar 2014, 5 points), RCSLW (21), and SNBCK
(Riviere 2012, overlap mixture) with narrow bands lumped `--snbck-lumping` at a time and
`--snbck-gauss` points per band (full SNBCK is 3,144 points: hours here; the per-point rate is what
this measures). For each: spectral points, property seconds, transport seconds,
points x ordinates x DOFs per transport second, transport sweeps, peak memory (flat in the number
of points: one point's fields at a time), and the wall and energy totals.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GEO = ROOT / "docs" / "examples" / "furnace.geo"


def case(size, model):
    return (f"mesh: {{geo: {GEO}, size: {size}}}\norder: 2\nangular: {{quadrature: sn-heat, order: 8}}\n"
            f"model: {model}\n"
            "media:\n"
            "  flame: {temperature: \"1800\", x_h2o: \"0.18\", x_co2: \"0.09\", scattering: \"0.1\"}\n"
            "  gas:   {temperature: \"1200 - 200*z\", x_h2o: \"0.15\", x_co2: \"0.075\", scattering: \"0.1\"}\n"
            "boundaries:\n"
            "  burner:     {type: gray, emissivity: 0.7, temperature: \"600\"}\n"
            "  side_walls: {type: gray, emissivity: 0.8, temperature: \"700 + 50*z\"}\n"
            "  exit:       {type: black, temperature: 300}\n"
            "solver: {outer: gmres, outer_tolerance: 1.0e-6}\n"
            "output: {vtk: false}\n")


def run(dgrte, text):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "case.yaml"
        f.write_text(text)
        out = Path(tmp) / "out"
        env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
        subprocess.run([dgrte, "run", str(f), "-o", str(out), "-q"], check=True, env=env)
        s = json.loads((out / "summary.json").read_text())
    sp = s["spectral"]
    rate = sp["spectral_points"] * s["directions"] * s["dofs"] / max(sp["transport_seconds"], 1e-12)
    return {"model": sp["model"], "spectral_points": sp["spectral_points"], "elements": s["mesh"]["elements"],
            "dofs": s["dofs"], "ordinates": s["directions"], "property_seconds": sp["property_seconds"],
            "transport_seconds": sp["transport_seconds"], "solve_seconds": s["timing"]["solve_seconds"],
            "points_ordinates_dofs_per_second": rate,
            "ns_per_point_ordinate_dof": 1e9 / rate,
            "transport_sweeps": s["solver"]["transport_sweeps"], "outer_iterations": s["solver"]["outer_iterations"],
            "max_outer_iterations_per_point": sp["max_outer_iterations"],
            "peak_memory_mb": s["peak_memory_mb"], "gas_nodes_clamped": sp["gas_nodes_clamped"],
            "walls_q_net_W": {g: w["q_net_W"] for g, w in s["walls"].items()},
            "relative_energy_imbalance": s["energy_balance"]["relative_imbalance"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", required=True)
    ap.add_argument("--quick", action="store_true", help="a coarse mesh and few SNBCK points (smoke test)")
    ap.add_argument("--size", type=float, default=0.085, help="mesh size [m] (0.085: ~20k tets)")
    ap.add_argument("--snbck-lumping", type=int, default=32, help="narrow bands lumped into one (SNBCK)")
    ap.add_argument("--snbck-gauss", type=int, default=4, help="Gauss points per lumped band (SNBCK)")
    a = ap.parse_args()
    size = 0.4 if a.quick else a.size
    lumping = 128 if a.quick else a.snbck_lumping
    models = {"wsgg": "{type: wsgg, correlation: bordbar2014}", "rcslw": "{type: rcslw}",
              "snbck": f"{{type: snbck, overlap: mixture, lumping: {lumping}, gauss_points: {a.snbck_gauss}}}"}
    res = {"benchmark": "spectral", "case": "docs/examples/furnace.geo, P2, sn-heat S8, scattering 0.1 1/m, GMRES 1e-6",
           "mesh_size": size, "omp_threads": int(os.environ.get("OMP_NUM_THREADS", "2")), "models": {}}
    for name, block in models.items():
        r = run(a.dgrte, case(size, block))
        res["models"][name] = r
        print(f"{name:6s} {r['spectral_points']:4d} points  property {r['property_seconds']:.3f} s  transport "
              f"{r['transport_seconds']:.1f} s  {r['ns_per_point_ordinate_dof']:.1f} ns per point-ordinate-DOF  "
              f"peak {r['peak_memory_mb']:.0f} MB", file=sys.stderr, flush=True)
    json.dump(res, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
