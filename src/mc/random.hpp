#pragma once
// Counter-based random numbers for Monte Carlo paths: Philox4x64-10 (Salmon, Moraes, Dror & Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC11; the Random123 headers). The stream of a path
// is the block cipher of the counter (draw, path id) under the key (seed, stream), so a path draws
// the same numbers on whatever thread, device work-item or rank traces it: results depend on the
// seed only, never on the thread count.
#include <Random123/philox.h>

#include <cstdint>

namespace dgrte::mc {

// Streams of one run: forward paths and the rays of each probe point (stream 1 + point index).
inline constexpr std::uint64_t kForwardStream = 0;

class PathRandom {
 public:
  PathRandom(std::uint64_t seed, std::uint64_t stream, std::uint64_t path) : key_{{seed, stream}}, counter_{{0, path, 0, 0}} {}
  // Uniform in the open interval (0, 1): 53 random bits, offset by half a step (never 0 for logs).
  double uniform() {
    if (next_ == 4) {
      block_ = r123::Philox4x64{}(counter_, key_);
      ++counter_[0];
      next_ = 0;
    }
    return (static_cast<double>(block_[next_++] >> 11) + 0.5) * 0x1.0p-53;
  }

 private:
  r123::Philox4x64::key_type key_;
  r123::Philox4x64::ctr_type counter_;
  r123::Philox4x64::ctr_type block_{};
  int next_ = 4;
};

}  // namespace dgrte::mc
