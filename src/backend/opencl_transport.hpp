#pragma once
// The transport backend on an OpenCL device (device::DeviceTransport), for one direction at a time
// through the TransportBackend interface (PETSc's Krylov solvers call it), and batched: many
// directions in one device-resident Bi-CGSTAB (solve_batch), which is how the solver uses it.
#include "transport/transport_backend.hpp"
#include "device/device_transport.hpp"
#include "transport/discretization.hpp"
#include "transport/reaction.hpp"

#include <memory>

namespace dgrte::backend {

using transport::BlockKind;
using transport::TransportBackend;

class OpenclTransport final : public TransportBackend {
 public:
  // sigma_t: the extinction term (uploaded again when set_direction is given a different one).
  OpenclTransport(const transport::Discretization& disc, const transport::ReactionTerm& sigma_t, const device::DeviceOptions& options);

  std::size_t size() const override { return disc_.num_dofs(); }
  void set_direction(const Vec3& s, const transport::ReactionTerm& sigma_t, BlockKind blocks) override;
  void apply(std::span<const double> u, std::span<double> y) override;
  void precondition(std::span<const double> r, std::span<double> z) override;
  std::size_t preconditioner_bytes() const override { return 0; }  // blocks are rebuilt in local memory

  device::DeviceTransport& device() { return *device_; }
  const device::TransportData& data() const { return data_; }

 private:
  const transport::Discretization& disc_;
  device::TransportData data_;
  std::unique_ptr<device::DeviceTransport> device_;
  std::vector<double> direction_{1, 0, 0};
  BlockKind blocks_ = BlockKind::none;
};

}  // namespace dgrte::backend
