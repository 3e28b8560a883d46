#!/usr/bin/env bash
# Fuzzing campaign of dgrte's input readers with libFuzzer (clang; not part of CI — CI replays the
# committed corpus as the CTests fuzz_<reader>). Builds build-fuzz with -DDGRTE_FUZZ=ON (ASan + UBSan +
# coverage in all of dgrte's code), runs each target until FUZZ_RUNS inputs or FUZZ_SECONDS seconds,
# whichever comes first, and writes benchmarks/fuzz/results.json: per reader the inputs executed,
# seconds, crashes, hangs (an input slower than FUZZ_TIMEOUT s), out-of-memory and peak RSS.
# A crash stops that reader's campaign and leaves its input in build-fuzz/fuzz-work/<reader>/artifacts:
# fix the reader, then copy the input into tests/fuzz/corpus/<reader>/ so it stays a test.
#
# FUZZ_KEEP_GOING=1 runs libFuzzer's fork mode instead, which goes on after a crash (each one saved), to
# count the crashes of a reader that has known ones.
#
#   bash scripts/fuzz.sh                       # every reader, 1e6 inputs or 3 h each
#   FUZZ_SECONDS=600 bash scripts/fuzz.sh case_file mesh_msh
#   FUZZ_KEEP_GOING=1 FUZZ_SECONDS=600 bash scripts/fuzz.sh mesh_msh
set -euo pipefail
cd "$(dirname "$0")/.."
READERS=("$@")
[ ${#READERS[@]} -gt 0 ] || READERS=(case_file slab_case mesh_msh field_import quadrature_file gas_data)
RUNS=${FUZZ_RUNS:-1000000}
SECONDS_MAX=${FUZZ_SECONDS:-10800}
TIMEOUT=${FUZZ_TIMEOUT:-10}
RSS_MB=${FUZZ_RSS_MB:-4096}
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -q --no-install-recommends clang   # libFuzzer comes with its libclang-common-*-dev
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDGRTE_FUZZ=ON -DDGRTE_BUILD_BENCHMARKS=OFF
fi
cmake --build "$BUILD" -j "$(nproc)" --target "${READERS[@]/#/fuzz_}"
work="$BUILD/fuzz-work"
mkdir -p benchmarks/fuzz
logs=()
for r in "${READERS[@]}"; do
  rm -rf "$work/$r/artifacts"   # this campaign's findings only (fixed ones live on in tests/fuzz/corpus)
  mkdir -p "$work/$r/corpus" "$work/$r/artifacts"
  log="$work/$r/fuzz.log"
  echo "== fuzz_$r: up to $RUNS inputs or $SECONDS_MAX s"
  start=$(date +%s)
  keep_going=()
  [ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  set +e
  OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=0 "$BUILD/tests/fuzz/fuzz_$r" -runs="$RUNS" -max_total_time="$SECONDS_MAX" \
    -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" -max_len=8192 -print_final_stats=1 "${keep_going[@]}" \
    -artifact_prefix="$work/$r/artifacts/" "$work/$r/corpus" "tests/fuzz/corpus/$r" >"$log" 2>&1
  rc=$?
  set -e
  echo "$r $rc $(( $(date +%s) - start ))" >"$work/$r/status"
  tail -n 4 "$log"
  logs+=("$work/$r")
done
/usr/bin/python3 scripts/fuzz_summary.py "${logs[@]}" --out benchmarks/fuzz/results.json
