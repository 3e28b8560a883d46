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

// element_solve.cl's invert_blocks: the inverse of every element's full block for every column,
// column-major at (c K + e) np^2.
std::vector<double> host_block_inverses(const TransportData& d, std::span<const double> directions);

// sweep_level.cl: the elements of one level of each column's plan (plan_of_column[c]); lagged faces
// read `lagged` (empty: zero). With `inverses` (host_block_inverses of the same directions) the
// element solves are products with them (sweep_level_stored), else eliminations (sweep_level).
void host_sweep_level(const TransportData& d, int level, std::span<const int> plan_of_column,
                      std::span<const double> lagged, std::span<const double> directions, std::span<const int> active,
                      std::span<const double> rhs, std::span<double> u, std::span<const double> inverses = {});
// Every level in order: one sweep pass.
void host_sweep(const TransportData& d, std::span<const int> plan_of_column, std::span<const double> lagged,
                std::span<const double> directions, std::span<const int> active, std::span<const double> rhs,
                std::span<double> u, std::span<const double> inverses = {});

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

// What the device needs to form the in-scattering of each ordinate from the moments, and the
// moments from the intensities (the outer iteration on the device). R moments per node; tables
// per scattering operator, ordinate and moment ([op][m][R], zero-padded where an operator has fewer).
struct ScatteringTables {
  int rank = 0;                           // R (0: no scattering; then the other arrays may be empty)
  std::vector<double> sigma_s;            // per node
  // Elements whose sigma_s varies: their Galerkin block (np x np, column-major; as TransportData's
  // sigma_block_of / sigma_blocks). Empty: sigma_s phi at the nodes everywhere.
  std::vector<int> sigma_s_block_of;
  std::vector<double> sigma_s_blocks;
  std::vector<int> operator_of_element;   // per element; -1: not scattering
  std::vector<double> to_direction, to_moment;
  std::vector<double> weights, s_bar;     // per ordinate: w_m and s_bar_m (3), for G and q
};

// outer_iteration.cl. Column c is ordinate ordinate[c] of the tables; boundary face b is
// element_face[b] = 4 e + f, its values at b * nfp + j of a column's boundary block.
// base[c] = (has_base ? base[c] : 0) + sigma_s sum_j Y[op, m_c, j] phi[k R + j] (with an element's
// sigma_s block: that block times the element's nodal sums).
void host_scatter_source(const TransportData& d, const ScatteringTables& t, std::span<const int> ordinate, bool has_base,
                         std::span<const double> phi, std::span<double> base);
// rhs[c] -= LIFT (c_ef g) on the boundary faces where column c's direction enters.
void host_lift_inflow(const TransportData& d, std::span<const int> element_face, std::span<const double> directions,
                      std::span<const double> inflow, std::span<double> rhs);
// traces[c][b nfp + j] = u[c] at node j of boundary face b.
void host_gather_traces(const TransportData& d, std::span<const int> element_face, std::span<const double> u,
                        std::span<double> traces);
// moments += sum_c Z u_c; with outputs, fluxes (G | qx | qy | qz, n each) += sum_c (w, s_bar) u_c.
void host_accumulate_moments(const TransportData& d, const ScatteringTables& t, std::span<const int> ordinate, bool outputs,
                             std::span<const double> u, std::span<double> moments, std::span<double> fluxes);
// Per column: max |u - previous| and max |u|.
void host_max_change(std::size_t n, std::span<const double> u, std::span<const double> previous, std::span<double> change,
                     std::span<double> size);

}  // namespace dgrte::device
