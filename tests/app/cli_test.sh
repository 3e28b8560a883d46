#!/usr/bin/env bash
# Command-line contract of the dgrte executable: exit codes and one clear message per error.
# Usage: cli_test.sh DGRTE SOURCE_DIR WORKDIR
set -u
dgrte=$1 src=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
expect() {  # expect NAME CODE PATTERN -- command...
  local name=$1 code=$2 pattern=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$code" ] && grep -qE -- "$pattern" <<<"$out"; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL $name: exit $rc (want $code), output:"; echo "$out" | head -5; fi
}
expect version 0 '^dgrte [0-9]' -- "$dgrte" --version
expect help 0 'mesh-info' -- "$dgrte" --help
expect no-subcommand 2 'subcommand' -- "$dgrte"
expect missing-case 2 'does not exist' -- "$dgrte" run nonexistent.yaml
printf 'mesh: {file: nothere.msh}\ndirections: [[1,0,0]]\nmedia: {"*": {kappa: "1", Ib: "1"}}\nboundaries: {"*": {type: black}}\n' > missing_mesh.yaml
expect missing-mesh 1 'nothere.msh' -- "$dgrte" run missing_mesh.yaml
printf 'mesh: {geo: %s/validation/mms/cube.geo, size: 0.9}\ndirections: [[1,0,0]]\nmedia: {"*": {kappa: "1", Ib: "1"}}\nboundaries: {"*": {type: black}}\nsolver: {max_iterations: 1, preconditioner: none}\n' "$src" > tiny.yaml
expect non-convergence 3 'direction 0 .*iteration 1' -- "$dgrte" run tiny.yaml -o out_nc -q
expect petsc-options 0 'KSP Residual norm' -- "$dgrte" run tiny.yaml -o out_petsc -q -ksp_max_it 200 -ksp_monitor
expect summary-written 0 '"dofs"' -- cat out_petsc/summary.json
expect mesh-info 0 'surface groups' -- "$dgrte" mesh-info "$src/validation/mms/cube.geo" --size 0.9
expect mesh-info-geo-needs-size 1 'needs --size' -- "$dgrte" mesh-info "$src/validation/mms/cube.geo"
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
