#!/usr/bin/env bash
# Configure and build dgrte (Release) into ./build. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "$@"
else
  cmake "$BUILD_DIR" "$@" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}"
