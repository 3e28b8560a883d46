#include "backend/opencl_transport.hpp"

#include "backend/device_data.hpp"

#include <algorithm>

namespace dgrte::backend {

OpenclTransport::OpenclTransport(const transport::Discretization& disc, std::span<const double> sigma_t,
                                 const device::DeviceOptions& options)
    : disc_(disc), data_(device_data(disc, sigma_t)), device_(std::make_unique<device::DeviceTransport>(data_, options)) {}

void OpenclTransport::set_direction(const Vec3& s, std::span<const double> kappa, BlockKind blocks) {
  if (!std::equal(kappa.begin(), kappa.end(), data_.sigma_t.begin(), data_.sigma_t.end())) {
    data_.sigma_t.assign(kappa.begin(), kappa.end());
    device_->set_sigma_t(kappa);
  }
  direction_.assign(s.begin(), s.end());
  blocks_ = blocks;
}

void OpenclTransport::apply(std::span<const double> u, std::span<double> y) { device_->apply(direction_, u, y); }

void OpenclTransport::precondition(std::span<const double> r, std::span<double> z) {
  if (blocks_ == BlockKind::none) {
    std::copy(r.begin(), r.end(), z.begin());
    return;
  }
  device_->block_jacobi(direction_, blocks_ == BlockKind::full, r, z);
}

}  // namespace dgrte::backend
