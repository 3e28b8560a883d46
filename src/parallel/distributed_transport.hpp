#pragma once
// The one-direction transport operator of a distributed mesh, as the Krylov solver sees it: its
// unknowns are the rank's owned nodes; apply fills the ghost block by one exchange, applies the
// local operator (owned and ghost elements) and keeps the owned rows. PETSc's Bi-CGSTAB over
// PETSC_COMM_WORLD then solves the global system (norms and dot products reduced across ranks): the
// answer does not depend on the number of ranks beyond the solver tolerance.
#include "transport/transport_backend.hpp"
#include "parallel/ghost_exchange.hpp"

#include <vector>

namespace dgrte::parallel {

class DistributedTransport : public transport::TransportBackend {
 public:
  // local: the operator on the local mesh (owned + ghost elements, owned first); nodes per element.
  DistributedTransport(transport::TransportBackend& local, const GhostExchange& exchange, std::size_t owned_unknowns);
  std::size_t size() const override { return owned_; }
  void set_direction(const dgrte::Vec3& s, const transport::ReactionTerm& sigma_t, transport::BlockKind blocks) override;
  void apply(std::span<const double> u, std::span<double> y) override;
  void precondition(std::span<const double> r, std::span<double> z) override;
  std::size_t preconditioner_bytes() const override { return local_.preconditioner_bytes(); }
  std::size_t exchanges() const { return exchanges_; }

 private:
  transport::TransportBackend& local_;
  const GhostExchange& exchange_;
  std::size_t owned_;
  std::vector<double> x_, y_;  // local vectors (owned + ghost)
  std::size_t exchanges_ = 0;
};

}  // namespace dgrte::parallel
