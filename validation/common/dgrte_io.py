"""Shared helpers of the validation scripts: run `dgrte run` on a case and read what it writes.

    import sys, pathlib
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "common"))
    import dgrte_io as dio

    case = dio.load_case(HERE / "case.yaml")            # a dict (PyYAML)
    run = dio.run_case(dgrte, case, workdir / "t1", base=HERE)
    axis = run.probe("axis")                            # dict: column name -> numpy array
    s, w = run.quadrature()                             # directions (M, 3) and weights (M,)
    run.summary["timing"]["total_seconds"]

Outputs of `dgrte run case.yaml -o OUT` that are read here:
  OUT/summary.json, OUT/probes/<name>.csv (lines starting with '#' are comments, then a header
  line with the column names, then numbers; 'nan' for points outside the mesh), and
  OUT/quadrature.csv (columns sx,sy,sz,w; angular runs).
"""
import copy
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

SIGMA = 5.670374419e-8  # Stefan-Boltzmann constant, W/(m^2 K^4) (CODATA 2018, exact in SI)
REPO = pathlib.Path(__file__).resolve().parents[2]


class DgrteError(RuntimeError):
    """dgrte exited with an error (the message holds the command and the end of its output)."""


def find_dgrte(explicit=None):
    """The dgrte executable: --dgrte, else $DGRTE, else build/src/app/dgrte of this checkout, else PATH."""
    if explicit:
        return str(explicit)
    if os.environ.get("DGRTE"):
        return os.environ["DGRTE"]
    cand = REPO / "build" / "src" / "app" / "dgrte"
    if cand.exists():
        return str(cand)
    found = shutil.which("dgrte")
    if found:
        return found
    sys.exit("cannot find dgrte: pass --dgrte PATH (or set $DGRTE)")


def load_case(path):
    import yaml
    with open(path) as f:
        return yaml.safe_load(f)


def dump_case(case):
    import yaml
    return yaml.safe_dump(case, sort_keys=False, default_flow_style=None, width=110)


def absolute_mesh(case, base):
    """A copy of `case` whose mesh.geo / mesh.file paths are absolute (relative ones are taken from `base`)."""
    case = copy.deepcopy(case)
    mesh = case.get("mesh", {})
    for key in ("geo", "file"):
        if key in mesh and not os.path.isabs(str(mesh[key])):
            mesh[key] = str((pathlib.Path(base) / mesh[key]).resolve())
    return case


class Run:
    """One finished `dgrte run`: its folder, summary.json (plus 'wall_seconds'), probes and quadrature."""

    def __init__(self, outdir, summary):
        self.outdir = pathlib.Path(outdir)
        self.summary = summary

    def probe(self, name):
        return read_probe(self.outdir / "probes" / f"{name}.csv")

    def quadrature(self):
        return read_quadrature(self.outdir / "quadrature.csv")

    @property
    def seconds(self):
        """dgrte's own total time (summary timing.total_seconds), else the wall-clock time of the process."""
        t = self.summary.get("timing", {}).get("total_seconds")
        return float(t) if t is not None else float(self.summary["wall_seconds"])

    @property
    def elements(self):
        return self.summary.get("mesh", {}).get("elements")

    @property
    def directions(self):
        q = self.summary.get("quadrature", {})
        return q.get("directions", self.summary.get("directions"))


def run_case(dgrte, case, outdir, base=None, extra_args=(), timeout=None):
    """Write `case` (a dict) to OUTDIR/case.yaml, run `dgrte run OUTDIR/case.yaml -o OUTDIR -q`, return a Run.

    `base`: folder against which relative mesh paths in `case` are resolved. Raises DgrteError when
    dgrte fails or writes no summary.json."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    if base is not None:
        case = absolute_mesh(case, base)
    cfile = outdir / "case.yaml"
    cfile.write_text(dump_case(case))
    cmd = [str(dgrte), "run", str(cfile), "-o", str(outdir), "-q", *extra_args]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DgrteError(f"{' '.join(cmd)}: no answer within {timeout} s")
    except OSError as e:
        raise DgrteError(f"{' '.join(cmd)}: cannot run ({e})")
    wall = time.time() - t0
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise DgrteError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{tail}")
    sfile = outdir / "summary.json"
    if not sfile.exists():
        raise DgrteError(f"{' '.join(cmd)} wrote no {sfile}")
    summary = json.loads(sfile.read_text())
    summary["wall_seconds"] = wall
    return Run(outdir, summary)


def run_slab(dgrte, case, workdir):
    """`dgrte slab` on a case dict ({"slab": ..., "model": ...}) in workdir: slab.csv as an array
    (columns x, q, divq) and summary.json as a dict."""
    import yaml
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    f = workdir / "slab.yaml"
    f.write_text(yaml.safe_dump(case, sort_keys=False, default_flow_style=None))
    p = subprocess.run([str(dgrte), "slab", str(f), "-o", str(workdir)], capture_output=True, text=True)
    if p.returncode != 0:
        raise DgrteError(f"dgrte slab {f} exited with {p.returncode}:\n{p.stdout}{p.stderr}")
    return np.loadtxt(workdir / "slab.csv", delimiter=",", skiprows=1), json.loads((workdir / "summary.json").read_text())


def report_failures(failures, passed_text):
    """Prints each failure (FAIL: ...) and a closing line; returns the exit code of a check (0 or 1)."""
    for f in failures:
        print("FAIL:", f)
    print(passed_text if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


def read_csv_columns(path):
    """A CSV with optional '#' comment lines, one header line of names, then numbers -> {name: array}.

    The comment lines are returned under the key '#' (a list of strings, without the '#')."""
    comments, header, rows = read_csv_table(path)
    data = np.array([[float(v) for v in r] for r in rows], dtype=float).reshape(-1, len(header))
    out = {name: data[:, i] for i, name in enumerate(header)}
    out["#"] = comments
    return out


def read_probe(path):
    """A probe CSV of dgrte: volume probes x,y,z,distance,G,qx,qy,qz,divq[,...]; wall probes
    x,y,z,distance,q_in,q_net[,...]. Missing columns raise KeyError at use, not here."""
    return read_csv_columns(path)


def read_quadrature(path):
    """OUTDIR/quadrature.csv -> (directions (M, 3), weights (M,))."""
    d = read_csv_columns(path)
    s = np.column_stack([d["sx"], d["sy"], d["sz"]])
    return s, d["w"]


# ---------------------------------------------------------------------------------------------
# Angular sets given on the command line as short labels.

def parse_set(label, axis="x"):
    """'sn8' -> {quadrature: sn, order: 8}; 'sn-heat6'; 'tn4'; 'product16x8' (polar x azimuthal,
    about `axis`, or 'product16x8z'); 'fv4x16' (polar x azimuthal, about z unless suffixed)."""
    import re
    m = re.fullmatch(r"(sn-heat|sn|tn)(\d+)", label)
    if m:
        return {"quadrature": m.group(1), "order": int(m.group(2))}
    m = re.fullmatch(r"(product|fv)(\d+)x(\d+)([xyz]?)", label)
    if m:
        ax = m.group(4) or (axis if m.group(1) == "product" else "z")
        return {"quadrature": m.group(1), "polar": int(m.group(2)), "azimuthal": int(m.group(3)), "axis": ax}
    raise ValueError(f"unknown angular set label '{label}' (use e.g. sn8, sn-heat6, tn4, product16x8, fv4x16z)")


def set_name(label, axis="x"):
    a = parse_set(label, axis)
    q = a["quadrature"]
    if q == "sn":
        return f"LQ S{a['order']}"
    if q == "sn-heat":
        return f"S{a['order']} (heat)"
    if q == "tn":
        return f"T{a['order']}"
    return f"{q} {a['polar']}x{a['azimuthal']} ({a['axis']})"


# ---------------------------------------------------------------------------------------------
# Errors and tables.

def error_stats(value, reference, scale=None):
    """max and mean of |value - reference| / scale (scale: max |reference| unless given), the same
    max without the first and last point ('interior': probe lines end on walls, where DG traces and
    singular derivatives of the exact solution concentrate the error), and the largest pointwise
    relative error |value - reference| / |reference| over points where |reference| >= 1e-3 scale.
    NaNs in `value` (points outside the mesh) count as failures (inf)."""
    value = np.asarray(value, float)
    reference = np.asarray(reference, float)
    if scale is None:
        scale = float(np.max(np.abs(reference)))
    diff = np.abs(value - reference)
    diff = np.where(np.isfinite(diff), diff, np.inf)
    big = np.abs(reference) >= 1e-3 * scale
    rel = diff[big] / np.abs(reference[big]) if np.any(big) else np.array([0.0])
    inner = diff[1:-1] if len(diff) > 2 else diff
    return {"max": float(np.max(diff) / scale), "interior": float(np.max(inner) / scale), "mean": float(np.mean(diff) / scale),
            "pointwise_max": float(np.max(rel))}


def bound_for(bounds, keys, key):
    """A bound from a command-line list: None (no bound), one value for every case, or one value per
    entry of `keys` (same order), picked for `key`."""
    if bounds is None:
        return None
    if len(bounds) == 1:
        return bounds[0]
    if len(bounds) != len(keys):
        sys.exit(f"give one bound, or one per case ({len(keys)}), not {len(bounds)}")
    return bounds[list(keys).index(key)]


def write_text_atomic(path, text):
    """Write text to path through a temporary file and a rename: a failed run leaves the old file whole."""
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def markdown_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def pct(x, digits=3):
    """0.00123 -> '0.123 %' (relative errors as percentages)."""
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{100 * x:.{digits}g} %"


# ---------------------------------------------------------------------------------------------
# Monte Carlo reference curves stored in the case folders (written by validation/montecarlo/dg_vs_mc.py,
# overlaid on each case's own plot).

MC_SIGMAS = 2            # error bars of the Monte Carlo markers in the case plots: +-2 standard errors
MONTECARLO_CSV = "montecarlo.csv"


def write_montecarlo_csv(path, description, settings, header, rows):
    """A case folder's Monte Carlo curves: '#' lines (the description, then one line
    '# montecarlo: paths=... probe_rays=... batches=... seed=...' read by montecarlo_settings), a header
    line and the rows (already formatted strings or numbers)."""
    with open(path, "w") as f:
        for line in description:
            f.write(f"# {line}\n")
        f.write("# montecarlo: " + " ".join(f"{k}={v}" for k, v in settings.items()) + "\n")
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(v if isinstance(v, str) else f"{v:.9g}" for v in r) + "\n")


def read_csv_table(path):
    """A CSV with '#' comment lines, a header line, then rows of strings -> (comments, header, rows)."""
    comments, header, rows = [], None, []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith("#"):
                comments.append(s[1:].strip())
            elif header is None:
                header = [h.strip() for h in s.split(",")]
            else:
                rows.append([v.strip() for v in s.split(",")])
    if header is None:
        raise ValueError(f"{path}: no header line")
    return comments, header, rows


def montecarlo_settings(comments):
    """The 'montecarlo: key=value ...' comment line of a montecarlo.csv -> {key: value (str)}."""
    for c in comments:
        if c.startswith("montecarlo:"):
            return dict(kv.split("=", 1) for kv in c[len("montecarlo:"):].split() if "=" in kv)
    return {}


def power_of_ten_text(x):
    """4e6 -> '4·10⁶', 40000 -> '4·10⁴', 1e6 -> '10⁶', 2.5e5 -> '2.5·10⁵'."""
    x = float(x)
    if x <= 0 or not np.isfinite(x):
        return f"{x:g}"
    e = int(np.floor(np.log10(x) + 1e-12))
    m = x / 10 ** e
    sup = str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"10{sup}" if abs(m - 1) < 1e-9 else f"{m:.3g}·10{sup}"


def montecarlo_label(settings, sigmas=MC_SIGMAS):
    """Legend text of the Monte Carlo markers, e.g. 'Monte Carlo (dgrte, 4·10⁶ paths), bars ±2σ'."""
    paths = settings.get("paths")
    what = f"dgrte, {power_of_ten_text(paths)} paths" if paths else "dgrte"
    return f"Monte Carlo ({what}), bars ±{sigmas}σ"


def read_montecarlo(folder):
    """folder/montecarlo.csv of a case (numeric columns) -> (columns dict as read_csv_columns, settings), or
    (None, None) when the file is missing."""
    path = pathlib.Path(folder) / MONTECARLO_CSV
    if not path.exists():
        return None, None
    d = read_csv_columns(path)
    return d, montecarlo_settings(d["#"])


def montecarlo_errorbar(ax, x, value, stderr, color, label=None, sigmas=MC_SIGMAS, marker="s", ms=3.0, zorder=4):
    """The Monte Carlo markers of the case plots: `marker` at the values, bars of +-sigmas standard errors."""
    return ax.errorbar(x, value, yerr=sigmas * np.asarray(stderr, float), fmt=marker, ms=ms, mfc="white", mew=0.9,
                       elinewidth=0.9, capsize=1.8, capthick=0.9, color=color, label=label, zorder=zorder)


class WorkDir:
    """A work folder: the given one (kept), or a temporary one removed on exit unless keep=True."""

    def __init__(self, path=None, prefix="dgrte_validation_", keep=False):
        self.given = path is not None
        self.path = pathlib.Path(path) if path else pathlib.Path(tempfile.mkdtemp(prefix=prefix))
        self.path.mkdir(parents=True, exist_ok=True)
        self.keep = keep or self.given

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if not self.keep:
            shutil.rmtree(self.path, ignore_errors=True)
        return False
