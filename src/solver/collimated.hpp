#pragma once
// Collimated irradiation (Modest 2013, sec. 16.6): the intensity is split into a collimated part,
// a flux density F_c [W/m^2] travelling along s_c and attenuated exactly,
//   s_c . grad F_c = -(kappa + sigma_s) F_c,  F_c = F on the faces of the entry group facing the beam,
// solved by one sweep of the same DG operator, and the diffuse part, to which the collimated beam
// is a known source: sigma_s F_c Phi(s.s_c)/4 pi in the medium (Phi renormalised on the set so that
// it conserves energy exactly) and rho_d q_c on the walls it hits. Specular reflection (rho_s)
// turns a beam into a mirrored beam, followed generation by generation until its energy is spent.
#include "common/vec3.hpp"
#include "io/case_file.hpp"
#include "problem/problem.hpp"

#include <string>
#include <vector>

namespace dgrte::solver {

using dgrte::Vec3;

struct CollimatedBeam {
  Vec3 direction{};
  std::vector<double> F;  // nodal flux density [W/m^2]
  int generation = 0;     // 0: from the case file; n: after n specular reflections
  // Per scattering operator op (problem::Medium::scattering) and ordinate m: Phi(s_m.s_c)/4 pi,
  // normalised so that sum_m w_m weight = 1, at [op * M + m].
  std::vector<double> scatter_weight;
};

struct Collimated {
  std::vector<CollimatedBeam> beams;
  std::vector<double> q_in, q_out;          // per boundary face node: beam flux into / out of the walls
  std::vector<double> diffuse_irradiation;  // rho_d q_in per boundary face node
  std::vector<double> G, qx, qy, qz;        // nodal: sum over beams of F_c and F_c s_c
  int generations = 0;
  double unfollowed_fraction = 0;  // beam energy still travelling after the last generation
  bool empty() const { return beams.empty(); }
};

Collimated solve_collimated(const io::CaseSpec& cs, const transport::Discretization& disc, const angular::Quadrature& quad,
                            const problem::Medium& medium, const problem::Walls& walls, std::vector<std::string>& warnings);

}  // namespace dgrte::solver
