#pragma once
// CPU (OpenMP + Eigen) implementation of the transport backend: the reference oracle.
// The operator is applied in chunks of elements: per chunk, the volume term is one small GEMM
// [Dr; Ds; Dt] * U_chunk and the face term one GEMM LIFT * F_chunk (Klöckner et al. 2009).
#include "transport/transport_backend.hpp"
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"
#include "transport/upwind_operator.hpp"

#include <Eigen/Dense>

#include <vector>

namespace dgrte::transport {

class CpuTransport final : public TransportBackend {
 public:
  // memory_budget_bytes caps the cached inverse blocks; above it blocks are rebuilt per apply.
  CpuTransport(const transport::Discretization& disc, std::size_t memory_budget_bytes);

  std::size_t size() const override { return disc_.num_dofs(); }
  void set_direction(const Vec3& s, const ReactionTerm& sigma_t, BlockKind blocks) override;
  void apply(std::span<const double> u, std::span<double> y) override;
  void precondition(std::span<const double> r, std::span<double> z) override;
  std::size_t preconditioner_bytes() const override { return block_inverse_.size() * sizeof(double); }

  const transport::DirectionCoefficients& coefficients() const { return coeffs_; }

 private:
  const transport::Discretization& disc_;
  std::size_t budget_;
  Eigen::MatrixXd d_stack_;  // [Dr; Ds; Dt], 3 N_p x N_p
  transport::DirectionCoefficients coeffs_;
  const ReactionTerm* sigma_t_ = nullptr;
  BlockKind blocks_ = BlockKind::none;
  std::vector<double> block_inverse_;  // N_p x N_p per element (column-major), when cached
};

}  // namespace dgrte::transport
