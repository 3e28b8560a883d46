#include "parallel/distributed_transport.hpp"

#include <algorithm>

namespace dgrte::parallel {

DistributedTransport::DistributedTransport(transport::TransportBackend& local, const GhostExchange& exchange, std::size_t owned)
    : local_(local), exchange_(exchange), owned_(owned), x_(local.size(), 0.0), y_(local.size(), 0.0) {}

void DistributedTransport::set_direction(const dgrte::Vec3& s, const transport::ReactionTerm& sigma_t, transport::BlockKind blocks) {
  local_.set_direction(s, sigma_t, blocks);
}

void DistributedTransport::apply(std::span<const double> u, std::span<double> y) {
  std::copy(u.begin(), u.begin() + static_cast<long>(owned_), x_.begin());
  exchange_.update(x_);  // the upwind traces of the ghost layer
  ++exchanges_;
  local_.apply(x_, y_);
  std::copy(y_.begin(), y_.begin() + static_cast<long>(owned_), y.begin());
}

void DistributedTransport::precondition(std::span<const double> r, std::span<double> z) {
  // Block Jacobi is element-local: the ghost rows are computed and dropped.
  std::copy(r.begin(), r.begin() + static_cast<long>(owned_), x_.begin());
  std::fill(x_.begin() + static_cast<long>(owned_), x_.end(), 0.0);
  local_.precondition(x_, y_);
  std::copy(y_.begin(), y_.begin() + static_cast<long>(owned_), z.begin());
}

}  // namespace dgrte::parallel
