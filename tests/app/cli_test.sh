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
# Relative mesh paths are taken from the case file's folder; the message names key, file, line and rule.
mkdir -p sub && printf 'order: 1\nmesh: {file: nothere.msh}\ndirections: [[1,0,0]]\nmedia: {"*": {kappa: "1", Ib: "1"}}\nboundaries: {"*": {type: black}}\n' > sub/case.yaml
expect missing-mesh-rule 1 "sub/case.yaml: mesh.file \\(line 2\\): the mesh file 'nothere.msh' does not exist \\(looked for .*/sub/nothere.msh; relative paths are taken from the case file's folder\\)" -- "$dgrte" run sub/case.yaml
printf 'mesh: {geo: %s/validation/mms/cube.geo, size: 0.9}\ndirections: [[1,0,0]]\nmedia: {"*": {kappa: "1", Ib: "1"}}\nboundaries: {"*": {type: black}}\nsolver: {max_iterations: 1, preconditioner: none}\n' "$src" > tiny.yaml
expect non-convergence 3 'direction 0 .*iteration 1' -- "$dgrte" run tiny.yaml -o out_nc -q
expect petsc-options 0 'KSP Residual norm' -- "$dgrte" run tiny.yaml -o out_petsc -q -ksp_max_it 200 -ksp_monitor
expect summary-written 0 '"dofs"' -- cat out_petsc/summary.json
expect petsc-unused-option 0 'warning: PETSc option -ksp_rtoll 1e-6 was not used' -- "$dgrte" run tiny.yaml -o out_petsc2 -q -ksp_max_it 200 -ksp_rtoll 1e-6
expect petsc-unused-in-summary 0 'ksp_rtoll 1e-6 was not used' -- cat out_petsc2/summary.json
expect mesh-info 0 'surface groups' -- "$dgrte" mesh-info "$src/validation/mms/cube.geo" --size 0.9
expect mesh-info-geo-needs-size 1 'needs --size' -- "$dgrte" mesh-info "$src/validation/mms/cube.geo"
# mesh-info describes a mesh whose boundary is partly unlabelled (the solver refuses it), and shows
# interior faces tagged as walls (Boundary{} of two volumes includes their interface); run warns of them.
printf 'SetFactory("OpenCASCADE");\nBox(1) = {0,0,0,1,1,1};\nPhysical Volume("gas") = {1};\nPhysical Surface("bottom") = {5};\n' > open.geo
expect mesh-info-unlabelled 0 'boundary faces in no Physical Surface, first at .*requires every boundary face' -- "$dgrte" mesh-info open.geo --size 0.5
printf 'mesh: {geo: open.geo, size: 0.5}\norder: 1\nangular: {quadrature: sn, order: 2}\nmedia: {"*": {kappa: "1", Ib: "1"}}\nboundaries: {"*": {type: black}}\noutput: {vtk: false}\n' > open.yaml
expect run-unlabelled 1 'boundary face\(s\) are in no surface physical group.*mesh-info' -- "$dgrte" run open.yaml -o out_open -q
printf 'SetFactory("OpenCASCADE");\nBox(1) = {0,0,0,1,1,1};\nBox(2) = {1,0,0,1,1,1};\nBooleanFragments{ Volume{1}; Delete; }{ Volume{2}; Delete; }\nPhysical Volume("flame") = {1};\nPhysical Volume("gas") = {2};\nPhysical Surface("walls") = Boundary{ Volume{1,2}; };\n' > two.geo
expect mesh-info-interior-tagged 0 'walls .* boundary faces, and [0-9]+ interior faces \(first at \(1, ' -- "$dgrte" mesh-info two.geo --size 0.5
printf 'mesh: {geo: two.geo, size: 0.5}\norder: 1\nangular: {quadrature: sn, order: 2}\nmedia: {"*": {kappa: "1", Ib: "1"}}\nboundaries: {"*": {type: black}}\noutput: {vtk: false}\n' > two.yaml
expect run-interior-tagged 0 "warning: .*Physical Surface 'walls' contains [0-9]+ interior faces.*CombinedBoundary" -- "$dgrte" run two.yaml -o out_two -q
# gas properties and the exact slab solver through the same executable
par="$src/gasdata/lbl/hitran_fragments/hitran_co_3iso_2000_2300cm.par"
expect gas-emissivity 0 '"emissivity": ?0\.3[01]' -- "$dgrte" gas emissivity --model rcslw --T 1000 --xh2o 0.2 --xco2 0.1 --L 1 --json
expect gas-gray-needs-kappa 1 'model gray needs its absorption coefficient.*kappa=' -- "$dgrte" gas emissivity --model gray --T 1000 --L 1
expect gas-gray-kappa 0 'total emissivity 0\.393469' -- "$dgrte" gas emissivity --model gray --model-option kappa=0.5 --T 1000 --L 1
printf 'slab:\n  length: 1.0\n  temperature: "800 + foo*x"\nmodel:\n  type: wsgg\n' > slab_expr.yaml
expect slab-expression-line 1 'slab.temperature \(line 3\).*foo' -- "$dgrte" slab slab_expr.yaml
printf 'slab:\n  length: 1.0\n  temperature: "800"\nmodel:\n  type: wsgg\n  correlaton: smith1982\n' > slab_key.yaml
expect slab-key-line 1 'model.correlaton \(line 6\)' -- "$dgrte" slab slab_key.yaml
printf 'slab:\n  length: -1\n  temperature: "800"\n' > slab_length.yaml
expect slab-value-line 1 'slab.length \(line 2\) = -1' -- "$dgrte" slab slab_length.yaml
expect gas-fractions-above-one 1 'x_h2o.*x_co2|sum' -- "$dgrte" gas emissivity --model wsgg --T 1000 --xh2o 0.7 --xco2 0.5 --L 1
expect gas-lbl-kdistribution 0 'lbl-kdistribution-25cm-g16' -- "$dgrte" gas emissivity --model lbl --par "$par" \
  --model-option nu_min=2025 --model-option nu_max=2275 --model-option reduction=kdistribution --T 1500 --xco 0.1 --L 1 --json
expect gas-lbl-bad-reduction 1 'reduction.*every.*kdistribution' -- "$dgrte" gas emissivity --model lbl --par "$par" \
  --model-option reduction=bins --T 1500 --xco 0.1 --L 1
expect gas-missing-par 1 'nothere.par' -- "$dgrte" gas emissivity --model lbl --par nothere.par --T 1500 --xco 0.1 --L 1
expect slab 0 'q\(L\) = [0-9]' -- "$dgrte" slab "$src/validation/gas/cases/S5.yaml" -o out_slab
expect slab-summary 0 '"spectral_points"' -- cat out_slab/summary.json
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
