#pragma once
// Builds a gas model from the `model:` section of a case file (or from CLI options). Every option
// has a default; unknown keys are errors naming the key path. Other model families (SLW, RCSLW,
// LBL) plug in through register_model_type() / the builtin table in model_factory.cpp.
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gas/snb.hpp"
#include "gas/soot.hpp"
#include "gas/spectral_model.hpp"
#include "io/yaml_map.hpp"

namespace dgrte::gas {

class LblModel;

struct LoadedModel {
  std::string type;                          // the `type:` key (gray, planck-mean, wsgg, snb, snbck, ...)
  std::unique_ptr<SpectralModel> spectral;   // every k-type model (sum of gray gases)
  std::unique_ptr<SnbModel> snb;             // only type snb (transmissivity model)
  int snb_slab_points = 101;                 // snb: nodes of the slab solver's transmissivity grid
  // Soot (gas/soot.hpp), when the medium holds soot or the section has a `soot:` block; `spectral`
  // is then a SootyModel around the gas model.
  std::optional<SootOptions> soot;
  // Type lbl: the line-by-line model inside `spectral` (owned there, around it a SootyModel or not),
  // for a caller that moves its line sums to a device (LblModel::set_line_sum).
  LblModel* lbl = nullptr;
  std::string name() const { return spectral ? spectral->name() : snb ? snb->name() : type; }
};

// What a factory may use besides its options: the data directory and, when known, the states of
// the medium the model will be used for (e.g. to drop species absent everywhere).
struct ModelContext {
  std::filesystem::path gasdata;
  std::span<const GasState> medium;
};
// A factory reads its options from `opts` (it must read or allow() every key it accepts; the
// caller reports the rest as unknown).
using ModelFactory = std::function<LoadedModel(io::YamlMap& opts, const ModelContext& context)>;
// Adds or replaces a model type.
void register_model_type(const std::string& type, ModelFactory factory, std::string description = {});
// The registered types with their one-line descriptions.
std::vector<std::pair<std::string, std::string>> model_types();

// `section` is the model map (key path e.g. "model"); `gasdata_override` empty = default search.
// `medium` (optional): the states the model will see; soot is added when one of them holds soot
// (soot_fv > 0) or the section has a `soot:` block {refractive_index, gray_gases}.
LoadedModel make_model(io::YamlMap& section, const std::string& gasdata_override = {},
                       std::span<const GasState> medium = {});
// CLI form: type and key=value options (values parsed as YAML scalars / flow lists).
LoadedModel make_model(const std::string& type, const std::vector<std::string>& key_values,
                       const std::string& gasdata_override = {}, std::span<const GasState> medium = {});

}  // namespace dgrte::gas
