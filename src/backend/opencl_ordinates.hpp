#pragma once
// The OpenCL implementation of the gray solver's ordinate backend (solver/ordinate_backend.hpp):
// every column of a batch solved at once on a device (batched Bi-CGSTAB, or sweeps whose plan m is
// ordinate m's), the fields resident there. Per transport sweep the moments go up once and come
// back once; per batch the wall inflow goes up and the boundary traces come back (all that
// problem::Walls::record, record_specular and tally read), and the fixed sources go up in the
// sweeps that carry them. Specular reflection couples the columns of a batch by block Jacobi.
#include "device/device_transport.hpp"
#include "io/case_file.hpp"
#include "solver/ordinate_backend.hpp"

#include <optional>

namespace dgrte::backend {

// The device's name for the case's preconditioner.
device::DevicePreconditioner device_preconditioner(io::Preconditioner p);

class OpenclOrdinates final : public solver::OrdinateBackend {
 public:
  // dev: its data must hold one direction and plan per ordinate of the sets it will be bound to
  // (plans only when solver::uses_sweep_plans).
  explicit OpenclOrdinates(device::DeviceTransport& dev) : dev_(dev) {}

  std::string name() const override { return "opencl: " + dev_.device().label(); }
  std::size_t bind(const solver::GrayProblem& problem, const solver::GrayOptions& options) override;
  void begin_sweep(std::span<const double> phi, std::span<const double> wall_state, std::span<const double> ghosts_in, bool with_sources,
                   bool moments) override;
  solver::BatchCounts solve_batch(const solver::OrdinateBatch& batch, std::vector<double>& specular, bool keep_fields,
                                  bool need_traces) override;
  std::span<const double> solution(std::size_t k) override;
  std::span<const double> inflow(std::size_t k) const override { return slots_[k].g; }
  void accumulate(const solver::OrdinateBatch&, std::span<double>, solver::NodalMoments*) override {}  // done on the device
  long end_sweep(std::span<double> phi_out, solver::NodalMoments* moments, std::span<double> ghosts_out) override;

 private:
  struct Slot {  // one column: its inflow, its traces on the boundary face nodes, its field when kept
    std::vector<double> g, traces, u;
  };

  device::ScatteringTables scattering_tables() const;
  device::BatchMethod method() const;
  std::span<const double> trace_view(std::size_t k);
  void load(const std::vector<int>& members, std::size_t k0, std::size_t cols);
  long solve(const std::vector<int>& members, std::size_t k0, std::size_t cols, std::vector<double>& specular, bool need_traces);
  void finish(std::size_t k0, std::size_t cols, bool keep);
  long checked_iterations(const device::BatchedSolve& res, const std::vector<int>& members, std::size_t k0) const;

  device::DeviceTransport& dev_;
  std::optional<solver::GrayProblem> p_;
  const solver::GrayOptions* opt_ = nullptr;
  std::size_t chunk_ = 1;  // columns the device holds at once
  std::vector<Slot> slots_;
  std::vector<double> trace_scratch_;  // see trace_view()
  std::span<const double> wall_state_;
  bool with_sources_ = true, keep_ = false;
};

}  // namespace dgrte::backend
