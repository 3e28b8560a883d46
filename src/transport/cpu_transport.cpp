#include "transport/cpu_transport.hpp"

#include <algorithm>

namespace dgrte::transport {

namespace {
constexpr std::ptrdiff_t kChunk = 128;  // elements per GEMM chunk: fits L2 for P <= 4
}

CpuTransport::CpuTransport(const transport::Discretization& disc, std::size_t memory_budget_bytes)
    : disc_(disc), budget_(memory_budget_bytes) {
  const int np = disc.ref.num_nodes;
  d_stack_.resize(3 * np, np);
  d_stack_ << disc.ref.Dr, disc.ref.Ds, disc.ref.Dt;
}

void CpuTransport::set_direction(const Vec3& s, const ReactionTerm& sigma_t, BlockKind blocks) {
  coeffs_ = transport::direction_coefficients(disc_, s);
  sigma_t_ = &sigma_t;
  blocks_ = blocks;
  block_inverse_.clear();
  const std::size_t np = disc_.ref.num_nodes, K = disc_.num_elements();
  const std::size_t bytes = K * np * np * sizeof(double);
  if (blocks == BlockKind::none || bytes > budget_) return;
  block_inverse_.resize(K * np * np);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < static_cast<std::ptrdiff_t>(K); ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    const auto B = transport::element_block(disc_, coeffs_, e, blocks == BlockKind::full ? sigma_t_ : nullptr);
    Eigen::Map<Eigen::MatrixXd>(block_inverse_.data() + e * np * np, np, np) = B.partialPivLu().inverse();
  }
}

void CpuTransport::apply(std::span<const double> u, std::span<double> y) {
  const auto& ref = disc_.ref;
  const std::ptrdiff_t np = ref.num_nodes, nfp = ref.num_face_nodes;
  const auto K = static_cast<std::ptrdiff_t>(disc_.num_elements());
  const std::ptrdiff_t chunks = (K + kChunk - 1) / kChunk;
#pragma omp parallel
  {
    Eigen::MatrixXd grad(3 * np, kChunk), flux(4 * nfp, kChunk), lifted(np, kChunk);
#pragma omp for schedule(static)
    for (std::ptrdiff_t c = 0; c < chunks; ++c) {
      const std::ptrdiff_t e0 = c * kChunk, n = std::min(kChunk, K - e0);
      const Eigen::Map<const Eigen::MatrixXd> U(u.data() + e0 * np, np, n);
      grad.leftCols(n).noalias() = d_stack_ * U;
      // Upwind jump c_ef (u+ - u-) on inflow faces; u+ = 0 on the boundary (inflow is in the rhs).
      for (std::ptrdiff_t k = 0; k < n; ++k) {
        const std::ptrdiff_t e = e0 + k;
        for (int f = 0; f < 4; ++f) {
          const double cf = coeffs_.inflow[e][f];
          auto col = flux.col(k).segment(f * nfp, nfp);
          if (cf == 0.0) {
            col.setZero();
            continue;
          }
          const int* nb = disc_.neighbour_node.data() + (e * 4 + f) * nfp;
          const auto& fn = ref.face_nodes[f];
          for (std::ptrdiff_t j = 0; j < nfp; ++j) {
            const double up = nb[j] >= 0 ? u[nb[j]] : 0.0;
            col[j] = cf * (up - u[e * np + fn[j]]);
          }
        }
      }
      lifted.leftCols(n).noalias() = ref.lift * flux.leftCols(n);
      for (std::ptrdiff_t k = 0; k < n; ++k) {
        const std::ptrdiff_t e = e0 + k;
        const auto& a = coeffs_.stream[e];
        double* ye = y.data() + e * np;
        const double* ue = u.data() + e * np;
        for (std::ptrdiff_t i = 0; i < np; ++i)
          ye[i] = a[0] * grad(i, k) + a[1] * grad(np + i, k) + a[2] * grad(2 * np + i, k) + lifted(i, k);
        sigma_t_->apply_add(static_cast<std::size_t>(e), ue, ye);
      }
    }
  }
}

void CpuTransport::precondition(std::span<const double> r, std::span<double> z) {
  if (blocks_ == BlockKind::none) {
    std::copy(r.begin(), r.end(), z.begin());
    return;
  }
  const std::ptrdiff_t np = disc_.ref.num_nodes;
  const auto K = static_cast<std::ptrdiff_t>(disc_.num_elements());
  const bool cached = !block_inverse_.empty();
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t e = 0; e < K; ++e) {
    const Eigen::Map<const Eigen::VectorXd> re(r.data() + e * np, np);
    Eigen::Map<Eigen::VectorXd> ze(z.data() + e * np, np);
    if (cached) {
      ze.noalias() = Eigen::Map<const Eigen::MatrixXd>(block_inverse_.data() + e * np * np, np, np) * re;
    } else {
      const auto B = transport::element_block(disc_, coeffs_, static_cast<std::size_t>(e), blocks_ == BlockKind::full ? sigma_t_ : nullptr);
      ze = B.partialPivLu().solve(re);
    }
  }
}

}  // namespace dgrte::transport
