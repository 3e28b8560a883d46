#include "gas/model_factory.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "common/error.hpp"
#include "gas/gray_models.hpp"
#include "gas/snbck.hpp"
#include "gas/wsgg.hpp"

namespace dgrte::gas {

namespace {

bool read_strict(YamlMap& o) {
  const auto v = o.get_string("out_of_range", "clamp");
  if (v != "clamp" && v != "error")
    throw InputError(fmt::format("{}: '{}' is not allowed; use clamp (warn and clamp temperatures to the model's range) or "
                                 "error", o.key_path("out_of_range"), v));
  return v == "error";
}

// Default: the species present somewhere in the medium (all three when the medium is unknown).
std::vector<int> read_species(YamlMap& o, std::span<const GasState> medium) {
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

LoadedModel make_gray(YamlMap& o, const ModelContext&) {
  LoadedModel m;
  const auto text = o.get_scalar_text("kappa", "1.0");
  m.spectral = std::make_unique<GrayModel>(text, o.key_path("kappa"));
  return m;
}

LoadedModel make_planck(YamlMap& o, const ModelContext&) {
  LoadedModel m;
  m.spectral = std::make_unique<PlanckMeanModel>(read_strict(o));
  return m;
}

LoadedModel make_wsgg(YamlMap& o, const ModelContext& ctx) {
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

LoadedModel make_snbck(YamlMap& o, const ModelContext& ctx) {
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

LoadedModel make_snb(YamlMap& o, const ModelContext& ctx) {
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
    // Other model families register here (gas B: slw, rcslw, lbl), e.g.
    //   m["slw"] = {make_slw, "..."};   with make_slw declared in their header.
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

LoadedModel make_model(YamlMap& section, const std::string& gasdata_override, std::span<const GasState> medium) {
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
  YamlMap m(n, "model");
  return make_model(m, gasdata_override, medium);
}

}  // namespace dgrte::gas
