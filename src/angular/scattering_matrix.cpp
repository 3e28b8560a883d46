#include "angular/scattering_matrix.hpp"

#include "common/error.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dgrte::angular {
namespace {

constexpr double kFourPi = 4 * std::numbers::pi;

struct Residuals {
  double energy = 0, asymmetry = 0;
};

Residuals residuals(const Eigen::MatrixXd& P, const Eigen::MatrixXd& mu, const Eigen::VectorXd& w, double g) {
  Residuals r;
  const Eigen::VectorXd e = P * w / kFourPi;
  const Eigen::VectorXd a = P.cwiseProduct(mu) * w / kFourPi;
  for (Eigen::Index m = 0; m < w.size(); ++m) {
    r.energy = std::max(r.energy, std::abs(e[m] - 1));
    r.asymmetry = std::max(r.asymmetry, std::abs(a[m] - g));
  }
  return r;
}

}  // namespace

std::vector<double> normalised_phase_matrix(const Quadrature& q, const PhaseFunction& phase, ScatteringMoments* report) {
  const auto M = static_cast<Eigen::Index>(q.size());
  Eigen::MatrixXd P(M, M), mu(M, M);
  Eigen::VectorXd w(M);
  for (Eigen::Index m = 0; m < M; ++m) {
    w[m] = q.w[static_cast<std::size_t>(m)];
    for (Eigen::Index k = 0; k < M; ++k) {
      const auto& a = q.s[static_cast<std::size_t>(m)];
      const auto& b = q.s[static_cast<std::size_t>(k)];
      mu(m, k) = std::clamp(a[0] * b[0] + a[1] * b[1] + a[2] * b[2], -1.0, 1.0);
      P(m, k) = phase(mu(m, k));
    }
  }
  const double g = phase.asymmetry();
  const Residuals naive = residuals(P, mu, w, g);
  Residuals after = naive;
  bool normalised = false;
  if (naive.energy > 1e-12 || naive.asymmetry > 1e-12) {
    // Constraints linear in (x, y): row m of energy and asymmetry, unknown x_m, x_m', y_m, y_m'.
    const Eigen::MatrixXd Pw = P * w.asDiagonal() / kFourPi;  // Pw(m, k) = P_mk w_k / 4 pi
    const Eigen::MatrixXd Pwm = Pw.cwiseProduct(mu), Pwmm = Pwm.cwiseProduct(mu);
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(2 * M, 2 * M);
    Eigen::VectorXd rhs(2 * M);
    const Eigen::VectorXd e0 = Pw.rowwise().sum(), a0 = Pwm.rowwise().sum(), a2 = Pwmm.rowwise().sum();
    // energy_m: sum_k Pw_mk (1 + x_m + x_k + (y_m + y_k) mu_mk) = 1
    A.block(0, 0, M, M) = Pw;
    A.block(0, M, M, M) = Pwm;
    A.block(0, 0, M, M).diagonal() += e0;
    A.block(0, M, M, M).diagonal() += a0;
    rhs.head(M) = Eigen::VectorXd::Ones(M) - e0;
    // asymmetry_m: sum_k Pw_mk mu_mk (1 + x_m + x_k + (y_m + y_k) mu_mk) = g
    A.block(M, 0, M, M) = Pwm;
    A.block(M, M, M, M) = Pwmm;
    A.block(M, 0, M, M).diagonal() += a0;
    A.block(M, M, M, M).diagonal() += a2;
    rhs.tail(M) = Eigen::VectorXd::Constant(M, g) - a0;
    const Eigen::VectorXd xy = A.completeOrthogonalDecomposition().solve(rhs);
    for (Eigen::Index m = 0; m < M; ++m)
      for (Eigen::Index k = 0; k < M; ++k) P(m, k) *= 1 + xy[m] + xy[k] + (xy[M + m] + xy[M + k]) * mu(m, k);
    after = residuals(P, mu, w, g);
    normalised = true;
    if (P.minCoeff() < 0)
      throw InputError(fmt::format("{} on {}: the energy- and asymmetry-conserving normalisation makes the discrete phase matrix "
                                   "negative (min {:.3g}); use a finer angular set",
                                   phase.name, q.name, P.minCoeff()));
  }
  if (report) {
    report->energy_error_naive = naive.energy;
    report->asymmetry_error_naive = naive.asymmetry;
    report->energy_residual = after.energy;
    report->asymmetry_residual = after.asymmetry;
    report->normalised = normalised;
  }
  std::vector<double> out(static_cast<std::size_t>(M * M));
  for (Eigen::Index m = 0; m < M; ++m)
    for (Eigen::Index k = 0; k < M; ++k) out[static_cast<std::size_t>(m * M + k)] = P(m, k);
  return out;
}

ScatteringMoments scattering_moments(const Quadrature& q, const PhaseFunction& phase) {
  ScatteringMoments sm;
  const auto P = normalised_phase_matrix(q, phase, &sm);
  const auto M = static_cast<Eigen::Index>(q.size());
  Eigen::VectorXd sw(M);
  for (Eigen::Index m = 0; m < M; ++m) sw[m] = std::sqrt(q.w[static_cast<std::size_t>(m)]);
  Eigen::MatrixXd S(M, M);
  for (Eigen::Index m = 0; m < M; ++m)
    for (Eigen::Index k = 0; k < M; ++k) S(m, k) = sw[m] * P[static_cast<std::size_t>(m * M + k)] * sw[k] / kFourPi;
  S = (S + S.transpose()) / 2;  // symmetric up to round-off
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(S);
  const Eigen::VectorXd& lam = es.eigenvalues();
  const double cut = 1e-13 * lam.cwiseAbs().maxCoeff();
  std::vector<Eigen::Index> keep;
  for (Eigen::Index k = M - 1; k >= 0; --k)
    if (std::abs(lam[k]) > cut) keep.push_back(k);
  sm.rank = static_cast<int>(keep.size());
  const auto r = keep.size();
  sm.to_moment.resize(static_cast<std::size_t>(M) * r);
  sm.to_direction.resize(static_cast<std::size_t>(M) * r);
  for (Eigen::Index m = 0; m < M; ++m)
    for (std::size_t j = 0; j < r; ++j) {
      const double v = es.eigenvectors()(m, keep[j]);
      sm.to_moment[static_cast<std::size_t>(m) * r + j] = sw[m] * v;
      sm.to_direction[static_cast<std::size_t>(m) * r + j] = v * lam[keep[j]] / sw[m];
    }
  return sm;
}

}  // namespace dgrte::angular
