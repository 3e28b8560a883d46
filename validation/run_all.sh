#!/usr/bin/env bash
# Regenerates every validation table and plot (full runs; ~2 hours on 2 cores, gas3d and liu2000
# about half of it).
# Usage: bash validation/run_all.sh [path/to/dgrte]
set -euo pipefail
cd "$(dirname "$0")"
dgrte=$(realpath "${1:-../build/src/app/dgrte}")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
py=/usr/bin/python3
$py mms/convergence.py --dgrte "$dgrte" --out mms/results
$py gas/run_validation.py --dgrte "$dgrte"
for case in gray_slab isothermal_cube scattering_slab kim_lee_square jendoubi_cylinder coelho_combustor; do
  if [ -f "$case/$case.py" ]; then $py "$case/$case.py" --dgrte "$dgrte"; fi
done
$py gas3d/gas3d.py --dgrte "$dgrte" --models wsgg-bordbar2014,rcslw,slw,planck-mean,snbck-lump32-g4 --results gas3d/results.md
$py montecarlo/montecarlo.py --dgrte "$dgrte"
$py liu2000/liu2000.py --dgrte "$dgrte" --results liu2000/results.md --plot liu2000/liu2000.png --json liu2000/results.json
$py montecarlo/final_gather.py --dgrte "$dgrte"
$py montecarlo/final_gather_check.py --dgrte "$dgrte" --json montecarlo/final_gather_check.json
