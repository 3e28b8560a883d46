#include "spectral/spectral_solver.hpp"

#include "common/error.hpp"
#include "gas/state_key.hpp"
#include "parallel/local_mesh.hpp"

#include <petscsys.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace dgrte::spectral {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void add_to(std::vector<double>& total, const std::vector<double>& part) {
  if (total.empty()) total.assign(part.size(), 0.0);
  for (std::size_t i = 0; i < part.size(); ++i) total[i] += part[i];
}

// Sums one point's result into the total; the report keeps the first point's fixed facts (methods,
// plans) and sums or maximises the counts.
void accumulate(solver::GrayResult& total, const solver::GrayResult& r, bool first) {
  for (auto [t, p] : {std::pair{&total.G, &r.G}, {&total.qx, &r.qx}, {&total.qy, &r.qy}, {&total.qz, &r.qz},
                      {&total.source_total, &r.source_total}, {&total.q_in, &r.q_in}, {&total.q_out, &r.q_out},
                      {&total.wall_G, &r.wall_G}, {&total.wall_qx, &r.wall_qx}, {&total.wall_qy, &r.wall_qy},
                      {&total.wall_qz, &r.wall_qz}, {&total.wall_delta_q_in, &r.wall_delta_q_in}})
    add_to(*t, *p);
  if (first) {
    total.outer_method = r.outer_method;
    total.inner_method = r.inner_method;
    total.stopping_rule = r.stopping_rule;
    total.coupling_unknowns = r.coupling_unknowns;
    total.plan_bytes = r.plan_bytes;
    total.field_bytes = r.field_bytes;
    total.max_levels = r.max_levels;
    total.total_cycles = r.total_cycles;
    total.lagged_fraction = r.lagged_fraction;
    total.partition_faces = r.partition_faces;
    total.partition_unknowns = r.partition_unknowns;
  }
  total.ghost_exchanges += r.ghost_exchanges;
  total.outer_iterations += r.outer_iterations;
  total.transport_sweeps += r.transport_sweeps;
  total.inner_iterations += r.inner_iterations;
  total.specular_passes += r.specular_passes;
  total.limited_elements += r.limited_elements;
  total.converged = total.converged && r.converged;
  total.outer_residual = std::max(total.outer_residual, r.outer_residual);
  total.seconds += r.seconds;
}

// The wall groups of all ranks, sorted (as wall_summary orders them): a rank may have no face of
// some group.
std::vector<std::string> global_wall_groups(const nlohmann::json& local_summary) {
  std::string names;
  for (const auto& [name, v] : local_summary.items()) names += name + '\n';
  int ranks = 1, length = static_cast<int>(names.size());
  MPI_Comm_size(PETSC_COMM_WORLD, &ranks);
  std::vector<int> lengths(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks), 0);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, PETSC_COMM_WORLD);
  for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\n');
  MPI_Allgatherv(names.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, PETSC_COMM_WORLD);
  std::set<std::string> groups;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) groups.insert(line);
  return {groups.begin(), groups.end()};
}

// One point's totals: the volume integral of div q over the solved elements and the wall groups'
// fluxes (summed over the ranks when distributed).
PointTotals point_totals(const transport::Discretization& disc, const problem::Walls& walls,
                         const output::RadiationFields& fields, const gas::SpectralModel& model,
                         int j, std::vector<std::string>& groups, std::size_t solved, bool distributed) {
  PointTotals t;
  t.point = j;
  std::tie(t.nu_lo, t.nu_hi) = model.wavenumber_interval(j);
  t.volume_W = output::element_sum(fields.divq_element, solved);
  const auto w = output::wall_summary(disc, walls, fields);  // groups in sorted order
  if (groups.empty()) {
    if (distributed) groups = global_wall_groups(w);
    else
      for (const auto& [name, v] : w.items()) groups.push_back(name);
  }
  for (const auto& name : groups) {
    t.wall_q_in_W.push_back(w.contains(name) ? w[name]["q_in_W"].get<double>() : 0.0);
    t.wall_q_net_W.push_back(w.contains(name) ? w[name]["q_net_W"].get<double>() : 0.0);
  }
  if (distributed) {
    std::vector<double> sums{t.volume_W};
    sums.insert(sums.end(), t.wall_q_in_W.begin(), t.wall_q_in_W.end());
    sums.insert(sums.end(), t.wall_q_net_W.begin(), t.wall_q_net_W.end());
    MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    const std::size_t G = groups.size();
    t.volume_W = sums[0];
    std::copy_n(sums.begin() + 1, G, t.wall_q_in_W.begin());
    std::copy_n(sums.begin() + 1 + static_cast<long>(G), G, t.wall_q_net_W.begin());
  }
  return t;
}

}  // namespace

std::vector<double> node_volumes(const transport::Discretization& disc) {
  const auto np = static_cast<std::size_t>(disc.num_nodes());
  const Eigen::VectorXd m1 = disc.ref.mass.rowwise().sum();
  std::vector<double> v(disc.num_dofs());
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (std::size_t i = 0; i < np; ++i) v[e * np + i] = disc.geometry[e].jacobian * m1[static_cast<Eigen::Index>(i)];
  return v;
}

namespace {

// One gray problem per spectral point for a (disc, medium, walls): its gas states registered in the
// states shared by the block evaluation (slot: the distinct state of each node, property point and
// output point), its emitting wall nodes, and the point's medium and walls rebuilt from a block's
// kappa_j, a_j. The run's problem and, for the error indicator, its order p + 1 companion are two.
class PointProblemBuilder {
 public:
  PointProblemBuilder(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                      gas::GasStateIndex& index, std::vector<gas::GasState>& states, std::vector<double>& state_temperature)
      : disc_(disc), medium_(medium), point(medium), point_walls(walls) {
    const std::size_t n = disc.num_dofs(), np = static_cast<std::size_t>(disc.num_nodes()), nfp = walls.face_nodes();
    // Wall emission weights a_j(T_w) are evaluated with the gas state next to the wall (the DG node
    // of the face), as the slab solver does; walls at 0 K emit nothing and need no weight.
    for (std::size_t b = 0; b < walls.num_faces(); ++b) {
      const auto [e, face] = walls.face(b);
      const auto f = static_cast<std::size_t>(face);
      for (std::size_t j = 0; j < nfp; ++j) {
        if (!(walls.temperature(b, j) > 0)) continue;
        hot.push_back(b * nfp + j);
        hot_state.push_back(medium.gas[e * np + static_cast<std::size_t>(disc.ref.face_nodes[f][j])]);
        hot_temperature.push_back(walls.temperature(b, j));
      }
    }
    a_hot_.resize(hot.size());
    a_wall_.assign(walls.num_faces() * nfp, 0.0);
    const std::size_t nq = medium.point_gas.size(), no = medium.output_points.gas.size();
    slot_.resize(n + nq + no);
    auto add = [&](const gas::GasState& st, std::size_t k) {
      const auto [it, fresh] = index.try_emplace(gas::GasStateKey(st), states.size());
      if (fresh) states.push_back(st), state_temperature.push_back(st.temperature);
      slot_[k] = static_cast<std::uint32_t>(it->second);
    };
    for (std::size_t k = 0; k < n; ++k) add(medium.gas[k], k);
    for (std::size_t q = 0; q < nq; ++q) add(medium.point_gas[q], n + q);
    for (std::size_t p = 0; p < no; ++p) add(medium.output_points.gas[p], n + nq + p);
    sigma_t_points_.resize(nq), emission_points_.resize(nq), sigma_t_nodes_.resize(n);
  }

  std::size_t evaluated_points() const { return slot_.size(); }

  // The gray problem of point j from its kappa and a at the distinct states (kappa_s, a_s);
  // kappa_planck (optional) gains a_j kappa_j at the nodes.
  void build(const gas::SpectralModel& model, int j, const double* kappa_s, const double* a_s, std::vector<double>* kappa_planck) {
    const std::size_t n = disc_.num_dofs(), nq = medium_.point_gas.size(), no = medium_.output_points.gas.size();
    auto kappa_j = [&](std::size_t k) { return kappa_s[slot_[k]]; };
    auto a_j = [&](std::size_t k) { return a_s[slot_[k]]; };
    if (!hot.empty()) model.emission_weight(j, hot_state, hot_temperature, a_hot_);
    for (std::size_t k = 0; k < hot.size(); ++k) a_wall_[hot[k]] = a_hot_[k];
    for (std::size_t i = 0; i < n; ++i) {
      point.kappa[i] = kappa_j(i);
      sigma_t_nodes_[i] = kappa_j(i) + medium_.sigma_s[i];
      point.blackbody_intensity[i] = a_j(i) * medium_.blackbody_intensity[i];
      if (kappa_planck) (*kappa_planck)[i] += a_j(i) * kappa_j(i);
    }
    for (std::size_t q = 0; q < nq; ++q) {
      sigma_t_points_[q] = kappa_j(n + q) + medium_.point_sigma_s[q];
      emission_points_[q] = kappa_j(n + q) * a_j(n + q) * medium_.point_blackbody_intensity[q];
    }
    for (std::size_t p = 0; p < no; ++p) {
      point.output_points.kappa[p] = kappa_j(n + nq + p);
      point.output_points.blackbody_intensity[p] = a_j(n + nq + p) * medium_.output_points.blackbody_intensity[p];
    }
    if (medium_.properties_at_nodes) {  // solver.properties: nodes
      point.extinction = transport::ReactionTerm(sigma_t_nodes_, disc_.num_nodes());
      for (std::size_t i = 0; i < n; ++i) point.emission[i] = point.kappa[i] * point.blackbody_intensity[i];
    } else {
      point.extinction = transport::ReactionTerm::from_points(disc_, sigma_t_points_, sigma_t_nodes_);
      point.emission = transport::project_points(disc_, emission_points_);
    }
    point_walls.scale_emission(a_wall_);
  }

 private:
  const transport::Discretization& disc_;
  const problem::Medium& medium_;

 public:
  problem::Medium point;  // kappa, Ib and the solve's terms replaced for each point
  problem::Walls point_walls;
  std::vector<std::size_t> hot;  // boundary face nodes b * N_fp + j with T_w > 0
  std::vector<gas::GasState> hot_state;
  std::vector<double> hot_temperature;

 private:
  std::vector<std::uint32_t> slot_;
  std::vector<double> a_hot_, a_wall_, sigma_t_points_, emission_points_, sigma_t_nodes_;
};

}  // namespace

void for_each_spectral_point(const transport::Discretization& disc, const problem::Medium& medium, const problem::Walls& walls,
                             gas::SpectralModel& model, const SpectralOptions& spectral_options, SpectralResult& out,
                             const SpectralVisitor& visit, const std::function<bool(int)>& wanted) {
  if (!medium.has_gas_model()) throw std::logic_error("for_each_spectral_point: the medium has no gas state");
  const auto* companion = spectral_options.companion;
  if (companion && !companion->medium->has_gas_model()) throw std::logic_error("for_each_spectral_point: the companion has no gas state");
  const std::size_t n = disc.num_dofs(), np = static_cast<std::size_t>(disc.num_nodes());
  const auto* local = spectral_options.local_mesh;
  const std::size_t solved_nodes = local ? local->num_owned * np : n;  // the nodes this rank answers for
  {
    const auto tp = Clock::now();
    if (local) {  // averages over all ranks' owned nodes (the ghosts weigh nothing)
      auto weights = node_volumes(disc);
      std::fill(weights.begin() + static_cast<long>(solved_nodes), weights.end(), 0.0);
      model.prepare_distributed(medium.gas, weights, [](double* values, int count) {
        MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
      });
    } else {
      model.prepare(medium.gas, node_volumes(disc));
    }
    out.property_seconds += seconds_since(tp);
  }
  out.spectral_points = model.num_spectral_points();

  // The properties are evaluated at the nodes (what outputs read), at the property points (what the
  // solve integrates: problem::Medium) and at the output points (probes), one evaluate_block over the
  // distinct states of all three (and of the companion's): uniform regions, and cell-wise constant
  // CFD data sampled at many points of a cell, repeat a state, which is then evaluated once.
  std::vector<gas::GasState> states;
  std::vector<double> state_temperature;
  const auto t_states = Clock::now();
  gas::GasStateIndex index;
  PointProblemBuilder run(disc, medium, walls, index, states, state_temperature);
  std::optional<PointProblemBuilder> enriched;
  if (companion) enriched.emplace(*companion->disc, *companion->medium, *companion->walls, index, states, state_temperature);
  out.property_seconds += seconds_since(t_states);

  out.wall_nodes_emitting = run.hot.size();
  std::vector<double> gas_temperature(n);
  for (std::size_t i = 0; i < n; ++i) gas_temperature[i] = medium.gas[i].temperature;
  // The range check, once, up front (the model clamps during the loop).
  out.temperature_range = model.temperature_range();
  const auto [tlo, thi] = out.temperature_range;
  auto outside = [&](double t) { return t < tlo || t > thi; };
  const auto owned_end = gas_temperature.begin() + static_cast<long>(solved_nodes);
  out.gas_nodes_clamped = static_cast<std::size_t>(std::count_if(gas_temperature.begin(), owned_end, outside));
  out.wall_nodes_clamped = static_cast<std::size_t>(std::count_if(run.hot_temperature.begin(), run.hot_temperature.end(), outside));
  const auto [tmin, tmax] = std::minmax_element(gas_temperature.begin(), owned_end);
  if (tmin != owned_end) out.gas_temperature_min = *tmin, out.gas_temperature_max = *tmax;
  if (local) {  // over the ranks (walls are owned already: a ghost has none)
    double counts[3] = {static_cast<double>(out.gas_nodes_clamped), static_cast<double>(out.wall_nodes_clamped),
                        static_cast<double>(out.wall_nodes_emitting)};
    MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    out.gas_nodes_clamped = static_cast<std::size_t>(counts[0]), out.wall_nodes_clamped = static_cast<std::size_t>(counts[1]);
    out.wall_nodes_emitting = static_cast<std::size_t>(counts[2]);
    double range[2] = {-out.gas_temperature_min, out.gas_temperature_max};
    if (tmin == owned_end) range[0] = range[1] = -std::numeric_limits<double>::infinity();
    MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    out.gas_temperature_min = -range[0], out.gas_temperature_max = range[1];
  }

  const std::size_t distinct = states.size();
  out.distinct_states = distinct;
  out.evaluated_points = run.evaluated_points() + (enriched ? enriched->evaluated_points() : 0);
  out.kappa_planck.assign(n, 0.0);
  const std::size_t per_point = 2 * distinct * sizeof(double);
  const int max_count = static_cast<int>(std::clamp<std::size_t>(spectral_options.block_bytes / std::max<std::size_t>(per_point, 1), 1,
                                                                 static_cast<std::size_t>(std::max(out.spectral_points, 1))));
  std::vector<double> kappa_block, a_block;
  // Evaluates points [first, last) together and visits them.
  auto evaluate_and_visit = [&](int first, int last) {
    const auto count = static_cast<std::size_t>(last - first);
    {
      const auto tp = Clock::now();
      kappa_block.resize(count * distinct);
      a_block.resize(count * distinct);
      model.evaluate_block(first, last - first, states, state_temperature, kappa_block, a_block);
      out.property_seconds += seconds_since(tp);
    }
    ++out.property_blocks;
    out.max_block_points = std::max(out.max_block_points, last - first);
    out.block_bytes = std::max(out.block_bytes, count * per_point);
    for (int j = first; j < last; ++j) {
      const auto tp = Clock::now();
      const double* kappa_s = &kappa_block[static_cast<std::size_t>(j - first) * distinct];
      const double* a_s = &a_block[static_cast<std::size_t>(j - first) * distinct];
      run.build(model, j, kappa_s, a_s, &out.kappa_planck);
      std::optional<PointProblem> companion_point;
      if (enriched) {
        enriched->build(model, j, kappa_s, a_s, nullptr);
        companion_point = PointProblem{&enriched->point, &enriched->point_walls};
      }
      out.property_seconds += seconds_since(tp);
      visit(j, run.point, run.point_walls, companion_point ? &*companion_point : nullptr);
    }
  };
  for (int first = 0; first < out.spectral_points;) {
    const int last = model.block_end(first, max_count);
    if (!wanted) {
      evaluate_and_visit(first, last);
    } else {  // only the runs of wanted points
      for (int run_start = first; run_start < last;) {
        while (run_start < last && !wanted(run_start)) ++run_start;
        int end = run_start;
        while (end < last && wanted(end)) ++end;
        if (end > run_start) evaluate_and_visit(run_start, end);
        run_start = end;
      }
    }
    first = last;
  }
}

SpectralResult solve_spectral(const transport::Discretization& disc, const angular::Quadrature& quad,
                              const problem::Medium& medium, const problem::Walls& walls, gas::SpectralModel& model,
                              const solver::GrayOptions& options, const SpectralOptions& spectral_options,
                              const std::function<void(const std::string&)>& progress) {
  if (!medium.has_gas_model()) throw std::logic_error("solve_spectral: the medium has no gas state");
  SpectralResult out;
  solver::GrayOptions opt = options;
  SpectralOptions so = spectral_options;
  so.local_mesh = opt.local_mesh;
  const std::size_t solved = opt.local_mesh ? opt.local_mesh->num_owned : disc.num_elements();
  std::vector<transport::SweepPlan> plans;
  if (solver::uses_sweep_plans(opt) && !opt.plans) {
    const auto t0 = Clock::now();
    plans = solver::plan_sweeps(disc, walls, quad, solved);
    out.total.plan_seconds = seconds_since(t0);
    opt.plans = &plans;
  }
  // Distributed: the exchanges and merged reflection groups once for all points.
  std::unique_ptr<solver::DistributedSetup> setup;
  if (opt.local_mesh && !opt.distributed_setup) {
    setup = std::make_unique<solver::DistributedSetup>(*opt.local_mesh, disc, quad, walls, opt);
    opt.distributed_setup = setup.get();
  }
  for_each_spectral_point(disc, medium, walls, model, so, out,
                          [&](int j, const problem::Medium& point, const problem::Walls& point_walls, const PointProblem* companion) {
                            const auto ts = Clock::now();
                            solver::GrayOptions point_opt = opt;
                            std::vector<std::vector<double>> start;
                            if (so.point_start) start = so.point_start(j);
                            if (!start.empty()) point_opt.initial_intensities = &start;
                            const auto r = solver::solve_gray(disc, quad, point, point_walls, point_opt);
                            const auto fields = output::radiation_fields(disc, point, point_walls, r);
                            out.transport_seconds += seconds_since(ts);
                            accumulate(out.total, r, j == 0);
                            out.max_outer_iterations = std::max(out.max_outer_iterations, r.outer_iterations);
                            add_to(out.fields.divq, fields.divq);
                            add_to(out.fields.divq_from_q, fields.divq_from_q);
                            add_to(out.fields.q_net, fields.q_net);
                            add_to(out.fields.q_emitted, fields.q_emitted);
                            add_to(out.fields.balance_q_in, fields.balance_q_in);
                            add_to(out.fields.balance_q_out, fields.balance_q_out);
                            add_to(out.fields.balance_q_net, fields.balance_q_net);
                            add_to(out.fields.wall_divq, fields.wall_divq);
                            add_to(out.fields.divq_element, fields.divq_element);
                            add_to(out.fields.output_divq, fields.output_divq);
                            if (j == 0) out.fields.face_area = fields.face_area;
                            out.points.push_back(point_totals(disc, point_walls, fields, model, j, out.wall_groups, solved, opt.local_mesh != nullptr));
                            if (so.point_solved) so.point_solved(j, point, point_walls, r, companion);
                            if (progress)
                              progress(fmt::format("  spectral point {} / {}: {} outer iterations, {} transport sweeps", j + 1,
                                                   out.spectral_points, r.outer_iterations, r.transport_sweeps));
                          });
  return out;
}

}  // namespace dgrte::spectral
