#!/usr/bin/env bash
# Quick start: install the Debian 12 dependencies, build dgrte, and solve the default case (the
# manufactured-solution benchmark of He et al. 2013) into out/quickstart/ (solution.vtu opens in ParaView).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/src/app/dgrte run validation/mms/mms.yaml -o out/quickstart
echo
echo "Done. Open out/quickstart/solution.vtu in ParaView; numbers are in out/quickstart/summary.json."
