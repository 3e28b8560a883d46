#pragma once
// Exact 1-D nongray solver: plane-parallel, non-scattering medium between two gray diffuse walls.
// For every spectral point of a k-type model the gray RTE is integrated exactly along rays for a
// source that is linear in optical depth between fine-grid nodes; the angular integral uses
// composite Gauss-Legendre panels in mu, geometrically refined towards mu = 0 (converged to ~1e-6
// of the flux scale). Reflecting walls: the two wall radiosities are coupled per spectral point.
// The SNB model (not a sum of gray gases) is solved with band transmissivities (Curtis-Godson).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gas/model_factory.hpp"

namespace dgrte::gas {

// The angular quadrature on mu in (0, 1]: composite Gauss-Legendre on geometric panels.
void slab_mu_quadrature(int per_panel, std::vector<double>& mu, std::vector<double>& w);

// Gray slab with nodes x (ascending, m). solve() returns the flux q [W/m^2] and incident radiation
// G [W/m^2] at the nodes for absorption coefficient kappa [1/m] and blackbody intensity source
// ib [W/(m^2 sr)] at the nodes; walls with emissivity eps and blackbody emissive power eb
// [W/m^2] of this spectral part.
class GraySlab {
 public:
  GraySlab(std::vector<double> x, int per_panel = 6);
  void solve(std::span<const double> kappa, std::span<const double> ib, double eps0, double eb0, double eps1, double eb1,
             std::span<double> q, std::span<double> G);
  const std::vector<double>& x() const { return x_; }
  int num_directions() const { return static_cast<int>(mu_.size()); }

 private:
  std::vector<double> x_, mu_, w_;
  std::vector<double> dtau_, ip_, im_, tp_, tm_, qm_, gm_, qw0_, gw0_, qw1_, gw1_;
};

struct SlabWall {
  double temperature = 0;
  double emissivity = 1;
};

struct SlabCase {
  std::string file;
  double length = 1;
  int points = 401;
  double pressure = 1;
  std::string temperature = "1000", x_h2o = "0", x_co2 = "0", x_co = "0";
  std::string soot_fv = "0";  // soot volume fraction (expression of x, L); "0" = no soot
  SlabWall left, right;
  int refine = 4;            // fine nodes per output cell
  int angles_per_panel = 6;  // Gauss points per mu panel (11 panels)
  YAML::Node model;          // the model section
  std::string output_directory = "out";
  std::string gasdata;       // override of the data directory
};

// Reads and checks a case file; throws InputError naming file and key path.
SlabCase read_slab_case(const std::filesystem::path& file);
SlabCase parse_slab_case(const YAML::Node& root, const std::string& file_label);

// The soot of a run (summary.json spectral.soot): refractive-index model, Rayleigh constant C,
// how it is combined with the gas (gas/soot.hpp) and the number of soot intervals.
struct SlabSoot {
  std::string model;
  double constant = 0;
  std::string treatment;
  int intervals = 0;
};

struct SlabResult {
  std::string model, type;
  int spectral_points = 0;
  std::vector<double> x, q, divq, temperature;
  double q_left = 0, q_right = 0;
  double divq_integral = 0;        // trapezoid of divq over the fine grid
  double time_setup = 0, time_properties = 0, time_solve = 0, time_total = 0;  // s
  int fine_points = 0, directions = 0;
  std::optional<SlabSoot> soot;
};

SlabResult solve_slab(const SlabCase& c);
// Writes slab.csv and summary.json into dir (created if needed).
void write_slab_output(const SlabCase& c, const SlabResult& r, const std::filesystem::path& dir);

}  // namespace dgrte::gas
