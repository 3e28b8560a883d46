#pragma once
// A reaction term sigma u of the upwind DG operator (M^{-1}-scaled strong form), element by element,
// with sigma as the user gave it: evaluated at the property points (Discretization::property), not
// interpolated at the nodes. The Galerkin form of element e is
//   K_e = M^{-1} M_sigma,   (M_sigma)_ij = integral of sigma phi_i phi_j,
// which is sigma I where sigma is constant on the element: those elements keep the diagonal form
// (sigma u at the nodes: exact, and as cheap as before); the others carry their N_p x N_p block.
// Used for the extinction sigma_t (transport operator, sweeps, preconditioner blocks) and a varying
// scattering coefficient (the in-scattering source sigma_s phi).
#include "transport/discretization.hpp"

#include <span>
#include <vector>

namespace dgrte::transport {

class ReactionTerm {
 public:
  ReactionTerm() = default;
  // The collocated form sigma u at the nodes for every element (nodal values e * N_p + i): exact
  // for element-wise constant sigma; tests and hand-built operators.
  explicit ReactionTerm(std::vector<double> nodal, int num_nodes);
  // From sigma at the property points (e * Q + q) and at the nodes (e * N_p + i; what outputs and
  // the diagonal elements read). An element is diagonal when its point values agree to 1e-13
  // relative; its nodal values are then set to that constant.
  static ReactionTerm from_points(const Discretization& disc, std::span<const double> at_points, std::vector<double> at_nodes);

  std::size_t num_elements() const { return nodal_.size() / static_cast<std::size_t>(np_ > 0 ? np_ : 1); }
  int num_nodes() const { return np_; }
  // Nodal sigma (e * N_p + i): the diagonal of diagonal elements; point values at the nodes elsewhere.
  std::span<const double> nodal() const { return nodal_; }
  // Element e's block K_e (N_p x N_p, column-major), or null where the element is diagonal.
  const double* block(std::size_t e) const {
    return block_of_element_.empty() || block_of_element_[e] < 0
               ? nullptr
               : blocks_.data() + static_cast<std::size_t>(block_of_element_[e]) * static_cast<std::size_t>(np_ * np_);
  }
  std::size_t num_blocks() const { return np_ > 0 ? blocks_.size() / static_cast<std::size_t>(np_ * np_) : 0; }
  // Per element: its block's index in block_data(), -1 for diagonal elements (empty: all diagonal).
  std::span<const int> block_of_element() const { return block_of_element_; }
  std::span<const double> block_data() const { return blocks_; }

  // y_e += K_e u_e (sigma u_e on diagonal elements).
  void apply_add(std::size_t e, const double* u_e, double* y_e) const;
  // Adds K_e to the column-major N_p x N_p matrix B.
  void add_to(std::size_t e, double* B) const;
  // y += K u over every element (y, u: e * N_p + i).
  void apply_add(std::span<const double> u, std::span<double> y) const;
  // The L2 projection of sigma onto the nodal basis (e * N_p + i): K_e 1 = M^{-1} (integrals of
  // sigma phi_i) on block elements, sigma on diagonal ones. Its element mean is sigma's (with the
  // property rule); what the element-wise methods read (Monte Carlo means, the final gather's
  // chords), so that they see the medium the solve integrates.
  std::vector<double> projection() const;
  // Integral of sigma u over element e divided by its Jacobian: 1^T M_ref K_e u_e (what an energy
  // balance of the discrete equations sees: with sigma at the property points, the exact integral of
  // sigma times the polynomial u).
  double element_integral(const Discretization& disc, std::size_t e, const double* u_e) const;

 private:
  int np_ = 0;
  std::vector<double> nodal_;
  std::vector<int> block_of_element_;
  std::vector<double> blocks_;
};

// The L2 projection of values at the property points (e * Q + q) onto the nodal basis (e * N_p + i).
std::vector<double> project_points(const Discretization& disc, std::span<const double> at_points);

}  // namespace dgrte::transport
