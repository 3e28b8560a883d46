#!/usr/bin/python3
"""Plane-parallel scattering slab: independent 1-D reference (slab1d.py) and the dgrte comparison.

Slab of optical thickness tau_L (default 1), single-scattering albedo omega = 0.5, 0.9, 0.99,
phase function isotropic, Henyey-Greenstein g = 0.8 and g = -0.4, three problems:
  diffuse    black wall at tau = 0 with emissive power E (diffuse incidence), cold black wall at
             tau_L, cold medium;                           G, q in units of E
  collimated beam of flux F0 at normal incidence (mu0 = 1) entering at tau = 0, cold black walls
             (the beam is not reflected), cold medium;      G, q in units of F0 (beam included)
  emitting   medium at uniform blackbody intensity I_b, cold black walls; G, q in units of pi I_b

Reference: discrete ordinates in mu (double-Gauss, N per half range, default 128), exact in tau
(eigenvalue method), Legendre-expanded azimuthal phase function up to l = 2N - 1 (or the exact
azimuthally averaged HG). `--self-test` checks it against: the pure-absorber exact solutions
(E-functions, and the gray-wall slab of ../gray_slab), an independent integral-equation solver
(isotropic scattering, Richardson-extrapolated), flux conservation for omega = 1, superposition and
equilibrium identities, Chandrasekhar's H-function (semi-infinite plane albedo
1 - sqrt(1 - omega) H(mu0), the moment identity alpha_0 = 2 (1 - sqrt(1 - omega)) / omega, and the
conservative H(1) = 2.9078 of Chandrasekhar's table), convergence in N and in the Legendre order.
It writes reference.md and reference.csv (G and q on a tau grid for all 27 problems).

The 3-D comparison runs dgrte on a 1 x 0.2 x 0.2 m box (beta = tau_L / 1 m, kappa = (1 - omega)
beta, scattering = omega beta; mirror sides; the beam as `collimated: [{boundary: xmin, direction:
[1, 0, 0], flux: 1000}]`) and compares G and q_x (totals, beam included) on the axis.

Examples:
    scattering_slab.py --self-test
    scattering_slab.py --dgrte build/src/app/dgrte
    scattering_slab.py --dgrte build/src/app/dgrte --coarse --no-plot
"""
import argparse
import copy
import math
import pathlib
import sys
import time

import numpy as np
from scipy import integrate
from scipy.special import expn

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
sys.path.insert(0, str(HERE))
import dgrte_io as dio  # noqa: E402
from slab1d import DOSlab, Phase, chandrasekhar_H, integral_equation_slab  # noqa: E402

OMEGAS = [0.5, 0.9, 0.99]
PHASES = {"iso": Phase("isotropic"), "hg0.8": Phase("hg", g=0.8), "hg-0.4": Phase("hg", g=-0.4)}
PROBLEMS = ["diffuse", "collimated", "emitting"]


def reference(problem, tau_L, omega, phase, N=128, mode="legendre"):
    """DOSlab for one problem, normalised: E = 1 (diffuse), F0 = 1 (collimated), pi I_b = 1 (emitting)."""
    if problem == "diffuse":
        return DOSlab(tau_L, omega, phase, N=N, phase_mode=mode, bottom={"E": 1.0})
    if problem == "collimated":
        return DOSlab(tau_L, omega, phase, N=N, phase_mode=mode, F0=1.0, mu0=1.0)
    if problem == "emitting":
        return DOSlab(tau_L, omega, phase, N=N, phase_mode=mode, Ib=1.0 / math.pi)
    raise ValueError(problem)


# ---------------------------------------------------------------------------------------------
# Self-test.

def plot_reference(out, tau_L, N):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5))
    tf = tau_L * np.linspace(0, 1, 201)
    styles = {"iso": "-", "hg0.8": "--", "hg-0.4": ":"}
    for j, problem in enumerate(PROBLEMS):
        for name, ph in PHASES.items():
            for k, omega in enumerate(OMEGAS):
                s = reference(problem, tau_L, omega, ph, N)
                col = f"C{k}"
                axes[0, j].plot(tf, s.G(tf), styles[name], color=col, lw=1.2, label=f"{name}, omega {omega:g}")
                axes[1, j].plot(tf, s.q(tf), styles[name], color=col, lw=1.2, label=f"{name}, omega {omega:g}")
        unit = {"diffuse": "E", "collimated": "F0", "emitting": "pi I_b"}[problem]
        axes[0, j].set_title(f"{problem}: G / {unit}")
        axes[1, j].set_title(f"{problem}: q / {unit}")
        for a in axes[:, j]:
            a.set_xlabel("tau")
            a.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=6, ncol=1)
    fig.suptitle(f"Plane-parallel slab reference, tau_L = {tau_L:g} (slab1d.DOSlab, N = {N})")
    fig.tight_layout()
    fig.savefig(out / "reference.png", dpi=110)
    plt.close(fig)


def self_test(out, tau_L, N):
    checks = []

    def check(name, value, bound):
        checks.append((name, float(value), bound))

    t0 = time.time()
    tg = tau_L * np.linspace(0, 1, 21)
    iso = PHASES["iso"]
    # 1. pure absorber: exact E-function solutions
    s = reference("diffuse", tau_L, 0.0, iso, N)
    check("omega=0 diffuse: G vs 2 E E2(tau)", np.max(np.abs(s.G(tg) - 2 * expn(2, tg))) / 2, 1e-10)
    check("omega=0 diffuse: q vs 2 E E3(tau)", np.max(np.abs(s.q(tg) - 2 * expn(3, tg))), 1e-10)
    s = reference("emitting", tau_L, 0.0, iso, N)
    check("omega=0 emitting: G vs 2 E_b (2 - E2(tau) - E2(tau_L - tau))",
          np.max(np.abs(s.G(tg) - 2 * (2 - expn(2, tg) - expn(2, tau_L - tg)))) / 4, 1e-10)
    check("omega=0 emitting: q vs 2 E_b (E3(tau_L - tau) - E3(tau))",
          np.max(np.abs(s.q(tg) - 2 * (expn(3, tau_L - tg) - expn(3, tg)))), 1e-10)
    for mu0 in (1.0, 0.5):
        s = DOSlab(tau_L, 0.0, iso, N=N, F0=1.0, mu0=mu0)
        check(f"omega=0 collimated mu0={mu0:g}: G vs F0 exp(-tau/mu0), q vs mu0 F0 exp(-tau/mu0)",
              max(np.max(np.abs(s.G(tg) - np.exp(-tg / mu0))), np.max(np.abs(s.q(tg) - mu0 * np.exp(-tg / mu0)))), 1e-13)
    try:
        sys.path.insert(0, str(HERE.parent / "gray_slab"))
        import gray_slab as gs
        Eg, Ew = gs.SIGMA * gs.T_GAS ** 4, gs.SIGMA * gs.T_WALL ** 4
        for tl in (0.1, 1.0, 10.0):
            tt = tl * np.linspace(0, 1, 21)
            ex = gs.exact_slab(tl, tt)
            s = DOSlab(tl, 0.0, iso, N=N, bottom={"eps": gs.EPS, "E": Ew}, top={"eps": gs.EPS, "E": Ew}, Ib=Eg / math.pi)
            # (bound 1e-7: near the walls, tau <~ 0.01, the DO set in mu resolves exp(-tau/mu) to ~1e-8)
            check(f"omega=0 gray walls (Coelho slab, tau_L={tl:g}): G vs gray_slab.exact_slab (rel. to 4 E_g)",
                  np.max(np.abs(s.G(tt) - ex["G"])) / (4 * Eg), 1e-7)
    except ImportError:
        pass
    # 2. independent integral-equation solver (isotropic scattering), Richardson-extrapolated
    n1 = 400
    for omega in OMEGAS:
        for problem, kw in (("diffuse", {"Iw0": 1 / math.pi}), ("collimated", {"F0": 1.0}), ("emitting", {"Ib": 1 / math.pi})):
            _, G1, q1 = integral_equation_slab(tau_L, omega, n1, **kw)
            _, G2, q2 = integral_equation_slab(tau_L, omega, 2 * n1, **kw)
            Gr = (4 * G2[::2 * n1 // 20] - G1[::n1 // 20]) / 3
            qr = (4 * q2[::2 * n1 // 20] - q1[::n1 // 20]) / 3
            s = reference(problem, tau_L, omega, iso, N)
            check(f"isotropic omega={omega:g} {problem}: DO vs integral equation, G (rel. to max)",
                  np.max(np.abs(s.G(tg) - Gr)) / np.max(np.abs(Gr)), 1e-6)
            check(f"isotropic omega={omega:g} {problem}: DO vs integral equation, q (rel. to max)",
                  np.max(np.abs(s.q(tg) - qr)) / np.max(np.abs(qr)), 1e-6)
    # 3. conservation and identities
    for name, ph in PHASES.items():
        for problem in ("diffuse", "collimated"):
            s = reference(problem, tau_L, 1.0, ph, N)
            q = s.q(tg)
            check(f"omega=1 {name} {problem}: q constant, max |q - q(0)| / q(0)", np.max(np.abs(q - q[0])) / abs(q[0]), 1e-12)
        s = reference("diffuse", tau_L, 1.0, ph, N)
        check(f"omega=1 {name} diffuse: G(tau) + G(tau_L - tau) = 4 E (superposition)",
              np.max(np.abs(s.G(tg) + s.G(tau_L - tg) - 4)) / 4, 1e-12)
        s = DOSlab(tau_L, 0.9, ph, N=N, bottom={"eps": 0.6, "E": 1.0}, top={"eps": 0.3, "E": 1.0}, Ib=1 / math.pi)
        check(f"omega=0.9 {name}: equilibrium (gray walls at the medium's temperature): G = 4 E, q = 0",
              max(np.max(np.abs(s.G(tg) - 4)) / 4, np.max(np.abs(s.q(tg)))), 1e-12)
        for omega in OMEGAS:
            for problem in PROBLEMS:
                s = reference(problem, tau_L, omega, ph, N)
                check(f"omega={omega:g} {name} {problem}: dq/dtau of the solution vs (1 - omega)(4 pi I_b - G)",
                      np.max(np.abs(s.dqdtau(tg) - s.balance(tg))) / max(np.max(np.abs(s.G(tg))), 1e-300), 1e-11)
    # 4. Chandrasekhar's H-function: semi-infinite plane albedo, moment identity, tabulated H(1)
    for omega in OMEGAS:
        Hf, x, a, H = chandrasekhar_H(omega)
        check(f"H-function omega={omega:g}: alpha_0 = int H dmu vs 2 (1 - sqrt(1 - omega)) / omega",
              abs(np.sum(a * H) - 2 * (1 - math.sqrt(1 - omega)) / omega), 1e-12)
        thick = 80.0 if omega < 0.99 else 300.0
        for mu0 in (1.0, 0.5):
            s = DOSlab(thick, omega, iso, N=N, F0=1.0, mu0=mu0)
            A = 1 - s.q([0.0])[0] / mu0
            check(f"omega={omega:g} mu0={mu0:g}: plane albedo of a tau={thick:g} slab vs 1 - sqrt(1 - omega) H(mu0)",
                  abs(A - (1 - math.sqrt(1 - omega) * Hf(mu0)[0])), 1e-10)
    Hf, x, a, H = chandrasekhar_H(1.0)
    check("H-function omega=1: H(1) vs 2.9078 (Chandrasekhar, Radiative Transfer, 1960, table of H for omega0 = 1)",
          abs(Hf(1.0)[0] - 2.9078), 1e-4)
    check("H-function omega=1: alpha_1 = int mu H dmu vs 2 / sqrt(3)", abs(np.sum(a * x * H) - 2 / math.sqrt(3)), 1e-10)
    # 5. phase functions: exact azimuthal HG vs direct phi quadrature; Legendre truncation
    for g in (0.8, -0.4):
        ph = Phase("hg", g=g)
        err = 0.0
        for mu, mup in ((0.3, 0.9), (-0.7, 0.2), (0.99, 0.98), (0.0, 0.5), (-0.95, -0.9)):
            direct = integrate.quad(lambda f: ph.p_hg(mu * mup + math.sqrt((1 - mu * mu) * (1 - mup * mup)) * math.cos(f)),
                                    0, math.pi, epsabs=1e-13, epsrel=1e-13, limit=200)[0] / math.pi
            err = max(err, abs(ph.p0_exact_hg(mu, mup) - direct) / direct)
        check(f"HG g={g:g}: azimuthal average by elliptic integral vs direct phi quadrature (rel.)", err, 1e-12)
    trunc_rows = []
    for name in ("hg0.8", "hg-0.4"):
        ph = PHASES[name]
        for problem in ("diffuse", "collimated"):
            ex = DOSlab(tau_L, 0.9, ph, N=N, phase_mode="exact", **({"bottom": {"E": 1.0}} if problem == "diffuse" else {"F0": 1.0}))
            row = [name, problem]
            for L in (8, 16, 32, 64, 2 * N - 1):
                s = DOSlab(tau_L, 0.9, ph, N=N, L=L, **({"bottom": {"E": 1.0}} if problem == "diffuse" else {"F0": 1.0}))
                d = max(np.max(np.abs(s.G(tg) - ex.G(tg))) / np.max(ex.G(tg)), np.max(np.abs(s.q(tg) - ex.q(tg))) / np.max(ex.q(tg)))
                row.append(f"{d:.1e}")
            trunc_rows.append(row)
            check(f"omega=0.9 {name} {problem}: Legendre l <= {2 * N - 1} vs exact azimuthal HG (G, q rel. to max)", d, 1e-9)
    # 6. convergence in N (omega = 0.99, the most scattering case; 2N = 256 costs ~1 s per problem)
    conv = 0.0
    for name, ph in PHASES.items():
        for omega in [OMEGAS[-1]]:
            for problem in PROBLEMS:
                a_, b_ = reference(problem, tau_L, omega, ph, N), reference(problem, tau_L, omega, ph, 2 * N)
                conv = max(conv, np.max(np.abs(a_.G(tg) - b_.G(tg))) / np.max(b_.G(tg)),
                           np.max(np.abs(a_.q(tg) - b_.q(tg))) / np.max(np.abs(b_.q(tg))))
    check(f"omega={OMEGAS[-1]:g}, all phase functions and problems: N = {N} vs {2 * N} per half range, G and q on the tau grid (rel. to max)", conv, 1e-8)
    seconds = time.time() - t0

    # reference tables
    rows, csv = [], ["# Plane-parallel slab reference (validation/scattering_slab/slab1d.py, DO double-Gauss "
                     f"N={N} per half range, exact in tau), tau_L={tau_L:g}",
                     "# G and q normalised: diffuse by E (wall emissive power), collimated by F0 (beam included), "
                     "emitting by pi I_b; q positive towards +tau",
                     "problem,phase,omega,tau,G,q"]
    for problem in PROBLEMS:
        for name, ph in PHASES.items():
            for omega in OMEGAS:
                s = reference(problem, tau_L, omega, ph, N)
                G, q = s.G(tg), s.q(tg)
                for t, gv, qv in zip(tg, G, q):
                    csv.append(f"{problem},{name},{omega:g},{t:.6g},{gv:.12e},{qv:.12e}")
                sel = [0, 10, 20]
                fmt = lambda v: f"{(v if abs(v) >= 5e-9 else 0.0):.8f}"  # noqa: E731 (no "-0.00000000")
                rows.append([problem, name, f"{omega:g}"] + [fmt(G[i]) for i in sel] + [fmt(q[i]) for i in sel])
    failures = [c for c in checks if not c[1] <= c[2]]
    lines = ["# Plane-parallel scattering slab: reference self-test", "",
             f"tau_L = {tau_L:g}, double-Gauss N = {N} per half range (2N ordinates), Legendre phase expansion to "
             f"l = {2 * N - 1}. {len(checks)} checks, {len(failures)} failed, {seconds:.1f} s. Full tables: reference.csv.", "",
             "## G and q at tau = 0, tau_L/2, tau_L", "",
             "diffuse: black wall with emissive power E = 1 at tau = 0; collimated: normal beam F0 = 1 at tau = 0 "
             "(G, q include the beam); emitting: pi I_b = 1; all walls otherwise cold and black.", "",
             dio.markdown_table(["problem", "phase", "omega", "G(0)", "G(tau_L/2)", "G(tau_L)", "q(0)", "q(tau_L/2)", "q(tau_L)"], rows),
             "", "## Legendre truncation (omega = 0.9): max difference from the exact azimuthal HG, G and q", "",
             dio.markdown_table(["phase", "problem", "l <= 8", "l <= 16", "l <= 32", "l <= 64", f"l <= {2 * N - 1}"], trunc_rows),
             "", "## Checks", "",
             dio.markdown_table(["check", "value", "bound", ""],
                                [[n, f"{v:.2e}", f"{b:.0e}", "ok" if v <= b else "FAILED"] for n, v, b in checks])]
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "reference.md").write_text(text)
    (out / "reference.csv").write_text("\n".join(csv) + "\n")
    print(text)
    return failures


# ---------------------------------------------------------------------------------------------
# DG comparison.

T_HOT = 1000.0   # K, the diffuse problem's hot wall
F_BEAM = 1000.0  # W/m^2, the collimated problem's beam (normal incidence on x = 0)


def slab_case(template, problem, tau_L, omega, phase_name, angular, order, size, points):
    case = copy.deepcopy(template)
    case["mesh"] = {"geo": "slab.geo", "size": size}
    case["order"] = order
    case["angular"] = dict(angular)
    beta = tau_L / 1.0
    ph = PHASES[phase_name]
    pf = "isotropic" if ph.kind == "isotropic" else {"type": "henyey-greenstein", "g": ph.g}
    medium = {"kappa": f"{(1 - omega) * beta:.12g}", "scattering": f"{omega * beta:.12g}", "phase_function": pf}
    case.pop("collimated", None)
    if problem == "emitting":
        medium["Ib"] = "1"
        case["boundaries"] = {"sides": {"type": "symmetry"}, "*": {"type": "black", "temperature": 0}}
    elif problem == "collimated":
        medium["Ib"] = "0"
        case["boundaries"] = {"sides": {"type": "symmetry"}, "*": {"type": "black", "temperature": 0}}
        case["collimated"] = [{"boundary": "xmin", "direction": [1.0, 0.0, 0.0], "flux": F_BEAM}]
    else:
        medium["Ib"] = "0"
        case["boundaries"] = {"xmin": {"type": "black", "temperature": f"{T_HOT:g}"}, "sides": {"type": "symmetry"},
                              "*": {"type": "black", "temperature": 0}}
    case["media"] = {"*": medium}
    for p in case["output"]["probes"]:
        p["points"] = points
    return case


def compare(args, out):
    template = dio.load_case(HERE / "scattering_slab.yaml")
    dgrte = dio.find_dgrte(args.dgrte)
    rows, curves, failures = [], [], []
    with dio.WorkDir(args.work, prefix="dgrte_scattering_slab_") as work:
        for problem in args.problems:
            scale = {"diffuse": dio.SIGMA * T_HOT ** 4, "collimated": F_BEAM, "emitting": math.pi * 1.0}[problem]
            for phase_name in args.phases:
                for omega in args.omegas:
                    ref = reference(problem, args.tau_L, omega, PHASES[phase_name], args.N)
                    for label in args.sets:
                        for p in args.orders:
                            tag = f"{problem}_{phase_name}_w{omega:g}_{label}_p{p}"
                            case = slab_case(template, problem, args.tau_L, omega, phase_name, dio.parse_set(label, "x"), p,
                                             args.size, args.points)
                            try:
                                run = dio.run_case(dgrte, case, work / tag, base=HERE, timeout=args.timeout)
                            except dio.DgrteError as e:
                                print(f"[{tag}] dgrte failed: {e}", file=sys.stderr)
                                failures.append(f"{tag}: dgrte failed")
                                continue
                            ax = run.probe("axis")
                            tau = args.tau_L * ax["x"] / 1.0
                            G, q = ax["G"] / scale, ax["qx"] / scale
                            Gr, qr = ref.G(tau), ref.q(tau)
                            eG, eq = dio.error_stats(G, Gr), dio.error_stats(q, qr)
                            r = {"problem": problem, "phase": phase_name, "omega": omega, "set": dio.set_name(label, "x"),
                                 "M": run.directions, "order": p, "tets": run.elements, "G": eG, "q": eq, "seconds": run.seconds}
                            rows.append(r)
                            curves.append((problem, phase_name, omega, label, p, tau, G, q))
                            print(f"{tag}: G max {100 * eG['max']:.3f} % (interior {100 * eG['interior']:.3f} %), q max "
                                  f"{100 * eq['max']:.3f} % (interior {100 * eq['interior']:.3f} %), {run.seconds:.2f} s", flush=True)
                            worst = max(eG["max"], eq["max"])
                            if args.max_error is not None and not worst <= args.max_error:
                                failures.append(f"{tag}: max error {100 * worst:.3f} % > {100 * args.max_error:g} %")
    hdr = ["problem", "phase", "omega", "set", "M", "order", "tets", "G: max", "G: max interior", "G: mean", "q: max",
           "q: max interior", "q: mean", "run s"]
    body = [[r["problem"], r["phase"], f"{r['omega']:g}", r["set"], r["M"], f"P{r['order']}", r["tets"], dio.pct(r["G"]["max"]),
             dio.pct(r["G"]["interior"]), dio.pct(r["G"]["mean"]), dio.pct(r["q"]["max"]), dio.pct(r["q"]["interior"]),
             dio.pct(r["q"]["mean"]), f"{r['seconds']:.2f}"] for r in rows]
    lines = ["# Plane-parallel scattering slab: dgrte vs the 1-D reference", "",
             f"tau_L = {args.tau_L:g} (L = 1 m, box 1 x 0.2 x 0.2 m, mirror sides), mesh slab.geo size {args.size}; "
             f"G and q_x along the axis ({args.points} points), errors relative to the maximum of |reference|. "
             "Reference: slab1d.DOSlab, double-Gauss N = " f"{args.N}.", "", dio.markdown_table(hdr, body), ""]
    if not args.no_plot:
        lines += ["![scattering slab](scattering_slab.png)", ""]
    if failures:
        lines += ["**Failed bounds:** " + "; ".join(failures), ""]
    (out / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))
    if not args.no_plot and curves:
        plot(out, curves, args)
    return failures


def plot(out, curves, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    probs = sorted({c[0] for c in curves})
    fig, axes = plt.subplots(2, len(probs), figsize=(5.2 * len(probs), 7.5), squeeze=False)
    tf = args.tau_L * np.linspace(0, 1, 201)
    for j, problem in enumerate(probs):
        aG, aq = axes[0, j], axes[1, j]
        done = set()
        for (pr, phase_name, omega, label, p, tau, G, q) in curves:
            if pr != problem:
                continue
            key = (phase_name, omega)
            if key not in done:
                ref = reference(problem, args.tau_L, omega, PHASES[phase_name], args.N)
                l1, = aG.plot(tf, ref.G(tf), "-", lw=1.2, label=f"{phase_name}, omega {omega:g}")
                aq.plot(tf, ref.q(tf), "-", lw=1.2, color=l1.get_color(), label=f"{phase_name}, omega {omega:g}")
                done.add(key)
            aG.plot(tau, G, ".", ms=2.5, color="k")
            aq.plot(tau, q, ".", ms=2.5, color="k")
        unit = {"diffuse": "E", "collimated": "F0", "emitting": "pi I_b"}[problem]
        aG.set_title(f"{problem}: G / {unit} (lines: reference, dots: dgrte)")
        aq.set_title(f"{problem}: q / {unit}")
        for a in (aG, aq):
            a.set_xlabel("tau")
            a.grid(alpha=0.3)
            a.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "scattering_slab.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", help="path of the dgrte executable")
    ap.add_argument("--out", default=str(HERE), help="folder for reference.md/.csv, results.md and the PNG (default: this folder)")
    ap.add_argument("--work", help="folder for the dgrte runs (kept); default: a temporary folder, removed")
    ap.add_argument("--self-test", action="store_true", help="check the 1-D reference only (no dgrte); writes reference.md/.csv")
    ap.add_argument("--coarse", action="store_true", help="CTest variant: slab.geo size 0.2 (107 tets), P3, product16x8, "
                                                          "omega 0.9, HG g = 0.8, all three problems, max error 1.2 %%")
    ap.add_argument("--tau-L", type=float, default=1.0, help="optical thickness beta L")
    ap.add_argument("--N", type=int, default=128, help="double-Gauss ordinates per half range of the reference")
    ap.add_argument("--problems", nargs="+", default=PROBLEMS, choices=PROBLEMS)
    ap.add_argument("--phases", nargs="+", default=list(PHASES), choices=list(PHASES))
    ap.add_argument("--omegas", type=float, nargs="+", default=OMEGAS)
    ap.add_argument("--sets", nargs="+", default=["product16x8"], help="angular sets (see dgrte_io.parse_set)")
    ap.add_argument("--orders", type=int, nargs="+", default=[3])
    ap.add_argument("--size", type=float, default=0.15)
    ap.add_argument("--points", type=int, default=101)
    ap.add_argument("--max-error", type=float, help="fail if a max error of G or q (fraction of max |reference|) exceeds this")
    ap.add_argument("--timeout", type=float, default=None, help="seconds allowed per dgrte run")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.self_test:
        failures = self_test(out, args.tau_L, args.N)
        if not args.no_plot:
            plot_reference(out, args.tau_L, args.N)
        if failures:
            print("FAILED: " + "; ".join(f"{n}: {v:.2e} > {b:.0e}" for n, v, b in failures))
            return 1
        return 0
    if args.coarse:
        args.size, args.orders, args.sets, args.omegas, args.phases = 0.2, [3], ["product16x8"], [0.9], ["hg0.8"]
        args.problems = PROBLEMS
        if args.max_error is None:
            args.max_error = 0.012  # regression guard ~25 % above the errors measured on this set-up (README.md)
    failures = compare(args, out)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
