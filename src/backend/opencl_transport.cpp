#include "backend/opencl_transport.hpp"

#include "backend/device_data.hpp"

#include <algorithm>

namespace dgrte::backend {

OpenclTransport::OpenclTransport(const transport::Discretization& disc, const transport::ReactionTerm& sigma_t,
                                 const device::DeviceOptions& options)
    : disc_(disc), data_(device_data(disc, sigma_t)), device_(std::make_unique<device::DeviceTransport>(data_, options)) {}

void OpenclTransport::set_direction(const Vec3& s, const transport::ReactionTerm& sigma_t, BlockKind blocks) {
  // Uploaded again only when the term changed (compared by value: a spectral loop refills one object).
  const bool same = std::ranges::equal(sigma_t.nodal(), data_.sigma_t) && std::ranges::equal(sigma_t.block_of_element(), data_.sigma_block_of) &&
                    std::ranges::equal(sigma_t.block_data(), data_.sigma_blocks);
  if (!same) {
    data_.sigma_t.assign(sigma_t.nodal().begin(), sigma_t.nodal().end());
    data_.sigma_block_of.assign(sigma_t.block_of_element().begin(), sigma_t.block_of_element().end());
    data_.sigma_blocks.assign(sigma_t.block_data().begin(), sigma_t.block_data().end());
    device_->set_sigma_t(sigma_t.nodal(), sigma_t.block_of_element(), sigma_t.block_data());
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
