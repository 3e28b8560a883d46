# Gas-radiation rate benchmark (LBL kernel, SLW/RCSLW evaluation). Include from benchmarks/CMakeLists.txt:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/gas/lbl.cmake)
# Run: ./gas_lbl_rate [gasdata_dir]   (prints one JSON object)
add_executable(gas_lbl_rate ${CMAKE_CURRENT_LIST_DIR}/lbl_rate.cpp)
target_link_libraries(gas_lbl_rate PRIVATE dgrte_gas dgrte_warnings OpenMP::OpenMP_CXX)
target_compile_definitions(gas_lbl_rate PRIVATE DGRTE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
