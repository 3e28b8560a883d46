#pragma once
// Tabulated octant-1 ordinates (all cosines > 0) of the tabulated sets; sources in tables.cpp.
#include <vector>

namespace dgrte::angular {

struct OctantOrdinate {
  double mu, eta, xi, w;  // direction cosines with x, y, z; weight (as tabulated, see each function)
};

// LQ_N, N = 2, 4, ..., 16: weights as in libdetran, summing to 1 per octant. Empty for other N.
std::vector<OctantOrdinate> level_symmetric_octant(int n);
// Heat-transfer S_N of code_saturne, N = 4, 6, 8: 7-digit cosines, weights in sr. Empty for other N.
std::vector<OctantOrdinate> heat_transfer_octant(int n);

}  // namespace dgrte::angular
