#!/usr/bin/python3
"""Seed 004 section 4.1: the 3-D nongray enclosure of Liu, Smallwood & Gulder (IJHMT 43, 2000) with
the DG solver, against the ray-traced references of raytrace_reference.py (README.md).

Each run is `dgrte run` on enclosure.yaml with the order, mesh size, angular set and gas model
replaced. Two comparisons per run:
  * transport: DG against the ray-traced reference of the *same* model (exact rays, exact angular
    integration: the difference is the DG space + angle discretisation error);
  * model: DG (and each ray-traced model) against the full-resolution SNBCK ray-traced reference
    (`snbck-full`, the narrow-band reference of this case).
Quantities: the net radiative flux into the wall along (-1, 0, z) and div q along the axis (0, 0, z)
at the reference's z values; errors are max and mean |difference| over z, relative to the
reference's maximum |value| (the seed quotes average and maximum relative errors).

    /usr/bin/python3 validation/liu2000/liu2000.py --dgrte build/src/app/dgrte            # full table
    /usr/bin/python3 validation/liu2000/liu2000.py --runs wsgg:2:0.2:sn8 --check 0.03,0.05    # CTest
    # gathered runs added to the stored table:
    /usr/bin/python3 validation/liu2000/liu2000.py --runs wsgg:2:0.2:sn8:gather --merge \
        --json validation/liu2000/results.json --results validation/liu2000/results.md --plot validation/liu2000/liu2000.png
"""
import argparse
import copy
import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
import dgrte_io as dio  # noqa: E402

MODELS = {  # reference label -> the DG case's model block (the same options the reference traced)
    "wsgg": {"type": "wsgg"},
    "snbck-lump32-g4": {"type": "snbck", "overlap": "mixture", "lumping": 32, "gauss_points": 4},
    "snbck-full": {"type": "snbck", "overlap": "mixture"},
}
FULL = "snbck-full"
# model:order:mesh size:angular set
DEFAULT_RUNS = ["wsgg:1:0.2:sn8", "wsgg:2:0.2:sn8", "wsgg:3:0.2:sn8", "wsgg:2:0.2:tn4", "wsgg:3:0.2:sn12",
                "wsgg:3:0.2:tn6", "wsgg:3:0.1:sn8", "wsgg:3:0.1:tn6", "snbck-lump32-g4:2:0.2:sn8",
                "snbck-lump32-g4:3:0.2:tn6", "snbck-full:2:0.2:sn8"]


def reference(label):
    path = HERE / "reference" / f"reference_{label}.csv"
    if not path.exists():
        sys.exit(f"{path}: no ray-traced reference for '{label}'; make it with raytrace_reference.py (README.md)")
    return np.genfromtxt(path, delimiter=",", names=True)


def errors(values, ref):
    scale = np.max(np.abs(ref))
    d = np.abs(values - ref) / scale
    return float(d.max()), float(d.mean())


def at(probe, column, z):
    """Probe values at the reference's z (the probes sample every 0.025 m, a multiple of every z)."""
    idx = [int(np.argmin(np.abs(probe["z"] - zi))) for zi in z]
    if np.max(np.abs(probe["z"][idx] - z)) > 1e-9:
        raise ValueError("probe points do not hit the reference z values")
    return probe[column][idx]


EXTRAS = {"gather", "unaligned", "nodes"}


def run_one(dgrte, template, spec, work, timeout):
    """spec: model:order:size:set, then any of `:gather` (the final gather with its defaults),
    `:unaligned` (enclosure_unaligned.geo: no element faces on the kink plane z = 0.375) and `:nodes`
    (solver.properties: nodes, the medium interpolated at the DG nodes)."""
    label, order, size, angular, *extra = spec.split(":")
    if not set(extra) <= EXTRAS or len(set(extra)) != len(extra):
        sys.exit(f"{spec}: model:order:size:set[:gather][:unaligned][:nodes] expected")
    if label not in MODELS:
        sys.exit(f"unknown model label {label}; known: {', '.join(MODELS)}")
    case = copy.deepcopy(template)
    case["order"] = int(order)
    case["mesh"]["size"] = float(size)
    case["angular"] = dio.parse_set(angular, axis="z")
    case["model"] = dict(MODELS[label])
    if "gather" in extra:
        case["output"]["final_gather"] = {}
    if "unaligned" in extra:
        case["mesh"]["geo"] = "enclosure_unaligned.geo"
    if "nodes" in extra:
        case.setdefault("solver", {})["properties"] = "nodes"
    tag = spec.replace(":", "_")
    run = dio.run_case(dgrte, case, work / tag, base=HERE, timeout=timeout)
    ref, full = reference(label), reference(FULL)
    wall, axis = run.probe("wall"), run.probe("axis")
    q = at(wall, "q_net", ref["z"])
    dq = at(axis, "divq", ref["z"])
    s = run.summary
    row = {"run": spec, "model": label, "order": int(order), "size": float(size), "angular": angular,
           "tets": run.elements, "directions": run.directions,
           "spectral_points": s["spectral"]["spectral_points"],
           "property_s": s["spectral"]["property_seconds"], "transport_s": s["spectral"]["transport_seconds"],
           "imbalance": s["energy_balance"]["relative_imbalance"], "gather": "gather" in extra,
           "unaligned": "unaligned" in extra, "properties": "nodes" if "nodes" in extra else "quadrature points",
           "gather_s": s["timing"].get("gather_seconds", 0.0), "solve_s": s["timing"]["solve_seconds"]}
    row["wall_max"], row["wall_mean"] = errors(q, ref["q_net_wall"])
    row["divq_max"], row["divq_mean"] = errors(dq, ref["divq_axis"])
    row["G_max"], row["G_mean"] = errors(at(axis, "G", ref["z"]), ref["G_axis"])
    if "gather" in extra:
        fg = s["final_gather"]
        row["gather_points"] = fg["receiver_points"]
        row["gather_rays_per_point"] = fg["rays_per_point"]["mean"]
        row["gather_segments_per_ray"] = fg["segments"] / max(fg["rays"], 1)
    row["full_wall_max"], row["full_wall_mean"] = errors(q, full["q_net_wall"])
    row["full_divq_max"], row["full_divq_mean"] = errors(dq, full["divq_axis"])
    curves = {"z": ref["z"].tolist(), "q_net": q.tolist(), "divq": dq.tolist()}
    return row, curves


def pct(x):
    return f"{100 * x:.3g} %"


def write_results(rows, curves, path, plot_path):
    head = ["run (model:P:h:set)", "tets", "points", "wall q_net max", "wall q_net mean", "div q max", "div q mean",
            "vs snbck-full: wall max / mean", "vs snbck-full: div q max / mean", "property s", "transport s", "gather s"]
    body = [[r["run"], r["tets"], r["spectral_points"], pct(r["wall_max"]), pct(r["wall_mean"]), pct(r["divq_max"]),
             pct(r["divq_mean"]), f"{pct(r['full_wall_max'])} / {pct(r['full_wall_mean'])}",
             f"{pct(r['full_divq_max'])} / {pct(r['full_divq_mean'])}", f"{r['property_s']:.1f}", f"{r['transport_s']:.1f}",
             f"{r['gather_s']:.1f}" if r.get("gather") else "off"]
            for r in rows]
    full = reference(FULL)
    model_rows = []
    for label in MODELS:
        if label == FULL:
            continue
        ref = reference(label)
        wm, wa = errors(ref["q_net_wall"], full["q_net_wall"])
        dm, da = errors(ref["divq_axis"], full["divq_axis"])
        model_rows.append([label, pct(wm), pct(wa), pct(dm), pct(da)])
    text = ("# Seed 004 section 4.1: Liu, Smallwood & Gulder (2000) enclosure, DG vs ray-traced references\n\n"
            "Generated by `validation/liu2000/liu2000.py`. Errors: |DG - reference| over the reference's z values "
            "(23 points), max and mean, relative to the reference's max |value|; 'wall' = net flux into the wall along "
            "(-1, 0, z), 'div q' along the axis. The first four error columns compare DG with the ray-traced reference "
            "of the same model (the DG space + angle error); 'vs snbck-full' compares it with the full-resolution SNBCK "
            "ray-traced reference (model + transport). Runs ending in `:gather` have `output.final_gather: {}` (the "
            "defaults): wall q_net, axis G and div q from rays through each spectral point's DG source. Seconds: "
            "`summary.json` `spectral.property_seconds` / `transport_seconds` / `timing.gather_seconds` on the 2-core "
            "machine, 2026-11-27.\n\n"
            + dio.markdown_table(head, body) + "\n\n"
            "Ray-traced models against the ray-traced full-resolution SNBCK (model error alone):\n\n" +
            dio.markdown_table(["model", "wall max", "wall mean", "div q max", "div q mean"], model_rows) + "\n")
    pathlib.Path(path).write_text(text)
    print(text)
    if plot_path:
        plot(curves, plot_path)


def plot(curves, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    for label in MODELS:
        ref = reference(label)
        style = {"color": "k", "lw": 2} if label == FULL else {"lw": 1, "ls": "--"}
        ax[0].plot(ref["z"], ref["q_net_wall"] / 1e3, label=f"ray-traced {label}", **style)
        ax[1].plot(ref["z"], ref["divq_axis"] / 1e3, label=f"ray-traced {label}", **style)
    markers = {"wsgg": "o", "snbck-lump32-g4": "s", "snbck-full": "D"}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (spec, c) in enumerate(curves.items()):
        style = {"marker": markers.get(spec.split(":")[0], "o"), "ls": "none", "ms": 3.5, "color": colors[k % len(colors)],
                 "mfc": "none" if spec.startswith("snbck") else colors[k % len(colors)], "label": f"DG {spec}"}
        ax[0].plot(c["z"], np.array(c["q_net"]) / 1e3, **style)
        ax[1].plot(c["z"], np.array(c["divq"]) / 1e3, **style)
    ax[0].set(xlabel="z [m]", ylabel="net wall flux at (-1, 0, z) [kW/m²]")
    ax[1].set(xlabel="z [m]", ylabel="div q at (0, 0, z) [kW/m³]")
    for a in ax:
        a.grid(alpha=0.3)
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", default=None)
    ap.add_argument("--runs", default=",".join(DEFAULT_RUNS),
                    help="comma-separated model:order:size:set[:gather] (gather: output.final_gather with its defaults)")
    ap.add_argument("--check", default=None,
                    help="WALL,DIVQ: fail if a run's max error against its same-model reference exceeds these fractions")
    ap.add_argument("--results", default=None, help="markdown table to write (default: none; the full run: results.md)")
    ap.add_argument("--plot", default=None, help="PNG of the curves")
    ap.add_argument("--json", default=None, help="rows as JSON")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other runs of the existing --json file (this call's runs replace theirs) in the results")
    ap.add_argument("--check-gather", default=None,
                    help="WALL,DIVQ: the same for the runs with the final gather (:gather)")
    ap.add_argument("--work", default=None)
    ap.add_argument("--timeout", type=float, default=None)
    a = ap.parse_args()
    dgrte = dio.find_dgrte(a.dgrte)
    template = dio.load_case(HERE / "enclosure.yaml")
    step = 0.025  # probe spacing: every reference z is a multiple
    for p in template["output"]["probes"]:
        p["points"] = int(round((p["to"][2] - p["from"][2]) / step)) + 1
    rows, curves = [], {}
    with dio.WorkDir(a.work, prefix="dgrte_liu2000_") as work:
        for spec in a.runs.split(","):
            row, c = run_one(dgrte, template, spec, work, a.timeout)
            rows.append(row)
            curves[spec] = c
            print(f"{spec}: wall {pct(row['wall_max'])} (mean {pct(row['wall_mean'])}), div q {pct(row['divq_max'])} "
                  f"(mean {pct(row['divq_mean'])}); vs {FULL}: wall {pct(row['full_wall_max'])}, div q "
                  f"{pct(row['full_divq_max'])}; property {row['property_s']:.1f} s, transport {row['transport_s']:.1f} s"
                  + (f", gather {row['gather_s']:.1f} s" if row["gather"] else ""),
                  flush=True)
    if a.merge and a.json and pathlib.Path(a.json).exists():
        old = json.loads(pathlib.Path(a.json).read_text())
        fresh = {r["run"] for r in rows}
        rows = [r for r in old["rows"] if r["run"] not in fresh] + rows
        curves = {**{k: v for k, v in old["curves"].items() if k not in fresh}, **curves}
    if a.results:
        write_results(rows, curves, a.results, a.plot)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"rows": rows, "curves": curves}, indent=1))
    failed = False
    for bounds, gathered in ((a.check, False), (a.check_gather, True)):
        if not bounds:
            continue
        wall_bound, divq_bound = (float(x) for x in bounds.split(","))
        checked = [r for r in rows if bool(r.get("gather")) == gathered and r.get("properties") != "nodes"]
        kind = "gathered runs" if gathered else "runs without the gather"
        if not checked:
            print(f"FAILED: no {kind} to check")
            failed = True
            continue
        # Runs with solver.properties: nodes are the negative control of the property evaluation: on the
        # unaligned mesh their div q must exceed the bound that the default evaluation meets.
        for r in rows:
            if bool(r.get("gather")) == gathered and r.get("properties") == "nodes" and not r["divq_max"] > divq_bound:
                print(f"FAILED: {r['run']} (solver.properties: nodes) within div q {divq_bound:g}: the case no longer tells "
                      "the property evaluations apart")
                failed = True
        bad = [r["run"] for r in checked if r["wall_max"] > wall_bound or r["divq_max"] > divq_bound]
        if bad:
            print(f"FAILED: {', '.join(bad)} above wall {wall_bound:g} / div q {divq_bound:g} of the reference maximum")
            failed = True
        else:
            print(f"check passed: {kind} within wall {wall_bound:g} and div q {divq_bound:g} of the reference maximum")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
