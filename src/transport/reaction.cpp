#include "transport/reaction.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dgrte::transport {

ReactionTerm::ReactionTerm(std::vector<double> nodal, int num_nodes) : np_(num_nodes), nodal_(std::move(nodal)) {
  if (np_ <= 0 || nodal_.size() % static_cast<std::size_t>(np_) != 0)
    throw std::logic_error("ReactionTerm: the nodal values must be N_p per element");
}

ReactionTerm ReactionTerm::from_points(const Discretization& disc, std::span<const double> at_points, std::vector<double> at_nodes) {
  const std::size_t K = disc.num_elements(), Q = disc.property.size();
  const int np = disc.num_nodes();
  if (at_points.size() != K * Q || at_nodes.size() != disc.num_dofs())
    throw std::logic_error("ReactionTerm::from_points: one value per property point and per node");
  ReactionTerm r(std::move(at_nodes), np);
  std::vector<char> varies(K, 0);
  std::size_t count = 0;
  for (std::size_t e = 0; e < K; ++e) {
    const double* s = at_points.data() + e * Q;
    const auto [lo, hi] = std::minmax_element(s, s + Q);
    if (*hi - *lo > 1e-13 * std::max(std::abs(*lo), std::abs(*hi))) {
      varies[e] = 1, ++count;
    } else {
      std::fill_n(r.nodal_.begin() + static_cast<std::ptrdiff_t>(e * static_cast<std::size_t>(np)), np, s[0]);
    }
  }
  if (count == 0) return r;
  r.block_of_element_.assign(K, -1);
  int next = 0;
  for (std::size_t e = 0; e < K; ++e)
    if (varies[e]) r.block_of_element_[e] = next++;
  r.blocks_.resize(count * static_cast<std::size_t>(np * np));
  const auto& P = disc.property.projection;
  const auto& V = disc.property.interpolation;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ei = 0; ei < static_cast<std::ptrdiff_t>(K); ++ei) {
    const auto e = static_cast<std::size_t>(ei);
    if (r.block_of_element_[e] < 0) continue;
    const Eigen::Map<const Eigen::VectorXd> s(at_points.data() + e * Q, static_cast<Eigen::Index>(Q));
    Eigen::Map<Eigen::MatrixXd>(r.blocks_.data() + static_cast<std::size_t>(r.block_of_element_[e]) * static_cast<std::size_t>(np * np), np,
                                np)
        .noalias() = P * s.asDiagonal() * V;
  }
  return r;
}

void ReactionTerm::apply_add(std::size_t e, const double* u_e, double* y_e) const {
  if (const double* B = block(e)) {
    Eigen::Map<Eigen::VectorXd>(y_e, np_).noalias() += Eigen::Map<const Eigen::MatrixXd>(B, np_, np_) * Eigen::Map<const Eigen::VectorXd>(u_e, np_);
    return;
  }
  const double* s = nodal_.data() + e * static_cast<std::size_t>(np_);
  for (int i = 0; i < np_; ++i) y_e[i] += s[i] * u_e[i];
}

void ReactionTerm::add_to(std::size_t e, double* B) const {
  const auto nn = static_cast<std::size_t>(np_) * static_cast<std::size_t>(np_);
  if (const double* K = block(e)) {
    for (std::size_t k = 0; k < nn; ++k) B[k] += K[k];
    return;
  }
  const double* s = nodal_.data() + e * static_cast<std::size_t>(np_);
  for (int i = 0; i < np_; ++i) B[static_cast<std::size_t>(i) * static_cast<std::size_t>(np_ + 1)] += s[i];
}

void ReactionTerm::apply_add(std::span<const double> u, std::span<double> y) const {
  const auto K = static_cast<std::ptrdiff_t>(num_elements());
  const auto np = static_cast<std::size_t>(np_);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t e = 0; e < K; ++e)
    apply_add(static_cast<std::size_t>(e), u.data() + static_cast<std::size_t>(e) * np, y.data() + static_cast<std::size_t>(e) * np);
}

std::vector<double> ReactionTerm::projection() const {
  std::vector<double> out(nodal_.size(), 0.0);
  const std::vector<double> ones(static_cast<std::size_t>(np_), 1.0);
  const auto np = static_cast<std::size_t>(np_);
  for (std::size_t e = 0; e < num_elements(); ++e) apply_add(e, ones.data(), out.data() + e * np);
  return out;
}

double ReactionTerm::element_integral(const Discretization& disc, std::size_t e, const double* u_e) const {
  Eigen::VectorXd y = Eigen::VectorXd::Zero(np_);
  apply_add(e, u_e, y.data());
  return (disc.ref.mass * y).sum();
}

std::vector<double> project_points(const Discretization& disc, std::span<const double> at_points) {
  const std::size_t K = disc.num_elements(), Q = disc.property.size();
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  if (at_points.size() != K * Q) throw std::logic_error("project_points: one value per property point");
  std::vector<double> out(K * np);
  const Eigen::Map<const Eigen::MatrixXd> values(at_points.data(), static_cast<Eigen::Index>(Q), static_cast<Eigen::Index>(K));
  Eigen::Map<Eigen::MatrixXd>(out.data(), static_cast<Eigen::Index>(np), static_cast<Eigen::Index>(K)).noalias() =
      disc.property.projection * values;
  return out;
}

}  // namespace dgrte::transport
