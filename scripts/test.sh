#!/usr/bin/env bash
# Build (if needed) and run the whole test suite: unit tests, error-message tests and the
# short validation checks, through CTest. Ends with one line saying how many tests were skipped
# and why.
#
# DGRTE_REQUIRE_OPENCL: 1 = a missing OpenCL platform fails the device tests, 0 = they skip.
# Unset, it is 1 where Debian's pocl-opencl-icd is installed (a platform must then appear) and 0
# elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
if [ -z "${DGRTE_REQUIRE_OPENCL:-}" ]; then
  if dpkg-query -W -f='${Status}' pocl-opencl-icd 2>/dev/null | grep -q "install ok installed"; then
    export DGRTE_REQUIRE_OPENCL=1
  else
    export DGRTE_REQUIRE_OPENCL=0
  fi
fi
build_dir=${BUILD_DIR:-build}
rc=0
rm -f "$build_dir/Testing/Temporary/LastTest.log"   # the closing line reads this run's log only
ctest --test-dir "$build_dir" --output-on-failure -j "${JOBS:-2}" "$@" || rc=$?
python3 scripts/ctest_skips.py "$build_dir/Testing/Temporary/LastTest.log" || true
exit $rc
