#!/usr/bin/python3
"""Negative control of a validation check: run it on a deliberately wrong dgrte and expect it to fail.

  negative_control.py --dgrte build/src/app/dgrte [--perturb run,slab] -- CHECK ARGS...

In CHECK ARGS, @DGRTE@ stands for the dgrte the check should run: here perturbed_dgrte.py, which
raises every emission source by 8 % before running the real one. The control passes (exit 0) only
when the check exits non-zero after at least one case was perturbed, without a Python traceback (a
crash of the check itself is not a detected error); otherwise it fails and says why.
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
    ap.add_argument("check", nargs=argparse.REMAINDER, help="-- the check's command line, with @DGRTE@")
    a = ap.parse_args()
    check = a.check[1:] if a.check[:1] == ["--"] else a.check
    if not check or not any("@DGRTE@" in c for c in check):
        sys.exit("negative_control.py: give the check after --, with @DGRTE@ where its dgrte goes")
    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "perturbed.log"
        env = dict(os.environ, DGRTE_REAL=str(pathlib.Path(a.dgrte).resolve()), DGRTE_PERTURB=a.perturb,
                   DGRTE_PERTURB_LOG=str(log))
        cmd = [c.replace("@DGRTE@", str(HERE / "perturbed_dgrte.py")) for c in check]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = time.time() - t0
        output = p.stdout + p.stderr
        perturbed = log.read_text().splitlines() if log.exists() else []
    tail = "\n".join(output.strip().splitlines()[-12:])
    print(f"negative control: {' '.join(check)}\n  exit {p.returncode} after {seconds:.1f} s, "
          f"{len(perturbed)} case file(s) perturbed (sources +8 %)\n--- last lines of the check ---\n{tail}")
    if not perturbed:
        print("CONTROL INVALID: no case file was perturbed (does the check run dgrte run/slab with a .yaml case?)")
        return 1
    if "Traceback (most recent call last)" in output:
        print("CONTROL INVALID: the check crashed instead of reporting the wrong answer")
        return 1
    if p.returncode == 0:
        print("CONTROL FAILED: the check passed on a solution with every source 8 % too high")
        return 1
    print("control passed: the check rejects the perturbed solution")
    return 0


if __name__ == "__main__":
    sys.exit(main())
