#pragma once
// Tabulated octant-1 ordinates (see tables.cpp for the sources).
#include <vector>

namespace dgrte::angular {

struct OctantOrdinate {
  double mu, eta, xi, w;  // direction cosines with x, y, z; weight [sr]
};

const std::vector<OctantOrdinate>* level_symmetric_octant(int n);  // N = 2, 4, ..., 16; else null
const std::vector<OctantOrdinate>* heat_transfer_octant(int n);    // N = 4, 6, 8; else null

}  // namespace dgrte::angular
