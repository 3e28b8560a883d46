#pragma once
// Helpers shared by the C++ benchmark harnesses: medians, wall-clock seconds, the STREAM triad
// (the bandwidth a CPU-side fraction refers to) and the atomic JSON write (temporary, then rename).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dgrte::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// STREAM triad a[i] = b[i] + s c[i]: 3 * 8 bytes per element moved (no write-allocate counted,
// the STREAM convention), best of the trials, OpenMP static schedule with first-touch placement.
inline nlohmann::json stream_triad(std::size_t n, int trials) {
  std::vector<double> a(n), b(n), c(n);
  const auto N = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < N; ++i) {  // first touch with the same static schedule
    a[i] = 0;
    b[i] = 1.0 + 1e-9 * static_cast<double>(i);
    c[i] = 2.0;
  }
  const double s = 3.0;
  std::vector<double> t;
  for (int k = 0; k < trials; ++k) {
    const auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < N; ++i) a[i] = b[i] + s * c[i];
    t.push_back(seconds_since(t0));
  }
  double check = 0;
  for (std::size_t i = 0; i < n; i += 4097) check += a[i];
  const double bytes = 3.0 * sizeof(double) * static_cast<double>(n);
  const double best = *std::min_element(t.begin(), t.end());
  std::vector<double> gbs;
  for (double x : t) gbs.push_back(bytes / x * 1e-9);
  return {{"kernel", "triad a[i] = b[i] + s*c[i]"},
          {"array_bytes", n * sizeof(double)},
          {"bytes_per_trial", bytes},
          {"trials", trials},
          {"best_seconds", best},
          {"best_gb_per_s", bytes / best * 1e-9},
          {"median_gb_per_s", median(gbs)},
          {"samples_gb_per_s", gbs},
          {"checksum", check}};
}

// Writes `text` to `path` through path.tmp + rename, so a reader never sees half a file.
inline void write_atomically(const std::filesystem::path& path, const std::string& text) {
  const auto tmp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << text;
    f.flush();
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace dgrte::bench
