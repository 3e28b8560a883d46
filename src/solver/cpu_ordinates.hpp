#pragma once
// The CPU implementation of the ordinate backend, the reference: each ordinate's field on the host,
// solved by a transport sweep (OpenMP over the groups of a batch, or over the elements of each sweep
// level) or by PETSc's Bi-CGSTAB with a block-Jacobi or sweep preconditioner. Specular reflection
// couples the ordinates of a group by block Gauss-Seidel. Distributed (GrayProblem::distributed):
// only the owned elements are solved; sweeps read the partition faces' inflow from the outer vector
// and send their boundary elements to the other ranks' ghosts at the end of a sweep, and each
// Bi-CGSTAB is one global solve through parallel::DistributedTransport (a decorator of the
// one-direction transport backend).
#include "solver/gray_solver.hpp"  // GrayOptions; declares parallel::BoundaryExchange, GhostExchange
#include "solver/ordinate_backend.hpp"
#include "transport/cpu_transport.hpp"

#include <memory>
#include <optional>

namespace dgrte::solver {

class CpuOrdinates final : public OrdinateBackend {
 public:
  std::string name() const override { return "cpu"; }
  std::size_t bind(const GrayProblem& problem, const GrayOptions& options) override;
  std::size_t ghost_size() const override;
  void begin_sweep(std::span<const double> phi, std::span<const double> wall_state, std::span<const double> ghosts_in, bool with_sources,
                   bool moments) override;
  BatchCounts solve_batch(const OrdinateBatch& batch, std::vector<double>& specular, bool keep_fields, bool need_traces) override;
  std::span<const double> solution(std::size_t k) override { return slots_[k].u; }
  std::span<const double> inflow(std::size_t k) const override { return slots_[k].g; }
  void accumulate(const OrdinateBatch& batch, std::span<double> phi_out, NodalMoments* moments) override;
  long end_sweep(std::span<double> phi_out, NodalMoments* moments, std::span<double> ghosts_out) override;

 private:
  struct Slot {  // work arrays of one ordinate of a batch
    std::vector<double> u, base, rhs, g;
  };

  BatchCounts solve_group(const OrdinateBatch& batch, std::size_t k0, std::size_t k1, std::vector<double>& specular);
  long solve_one(int m, const std::vector<double>& rhs, std::vector<double>& u, BatchCounts& counts);
  int solve_bicgstab(int m, const std::vector<double>& rhs, std::vector<double>& u, BatchCounts& counts);
  void load_ghosts(int m, std::span<double> u) const;
  void store_sent(int m, std::span<const double> u);

  std::optional<GrayProblem> p_;
  const GrayOptions* opt_ = nullptr;
  std::unique_ptr<transport::CpuTransport> cpu_;  // inner Bi-CGSTAB
  const parallel::BoundaryExchange* boundary_ = nullptr;  // distributed sweeps
  const parallel::GhostExchange* nodes_ = nullptr;        // distributed Bi-CGSTAB
  bool any_specular_ = false;                             // on some rank
  std::vector<double> sent_;  // boundary elements x ordinates x nodes, for the exchange
  std::vector<Slot> slots_;
  std::span<const double> phi_, wall_state_, ghosts_in_;
  bool with_sources_ = true;
};

}  // namespace dgrte::solver
