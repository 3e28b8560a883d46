#!/usr/bin/env bash
# Install dgrte's build and test dependencies from Debian 12 packages (needs root or sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
PKGS=(
  build-essential cmake pkg-config ninja-build
  libgmsh-dev gmsh
  petsc-dev openmpi-bin
  libvtk9-dev
  libyaml-cpp-dev libfmt-dev libcli11-dev libmuparser-dev
  libeigen3-dev libnanoflann-dev nlohmann-json3-dev
  libgtest-dev libbenchmark-dev librandom123-dev
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd libclblast-dev clinfo
  python3-numpy python3-scipy python3-matplotlib python3-yaml
  python3-vtk9  # tests read solution.vtu back as ParaView does
  pybind11-dev python3-dev  # the Python module (src/python)
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
