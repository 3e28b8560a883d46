#pragma once
// Host twins of the OpenCL kernels (opencl/*.cl): the same arguments and the same arithmetic in
// double, in plain C++ (OpenMP over elements where the compiler has it). They are what the parity
// tests hold the kernels to, and the CPU side of dgrte-bench-device on machines without dgrte's
// Eigen/PETSc CPU path. Fields hold `columns` columns of num_dofs() values; active[c] = 0 skips c.
#include "device/transport_data.hpp"

#include <functional>
#include <span>
#include <vector>

namespace dgrte::device {

// transport_apply.cl: y = A u, column c with direction directions[3c..3c+2].
void host_apply(const TransportData& d, std::span<const double> directions, std::span<const int> active,
                std::span<const double> u, std::span<double> y);

// element_solve.cl: z = B^-1 r per element (include_sigma: full block, else streaming + faces only).
void host_block_jacobi(const TransportData& d, bool include_sigma, std::span<const double> directions,
                       std::span<const int> active, std::span<const double> r, std::span<double> z);

// sweep_level.cl: the elements of one level of each column's plan (plan_of_column[c]); lagged faces
// read `lagged` (empty: zero).
void host_sweep_level(const TransportData& d, int level, std::span<const int> plan_of_column,
                      std::span<const double> lagged, std::span<const double> directions, std::span<const int> active,
                      std::span<const double> rhs, std::span<double> u);
// Every level in order: one sweep pass.
void host_sweep(const TransportData& d, std::span<const int> plan_of_column, std::span<const double> lagged,
                std::span<const double> directions, std::span<const int> active, std::span<const double> rhs,
                std::span<double> u);

// blas1.cl: batched right-preconditioned Bi-CGSTAB (van der Vorst 1992), stopping per column when
// ||b - A x|| <= rtol ||b|| (PETSc's default test for right preconditioning). x holds the guess.
enum class BicgStatus { running = 0, converged = 1, breakdown = 2, not_a_number = 3, iteration_limit = 4 };
struct BatchedSolve {
  std::vector<int> iterations;
  std::vector<BicgStatus> status;
  std::vector<double> residual_norm;  // the recursively updated ||r|| at the end
  std::vector<double> rhs_norm;       // ||b||
};
using ColumnOperator = std::function<void(std::span<const int> active, std::span<const double> in, std::span<double> out)>;
BatchedSolve host_bicgstab(const ColumnOperator& apply, const ColumnOperator& precondition, std::size_t n,
                           std::size_t columns, std::span<const double> b, std::span<double> x, double rtol,
                           int max_iterations);

const char* to_string(BicgStatus s);

}  // namespace dgrte::device
