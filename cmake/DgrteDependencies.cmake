# Finds every third-party dependency once and exposes each as an imported target.
# All come from Debian 12 packages (see scripts/install-deps.sh and ../shared/DEPENDENCY-NOTES.md).
find_package(PkgConfig REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
pkg_check_modules(PETSC REQUIRED IMPORTED_TARGET PETSc)
pkg_check_modules(MUPARSER REQUIRED IMPORTED_TARGET muparser)
find_package(VTK REQUIRED COMPONENTS CommonCore CommonDataModel IOXML IOLegacy FiltersCore)

find_path(GMSH_INCLUDE_DIR gmsh.h REQUIRED)
find_library(GMSH_LIBRARY gmsh REQUIRED)
add_library(dgrte::gmsh UNKNOWN IMPORTED)
set_target_properties(dgrte::gmsh PROPERTIES IMPORTED_LOCATION "${GMSH_LIBRARY}"
                      INTERFACE_INCLUDE_DIRECTORIES "${GMSH_INCLUDE_DIR}")

add_library(dgrte::petsc INTERFACE IMPORTED)
target_link_libraries(dgrte::petsc INTERFACE PkgConfig::PETSC MPI::MPI_CXX MPI::MPI_C)

# yaml-cpp 0.7 on Debian exports a plain target name
if(TARGET yaml-cpp::yaml-cpp)
  set(DGRTE_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(DGRTE_YAML_TARGET yaml-cpp)
endif()
if(TARGET CLI11::CLI11)
  set(DGRTE_CLI11_TARGET CLI11::CLI11)
else()
  add_library(dgrte_cli11 INTERFACE)
  set(DGRTE_CLI11_TARGET dgrte_cli11)
endif()
find_package(nlohmann_json 3 REQUIRED)

# Random123 (Debian librandom123-dev, header-only): counter-based RNG of the Monte Carlo tracer.
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h)
if(NOT RANDOM123_INCLUDE_DIR)
  message(FATAL_ERROR "Random123 headers (Random123/philox.h) not found: install the Debian package librandom123-dev "
                      "(bash scripts/install-deps.sh does)")
endif()
add_library(dgrte::random123 INTERFACE IMPORTED)
set_target_properties(dgrte::random123 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${RANDOM123_INCLUDE_DIR}")

# pybind11 (Debian pybind11-dev, python3-dev): the Python module `import dgrte` (src/python).
# Debian's interpreter, the one the tests and validation scripts run (numpy, scipy from Debian).
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
set(PYBIND11_PYTHON_VERSION ${Python3_VERSION})
find_package(pybind11 2.10 CONFIG)
if(NOT pybind11_FOUND)
  message(FATAL_ERROR "pybind11 not found: install the Debian packages pybind11-dev and python3-dev (bash scripts/install-deps.sh does)")
endif()
