#include "io/yaml_map.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace dgrte::io {

YamlMap::YamlMap(const YAML::Node& node, std::string path, std::string file)
    : node_(node), path_(std::move(path)), file_(std::move(file)) {
  if (node_ && !node_.IsNull() && !node_.IsMap())
    throw InputError(fmt::format("{}{}: expected a mapping of keys (key: value){}", file_.empty() ? "" : file_ + ": ",
                                 path_.empty() ? "document" : path_,
                                 node_.Mark().line >= 0 ? fmt::format(" (line {})", node_.Mark().line + 1) : ""));
}

bool YamlMap::has(const std::string& key) const { return node_ && node_.IsMap() && node_[key]; }

std::string YamlMap::where(const std::string& key) const {
  std::string s = (file_.empty() ? "" : file_ + ": ") + key_path(key);
  if (has(key)) {
    const auto mark = node_[key].Mark();
    if (mark.line >= 0) s += fmt::format(" (line {})", mark.line + 1);
  }
  return s;
}

void YamlMap::type_error(const std::string& key, const std::string& expected) const {
  const auto n = node_[key];
  throw InputError(fmt::format("{}{} (line {}): expected {}", file_.empty() ? "" : file_ + ": ", key_path(key),
                               n.Mark().line + 1, expected));
}

template <class T>
T YamlMap::get_scalar(const std::string& key, T fallback, const char* expected) {
  known_.insert(key);
  if (!has(key)) return fallback;
  const auto n = node_[key];
  if (!n.IsScalar()) type_error(key, expected);
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    type_error(key, fmt::format("{}, got '{}'", expected, n.Scalar()));
  }
}

double YamlMap::get_double(const std::string& key, double fallback) { return get_scalar(key, fallback, "a number"); }

double YamlMap::require_double(const std::string& key) {
  if (!has(key))
    throw InputError(fmt::format("{}{}: required key missing (a number)", file_.empty() ? "" : file_ + ": ", key_path(key)));
  return get_double(key, 0);
}

int YamlMap::get_int(const std::string& key, int fallback) { return get_scalar(key, fallback, "an integer"); }

bool YamlMap::get_bool(const std::string& key, bool fallback) { return get_scalar(key, fallback, "true or false"); }

std::string YamlMap::get_string(const std::string& key, const std::string& fallback) {
  known_.insert(key);
  if (!has(key)) return fallback;
  const auto n = node_[key];
  if (!n.IsScalar()) type_error(key, "a string");
  return n.Scalar();
}

std::string YamlMap::require_string(const std::string& key) {
  if (!has(key))
    throw InputError(fmt::format("{}{}: required key missing", file_.empty() ? "" : file_ + ": ", key_path(key)));
  return get_string(key, {});
}

std::string YamlMap::get_scalar_text(const std::string& key, const std::string& fallback) {
  return get_string(key, fallback);
}

std::vector<double> YamlMap::get_double_list(const std::string& key, const std::vector<double>& fallback) {
  known_.insert(key);
  if (!has(key)) return fallback;
  const auto n = node_[key];
  if (!n.IsSequence()) type_error(key, "a list of numbers");
  std::vector<double> v;
  try {
    for (const auto& e : n) v.push_back(e.as<double>());
  } catch (const YAML::Exception&) {
    type_error(key, "a list of numbers");
  }
  return v;
}

YamlMap YamlMap::sub(const std::string& key) {
  known_.insert(key);
  if (!has(key)) return YamlMap(YAML::Node(), key_path(key), file_);
  return YamlMap(node_[key], key_path(key), file_);
}

void YamlMap::finish() const {
  if (!node_ || !node_.IsMap()) return;
  for (const auto& kv : node_) {
    const auto k = kv.first.as<std::string>();
    if (!known_.count(k)) {
      std::string allowed;
      for (const auto& a : known_) allowed += (allowed.empty() ? "" : ", ") + a;
      throw InputError(fmt::format("{}{} (line {}): unknown key; allowed here: {}", file_.empty() ? "" : file_ + ": ",
                                   key_path(k), kv.first.Mark().line + 1, allowed.empty() ? "(none)" : allowed));
    }
  }
}

}  // namespace dgrte::io
