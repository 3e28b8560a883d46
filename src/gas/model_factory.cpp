#include "gas/model_factory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>

#include "common/error.hpp"
#include "gas/gray_models.hpp"
#include "gas/lbl.hpp"
#include "gas/slw.hpp"
#include "gas/snbck.hpp"
#include "gas/wsgg.hpp"

namespace dgrte::gas {

namespace {

bool read_strict(io::YamlMap& o) {
  const auto v = o.get_string("out_of_range", "clamp");
  if (v != "clamp" && v != "error")
    throw InputError(fmt::format("{}: '{}' is not allowed; use clamp (warn and clamp temperatures to the model's range) or "
                                 "error", o.key_path("out_of_range"), v));
  return v == "error";
}

// Default: the species present somewhere in the medium (all three when the medium is unknown).
std::vector<int> read_species(io::YamlMap& o, std::span<const GasState> medium) {
  std::vector<int> sp;
  if (!o.has("species")) {
    if (medium.empty()) return {kH2O, kCO2, kCO};
    bool present[3] = {false, false, false};
    for (const auto& s : medium) {
      present[kH2O] = present[kH2O] || s.x_h2o > 0;
      present[kCO2] = present[kCO2] || s.x_co2 > 0;
      present[kCO] = present[kCO] || s.x_co > 0;
    }
    for (int k = 0; k < 3; ++k)
      if (present[k]) sp.push_back(k);
    if (sp.empty()) sp.push_back(kH2O);  // transparent medium: keep one (absorption is zero anyway)
    return sp;
  }
  const auto n = o.node()["species"];
  if (!n.IsSequence()) throw InputError(fmt::format("{}: expected a list such as [h2o, co2, co]", o.key_path("species")));
  o.allow("species");
  for (const auto& e : n) {
    const auto s = e.as<std::string>();
    if (s == "h2o" || s == "H2O") sp.push_back(kH2O);
    else if (s == "co2" || s == "CO2") sp.push_back(kCO2);
    else if (s == "co" || s == "CO") sp.push_back(kCO);
    else throw InputError(fmt::format("{}: unknown species '{}'; use h2o, co2, co", o.key_path("species"), s));
  }
  return sp;
}

LoadedModel make_gray(io::YamlMap& o, const ModelContext&) {
  LoadedModel m;
  const auto text = o.get_scalar_text("kappa", "1.0");
  m.spectral = std::make_unique<GrayModel>(text, o.key_path("kappa"));
  return m;
}

LoadedModel make_planck(io::YamlMap& o, const ModelContext&) {
  LoadedModel m;
  m.spectral = std::make_unique<PlanckMeanModel>(read_strict(o));
  return m;
}

LoadedModel make_wsgg(io::YamlMap& o, const ModelContext& ctx) {
  const auto& dir = ctx.gasdata;
  LoadedModel m;
  const auto c = o.get_string("correlation", "bordbar2014");
  WsggModel::Variant v;
  if (c == "smith1982" || c == "smith") v = WsggModel::Variant::Smith1982;
  else if (c == "bordbar2014" || c == "bordbar") v = WsggModel::Variant::Bordbar2014;
  else if (c == "cassol2014" || c == "cassol") v = WsggModel::Variant::Cassol2014;
  else throw InputError(fmt::format("{}: unknown WSGG correlation '{}'; use smith1982, bordbar2014 or cassol2014",
                                    o.key_path("correlation"), c));
  const auto set = o.get_string("set", "auto");
  if (set != "auto" && v != WsggModel::Variant::Smith1982)
    throw InputError(fmt::format("{}: only the smith1982 correlation has selectable sets", o.key_path("set")));
  m.spectral = std::make_unique<WsggModel>(v, dir, read_strict(o), set);
  return m;
}

LoadedModel make_snbck(io::YamlMap& o, const ModelContext& ctx) {
  const auto& dir = ctx.gasdata;
  LoadedModel m;
  SnbckOptions opt;
  opt.dataset = parse_snb_dataset(o.get_string("dataset", "riviere2012"), o.key_path("dataset"));
  opt.gauss_points = o.get_int("gauss_points", 7);
  opt.overlap = o.get_string("overlap", "multiply");
  opt.lumping = o.get_int("lumping", 1);
  opt.species = read_species(o, ctx.medium);
  opt.strict = read_strict(o);
  m.spectral = std::make_unique<SnbckModel>(opt, dir);
  return m;
}

LoadedModel make_snb(io::YamlMap& o, const ModelContext& ctx) {
  const auto& dir = ctx.gasdata;
  LoadedModel m;
  const auto set = parse_snb_dataset(o.get_string("dataset", "riviere2012"), o.key_path("dataset"));
  m.snb_slab_points = o.get_int("points", 101);
  if (m.snb_slab_points < 5)
    throw InputError(fmt::format("{}: at least 5 points are needed", o.key_path("points")));
  auto sp = read_species(o, ctx.medium);
  m.snb = std::make_unique<SnbModel>(set, dir, sp, read_strict(o));
  return m;
}

// slw / rcslw: gray_gases (20), c_min, c_max [m^2/mol], albdf (auto | table | correlation),
// reference {T, P, x_h2o, x_co2, x_co} (default: the average of the medium, chosen in prepare()).
SlwOptions read_slw_options(io::YamlMap& o) {
  SlwOptions opt;
  opt.n_gray = o.get_int("gray_gases", 20);
  if (opt.n_gray < 1 || opt.n_gray > 1000)
    throw InputError(fmt::format("{}: {} gray gases; use 1 to 1000 (default 20)", o.key_path("gray_gases"), opt.n_gray));
  opt.c_min = o.get_double("c_min", 1e-4);
  opt.c_max = o.get_double("c_max", 1e3);
  if (!(opt.c_min > 0) || !(opt.c_max > opt.c_min))
    throw InputError(fmt::format("{}, {}: need 0 < c_min < c_max (m^2/mol)", o.key_path("c_min"), o.key_path("c_max")));
  const auto src = o.get_string("albdf", "auto");
  if (src == "auto") opt.source = Albdf::Source::Auto;
  else if (src == "table" || src == "tables") opt.source = Albdf::Source::Table;
  else if (src == "correlation") opt.source = Albdf::Source::Correlation;
  else
    throw InputError(fmt::format("{}: '{}' is not allowed; use auto (tables at 1 atm, else correlation), table or "
                                 "correlation", o.key_path("albdf"), src));
  if (o.has("reference")) {
    auto r = o.sub("reference");
    GasState ref;
    ref.temperature = r.require_double("T");
    ref.pressure = r.get_double("P", 1.0);
    ref.x_h2o = r.get_double("x_h2o", 0.0);
    ref.x_co2 = r.get_double("x_co2", 0.0);
    ref.x_co = r.get_double("x_co", 0.0);
    r.finish();
    validate_state(ref, o.key_path("reference"));
    opt.reference = ref;
  }
  return opt;
}

template <class Model>
LoadedModel make_slw_family(io::YamlMap& o, const ModelContext& ctx) {
  LoadedModel m;
  const auto opt = read_slw_options(o);
  auto albdf = std::make_shared<const Albdf>(Albdf::load_default(ctx.gasdata.string(), opt.source));
  m.spectral = std::make_unique<Model>(std::move(albdf), opt);
  return m;
}

// lbl: par_files (required: a file or a list; HITEMP/HITRAN .par), nu_min (50), nu_max (10000), dnu (0.01) [cm^-1],
// wing_cutoff (25 cm^-1), min_intensity (0), pressure_shift (true), reduction (every | kdistribution),
// band_width (25 cm^-1) and gauss_points (16) for kdistribution.
LoadedModel make_lbl(io::YamlMap& o, const ModelContext& ctx) {
  LblModelConfig cfg;
  const auto key = o.key_path("par_files");
  const char* where =
      "dgrte ships only small HITRAN test fragments (gasdata/lbl/hitran_fragments), not a full spectrum; download the "
      "HITEMP line lists (https://hitran.org/hitemp/, H2O, CO2, CO), decompress them and list the .par files, e.g. "
      "par_files: [/data/hitemp/05_HITEMP2019.par] (see docs/gas-lbl.md)";
  if (!o.has("par_files")) throw InputError(fmt::format("{}: required for model lbl; {}", key, where));
  const auto n = o.node()["par_files"];
  o.allow("par_files");
  try {
    if (n.IsScalar()) cfg.par_files.push_back(n.as<std::string>());
    else if (n.IsSequence())
      for (const auto& e : n) cfg.par_files.push_back(e.as<std::string>());
    else throw InputError(fmt::format("{}: expected a file name or a list of .par files", key));
  } catch (const YAML::Exception&) {
    throw InputError(fmt::format("{}: expected a file name or a list of .par files", key));
  }
  if (cfg.par_files.empty()) throw InputError(fmt::format("{}: the list is empty; {}", key, where));
  for (const auto& f : cfg.par_files)
    if (!std::filesystem::is_regular_file(f))
      throw InputError(fmt::format("{}: cannot read '{}'; {}", key, f, where));
  cfg.gasdata_dir = ctx.gasdata.string();
  cfg.nu_min = o.get_double("nu_min", 50.0);
  cfg.nu_max = o.get_double("nu_max", 10000.0);
  cfg.dnu = o.get_double("dnu", 0.01);
  if (!(cfg.nu_min >= 0) || !(cfg.nu_max > cfg.nu_min) || !(cfg.dnu > 0))
    throw InputError(fmt::format("{}, {}, {}: need 0 <= nu_min < nu_max and dnu > 0 (cm^-1)", o.key_path("nu_min"),
                                 o.key_path("nu_max"), o.key_path("dnu")));
  const double npts = std::floor((cfg.nu_max - cfg.nu_min) / cfg.dnu) + 1;
  if (npts > 50e6)
    throw InputError(fmt::format("{}: {:.0f} grid points are too many; use a larger step or a narrower range",
                                 o.key_path("dnu"), npts));
  cfg.options.wing_cutoff = o.get_double("wing_cutoff", 25.0);
  if (!(cfg.options.wing_cutoff > 0))
    throw InputError(fmt::format("{}: must be positive (cm^-1)", o.key_path("wing_cutoff")));
  cfg.options.min_intensity = o.get_double("min_intensity", 0.0);
  cfg.options.pressure_shift = o.get_bool("pressure_shift", true);
  const auto reduction = o.get_string("reduction", "every");
  if (reduction != "every" && reduction != "kdistribution")
    throw InputError(fmt::format("{} = '{}': use every (one spectral point per grid wavenumber) or kdistribution "
                                 "(sorted k-distribution per band, Gauss points in g)",
                                 o.key_path("reduction"), reduction));
  cfg.reduction.kdistribution = reduction == "kdistribution";
  cfg.reduction.band_width = o.get_double("band_width", cfg.reduction.band_width);
  cfg.reduction.gauss_points = o.get_int("gauss_points", cfg.reduction.gauss_points);
  if (!cfg.reduction.kdistribution && (o.has("band_width") || o.has("gauss_points")))
    throw InputError(fmt::format("{}: band_width and gauss_points apply only with reduction: kdistribution",
                                 o.key_path("reduction")));
  LoadedModel m;
  auto lbl = std::make_unique<LblModel>(cfg);
  m.lbl = lbl.get();
  m.spectral = std::move(lbl);
  return m;
}

struct Entry {
  ModelFactory factory;
  std::string description;
};

std::map<std::string, Entry>& registry() {
  static std::map<std::string, Entry> r = [] {
    std::map<std::string, Entry> m;
    m["gray"] = {make_gray, "gray gas; kappa: number or expression of T, P, x_h2o, x_co2, x_co [1/m] (default 1.0)"};
    m["planck-mean"] = {make_planck, "gray gas with the RADCAL Planck-mean absorption coefficient (300-2500 K)"};
    m["wsgg"] = {make_wsgg, "weighted sum of gray gases; correlation: bordbar2014 (default) | smith1982 | cassol2014"};
    m["snbck"] = {make_snbck, "EM2C narrow-band correlated-k; dataset, gauss_points, overlap, lumping, species"};
    m["snb"] = {make_snb, "EM2C statistical narrow-band (Malkmus, Curtis-Godson), slab solver and emissivities only"};
    m["slw"] = {make_slw_family<SlwModel>, "SLW with the Pearson et al. 2014 ALBDF; gray_gases (20), c_min, c_max, albdf, reference"};
    m["rcslw"] = {make_slw_family<RcslwModel>, "rank-correlated SLW (Solovjov et al. 2017); gray_gases (20), c_min, c_max, albdf, reference"};
    m["lbl"] = {make_lbl, "line-by-line from HITEMP/HITRAN .par files; par_files (required), nu_min, nu_max, dnu, "
                          "wing_cutoff, reduction (every | kdistribution: band_width, gauss_points)"};
    return m;
  }();
  return r;
}
std::mutex registry_mutex;

}  // namespace

void register_model_type(const std::string& type, ModelFactory factory, std::string description) {
  std::lock_guard lock(registry_mutex);
  registry()[type] = {std::move(factory), std::move(description)};
}

std::vector<std::pair<std::string, std::string>> model_types() {
  std::lock_guard lock(registry_mutex);
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& [k, e] : registry()) v.emplace_back(k, e.description);
  return v;
}

LoadedModel make_model(io::YamlMap& section, const std::string& gasdata_override, std::span<const GasState> medium) {
  const auto type = section.get_string("type", "snbck");
  ModelFactory f;
  {
    std::lock_guard lock(registry_mutex);
    auto it = registry().find(type);
    if (it == registry().end()) {
      std::string known;
      for (const auto& [k, e] : registry()) known += (known.empty() ? "" : ", ") + k;
      const bool other = type == "slw" || type == "rcslw" || type == "lbl";
      throw InputError(fmt::format("{}: model type '{}' {}; available: {}", section.key_path("type"), type,
                                   other ? "is not available in this build" : "is unknown", known));
    }
    f = it->second.factory;
  }
  // Gray models need no data directory; resolve lazily so that they work without gasdata/.
  ModelContext ctx;
  ctx.medium = medium;
  if (type != "gray" && type != "planck-mean") ctx.gasdata = gasdata_directory(gasdata_override);
  auto m = f(section, ctx);
  m.type = type;
  const bool sooty = std::any_of(medium.begin(), medium.end(), [](const GasState& st) { return st.soot_fv > 0; });
  if (sooty || section.has("soot")) {
    SootOptions so;
    std::string optics = kDefaultSootOptics;
    if (section.has("soot")) {
      auto sub = section.sub("soot");
      optics = sub.get_scalar_text("refractive_index", optics);
      if (sub.has("gray_gases")) {
        so.gray_gases = sub.get_int("gray_gases", 6);
        if (so.gray_gases < 1 || so.gray_gases > 64)
          throw InputError(fmt::format("{} = {}: use 1 to 64 soot intervals (default 6; 1 = the Planck mean)",
                                       sub.key_path("gray_gases"), so.gray_gases));
      }
      so.optics = soot_optics(optics, sub.key_path("refractive_index"));
      sub.finish();
    } else {
      so.optics = soot_optics(optics, section.key_path("soot"));
    }
    if (m.spectral) m.spectral = std::make_unique<SootyModel>(std::move(m.spectral), so);
    m.soot = so;
  }
  section.finish();
  return m;
}

LoadedModel make_model(const std::string& type, const std::vector<std::string>& kvs, const std::string& gasdata_override,
                       std::span<const GasState> medium) {
  YAML::Node n(YAML::NodeType::Map);
  n["type"] = type;
  for (const auto& kv : kvs) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(fmt::format("--model-option '{}': expected KEY=VALUE (e.g. gauss_points=7)", kv));
    try {
      n[kv.substr(0, eq)] = YAML::Load(kv.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      throw InputError(fmt::format("--model-option '{}': cannot parse the value: {}", kv, e.what()));
    }
  }
  io::YamlMap m(n, "model");
  return make_model(m, gasdata_override, medium);
}

}  // namespace dgrte::gas
