#pragma once
// The backend interface of the one-direction transport operator. The Krylov solver only talks to
// this: the CPU implementation (cpu_transport) is the oracle; an OpenCL implementation is a second
// implementation of the same interface, held equal by a parity test.
#include "common/vec3.hpp"

#include <array>
#include <cstddef>
#include <span>

namespace dgrte::transport {

class ReactionTerm;

using dgrte::Vec3;

enum class BlockKind { none, partial, full };  // preconditioner: none, partial (no kappa), full block Jacobi

class TransportBackend {
 public:
  virtual ~TransportBackend() = default;
  virtual std::size_t size() const = 0;  // local unknowns of one direction

  // Prepares direction s: streaming coefficients and, within the memory budget, factorised
  // preconditioner blocks. sigma_t: the extinction term (held by reference until the next call).
  virtual void set_direction(const Vec3& s, const ReactionTerm& sigma_t, BlockKind blocks) = 0;

  // y = A u: upwind DG operator of s.grad I + sigma_t I with zero inflow (M^{-1}-scaled strong form).
  virtual void apply(std::span<const double> u, std::span<double> y) = 0;
  // z = P^{-1} r with the block-Jacobi preconditioner chosen in set_direction (copy if none).
  virtual void precondition(std::span<const double> r, std::span<double> z) = 0;

  // Bytes held for preconditioner blocks of the current direction (0 when built on the fly).
  virtual std::size_t preconditioner_bytes() const = 0;
};

}  // namespace dgrte::transport
