#pragma once
// Exception-safe OpenMP loop: runs body(i) for i in [0, n), in parallel when n >= min_parallel
// (static schedule, or dynamic chunks of `chunk` when chunk > 0). An exception cannot leave an
// OpenMP region (std::terminate): the first one thrown by body is kept and rethrown afterwards.
// Callers compile with OpenMP.
#include <exception>
#include <functional>

namespace dgrte {

inline void parallel_for(long n, long min_parallel, const std::function<void(long)>& body, int chunk = 0) {
  std::exception_ptr error;
  auto guarded = [&](long i) {
    try {
      body(i);
    } catch (...) {
#pragma omp critical(dgrte_parallel_for)
      if (!error) error = std::current_exception();
    }
  };
  if (chunk > 0) {
#pragma omp parallel for schedule(dynamic, chunk) if (n >= min_parallel)
    for (long i = 0; i < n; ++i) guarded(i);
  } else {
#pragma omp parallel for schedule(static) if (n >= min_parallel)
    for (long i = 0; i < n; ++i) guarded(i);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace dgrte
