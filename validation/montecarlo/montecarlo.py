#!/usr/bin/env python3
"""Monte Carlo ray tracing (solver.method: montecarlo) against exact answers, with its error bars.

1. Isothermal cube with cold black walls, kappa = 0.1, 1, 10 (validation/isothermal_cube's exact
   solid-angle integrals): G on the axis and q_in on the wall x = 0 (backward probe estimator), the
   mean incident flux of each wall (forward estimator) against the exact face average, and the
   standard error falling as 1/sqrt(paths).
2. Plane-parallel scattering slab (validation/scattering_slab's exact-in-tau DO reference, N = 128
   per half range): omega = 0.9 with isotropic, HG g = 0.8 and HG g = -0.4 scattering; diffuse
   incidence, collimated beam and emitting medium; G and q on the axis (probes) and q at both walls
   (forward estimator).
3. Equilibrium: isothermal enclosure with gray (diffuse and partly specular) walls at the medium's
   temperature, scattering: G = 4 sigma T^4, q = 0.
4. Nongray: the S1 layered slab of validation/gas3d with WSGG and SNBCK (lumped, 61 points): wall
   fluxes against the exact 1-D slab solver with the same model (`dgrte slab`).

Every comparison is reported as z = (MC - exact) / (MC standard error). With correct estimators and
error bars z is standard normal: about 95 % of points within 2 sigma, 99.7 % within 3 sigma.

  /usr/bin/python3 montecarlo.py [--dgrte PATH] [--coarse] [--check] [--no-plot] [--out DIR]
"""
import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
sys.path.insert(0, str(HERE.parent / "isothermal_cube"))
import dgrte_io as dio  # noqa: E402
import isothermal_cube as cube  # noqa: E402

SLAB_GEO = HERE.parent / "scattering_slab" / "slab.geo"
CUBE_GEO = HERE.parent / "isothermal_cube" / "cube.geo"
SLAB_REFERENCE = HERE.parent / "scattering_slab" / "reference.csv"
T_HOT = 1000.0
F_BEAM = 1000.0
PHASES = {"iso": {"type": "isotropic"}, "hg0.8": {"type": "henyey-greenstein", "g": 0.8},
          "hg-0.4": {"type": "henyey-greenstein", "g": -0.4}}


def solver(paths, probe_rays, seed=1, batches=20):
    return {"method": "montecarlo", "paths": float(paths), "batches": batches, "seed": seed, "probe_rays": float(probe_rays)}


def zstats(value, error, exact):
    z = (np.asarray(value) - np.asarray(exact)) / np.maximum(np.asarray(error), 1e-300)
    return {"points": int(z.size), "max_abs_z": float(np.max(np.abs(z))), "within_2sigma": float(np.mean(np.abs(z) < 2)),
            "within_3sigma": float(np.mean(np.abs(z) < 3)),
            "max_rel_error": float(np.max(np.abs(np.asarray(value) - exact)) / np.max(np.abs(exact))),
            "max_rel_stderr": float(np.max(np.asarray(error)) / np.max(np.abs(exact)))}


def face_average_qin(kappa, n=24):
    """Exact mean of q_in over the wall x = 0 (Gauss-Legendre n x n over the face)."""
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = 0.5 * (x + 1), 0.5 * w
    pts = np.array([[0.0, a, b] for a in x for b in x])
    return float(np.sum(np.outer(w, w).ravel() * cube.exact_qin(pts, kappa)))


def run_cube(args, dgrte, out):
    rows, curves = [], {}
    paths, rays, points = (4e5, 2e4, 11) if args.coarse else (4e6, 1e5, 21)
    for kappa in cube.KAPPAS:
        case = {"mesh": {"geo": str(CUBE_GEO), "size": 0.2}, "media": {"*": {"kappa": f"{kappa:g}", "Ib": "1"}},
                "boundaries": {"*": {"type": "black", "temperature": 0}}, "solver": solver(paths, rays),
                "output": {"vtk": False, "probes": [
                    {"name": "axis", "from": [0, 0.5, 0.5], "to": [1, 0.5, 0.5], "points": points},
                    {"name": "wall", "from": [0, 0.5, 0], "to": [0, 0.5, 1], "points": points, "wall": "xmin"}]}}
        run = dio.run_case(dgrte, case, out / f"cube_k{kappa:g}", timeout=600)
        axis, wall = dio.read_probe(run.outdir / "probes" / "axis.csv"), dio.read_probe(run.outdir / "probes" / "wall.csv")
        pa = np.stack([axis["x"], axis["y"], axis["z"]], axis=1)
        pw = np.stack([wall["x"], wall["y"], wall["z"]], axis=1)
        G_ex, q_ex = cube.exact_G(pa, kappa), cube.exact_qin(pw, kappa)
        mean_q = face_average_qin(kappa)
        walls = run.summary["walls"]
        fw = np.array([walls[g]["q_in_W"] / walls[g]["area"] for g in sorted(walls)])
        fe = np.array([walls[g]["q_in_W_stderr"] / walls[g]["area"] for g in sorted(walls)])
        mc = run.summary["montecarlo"]
        for what, v, e, ex in (("G axis (backward)", axis["G"], axis["G_stderr"], G_ex),
                               ("q_in wall x=0 (backward)", wall["q_in"], wall["q_in_stderr"], q_ex),
                               ("mean q_in per wall (forward)", fw, fe, np.full(6, mean_q))):
            rows.append({"case": f"cube kappa={kappa:g}", "quantity": what, **zstats(v, e, ex),
                         "lost": mc["lost_rays"] + mc["probe_lost_rays"]})
        curves[f"cube{kappa:g}"] = {"x": axis["x"].tolist(), "G": axis["G"].tolist(), "G_err": axis["G_stderr"].tolist(),
                                    "G_exact": G_ex.tolist(), "z": wall["z"].tolist(), "q": wall["q_in"].tolist(),
                                    "q_err": wall["q_in_stderr"].tolist(), "q_exact": q_ex.tolist()}
        rows[-1]["paths_per_second"] = mc["paths_per_second"]
        rows[-1]["segments_per_second"] = mc["segments_per_second"]
    # 1/sqrt(N): the wall-mean standard errors with 4x the paths (kappa = 1).
    errs = []
    for k, n in enumerate((paths / 4, paths)):
        case = {"mesh": {"geo": str(CUBE_GEO), "size": 0.2}, "media": {"*": {"kappa": "1", "Ib": "1"}},
                "boundaries": {"*": {"type": "black", "temperature": 0}}, "solver": solver(n, 100, seed=11 + k),
                "output": {"vtk": False}}
        run = dio.run_case(dgrte, case, out / f"cube_sqrt{k}", timeout=600)
        errs.append(np.array([w["q_in_W_stderr"] for w in run.summary["walls"].values()]))
    ratio = float(np.mean(errs[1] / errs[0]))
    return rows, curves, ratio


def slab_reference():
    ref = {}
    for line in SLAB_REFERENCE.read_text().splitlines():
        if line.startswith("#") or line.startswith("problem"):
            continue
        p, ph, om, tau, G, q = line.split(",")
        ref.setdefault((p, ph, float(om)), []).append((float(tau), float(G), float(q)))
    return {k: np.array(v) for k, v in ref.items()}


def run_slab(args, dgrte, out):
    ref = slab_reference()
    rows, curves = [], {}
    paths, rays = (2e5, 4000) if args.coarse else (2e6, 40000)
    phases = ["hg0.8"] if args.coarse else list(PHASES)
    problems = ["collimated"] if args.coarse else ["diffuse", "collimated", "emitting"]
    omega, area = 0.9, 0.2 * 0.2
    for phase in phases:
        for problem in problems:
            media = {"kappa": f"{1 - omega:g}", "scattering": f"{omega:g}", "phase_function": PHASES[phase], "Ib": "0"}
            bounds = {"sides": {"type": "symmetry"}, "*": {"type": "black", "temperature": 0}}
            case = {"mesh": {"geo": str(SLAB_GEO), "size": 0.1}, "media": {"*": media}, "boundaries": bounds,
                    "solver": solver(paths, rays),
                    "output": {"vtk": False, "probes": [{"name": "axis", "from": [0, 0.1, 0.1], "to": [1, 0.1, 0.1], "points": 11}]}}
            if problem == "diffuse":
                bounds["xmin"] = {"type": "black", "temperature": T_HOT}
                scale, leaving0 = dio.SIGMA * T_HOT ** 4, dio.SIGMA * T_HOT ** 4
            elif problem == "collimated":
                case["collimated"] = [{"boundary": "xmin", "direction": [1.0, 0.0, 0.0], "flux": F_BEAM}]
                scale, leaving0 = F_BEAM, F_BEAM
            else:
                media["Ib"] = "1"
                scale, leaving0 = math.pi, 0.0
            case["boundaries"] = dict(sorted(bounds.items(), key=lambda kv: kv[0] == "*"))
            run = dio.run_case(dgrte, case, out / f"slab_{problem}_{phase}", timeout=600)
            p = dio.read_probe(run.outdir / "probes" / "axis.csv")
            r = ref[(problem, phase, omega)]
            tau = np.round(p["x"], 6)
            G_ex = np.interp(tau, r[:, 0], r[:, 1]) * scale
            q_ex = np.interp(tau, r[:, 0], r[:, 2]) * scale
            w = run.summary["walls"]
            q0 = leaving0 - w["xmin"]["q_in_W"] / area
            q1 = w["xmax"]["q_in_W"] / area
            qw = np.array([q0, q1])
            qw_err = np.array([w["xmin"]["q_in_W_stderr"], w["xmax"]["q_in_W_stderr"]]) / area
            mc = run.summary["montecarlo"]
            label = f"slab {problem} {phase} omega={omega:g}"
            for what, v, e, ex in (("G axis (backward)", p["G"], p["G_stderr"], G_ex), ("q axis (backward)", p["qx"], p["qx_stderr"], q_ex),
                                   ("q at both walls (forward)", qw, qw_err, np.array([r[0, 2], r[-1, 2]]) * scale)):
                rows.append({"case": label, "quantity": what, **zstats(v, e, ex), "lost": mc["lost_rays"] + mc["probe_lost_rays"]})
            rows[-1]["paths_per_second"] = mc["paths_per_second"]
            rows[-1]["segments_per_second"] = mc["segments_per_second"]
            curves[f"{problem}_{phase}"] = {"x": p["x"].tolist(), "G": (p["G"] / scale).tolist(), "G_err": (p["G_stderr"] / scale).tolist(),
                                            "tau_ref": r[:, 0].tolist(), "G_ref": r[:, 1].tolist()}
    return rows, curves


def run_equilibrium(args, dgrte, out):
    paths, rays = (2e5, 5000) if args.coarse else (2e6, 40000)
    case = {"mesh": {"geo": str(SLAB_GEO), "size": 0.1},
            "media": {"*": {"kappa": "0.7", "scattering": "1.3", "phase_function": {"type": "henyey-greenstein", "g": 0.6},
                            "temperature": f"{T_HOT:g}"}},
            "boundaries": {"xmin": {"type": "gray", "emissivity": 0.4, "temperature": T_HOT},
                           "xmax": {"type": "gray", "emissivity": 0.7, "specular_fraction": 0.5, "temperature": T_HOT},
                           "sides": {"type": "symmetry"}},
            "solver": solver(paths, rays),
            "output": {"vtk": False, "probes": [{"name": "axis", "from": [0, 0.1, 0.1], "to": [1, 0.1, 0.1], "points": 11}]}}
    run = dio.run_case(dgrte, case, out / "equilibrium", timeout=600)
    p = dio.read_probe(run.outdir / "probes" / "axis.csv")
    G_ex = 4 * dio.SIGMA * T_HOT ** 4
    mc = run.summary["montecarlo"]
    w = run.summary["walls"]
    net = np.array([w[g]["q_net_W"] for g in ("xmin", "xmax")])
    net_err = np.array([w[g]["q_net_W_stderr"] for g in ("xmin", "xmax")])
    rows = [{"case": "equilibrium (gray walls, HG 0.6)", "quantity": "G axis (backward)", **zstats(p["G"], p["G_stderr"], np.full(len(p["G"]), G_ex)),
             "lost": mc["lost_rays"] + mc["probe_lost_rays"]}]
    z = net / net_err
    rows.append({"case": "equilibrium (gray walls, HG 0.6)", "quantity": "q_net of the end walls (forward)", "points": 2,
                 "max_abs_z": float(np.max(np.abs(z))), "within_2sigma": float(np.mean(np.abs(z) < 2)),
                 "within_3sigma": float(np.mean(np.abs(z) < 3)), "max_rel_error": float(np.max(np.abs(net)) / (G_ex / 4 * 0.04)),
                 "max_rel_stderr": float(np.max(net_err) / (G_ex / 4 * 0.04)), "lost": mc["lost_rays"]})
    return rows


def run_nongray(args, dgrte, out):
    """Nongray: the S1 slab of validation/gas3d (hot layer 0.5 m at 2000 K + cold layer L_c at 300 K,
    H2O 0.2 / CO2 0.1, cold black walls) as a box with mirror sides; wall fluxes of the forward
    estimator against `dgrte slab` with the same gas model (exact 1-D)."""
    sys.path.insert(0, str(HERE.parent / "gas3d"))
    import gas3d
    rows = []
    models = ["wsgg-bordbar2014"] if args.coarse else ["wsgg-bordbar2014", "snbck-lump32-g4", "lbl-h2o"]
    # Line by line: the HITRAN H2O fragment 2000-2100 cm^-1 every 0.05 cm^-1 (2,002 spectral points,
    # the rest of the spectrum transparent); Monte Carlo samples the wavenumbers (spectral sampling
    # by path), the slab solver integrates every one.
    model_specs = dict(gas3d.MODELS)
    model_specs["lbl-h2o"] = {"type": "lbl", "par_files": [str(dio.REPO / "gasdata" / "lbl" / "hitran_fragments" /
                                                               "hitran_2016_H2O_2iso_2000_2100cm.par")],
                              "nu_min": 2000, "nu_max": 2100, "dnu": 0.05}
    thicknesses = [0.5] if args.coarse else [0.5, 2.0]
    paths = 2e5 if args.coarse else 2e6

    class Mesh:
        size, order, polar, azimuthal = 0.1, 1, 4, 4
    for model in models:
        v, e, ex = [], [], []
        for lc in thicknesses:
            spec = gas3d.layers_case("S1")[0][0](lc)
            d = (out / f"S1_{lc:g}_{model}").resolve()
            d.mkdir(parents=True, exist_ok=True)
            geo = d / "box.geo"
            geo.write_text(gas3d.geo_text(spec))
            case = gas3d.case_3d(spec, geo, model_specs[model], Mesh)
            case.pop("angular")
            case.pop("order")
            case["solver"] = solver(paths, 100)
            case["output"] = {"vtk": False}
            run = dio.run_case(dgrte, case, d / "mc", timeout=1800)
            _, slab = gas3d.run_slab(pathlib.Path(dgrte), spec, model_specs[model], d / "slab")
            w = run.summary["walls"]
            area = gas3d.WIDTH ** 2
            v += [w["xmin"]["q_net_mean"], w["xmax"]["q_net_mean"]]
            e += [w["xmin"]["q_net_W_stderr"] / area, w["xmax"]["q_net_W_stderr"] / area]
            ex += [-slab["wall_fluxes"]["left"], slab["wall_fluxes"]["right"]]
            mc = run.summary["montecarlo"]
            points = run.summary["spectral"]["spectral_points"]
            traced = mc["spectral_points_traced"]
        rows.append({"case": f"S1 slab, {model} ({points} points, {traced} traced), L_c = {', '.join(f'{t:g}' for t in thicknesses)} m",
                     "quantity": "wall q_net, both walls (forward) vs dgrte slab", **zstats(v, e, np.array(ex)),
                     "lost": mc["lost_rays"], "paths_per_second": mc["paths_per_second"], "segments_per_second": mc["segments_per_second"]})
    return rows


def plot(out, curves):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.3))
    for kappa in cube.KAPPAS:
        c = curves.get(f"cube{kappa:g}")
        if not c:
            continue
        ax[0].plot(c["x"], c["G_exact"], "k-", lw=0.8)
        ax[0].errorbar(c["x"], c["G"], yerr=c["G_err"], fmt="o", ms=3, capsize=2, label=f"kappa = {kappa:g}")
        ax[1].plot(c["z"], c["q_exact"], "k-", lw=0.8)
        ax[1].errorbar(c["z"], c["q"], yerr=c["q_err"], fmt="o", ms=3, capsize=2, label=f"kappa = {kappa:g}")
    ax[0].set(title="isothermal cube: G on the axis (MC, exact -)", xlabel="x [m]", ylabel="G [W/m^2]")
    ax[1].set(title="isothermal cube: q_in on x = 0 (MC, exact -)", xlabel="z [m]", ylabel="q_in [W/m^2]")
    for name, c in curves.items():
        if name.startswith("cube"):
            continue
        ax[2].plot(c["tau_ref"], c["G_ref"], "k-", lw=0.8)
        ax[2].errorbar(c["x"], c["G"], yerr=c["G_err"], fmt="o", ms=3, capsize=2, label=name.replace("_", ", "))
    ax[2].set(title="slab tau_L = 1, omega = 0.9: G (MC, DO reference -)", xlabel="tau", ylabel="G / (E, F0 or pi I_b)")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "montecarlo.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte")
    ap.add_argument("--coarse", action="store_true", help="fewer paths and cases (the CTest)")
    ap.add_argument("--check", action="store_true", help="fail unless every |z| < 4.5, >= 85 %% within 2 sigma, "
                                                          ">= 95 %% within 3 sigma, no lost rays, and sigma falls as 1/sqrt(N)")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--parts", default="cube,slab,equilibrium,nongray",
                    help="comma-separated subset of cube, slab, equilibrium, nongray (the negative control runs one)")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dgrte = dio.find_dgrte(args.dgrte)
    work = out / "runs"
    t0 = time.time()
    rows, curves, ratio = run_cube(args, dgrte, work) if "cube" in parts else ([], {}, None)
    if "slab" in parts:
        slab_rows, slab_curves = run_slab(args, dgrte, work)
        rows += slab_rows
        curves.update(slab_curves)
    rows += (run_equilibrium(args, dgrte, work) if "equilibrium" in parts else []) + \
        (run_nongray(args, dgrte, work) if "nongray" in parts else [])
    seconds = time.time() - t0
    allz = [r["max_abs_z"] for r in rows]
    n = sum(r["points"] for r in rows)
    in2 = sum(r["within_2sigma"] * r["points"] for r in rows) / n
    in3 = sum(r["within_3sigma"] * r["points"] for r in rows) / n
    lost = sum(r["lost"] for r in rows)
    table = dio.markdown_table(
        ["case", "quantity", "points", "max abs z", "within 2 sigma", "within 3 sigma", "max error / max", "max sigma / max"],
        [[r["case"], r["quantity"], r["points"], f"{r['max_abs_z']:.2f}", f"{100 * r['within_2sigma']:.0f} %",
          f"{100 * r['within_3sigma']:.0f} %", dio.pct(r["max_rel_error"]), dio.pct(r["max_rel_stderr"])] for r in rows])
    speed = dio.markdown_table(["case", "paths/s", "segments/s"],
                               [[r["case"], f"{r['paths_per_second']:.3g}", f"{r['segments_per_second']:.3g}"] for r in rows
                                if "paths_per_second" in r])
    text = "\n".join([
        "# Monte Carlo against exact answers", "",
        f"`montecarlo.py{' --coarse' if args.coarse else ''}`, {time.strftime('%Y-%m-%d')}, {seconds:.0f} s. z = (MC - exact) / "
        "(MC standard error from 20 batches); for a correct estimator with correct error bars z is standard normal.", "",
        f"All {n} points: {100 * in2:.1f} % within 2 sigma (95.4 % expected), {100 * in3:.1f} % within 3 sigma (99.7 %), "
        f"largest |z| {max(allz):.2f}; lost rays {lost}." + ("" if ratio is None else f" Standard error with 4x the paths: "
        f"{ratio:.3f} of the original (1/sqrt(4) = 0.5)."), "", table, "", "Throughput (2 cores, `OMP_WAIT_POLICY=passive`; forward estimator):", "", speed, ""])
    (out / "results.md").write_text(text)
    (out / "results.json").write_text(json.dumps({"rows": rows, "sqrt_ratio": ratio, "curves": curves}, indent=1))
    if not args.no_plot:
        plot(out, curves)
    print(text)
    if args.check:
        failures = []
        if max(allz) >= 4.5:
            failures.append(f"largest |z| {max(allz):.2f} >= 4.5")
        if in2 < 0.85 or in3 < 0.95:
            failures.append(f"{100 * in2:.1f} % within 2 sigma, {100 * in3:.1f} % within 3 sigma")
        if lost:
            failures.append(f"{lost} lost rays")
        if ratio is not None and not 0.4 <= ratio <= 0.62:
            failures.append(f"standard error ratio with 4x paths {ratio:.3f} not in [0.4, 0.62]")
        if failures:
            sys.exit("FAILED: " + "; ".join(failures))
        print("all checks passed")


if __name__ == "__main__":
    main()
