#!/usr/bin/env bash
# Regenerates every validation table and plot (full runs; tens of minutes on 2 cores).
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
