#pragma once
// Keys for caches of per-state spectra (LBL, SLW): a gas state identified bit for bit.
#include "gas/spectral_model.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace dgrte::gas {

// Exact (bitwise) identity of a gas state, for caches of per-state spectra (LBL, SLW).
struct GasStateKey {
  double v[6];
  explicit GasStateKey(const GasState& s) : v{s.temperature, s.pressure, s.x_h2o, s.x_co2, s.x_co, s.soot_fv} {}
  bool operator==(const GasStateKey& o) const { return std::memcmp(v, o.v, sizeof v) == 0; }
};
struct GasStateKeyHash {
  std::size_t operator()(const GasStateKey& k) const {
    std::size_t h = 1469598103934665603ull;  // FNV-1a over the bit patterns
    for (double x : k.v) {
      h ^= std::bit_cast<std::uint64_t>(x);
      h *= 1099511628211ull;
      h ^= h >> 29;
    }
    return h;
  }
};
// Index of distinct gas states.
using GasStateIndex = std::unordered_map<GasStateKey, std::size_t, GasStateKeyHash>;

}  // namespace dgrte::gas
