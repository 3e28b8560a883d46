#!/usr/bin/env bash
# Build (if needed) and run the whole test suite: unit tests, error-message tests and the
# short validation checks, through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "${JOBS:-2}" "$@"
