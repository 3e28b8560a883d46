#!/usr/bin/env bash
# Device figures of issue 30 on a lent GPU, in one call of the `device` tool (docs/opencl.md):
# prepare here with
#   bash ../shared/tools/gpu-prepare.sh build/src/app/dgrte case1.yaml ...   (writes .gpu/: dumps)
# then `bash benchmarks/device/travel-light.sh hide` (the tree must travel within 64 MiB), run
# `bash benchmarks/device/gpu-run.sh` there with carry [".gpu"], and `travel-light.sh restore` after. Builds the device core
# (src/device) against the CUDA toolkit's OpenCL and runs dgrte-bench-device on every dump in .gpu/:
# transport dumps in double and single precision with the sweep preconditioner (stored inverses
# against refactorised element solves, the device-resident Bi-CGSTAB against the bare sweep),
# final-gather and line-sum dumps once (names containing "gather" or "line_sum"). JSON per run in $OUT/results.txt. Extra arguments go to every call.
set -uo pipefail
G=$(pwd)/.gpu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
R=$OUT/results.txt
log() { echo "$*" | tee -a "$R"; }
log "== $(date -u)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee -a "$R"
lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/{print $NF; exit}')
[[ -z $lib ]] && lib=$(find /usr/local/nvidia /usr/lib /usr/lib64 /lib -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n1)
mkdir -p /etc/OpenCL/vendors
[[ -n $lib && ! -f /etc/OpenCL/vendors/nvidia.icd ]] && echo "$lib" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export DGRTE_KERNEL_CACHE=/tmp/kcache
t0=$(date +%s)
cmake -S src/device -B /tmp/dgrte-gpu-build -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build /tmp/dgrte-gpu-build -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { log "BUILD FAILED"; tail -n 40 "$OUT/build.log"; exit 1; }
log "build $(( $(date +%s) - t0 )) s"
B=/tmp/dgrte-gpu-build/dgrte-bench-device
$B --list 2>&1 | tee -a "$R"
run() {
  local name=$1; shift
  log "== $name: $*"
  local s=$(date +%s.%N)
  timeout 200 $B "$@" >"/tmp/$name.json" 2>"/tmp/$name.err"; local rc=$?
  cat "/tmp/$name.json" >>"$R"; tail -n 5 "/tmp/$name.err" >>"$R"
  log "rc=$rc wall $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s"
}
for z in "$G"/*.bin.xz; do
  b=/tmp/$(basename "$z" .xz); n=$(basename "$b" .bin)
  xz -dc "$z" > "$b" 2>/dev/null || python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" "$z" "$b"
  if [[ $n == *gather* ]]; then
    run "$n" "$b" --repeats 3 "$@"
  elif [[ $n == *line_sum* ]]; then
    run "$n" "$b" --repeats 5 "$@"
  else
    run "$n-double" "$b" --repeats 3 --preconditioner sweep --no-clblast "$@"
    run "$n-single" "$b" --repeats 3 --single --preconditioner sweep --no-clblast "$@"
  fi
  rm -f "$b"
done
log "== done $(date -u)"
