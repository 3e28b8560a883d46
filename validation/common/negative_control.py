#!/usr/bin/python3
"""Negative control of a validation check: the check must pass on dgrte's answers and fail on wrong ones.

  negative_control.py --dgrte build/src/app/dgrte [--perturb run,slab] [--identity] -- CHECK ARGS...

In CHECK ARGS, @DGRTE@ stands for the dgrte the check should run: here perturbed_dgrte.py.
  1. identity (with --identity, for a control whose arguments are a reduced form of its check's):
     nothing perturbed, the check must pass, so the reduced arguments are a configuration the check
     accepts and a failure in step 2 is the perturbation's doing. Without --identity the arguments
     are those of the validation CTest itself, whose passing run is the identity;
  2. perturbed: every emission source of the case files of the named subcommands raised by 8 %; the
     check must exit non-zero, with at least one case file perturbed, every dgrte run of it having
     succeeded (the check saw wrong answers, not a crash), and no Python traceback.
The control passes (exit 0) only then; otherwise it fails and says which condition did not hold.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgrte", required=True, help="the real dgrte executable")
    ap.add_argument("--perturb", default="run", help="subcommands whose case files are perturbed (run, slab)")
    ap.add_argument("--identity", action="store_true", help="first run the check unperturbed: it must pass")
    ap.add_argument("check", nargs=argparse.REMAINDER, help="-- the check's command line, with @DGRTE@")
    a = ap.parse_args()
    check = a.check[1:] if a.check[:1] == ["--"] else a.check
    if not check or not any("@DGRTE@" in c for c in check):
        sys.exit("negative_control.py: give the check after --, with @DGRTE@ where its dgrte goes")
    identity = run_check(a.dgrte, "", check) if a.identity else {"rc": 0, "runs": []}
    if a.identity:
        print(f"identity run (nothing perturbed): exit {identity['rc']} after {identity['seconds']:.1f} s, "
              f"{len(identity['runs'])} dgrte run(s)")
    perturbed = run_check(a.dgrte, a.perturb, check)
    scaled = [r for r in perturbed["runs"] if r[1] > 0]
    failed_runs = [r for r in perturbed["runs"] if r[0] != 0]
    print(f"negative control: {' '.join(check)}\n  perturbed run: exit {perturbed['rc']} after {perturbed['seconds']:.1f} s, "
          f"{len(scaled)} of {len(perturbed['runs'])} dgrte run(s) on a perturbed case (sources +8 %)\n"
          f"--- last lines of the check ---\n{perturbed['tail']}")
    problems = []
    if identity["rc"] != 0 or any(r[0] != 0 for r in identity["runs"]):
        problems.append(f"CONTROL INVALID: the check fails without any perturbation (exit {identity['rc']}):\n{identity['tail']}")
    if not scaled:
        problems.append("CONTROL INVALID: no case file was perturbed (does the check run dgrte run/slab on a .yaml case "
                        "with temperatures or sources?)")
    if failed_runs:
        problems.append(f"CONTROL INVALID: {len(failed_runs)} dgrte run(s) failed on the perturbed input (e.g. exit "
                        f"{failed_runs[0][0]} on {failed_runs[0][3]}): the check saw a crash, not a wrong answer")
    if perturbed["traceback"]:
        problems.append("CONTROL INVALID: the check crashed instead of reporting the wrong answer")
    if perturbed["rc"] == 0:
        problems.append("CONTROL FAILED: the check passed on solutions with every source 8 % too high")
    for p in problems:
        print(p)
    if not problems:
        print("control passed: the check accepts dgrte's answers and rejects the perturbed ones")
    return 1 if problems else 0


def run_check(dgrte, perturb, check):
    """Runs the check through perturbed_dgrte.py: exit code, seconds, the output's tail, whether it has a
    Python traceback, and the logged dgrte runs as (rc, values scaled, subcommand, case file)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "runs.log"
        env = dict(os.environ, DGRTE_REAL=str(pathlib.Path(dgrte).resolve()), DGRTE_PERTURB=perturb,
                   DGRTE_PERTURB_LOG=str(log))
        cmd = [c.replace("@DGRTE@", str(HERE / "perturbed_dgrte.py")) for c in check]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = time.time() - t0
        runs = []
        for line in (log.read_text().splitlines() if log.exists() else []):
            rc, n, sub, case = line.split(" ", 3)
            runs.append((int(rc), int(n), sub, case))
    output = p.stdout + p.stderr
    return {"rc": p.returncode, "seconds": seconds, "runs": runs, "traceback": "Traceback (most recent call last)" in output,
            "tail": "\n".join(output.strip().splitlines()[-12:])}


if __name__ == "__main__":
    sys.exit(main())
