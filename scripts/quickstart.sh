#!/usr/bin/env bash
# Quick start: install the Debian 12 dependencies (sudo is used only when not root), build dgrte,
# and solve the default case, a small furnace (docs/examples/furnace.yaml: gray radiative heat
# transfer, S8, P2), into out/quickstart/ (solution.vtu and walls.vtu open in ParaView).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/src/app/dgrte run docs/examples/furnace.yaml -o out/quickstart
echo
echo "Done. Open out/quickstart/solution.vtu (G, q, div q) and out/quickstart/walls.vtu (wall heat fluxes) in ParaView;"
echo "numbers are in out/quickstart/summary.json, line plots in out/quickstart/probes/."
