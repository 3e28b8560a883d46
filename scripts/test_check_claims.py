#!/usr/bin/python3
"""Self-test of scripts/check_claims.py: it must pass on correct figures and fail (exit 1, naming the
file:line, the figure and the stored value) on a stale figure, an untagged figure and a broken source.

    /usr/bin/python3 scripts/test_check_claims.py        # exit 0 when every case behaves, 1 otherwise

Each case builds a small repository in a temporary folder (stored results, a test source, a CMake
file, one markdown page) and runs the checker on it as CI does, in a subprocess.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_claims.py")

FILES = {
    "results/run.json": json.dumps({
        "summary": {"max_rel_error": 0.0038, "seconds": 92.4},
        "rows": [{"case": "cube", "points": 10, "within": 1.0, "z": 2.1},
                 {"case": "slab", "points": 30, "within": 0.9, "z": -3.57}],
        "times": {"cpu": 12.0, "gpu": 3.0},
    }),
    "results/table.md": "# results\n\n| case | max error | run s |\n|---|---|---|\n"
                        "| cube | 0.381 % | 12.5 |\n| slab | 2.33 % | 40.1 |\n",
    "results/data.csv": "case,err,seconds\ncube,0.0012,1.5\nslab,0.0034,2.5\n",
    "results/log.txt": "run finished: relative imbalance 3.3e-10 after 392 s\n",
    "tests/CMakeLists.txt": "add_test(NAME claims_smoke COMMAND true)\ndgrte_add_test(unit_tests SOURCES t.cpp)\n"
                            "foreach(np 2 3)\n  add_test(NAME par_${np} COMMAND true)\nendforeach()\n",
    "tests/t.cpp": "TEST(Suite, AssertsTheBound) { EXPECT_LT(err, 5e-3); }\n",
    "gen/table.py": "print('| case | speed-up |')\nprint('|---|---|')\nprint('| a | 4.0× |')\n",
}

# (name, markdown page, expected exit code, strings the output must contain)
CASES = [
    ("JSON pointer, % with scale=100",
     "Max error 0.38 %. <!-- src: results/run.json#/summary/max_rel_error;scale=100 -->\n", 0, []),
    ("rounding: 0.38 % accepts a stored 0.003849 (half a unit of the last printed digit)",
     "Max error 0.38 %. <!-- src: results/run.json#/summary/max_rel_error;add=0.000049;scale=100 -->\n", 0, []),
    ("NEGATIVE rounding: 0.38 % rejects a stored 0.003851",
     "Max error 0.38 %. <!-- src: results/run.json#/summary/max_rel_error;add=0.000051;scale=100 -->\n", 1,
     ["README.md:1", "figure '0.38 %'", "stored 0.3851"]),
    ("NEGATIVE stale figure: 0.39 % against a stored 0.0038",
     "Max error 0.39 %. <!-- src: results/run.json#/summary/max_rel_error;scale=100 -->\n", 1,
     ["README.md:1", "figure '0.39 %'", "stored 0.38", "results/run.json#/summary/max_rel_error"]),
    ("NEGATIVE untagged figure in prose",
     "The sweep is 1.5× faster.\n", 1, ["README.md:1", "figure '1.5×' names no source"]),
    ("NEGATIVE untagged figure in a table column whose header carries the unit",
     "| case | run s |\n|---|---|\n| cube | 12.5 |\n", 1, ["README.md:3", "names no source"]),
    ("NEGATIVE a relative 1e-N figure with no tag",
     "The energy balance closes to 1e-13.\n", 1, ["README.md:1", "1e-13"]),
    ("wildcard, where, agg and a weighted mean; σ and minutes",
     "Points within: 92.5 % <!-- src: results/run.json#/rows/*/within;weight=/rows/*/points;agg=wmean;scale=100 -->,"
     " largest |z| 3.57σ, run 1.54 min <!-- src: #/rows/*/z;agg=maxabs #/summary/seconds;scale=1/60 -->\n", 0, []),
    ("ratio by div=, and an input entry",
     "On 2 cores the GPU path is 4.0× faster at rtol 1e-8. <!-- src: results/run.json#/times/cpu;div=/times/gpu input -->\n",
     0, []),
    ("markdown table source (row regex and where=), CSV and regex sources, a range",
     "Errors 0.38–2.3 %, <!-- src: 'results/table.md#where=case=cube;col=max error' '#row=slab;col=max error' -->"
     " CSV 0.12 % <!-- src: results/data.csv#where=case=cube;col=err;scale=100 -->,"
     " log 3.3e-10 in 392 s. <!-- src: 'results/log.txt#re=imbalance ([\\d.e-]+) after (\\d+) s' -->\n", 0, []),
    ("a tagged table row, tag per row; a claim: input line; code is not read",
     "| case | run s |\n|---|---|\n| cube | 12.5 <!-- src: 'results/table.md#where=case=cube;col=run s' --> |\n\n"
     "Tolerance 1e-10 and 2 s of warm-up. <!-- claim: input -->\n\n"
     "`rtol: 1e-10` and\n\n```\nsolve 5 s, 3 %\n```\n\n    indented 4 s\n", 0, []),
    ("test: names a GoogleTest and CTests (also from a foreach pattern); a bound checked by regex",
     "Bound 0.5 % <!-- src: 'tests/t.cpp#re=EXPECT_LT\\(err, ([\\d.e-]+)\\);scale=100' --> (test:"
     " 1e-9 <!-- src: test:Suite.AssertsTheBound --> 1e-8 <!-- src: test:claims_smoke --> 1e-7"
     " <!-- src: test:par_3 -->)\n", 0, []),
    ("NEGATIVE a test that does not exist",
     "Asserted to 1e-9. <!-- src: test:Suite.NoSuchCase -->\n", 1, ["test 'Suite.NoSuchCase' not found"]),
    ("NEGATIVE a missing key and a missing file",
     "Error 0.38 % <!-- src: results/run.json#/summary/nope;scale=100 --> and 2 s <!-- src: results/none.json#/a -->\n",
     1, ["no key 'nope'", "no file results/none.json"]),
    ("NEGATIVE more figures than source values",
     "Errors 0.38 % and 2.3 %. <!-- src: results/run.json#/summary/max_rel_error;scale=100 -->\n", 1,
     ["2 figure(s)", "1 source value(s)"]),
    ("NEGATIVE an ambiguous selection without agg=",
     "Error 0.38 % <!-- src: 'results/table.md#row=.;col=max error' -->\n", 1, ["narrow the selection"]),
    ("cmp=le for a bound; NEGATIVE when the stored value exceeds it",
     "Within 0.5 % <!-- src: results/run.json#/summary/max_rel_error;scale=100;cmp=le -->, within 0.3 %"
     " <!-- src: results/run.json#/summary/max_rel_error;scale=100;cmp=le -->\n", 1,
     ["figure '0.3 %'", "stored 0.38"]),
    ("generated table: rows must appear in the generator's output",
     "<!-- src-table: gen/table.py -->\n| case | speed-up |\n|---|---|\n| a | 4.0× |\n", 0, []),
    ("NEGATIVE generated table that went stale",
     "<!-- src-table: gen/table.py -->\n| case | speed-up |\n|---|---|\n| a | 4.2× |\n", 1,
     ["README.md:4", "not in the output of the src-table generator"]),
]


def run_case(page):
    with tempfile.TemporaryDirectory() as root:
        for rel, text in FILES.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(root, "README.md"), "w", encoding="utf-8") as f:
            f.write(page)
        r = subprocess.run([sys.executable, CHECKER, "--root", root, "README.md"], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


def main():
    failed = 0
    for name, page, code, needles in CASES:
        rc, out = run_case(page)
        missing = [n for n in needles if n not in out]
        ok = rc == code and not missing
        print(f"{'ok  ' if ok else 'FAIL'} {name} (exit {rc}, expected {code})")
        if not ok:
            failed += 1
            if missing:
                print(f"     missing in the output: {missing}")
            print("     " + out.strip().replace("\n", "\n     "))
    print(f"test_check_claims: {len(CASES) - failed} of {len(CASES)} cases behave")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
