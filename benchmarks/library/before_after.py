"""Two builds of dgrte side by side (issue 29: "no slowdown beyond noise" across a redesign step).

Runs, alternating the builds, `repeats` times each: the quick-start furnace (gray, S8, P2) and its
WSGG variant through `dgrte run` (timing.solve_seconds from summary.json), and the CPU sweep
benchmark (`device_benchmark --cpu-only`, cube h 0.124, P2 and P3: ns per DOF x direction). Medians and new/old ratios go
to --out (JSON).

  OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 /usr/bin/python3 benchmarks/library/before_after.py \
      --old /tmp/old/build --new build --out benchmarks/results/library-before-after-DATE.json
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile

root = pathlib.Path(__file__).resolve().parents[2]
p = argparse.ArgumentParser()
p.add_argument("--old", required=True)
p.add_argument("--new", required=True)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--out")
a = p.parse_args()
builds = {"old": pathlib.Path(a.old).resolve(), "new": pathlib.Path(a.new).resolve()}
work = pathlib.Path(tempfile.mkdtemp(prefix="dgrte_before_after_"))


def run_case(build, case):
    out = work / "out"
    subprocess.run([str(build / "src/app/dgrte"), "run", str(root / "docs/examples" / case), "-o", str(out), "-q"], check=True)
    s = json.loads((out / "summary.json").read_text())
    return s["timing"]["solve_seconds"]


def sweep_grind(build):
    out = work / "sweeps.json"
    subprocess.run([str(build / "benchmarks/device/device_benchmark"), "--cpu-only", "--sizes", "0.124", "--orders", "2", "3",
                    "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    d = json.loads(out.read_text())
    return d


samples = {k: {"furnace": [], "furnace_wsgg": [], "sweeps": []} for k in builds}
for r in range(a.repeats):
    for name, build in builds.items():
        samples[name]["furnace"].append(run_case(build, "furnace.yaml"))
        samples[name]["furnace_wsgg"].append(run_case(build, "furnace_wsgg.yaml"))
        samples[name]["sweeps"].append(sweep_grind(build))
    print(f"repeat {r + 1}: " + ", ".join(f"{n} furnace {samples[n]['furnace'][-1]:.3f} s wsgg {samples[n]['furnace_wsgg'][-1]:.3f} s"
                                          for n in builds))
def source_commit(build):
    """The commit a build directory was configured from (its CMake source), '+dirty' with local changes."""
    cache = (build / "CMakeCache.txt").read_text()
    src = next(l.split("=", 1)[1] for l in cache.splitlines() if l.startswith("CMAKE_HOME_DIRECTORY:"))
    head = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


result = {"benchmark": "library_before_after", "builds": {k: str(v) for k, v in builds.items()},
          "commits": {k: source_commit(v) for k, v in builds.items()}, "repeats": a.repeats,
          "threads": os.environ.get("OMP_NUM_THREADS", ""), "cases": {}}
for case in ("furnace", "furnace_wsgg"):
    med = {k: statistics.median(samples[k][case]) for k in builds}
    result["cases"][case] = {"solve_seconds_median": med, "new_over_old": med["new"] / med["old"], "samples": {k: samples[k][case] for k in builds}}
# CPU kernels per order (cube, h 0.124): median grind time of each kernel over the repeats.
kernels = {}
for k in builds:
    for doc in samples[k]["sweeps"]:
        for c in doc["cases"]:
            for kernel, v in c["cpu"].items():
                if isinstance(v, dict) and "grind_ns" in v:
                    kernels.setdefault(f"P{c['order']} {kernel}", {}).setdefault(k, []).append(v["grind_ns"])
result["cpu_kernels_grind_ns"] = {
    name: {"old": statistics.median(v["old"]), "new": statistics.median(v["new"]),
           "new_over_old": statistics.median(v["new"]) / statistics.median(v["old"])} for name, v in kernels.items()}
print(json.dumps(result["cpu_kernels_grind_ns"], indent=1))
print(json.dumps({c: {"median": v["solve_seconds_median"], "new_over_old": v["new_over_old"]} for c, v in result["cases"].items()}, indent=1))
if a.out:
    pathlib.Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
