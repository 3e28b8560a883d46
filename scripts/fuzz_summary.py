#!/usr/bin/python3
"""Summarise libFuzzer campaigns (scripts/fuzz.sh) into one JSON: per reader the inputs executed, the
seconds, crashes / hangs / out-of-memory (artifact files), peak RSS and corpus size.

  fuzz_summary.py build-fuzz/fuzz-work/case_file ... --out benchmarks/fuzz/results.json
An existing results file is updated reader by reader (campaigns may run at different times); each
reader keeps the list of its campaigns and their summed inputs.
"""
import argparse
import json
import os
import pathlib
import platform
import re
import time


def summarise(folder):
    folder = pathlib.Path(folder)
    reader, rc, seconds = (folder / "status").read_text().split()
    log = (folder / "fuzz.log").read_text(errors="replace")
    def stat(name):
        m = re.findall(rf"stat::{name}:\s+(\d+)", log)
        return int(m[-1]) if m else None
    fork_units = re.findall(r"^#(\d+): cov:", log, re.M)  # fork mode (FUZZ_KEEP_GOING): progress lines only
    artifacts = sorted(p.name for p in (folder / "artifacts").iterdir()) if (folder / "artifacts").exists() else []
    return reader, {
        "inputs": stat("number_of_executed_units") or (int(fork_units[-1]) if fork_units else None),
        "mode": "fork, going on after crashes" if fork_units else "stop at the first crash",
        "seconds": int(seconds),
        "exit_code": int(rc),
        "crashes": sum(a.startswith("crash-") or a.startswith("leak-") for a in artifacts),
        "hangs": sum(a.startswith("timeout-") or a.startswith("slow-unit-") for a in artifacts),
        "out_of_memory": sum(a.startswith("oom-") for a in artifacts),
        "artifacts": artifacts,
        "peak_rss_mb": stat("peak_rss_mb"),
        "corpus_files": len(list((folder / "corpus").iterdir())) if (folder / "corpus").exists() else 0,
        "date": time.strftime("%Y-%m-%d"),
    }


def markdown(results):
    """The table of benchmarks/README.md ("Fuzzing the input readers") from a results file."""
    data = json.loads(pathlib.Path(results).read_text())
    rows = ["| reader | campaigns | inputs, all campaigns | crashes, all campaigns | last campaign: inputs in s | crashes | hangs | "
            "out of memory | peak RSS MB |",
            "|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    for name, r in data["readers"].items():
        runs = r.get("campaigns", [r])
        total = sum(c["inputs"] or 0 for c in runs)
        rows.append(f"| `{name}` | {len(runs)} | {total:,} | {sum(c['crashes'] for c in runs)} | {r['inputs']:,} in {r['seconds']} | "
                    f"{r['crashes']} | {r['hangs']} | {r['out_of_memory']} | {r['peak_rss_mb'] or '—'} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--out", help="the results file to update")
    ap.add_argument("--markdown", metavar="RESULTS", help="print the README table of a results file instead")
    a = ap.parse_args()
    if a.markdown:
        print(markdown(a.markdown))
        return
    out = pathlib.Path(a.out)
    data = json.loads(out.read_text()) if out.exists() else {}
    data["machine"] = f"{platform.node()} ({os.cpu_count()} cores), libFuzzer with ASan + UBSan"
    readers = data.setdefault("readers", {})
    for f in a.folders:
        name, s = summarise(f)
        # the latest campaign's figures, and every campaign of this reader so far (inputs add up)
        old = readers.get(name)
        keys = ("date", "inputs", "seconds", "crashes", "hangs", "out_of_memory", "mode")
        history = old.get("campaigns") or [{k: old.get(k, "stop at the first crash" if k == "mode" else None) for k in keys}] \
            if old else []
        history.append({k: s[k] for k in keys})
        s["campaigns"] = history
        s["inputs_all_campaigns"] = sum(c["inputs"] or 0 for c in history)
        readers[name] = s
        print(f"{name:16s} inputs {s['inputs']}, {s['seconds']} s, crashes {s['crashes']}, hangs {s['hangs']}, "
              f"oom {s['out_of_memory']}, peak RSS {s['peak_rss_mb']} MB")
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(out)


if __name__ == "__main__":
    main()
