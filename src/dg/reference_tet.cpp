// Nodal reference tetrahedron after Hesthaven & Warburton (2008), ch. 6 (3-D basis, nodes) and
// ch. 10 (Vandermonde3D, Dmatrices3D, Lift3D). Equation/section numbers refer to that book.
#include "dg/reference_tet.hpp"

#include "common/tet_topology.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

namespace dgrte::dg {
namespace {

using Array = Eigen::ArrayXd;

constexpr double kNodeTolerance = 1e-10;

// ---------------------------------------------------------------------------------------------
// 1-D Jacobi polynomials and Gauss rules (sec. 3.1, Appendix A: JacobiP, GradJacobiP, JacobiGQ,
// JacobiGL).

// Orthonormal Jacobi polynomial P_n^{(alpha,beta)} at x, weight (1-x)^alpha (1+x)^beta.
Array jacobi_p(const Array& x, double alpha, double beta, int n) {
  const double gamma0 = std::pow(2.0, alpha + beta + 1) * std::tgamma(alpha + 1) *
                        std::tgamma(beta + 1) / std::tgamma(alpha + beta + 2);
  Array previous = Array::Constant(x.size(), 1.0 / std::sqrt(gamma0));
  if (n == 0) return previous;
  const double gamma1 = (alpha + 1) * (beta + 1) / (alpha + beta + 3) * gamma0;
  Array current = ((alpha + beta + 2) * x / 2 + (alpha - beta) / 2) / std::sqrt(gamma1);
  // Three-term recurrence (A.2).
  double a_old = 2 / (2 + alpha + beta) * std::sqrt((alpha + 1) * (beta + 1) / (alpha + beta + 3));
  for (int i = 1; i < n; ++i) {
    const double h1 = 2 * i + alpha + beta;
    const double a_new = 2 / (h1 + 2) *
                         std::sqrt((i + 1) * (i + 1 + alpha + beta) * (i + 1 + alpha) *
                                   (i + 1 + beta) / (h1 + 1) / (h1 + 3));
    const double b_new = -(alpha * alpha - beta * beta) / h1 / (h1 + 2);
    Array next = (-a_old * previous + (x - b_new) * current) / a_new;
    previous = std::move(current);
    current = std::move(next);
    a_old = a_new;
  }
  return current;
}

// d/dx of the orthonormal Jacobi polynomial (A.3).
Array grad_jacobi_p(const Array& x, double alpha, double beta, int n) {
  if (n == 0) return Array::Zero(x.size());
  return std::sqrt(n * (n + alpha + beta + 1)) * jacobi_p(x, alpha + 1, beta + 1, n - 1);
}

struct GaussRule1D {
  Array points;
  Array weights;
};

// Gauss-Jacobi rule with num_points points for weight (1-x)^alpha (1+x)^beta: Golub-Welsch
// eigenvalue problem of the Jacobi matrix (JacobiGQ, Appendix A).
GaussRule1D jacobi_gauss(double alpha, double beta, int num_points) {
  const double mass = std::pow(2.0, alpha + beta + 1) * std::tgamma(alpha + 1) *
                      std::tgamma(beta + 1) / std::tgamma(alpha + beta + 2);
  if (num_points == 1) {
    return {Array::Constant(1, -(alpha - beta) / (alpha + beta + 2)), Array::Constant(1, mass)};
  }
  Matrix jacobi = Matrix::Zero(num_points, num_points);
  for (int i = 0; i < num_points; ++i) {
    const double h1 = 2 * i + alpha + beta;
    jacobi(i, i) = (std::abs(h1) < 1e-14) ? 0.0 : -(alpha * alpha - beta * beta) / (h1 + 2) / h1;
    if (i + 1 < num_points) {
      const double k = i + 1;
      const double off =
          2 / (h1 + 2) *
          std::sqrt(k * (k + alpha + beta) * (k + alpha) * (k + beta) / (h1 + 1) / (h1 + 3));
      jacobi(i, i + 1) = off;
      jacobi(i + 1, i) = off;
    }
  }
  Eigen::SelfAdjointEigenSolver<Matrix> eig(jacobi);
  const Array first_components = eig.eigenvectors().row(0).transpose().array();
  return {eig.eigenvalues().array(), first_components.square() * mass};
}

// Gauss-Lobatto points for the Jacobi weight: endpoints plus Gauss points of (alpha+1,beta+1)
// (JacobiGL). Ascending.
Array jacobi_gauss_lobatto(double alpha, double beta, int order) {
  Array x(order + 1);
  x(0) = -1.0;
  x(order) = 1.0;
  if (order >= 2) x.segment(1, order - 1) = jacobi_gauss(alpha + 1, beta + 1, order - 1).points;
  return x;
}

// ---------------------------------------------------------------------------------------------
// Collapsed coordinates and orthonormal simplex bases (sec. 6.1, eqs. 6.3-6.6; sec. 10.1).

struct Collapsed3D {
  Array a, b, c;
};

// (r,s,t) -> (a,b,c) of the collapsed cube (rsttoabc); the singular edges map to -1.
Collapsed3D rst_to_abc(const Points& rst) {
  const Eigen::Index n = rst.rows();
  Collapsed3D abc{Array(n), Array(n), rst.col(2).array()};
  for (Eigen::Index i = 0; i < n; ++i) {
    const double r = rst(i, 0), s = rst(i, 1), t = rst(i, 2);
    abc.a(i) = (std::abs(s + t) > 1e-14) ? 2 * (1 + r) / (-s - t) - 1 : -1.0;
    abc.b(i) = (std::abs(1 - t) > 1e-14) ? 2 * (1 + s) / (1 - t) - 1 : -1.0;
  }
  return abc;
}

// psi_ijk in collapsed coordinates (Simplex3DP, eq. 10.2 / 6.6 generalised).
Array simplex3d_p(const Collapsed3D& abc, int i, int j, int k) {
  const Array h1 = jacobi_p(abc.a, 0, 0, i);
  const Array h2 = jacobi_p(abc.b, 2 * i + 1, 0, j);
  const Array h3 = jacobi_p(abc.c, 2 * (i + j) + 2, 0, k);
  return 2 * std::numbers::sqrt2 * h1 * h2 * (1 - abc.b).pow(i) * h3 * (1 - abc.c).pow(i + j);
}

// Gradient of psi_ijk with respect to (r,s,t) by the chain rule (GradSimplex3DP).
std::array<Array, 3> grad_simplex3d_p(const Collapsed3D& abc, int i, int j, int k) {
  const Array& a = abc.a;
  const Array& b = abc.b;
  const Array& c = abc.c;
  const Array fa = jacobi_p(a, 0, 0, i), dfa = grad_jacobi_p(a, 0, 0, i);
  const Array gb = jacobi_p(b, 2 * i + 1, 0, j), dgb = grad_jacobi_p(b, 2 * i + 1, 0, j);
  const Array hc = jacobi_p(c, 2 * (i + j) + 2, 0, k);
  const Array dhc = grad_jacobi_p(c, 2 * (i + j) + 2, 0, k);
  const Array half_1mb = 0.5 * (1 - b), half_1mc = 0.5 * (1 - c);

  Array dr = dfa * gb * hc;
  if (i > 0) dr *= half_1mb.pow(i - 1);
  if (i + j > 0) dr *= half_1mc.pow(i + j - 1);

  Array tmp = dgb * half_1mb.pow(i);
  if (i > 0) tmp += -0.5 * i * gb * half_1mb.pow(i - 1);
  if (i + j > 0) tmp *= half_1mc.pow(i + j - 1);
  tmp = fa * tmp * hc;
  Array ds = 0.5 * (1 + a) * dr + tmp;

  Array dt = 0.5 * (1 + a) * dr + 0.5 * (1 + b) * tmp;
  Array tmp_c = dhc * half_1mc.pow(i + j);
  if (i + j > 0) tmp_c -= 0.5 * (i + j) * hc * half_1mc.pow(i + j - 1);
  dt += fa * gb * tmp_c * half_1mb.pow(i);

  const double scale = std::pow(2.0, 2 * i + j + 1.5);
  return {dr * scale, ds * scale, dt * scale};
}

// Orthonormal basis on the reference triangle {r,s >= -1, r+s <= 0} (Simplex2DP, eq. 6.6).
Matrix triangle_vandermonde(int order, const Array& r, const Array& s) {
  const Eigen::Index n = r.size();
  Array a(n);
  for (Eigen::Index p = 0; p < n; ++p) {
    a(p) = (std::abs(1 - s(p)) > 1e-14) ? 2 * (1 + r(p)) / (1 - s(p)) - 1 : -1.0;
  }
  Matrix v(n, tri_num_nodes(order));
  int column = 0;
  for (int i = 0; i <= order; ++i) {
    for (int j = 0; j <= order - i; ++j) {
      v.col(column++) = (std::numbers::sqrt2 * jacobi_p(a, 0, 0, i) * jacobi_p(s, 2 * i + 1, 0, j) *
                         (1 - s).pow(i))
                            .matrix();
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Warp-and-blend nodes (sec. 6.2 for the 1-D warp on triangle edges; sec. 10.1, Nodes3D).

// Blending parameter alpha optimised for N <= 15 (table alphastore in Nodes3D).
double optimised_alpha(int order) {
  static constexpr std::array<double, 15> kAlphaStore = {0,      0,      0,      0.1002, 1.1332,
                                                         1.5608, 1.3413, 1.2577, 1.1603, 1.10153,
                                                         0.6080, 0.4523, 0.8856, 0.8717, 0.9655};
  return (order <= 15) ? kAlphaStore[order - 1] : 1.0;
}

// Edge warp function divided by the edge blend (evalwarp, eq. 6.9 with the 1-x^2 factor removed).
Array eval_warp(int order, const Array& gauss_lobatto_desc, const Array& x) {
  Array warp = Array::Zero(x.size());
  Array equidistant(order + 1);
  for (int i = 0; i <= order; ++i) equidistant(i) = -1 + 2.0 * (order - i) / order;
  for (int i = 0; i <= order; ++i) {
    Array d = Array::Constant(x.size(), gauss_lobatto_desc(i) - equidistant(i));
    for (int j = 1; j < order; ++j) {
      if (i != j) d *= (x - equidistant(j)) / (equidistant(i) - equidistant(j));
    }
    if (i != 0) d = -d / (equidistant(i) - equidistant(0));
    if (i != order) d = d / (equidistant(i) - equidistant(order));
    warp += d;
  }
  return warp;
}

// Tangential shift of a face point in the equilateral face frame from the three edge warps
// (evalshift / WarpShiftFace3D).
std::pair<Array, Array> face_shift(int order, double alpha, const Array& l1, const Array& l2,
                                   const Array& l3) {
  const Array gauss_lobatto_desc = -jacobi_gauss_lobatto(0, 0, order);
  const Array warp1 =
      4 * l2 * l3 * eval_warp(order, gauss_lobatto_desc, l3 - l2) * (1 + (alpha * l1).square());
  const Array warp2 =
      4 * l1 * l3 * eval_warp(order, gauss_lobatto_desc, l1 - l3) * (1 + (alpha * l2).square());
  const Array warp3 =
      4 * l1 * l2 * eval_warp(order, gauss_lobatto_desc, l2 - l1) * (1 + (alpha * l3).square());
  const double c2 = std::cos(2 * std::numbers::pi / 3), s2 = std::sin(2 * std::numbers::pi / 3);
  const double c4 = std::cos(4 * std::numbers::pi / 3), s4 = std::sin(4 * std::numbers::pi / 3);
  return {warp1 + c2 * warp2 + c4 * warp3, s2 * warp2 + s4 * warp3};
}

// Equidistant nodes on the reference tet, t slowest, r fastest (EquiNodes3D).
Points equidistant_nodes(int order) {
  Points nodes(tet_num_nodes(order), 3);
  int row = 0;
  for (int n = 0; n <= order; ++n) {
    for (int m = 0; m <= order - n; ++m) {
      for (int q = 0; q <= order - n - m; ++q) {
        nodes.row(row++) << -1 + 2.0 * q / order, -1 + 2.0 * m / order, -1 + 2.0 * n / order;
      }
    }
  }
  return nodes;
}

using RowPoint3 = Eigen::RowVector3d;

// Vertices of the equilateral tetrahedron used for the warp (Nodes3D).
std::array<RowPoint3, 4> equilateral_vertices() {
  const double r3 = std::sqrt(3.0), r6 = std::sqrt(6.0);
  return {RowPoint3(-1, -1 / r3, -1 / r6), RowPoint3(1, -1 / r3, -1 / r6),
          RowPoint3(0, 2 / r3, -1 / r6), RowPoint3(0, 0, 3 / r6)};
}

// Map equilateral-tet coordinates back to (r,s,t) (xyztorst).
Points equilateral_to_reference(const Points& xyz) {
  const auto v = equilateral_vertices();
  Eigen::Matrix3d a;
  a.col(0) = 0.5 * (v[1] - v[0]).transpose();
  a.col(1) = 0.5 * (v[2] - v[0]).transpose();
  a.col(2) = 0.5 * (v[3] - v[0]).transpose();
  const RowPoint3 offset = 0.5 * (v[1] + v[2] + v[3] - v[0]);
  const Eigen::Matrix3d a_inv = a.inverse();
  Points rst(xyz.rows(), 3);
  for (Eigen::Index i = 0; i < xyz.rows(); ++i) {
    rst.row(i) = (a_inv * (xyz.row(i) - offset).transpose()).transpose();
  }
  return rst;
}

void require_valid_order(int order) {
  if (order < kMinOrder || order > kMaxOrder) {
    throw std::invalid_argument("dg::ReferenceTet: polynomial order " + std::to_string(order) +
                                " is outside the supported range [" + std::to_string(kMinOrder) +
                                ", " + std::to_string(kMaxOrder) + "]");
  }
}

// Volume-node indices on each face, ascending (Fmask, sec. 10.1).
std::array<std::vector<int>, 4> find_face_nodes(const Points& nodes) {
  std::array<std::vector<int>, 4> faces;
  for (int i = 0; i < static_cast<int>(nodes.rows()); ++i) {
    const double r = nodes(i, 0), s = nodes(i, 1), t = nodes(i, 2);
    if (std::abs(1 + t) < kNodeTolerance) faces[0].push_back(i);
    if (std::abs(1 + s) < kNodeTolerance) faces[1].push_back(i);
    if (std::abs(1 + r + s + t) < kNodeTolerance) faces[2].push_back(i);
    if (std::abs(1 + r) < kNodeTolerance) faces[3].push_back(i);
  }
  return faces;
}

// The two reference coordinates that parametrise face f (Lift3D): (r,s), (r,t), (s,t), (s,t).
std::array<int, 2> face_coordinates(int face) {
  static constexpr std::array<std::array<int, 2>, 4> kCoords = {{{0, 1}, {0, 2}, {1, 2}, {1, 2}}};
  return kCoords[face];
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Matrix orthonormal_basis(int order, const Points& rst) {
  const Collapsed3D abc = rst_to_abc(rst);
  Matrix v(rst.rows(), tet_num_nodes(order));
  int column = 0;
  for (int i = 0; i <= order; ++i) {
    for (int j = 0; j <= order - i; ++j) {
      for (int k = 0; k <= order - i - j; ++k) v.col(column++) = simplex3d_p(abc, i, j, k).matrix();
    }
  }
  return v;
}

std::array<Matrix, 3> orthonormal_basis_gradient(int order, const Points& rst) {
  const Collapsed3D abc = rst_to_abc(rst);
  std::array<Matrix, 3> grad;
  for (auto& g : grad) g.resize(rst.rows(), tet_num_nodes(order));
  int column = 0;
  for (int i = 0; i <= order; ++i) {
    for (int j = 0; j <= order - i; ++j) {
      for (int k = 0; k <= order - i - j; ++k) {
        const auto d = grad_simplex3d_p(abc, i, j, k);
        for (int dim = 0; dim < 3; ++dim) grad[dim].col(column) = d[dim].matrix();
        ++column;
      }
    }
  }
  return grad;
}

Points warp_blend_nodes(int order) {
  require_valid_order(order);
  const double alpha = optimised_alpha(order);
  const Points equi = equidistant_nodes(order);
  const Array r = equi.col(0).array(), s = equi.col(1).array(), t = equi.col(2).array();
  // Barycentric coordinates (Nodes3D): L1..L4 belong to vertices v3, v2, v0, v1 of the header.
  const Array l1 = (1 + t) / 2, l2 = (1 + s) / 2, l3 = -(1 + r + s + t) / 2, l4 = (1 + r) / 2;

  const auto v = equilateral_vertices();
  const std::array<RowPoint3, 4> tangent1 = {v[1] - v[0], v[1] - v[0], v[2] - v[1], v[2] - v[0]};
  const std::array<RowPoint3, 4> tangent2 = {v[2] - 0.5 * (v[0] + v[1]), v[3] - 0.5 * (v[0] + v[1]),
                                             v[3] - 0.5 * (v[1] + v[2]),
                                             v[3] - 0.5 * (v[0] + v[2])};
  // (La, Lb, Lc, Ld) per face; La vanishes on the face.
  const std::array<std::array<const Array*, 4>, 4> face_bary = {
      {{&l1, &l2, &l3, &l4}, {&l2, &l1, &l3, &l4}, {&l3, &l1, &l4, &l2}, {&l4, &l1, &l3, &l2}}};

  const Eigen::Index n = equi.rows();
  Points xyz(n, 3);
  for (Eigen::Index p = 0; p < n; ++p) {
    xyz.row(p) = l3(p) * v[0] + l4(p) * v[1] + l2(p) * v[2] + l1(p) * v[3];
  }
  Points shift = Points::Zero(n, 3);
  for (int face = 0; face < 4; ++face) {
    const Array& la = *face_bary[face][0];
    const Array& lb = *face_bary[face][1];
    const Array& lc = *face_bary[face][2];
    const Array& ld = *face_bary[face][3];
    const auto [warp1, warp2] = face_shift(order, alpha, lb, lc, ld);
    const RowPoint3 t1 = tangent1[face].normalized(), t2 = tangent2[face].normalized();
    for (Eigen::Index p = 0; p < n; ++p) {
      // Volume blend with the alpha-modified denominator (eq. 10.3 ff.).
      double blend = lb(p) * lc(p) * ld(p);
      const double denom = (lb(p) + 0.5 * la(p)) * (lc(p) + 0.5 * la(p)) * (ld(p) + 0.5 * la(p));
      if (denom > kNodeTolerance) blend = (1 + std::pow(alpha * la(p), 2)) * blend / denom;
      shift.row(p) += blend * warp1(p) * t1 + blend * warp2(p) * t2;
      // Points on this face (but not on its edges' other faces) take the pure face warp.
      const int off_other =
          (lb(p) > kNodeTolerance) + (lc(p) > kNodeTolerance) + (ld(p) > kNodeTolerance);
      if (la(p) < kNodeTolerance && off_other < 3) {
        shift.row(p) = warp1(p) * t1 + warp2(p) * t2;
      }
    }
  }
  return equilateral_to_reference(xyz + shift);
}

QuadratureRule tet_quadrature(int degree) {
  if (degree < 0) {
    throw std::invalid_argument("dg::tet_quadrature: degree " + std::to_string(degree) +
                                " must be non-negative");
  }
  // Conical product (Stroud): collapsed cube (a,b,c) with Jacobian ((1-b)/2) ((1-c)/2)^2, whose
  // factors are absorbed by Gauss-Jacobi weights (1-b)^1 and (1-c)^2 (sec. 6.1 coordinates).
  const int n = degree / 2 + 1;  // 2n-1 >= degree
  const GaussRule1D ga = jacobi_gauss(0, 0, n), gb = jacobi_gauss(1, 0, n),
                    gc = jacobi_gauss(2, 0, n);
  QuadratureRule rule{Points(n * n * n, 3), Eigen::VectorXd(n * n * n)};
  int row = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) {
        const double a = ga.points(i), b = gb.points(j), c = gc.points(k);
        rule.points.row(row) << 0.25 * (1 + a) * (1 - b) * (1 - c) - 1, 0.5 * (1 + b) * (1 - c) - 1,
            c;
        rule.weights(row) = ga.weights(i) * gb.weights(j) * gc.weights(k) / 8.0;
        ++row;
      }
    }
  }
  return rule;
}

ReferenceTet ReferenceTet::build(int order) {
  require_valid_order(order);
  ReferenceTet tet;
  tet.order = order;
  tet.num_nodes = tet_num_nodes(order);
  tet.num_face_nodes = tri_num_nodes(order);
  tet.nodes = warp_blend_nodes(order);

  // Vandermonde3D, Dmatrices3D (sec. 10.1): D = V_r V^{-1}; M = (V V^T)^{-1} (eq. 10.6).
  tet.vandermonde = orthonormal_basis(order, tet.nodes);
  const Eigen::PartialPivLU<Matrix> lu_transpose(tet.vandermonde.transpose());
  const auto apply_inverse_v = [&](const Matrix& b) -> Matrix {
    return lu_transpose.solve(b.transpose()).transpose();  // B V^{-1}
  };
  const auto grad = orthonormal_basis_gradient(order, tet.nodes);
  tet.Dr = apply_inverse_v(grad[0]);
  tet.Ds = apply_inverse_v(grad[1]);
  tet.Dt = apply_inverse_v(grad[2]);
  const Matrix inverse_v = apply_inverse_v(Matrix::Identity(tet.num_nodes, tet.num_nodes));
  tet.mass = inverse_v.transpose() * inverse_v;

  tet.face_nodes = find_face_nodes(tet.nodes);
  const int nfp = tet.num_face_nodes;
  Matrix embedding = Matrix::Zero(tet.num_nodes, 4 * nfp);
  for (int face = 0; face < 4; ++face) {
    const auto& ids = tet.face_nodes[face];
    if (static_cast<int>(ids.size()) != nfp) {
      throw std::logic_error("dg::ReferenceTet: face " + std::to_string(face) + " has " +
                             std::to_string(ids.size()) + " nodes, expected " +
                             std::to_string(nfp));
    }
    // Face mass from the 2-D Vandermonde in the face parametrisation (Lift3D).
    const auto [c0, c1] = face_coordinates(face);
    Array face_r(nfp), face_s(nfp);
    for (int j = 0; j < nfp; ++j) {
      face_r(j) = tet.nodes(ids[j], c0);
      face_s(j) = tet.nodes(ids[j], c1);
    }
    const Matrix v_face = triangle_vandermonde(order, face_r, face_s);
    tet.face_mass[face] = (v_face * v_face.transpose()).inverse();
    for (int j = 0; j < nfp; ++j) {
      for (int i = 0; i < nfp; ++i) embedding(ids[i], face * nfp + j) = tet.face_mass[face](i, j);
    }
  }
  // LIFT = V V^T E = M^{-1} E (eq. 10.8 / Lift3D).
  tet.lift = tet.vandermonde * (tet.vandermonde.transpose() * embedding);
  return tet;
}

Matrix ReferenceTet::interpolation_matrix(const Points& rst) const {
  const Eigen::PartialPivLU<Matrix> lu_transpose(vandermonde.transpose());
  return lu_transpose.solve(orthonormal_basis(order, rst).transpose()).transpose();
}

}  // namespace dgrte::dg

namespace dgrte::dg {

Matrix ReferenceTet::face_interpolation_matrix(int f, const std::vector<std::array<double, 2>>& points) const {
  // Monomials in (l1, l2) of degree <= order: unisolvent on the face nodes; conditioning is
  // harmless for order <= 8 on [0, 1].
  auto monomials = [this](double a, double b) {
    Eigen::RowVectorXd row(num_face_nodes);
    Eigen::Index c = 0;
    for (int i = 0; i <= order; ++i)
      for (int j = 0; i + j <= order; ++j) row[c++] = std::pow(a, i) * std::pow(b, j);
    return row;
  };
  Matrix V(num_face_nodes, num_face_nodes);
  const auto own = face_node_coordinates(f);
  for (int j = 0; j < num_face_nodes; ++j) V.row(j) = monomials(own[static_cast<std::size_t>(j)][0], own[static_cast<std::size_t>(j)][1]);
  Matrix T(static_cast<Eigen::Index>(points.size()), num_face_nodes);
  for (std::size_t i = 0; i < points.size(); ++i) T.row(static_cast<Eigen::Index>(i)) = monomials(points[i][0], points[i][1]);
  return T * V.inverse();
}

std::vector<std::array<double, 2>> ReferenceTet::face_node_coordinates(int f) const {
  std::vector<std::array<double, 2>> out;
  for (const int node : face_nodes[static_cast<std::size_t>(f)]) {
    const auto lam = vertex_barycentrics(nodes(node, 0), nodes(node, 1), nodes(node, 2));
    out.push_back({lam[static_cast<std::size_t>(dgrte::kFaceVertices[static_cast<std::size_t>(f)][1])],
                   lam[static_cast<std::size_t>(dgrte::kFaceVertices[static_cast<std::size_t>(f)][2])]});
  }
  return out;
}

}  // namespace dgrte::dg
