#!/usr/bin/env python3
"""A line list for the device line-sum benchmark: the HITRAN H2O fragment of gasdata (2000-2100 cm^-1,
864 lines) repeated every 100 cm^-1 over [nu_min, nu_max) (real strengths, widths and lower-state
energies; only the line positions are shifted). dgrte ships no full line list (HITEMP is
downloaded by users, docs/gas-lbl.md); the benchmark counts line x grid-point pairs, which depend on
the number of lines and the grid, not on which lines they are.

  /usr/bin/python3 benchmarks/device/tile_par.py OUT.par [nu_min 1000] [nu_max 5000]
"""
import os
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    nu_min = float(sys.argv[2]) if len(sys.argv) > 2 else 1000.0
    nu_max = float(sys.argv[3]) if len(sys.argv) > 3 else 5000.0
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "gasdata", "lbl", "hitran_fragments", "hitran_2016_H2O_2iso_2000_2100cm.par")
    records = [line.rstrip("\n") for line in open(src) if len(line.rstrip("\n")) >= 160]
    lines = []
    shift = nu_min - 2000.0
    while 2000.0 + shift < nu_max:
        for r in records:
            nu = float(r[3:15]) + shift
            if nu_min <= nu < nu_max:
                lines.append((nu, r[:3] + f"{nu:12.6f}" + r[15:]))
        shift += 100.0
    lines.sort()
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        for _, r in lines:
            f.write(r + "\n")
    os.replace(tmp, out)
    print(f"wrote {out}: {len(lines)} lines, {nu_min:g}-{nu_max:g} cm-1")


if __name__ == "__main__":
    main()
