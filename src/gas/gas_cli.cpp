#include "gas/gas_cli.hpp"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fstream>
#include <iostream>
#include <memory>

#include "common/error.hpp"
#include "gas/gray_models.hpp"
#include "gas/model_factory.hpp"
#include "gas/slab.hpp"

namespace dgrte::gas {

namespace {

struct StateOptions {
  double T = 1000, P = 1, xh2o = 0, xco2 = 0, xco = 0, soot_fv = 0, L = 1;
  std::string model;
  std::vector<std::string> model_options;
  std::vector<std::string> par;  // lbl: --par FILE (repeatable) = model option par_files
  std::string gasdata;
  bool json = false;
  GasState state() const { return GasState{T, P, xh2o, xco2, xco, soot_fv}; }
};

void add_state_options(CLI::App* c, StateOptions& o, const std::string& default_model, bool with_length) {
  o.model = default_model;
  c->add_option("--T", o.T, "gas temperature [K]")->capture_default_str();
  c->add_option("--P", o.P, "total pressure [atm]")->capture_default_str();
  c->add_option("--xh2o", o.xh2o, "H2O mole fraction")->capture_default_str();
  c->add_option("--xco2", o.xco2, "CO2 mole fraction")->capture_default_str();
  c->add_option("--xco", o.xco, "CO mole fraction")->capture_default_str();
  c->add_option("--soot-fv", o.soot_fv, "soot volume fraction (Rayleigh soot, docs/gas-models.md)")->capture_default_str();
  if (with_length) c->add_option("--L", o.L, "path length [m]")->capture_default_str();
  c->add_option("--model", o.model, "model type: gray, planck-mean, wsgg, snb, snbck, slw, rcslw, lbl")
      ->capture_default_str();
  c->add_option("--model-option", o.model_options, "model option KEY=VALUE (repeatable), e.g. correlation=smith1982");
  c->add_option("--par", o.par, "lbl: HITEMP/HITRAN .par file (repeatable; same as --model-option par_files=[...])");
  c->add_option("--gasdata", o.gasdata, "gas data directory (default: $DGRTE_GASDATA, then the built-in path)");
  c->add_flag("--json", o.json, "print JSON instead of text");
}

bool has_option(const std::vector<std::string>& kv, const std::string& key) {
  for (const auto& e : kv)
    if (e.rfind(key + "=", 0) == 0) return true;
  return false;
}

// The --model-option list plus par_files from --par (single-quoted YAML scalars). The gray model has no
// property data of its own: its kappa must be given (a silent default would answer for a gas nobody asked about).
std::vector<std::string> model_options(const StateOptions& o) {
  auto kv = o.model_options;
  if (o.model == "gray" && !has_option(kv, "kappa"))
    throw InputError("--model gray needs its absorption coefficient: add --model-option kappa=VALUE (1/m; a number or an "
                     "expression of T, P, x_h2o, x_co2, x_co), or use --model planck-mean for the RADCAL Planck-mean kappa of the mixture");
  if (!o.par.empty()) {
    for (const auto& e : kv)
      if (e.rfind("par_files=", 0) == 0)
        throw InputError("--par and --model-option par_files=... given together; use one of them");
    std::string list = "par_files=[";
    for (std::size_t i = 0; i < o.par.size(); ++i) {
      std::string q;
      for (char ch : o.par[i]) q += ch == '\'' ? std::string("''") : std::string(1, ch);
      list += (i ? ", '" : "'") + q + "'";
    }
    kv.push_back(list + "]");
  }
  return kv;
}

void check_state(const StateOptions& o) {
  validate_state(o.state(), "gas state (--T, --P, --xh2o, --xco2, --xco, --soot-fv)");
  if (!(o.L > 0)) throw InputError(fmt::format("--L = {}: the path length must be positive (m)", o.L));
}

// eps = sum_j a_j (1 - exp(-kappa_j L)) for k-models; band sum for SNB.
double path_emissivity(const LoadedModel& m, const GasState& s, double L) {
  if (m.snb && m.soot)
    throw InputError("--soot-fv with --model snb: the SNB emissivity has no soot; use --model snbck (the same bands, with soot)");
  return m.snb ? m.snb->emissivity(s, L) : homogeneous_emissivity(*m.spectral, s, L);
}

nlohmann::json state_json(const GasState& s) {
  return {{"T", s.temperature}, {"P", s.pressure}, {"x_h2o", s.x_h2o}, {"x_co2", s.x_co2}, {"x_co", s.x_co}, {"soot_fv", s.soot_fv}};
}

void cmd_emissivity(const StateOptions& o) {
  check_state(o);
  const auto s = o.state();
  auto m = make_model(o.model, model_options(o), o.gasdata, std::span<const GasState>(&s, 1));
  if (m.spectral) m.spectral->prepare(std::span<const GasState>(&s, 1));  // e.g. SLW reference state = this state
  const double e = path_emissivity(m, s, o.L);
  if (o.json)
    std::cout << nlohmann::json{{"model", m.name()}, {"state", state_json(s)}, {"L", o.L}, {"emissivity", e}}.dump() << "\n";
  else
    std::cout << fmt::format("model {}: total emissivity {:.6f} (T = {} K, P = {} atm, x_H2O = {}, x_CO2 = {}, x_CO = {}, L = {} m)\n",
                             m.name(), e, s.temperature, s.pressure, s.x_h2o, s.x_co2, s.x_co, o.L);
}

void cmd_planck_mean(const StateOptions& o) {
  check_state(o);
  const auto s = o.state();
  PlanckMeanModel radcal;
  const double kp_fit = radcal.kappa(s);
  double kp_model = kp_fit;
  std::string name = "planck-mean";
  if (o.model != "planck-mean") {
    auto m = make_model(o.model, model_options(o), o.gasdata, std::span<const GasState>(&s, 1));
    if (m.spectral) m.spectral->prepare(std::span<const GasState>(&s, 1));
    name = m.name();
    if (m.snb) {  // sum over bands of kbar x P E_bnu dnu / sigma T^4
      const auto& d = m.snb->data();
      const auto ti = d.t_index(s.temperature);
      const double xs[3] = {s.x_h2o, s.x_co2, s.x_co};
      double sum = 0;
      for (int b : m.snb->bands())
        for (int sp : m.snb->species()) {
          const int sb = d.species_band(sp, b);
          if (sb >= 0) sum += d.kbar(sp, sb, ti) * xs[sp] * s.pressure * planck_emissive_power(d.band_center(b), s.temperature);
        }
      kp_model = 100.0 * sum * SnbData::band_width() / (kSigma * std::pow(s.temperature, 4));
    } else {
      kp_model = 0;
      double k, a;
      const double t = s.temperature;
      for (int j = 0; j < m.spectral->num_spectral_points(); ++j) {
        m.spectral->absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&k, 1));
        m.spectral->emission_weight(j, std::span<const GasState>(&s, 1), std::span<const double>(&t, 1), std::span<double>(&a, 1));
        kp_model += a * k;
      }
    }
  }
  if (o.json)
    std::cout << nlohmann::json{{"model", name}, {"state", state_json(s)}, {"kappa_planck", kp_model}, {"kappa_planck_radcal_fit", kp_fit}}
                     .dump()
              << "\n";
  else {
    std::cout << fmt::format("Planck-mean absorption coefficient: {:.6g} 1/m ({})\n", kp_model, name);
    if (name != "planck-mean") std::cout << fmt::format("RADCAL polynomial fit:              {:.6g} 1/m\n", kp_fit);
  }
}

void cmd_kdistribution(const StateOptions& o) {
  check_state(o);
  const auto s0 = o.state();
  auto m = make_model(o.model, model_options(o), o.gasdata, std::span<const GasState>(&s0, 1));
  if (!m.spectral)
    throw InputError(fmt::format("--model {}: not a k-distribution (sum of gray gases) model; use gray, planck-mean, wsgg, snbck "
                                 "slw, rcslw, lbl",
                                 o.model));
  const auto s = o.state();
  m.spectral->prepare(std::span<const GasState>(&s, 1));
  const double t = s.temperature;
  const int n = m.spectral->num_spectral_points();
  std::vector<double> k(n), a(n);
  for (int j = 0; j < n; ++j) {
    m.spectral->absorption(j, std::span<const GasState>(&s, 1), std::span<double>(&k[j], 1));
    m.spectral->emission_weight(j, std::span<const GasState>(&s, 1), std::span<const double>(&t, 1), std::span<double>(&a[j], 1));
  }
  if (o.json) {
    std::cout << nlohmann::json{{"model", m.name()}, {"state", state_json(s)}, {"spectral_points", n}, {"kappa", k}, {"weight", a}}.dump()
              << "\n";
  } else {
    std::cout << "j,kappa_per_m,weight\n";
    for (int j = 0; j < n; ++j) std::cout << fmt::format("{},{:.8g},{:.8g}\n", j, k[j], a[j]);
  }
}

struct SpectrumOptions {
  double numin = 50, numax = 10000, dnu = 25;
  std::string output;
};

void cmd_spectrum(const StateOptions& o, const SpectrumOptions& so) {
  check_state(o);
  if (!(so.dnu > 0) || !(so.numax > so.numin) || !(so.numin >= 0))
    throw InputError(fmt::format("--numin {} --numax {} --dnu {}: need 0 <= numin < numax and dnu > 0 (cm^-1)", so.numin, so.numax, so.dnu));
  const long n = static_cast<long>(std::floor((so.numax - so.numin) / so.dnu + 1e-9)) + 1;
  if (n > 50'000'000) throw InputError(fmt::format("--dnu {}: {} points are too many; use a larger step", so.dnu, n));
  const auto s = o.state();
  auto kv = model_options(o);
  if (o.model == "lbl") {  // the model's line window and grid follow --numin/--numax/--dnu unless given
    if (!has_option(kv, "nu_min")) kv.push_back(fmt::format("nu_min={:.17g}", so.numin));
    if (!has_option(kv, "nu_max")) kv.push_back(fmt::format("nu_max={:.17g}", so.numax));
    if (!has_option(kv, "dnu")) kv.push_back(fmt::format("dnu={:.17g}", so.dnu));
  }
  auto m = make_model(o.model, kv, o.gasdata, std::span<const GasState>(&s, 1));
  std::vector<double> nu(n), k(n, 0.0);
  for (long i = 0; i < n; ++i) nu[i] = so.numin + so.dnu * i;
  bool ok = false;
  if (m.spectral) ok = m.spectral->spectrum(s, nu, k);
  else if (m.snb) {
    const auto& d = m.snb->data();
    const auto ti = d.t_index(s.temperature);
    const double xs[3] = {s.x_h2o, s.x_co2, s.x_co};
    for (long i = 0; i < n; ++i) {
      const long b = std::lround((nu[i] - d.band_center(0)) / SnbData::band_width());
      if (b < 0 || b >= d.num_bands()) continue;
      for (int sp : m.snb->species()) {
        const int sb = d.species_band(sp, static_cast<int>(b));
        if (sb >= 0) k[i] += 100.0 * d.kbar(sp, sb, ti) * xs[sp] * s.pressure;
      }
    }
    ok = true;
  }
  if (!ok)
    throw InputError(fmt::format("--model {}: this model has no wavenumber axis; use --model lbl (line-by-line) or snb/snbck "
                                 "(narrow-band means)",
                                 o.model));
  std::ostream* out = &std::cout;
  std::ofstream f;
  if (!so.output.empty()) {
    f.open(so.output);
    if (!f) throw InputError(fmt::format("--output {}: cannot write the file", so.output));
    out = &f;
  }
  if (o.json) {
    // Streamed: a line-by-line spectrum may have tens of millions of points, which a JSON document
    // in memory would hold twice over; nlohmann writes the header and every number.
    std::string head = nlohmann::json{{"model", m.name()}, {"state", state_json(s)}}.dump();
    head.pop_back();  // the closing brace: the arrays follow
    *out << head << ", \"wavenumber\": [";
    for (long i = 0; i < n; ++i) *out << (i ? ", " : "") << nlohmann::json(nu[i]).dump();
    *out << "], \"kappa\": [";
    for (long i = 0; i < n; ++i) *out << (i ? ", " : "") << nlohmann::json(k[i]).dump();
    *out << "]}\n";
  } else {
    *out << "wavenumber_per_cm,kappa_per_m\n";
    for (long i = 0; i < n; ++i) *out << fmt::format("{:.10g},{:.8g}\n", nu[i], k[i]);
  }
}

}  // namespace

void add_gas_commands(CLI::App& app) {
  auto* gas = app.add_subcommand("gas", "gas radiative properties: emissivity, Planck mean, k-distribution, spectrum");
  gas->require_subcommand(1);

  auto emis = std::make_shared<StateOptions>();
  auto* ce = gas->add_subcommand("emissivity", "total emissivity of a homogeneous isothermal path");
  add_state_options(ce, *emis, "snbck", true);
  ce->callback([emis] { cmd_emissivity(*emis); });

  auto pm = std::make_shared<StateOptions>();
  auto* cp = gas->add_subcommand("planck-mean", "Planck-mean absorption coefficient (RADCAL fit, or of --model)");
  add_state_options(cp, *pm, "planck-mean", false);
  cp->callback([pm] { cmd_planck_mean(*pm); });

  auto kd = std::make_shared<StateOptions>();
  auto* ck = gas->add_subcommand("kdistribution", "absorption coefficients and weights of every spectral point (CSV)");
  add_state_options(ck, *kd, "snbck", false);
  ck->callback([kd] { cmd_kdistribution(*kd); });

  auto sp = std::make_shared<StateOptions>();
  auto spo = std::make_shared<SpectrumOptions>();
  auto* cs = gas->add_subcommand("spectrum", "spectral absorption coefficient kappa(nu) to CSV (lbl; snb/snbck band means)");
  add_state_options(cs, *sp, "lbl", false);
  cs->add_option("--numin", spo->numin, "first wavenumber [cm^-1]")->capture_default_str();
  cs->add_option("--numax", spo->numax, "last wavenumber [cm^-1]")->capture_default_str();
  cs->add_option("--dnu", spo->dnu, "wavenumber step [cm^-1]")->capture_default_str();
  cs->add_option("-o,--output", spo->output, "CSV file (default: stdout)");
  cs->callback([sp, spo] { cmd_spectrum(*sp, *spo); });

  auto slab_file = std::make_shared<std::string>();
  auto slab_out = std::make_shared<std::string>();
  auto* cl = app.add_subcommand("slab", "exact 1-D nongray solver for a plane-parallel gas slab (writes slab.csv, summary.json)");
  cl->add_option("case", *slab_file, "case file (YAML)")->required();
  cl->add_option("-o,--output", *slab_out, "output directory (overrides output.directory)");
  cl->callback([slab_file, slab_out] {
    auto c = read_slab_case(*slab_file);
    const std::string dir = slab_out->empty() ? c.output_directory : *slab_out;
    auto r = solve_slab(c);
    write_slab_output(c, r, dir);
    std::cout << fmt::format("slab: model {} ({} spectral points), q(0) = {:.6g} W/m^2, q(L) = {:.6g} W/m^2, {:.3f} s -> {}\n", r.model,
                             r.spectral_points, r.q_left, r.q_right, r.time_total, dir);
  });
}

}  // namespace dgrte::gas
