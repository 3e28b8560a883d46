#!/usr/bin/python3
"""A dgrte that solves a deliberately wrong problem: the negative control of the validation checks.

negative_control.py passes this file as the validation script's `--dgrte`. For the subcommands named in
DGRTE_PERTURB (comma-separated: run, slab, or mpi-run = `run` only in the ranks of an MPI job of two or
more, so that a distributed run disagrees with the one-process run; default run) it copies the case file beside itself with every
emission source raised by 8 % — temperatures x 1.02 (sigma T^4 + 8.2 %), and I_b, volume sources,
inflow intensities, irradiation and beam fluxes x 1.08 — and runs the real dgrte (DGRTE_REAL) on the
copy. Other subcommands run unchanged. Each perturbed case file is appended to DGRTE_PERTURB_LOG, so
the control can tell "the check failed on a wrong answer" from "nothing was perturbed".

DGRTE_PERTURB empty: nothing is perturbed (the control's identity run, which must pass). Every run
through this wrapper is logged to DGRTE_PERTURB_LOG as "RC N COMMAND CASE" (dgrte's exit code, the
number of values scaled), so the control can insist that the perturbed problems were solved, and the
check failed on their answers, not on a run that crashed.

A validation check that still passes on this input cannot tell a right answer from an 8 % wrong one.
"""
import os
import pathlib
import subprocess
import sys

import yaml

TEMPERATURE, SOURCE = 1.02, 1.08


def scaled(value, factor):
    """A number or an expression (muparser text) times factor."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value * factor
    if isinstance(value, str):
        return f"{factor:g}*({value})"
    return value


def perturb_map(d, keys_factors):
    """Scale d[key] in place for each (key, factor) present; returns how many were scaled."""
    n = 0
    if not isinstance(d, dict):
        return 0
    for key, factor in keys_factors:
        if key in d and d[key] is not None:
            d[key] = scaled(d[key], factor)
            n += 1
    return n


def perturb_run_case(case):
    n = 0
    for medium in (case.get("media") or {}).values():
        n += perturb_map(medium, [("temperature", TEMPERATURE), ("Ib", SOURCE), ("source", SOURCE)])
    for wall in (case.get("boundaries") or {}).values():
        n += perturb_map(wall, [("temperature", TEMPERATURE), ("intensity", SOURCE), ("flux", SOURCE)])
    for beam in case.get("collimated") or []:
        n += perturb_map(beam, [("flux", SOURCE)])
    return n


def perturb_slab_case(case):
    slab = case.get("slab") or {}
    n = perturb_map(slab, [("temperature", TEMPERATURE)])
    for wall in (slab.get("walls") or {}).values():
        n += perturb_map(wall, [("temperature", TEMPERATURE)])
    return n


def mpi_ranks():
    """The size of the MPI job this process is a rank of (OpenMPI or MPICH launch variables), else 1."""
    return int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "1")))


def main(argv):
    real = os.environ.get("DGRTE_REAL")
    if not real:
        sys.exit("perturbed_dgrte.py: set DGRTE_REAL to the real dgrte executable")
    commands = [c.strip() for c in os.environ.get("DGRTE_PERTURB", "run").split(",") if c.strip()]
    args = list(argv[1:])
    n, case_file = 0, ""
    if args and args[0] in ("run", "slab"):
        for i, a in enumerate(args[1:], start=1):
            path = pathlib.Path(a)
            if path.suffix in (".yaml", ".yml") and path.is_file():
                case_file = str(path)
                if args[0] in commands or (args[0] == "run" and "mpi-run" in commands and mpi_ranks() > 1):
                    case = yaml.safe_load(path.read_text())
                    n = (perturb_run_case if args[0] == "run" else perturb_slab_case)(case)
                    # one copy per MPI rank: under mpiexec every rank runs this wrapper
                    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", ""))
                    copy = path.with_name(path.stem + f".perturbed{rank}" + path.suffix)
                    copy.write_text(yaml.safe_dump(case, sort_keys=False))
                    args[i] = str(copy)
                break
    if mpi_ranks() > 1:  # an MPI rank must stay the process mpiexec started: no child, no exit code to log
        if case_file and os.environ.get("DGRTE_PERTURB_LOG"):
            with open(os.environ["DGRTE_PERTURB_LOG"], "a") as log:
                log.write(f"0 {n} {args[0]} {case_file}\n")
        os.execv(real, [real] + args)
    rc = subprocess.run([real] + args).returncode
    if case_file and os.environ.get("DGRTE_PERTURB_LOG"):
        with open(os.environ["DGRTE_PERTURB_LOG"], "a") as log:
            log.write(f"{rc} {n} {args[0]} {case_file}\n")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
