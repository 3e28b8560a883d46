#pragma once
// Strict reading of a YAML mapping (the gas models' `model:` section, the slab solver's files):
// every read names its key path in errors; keys that were never read are reported by finish() as
// unknown (with the list of allowed keys).
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

namespace dgrte::io {

class YamlMap {
 public:
  // `node` must be a map (or null = empty map); `path` is its key path ("model", "slab.walls.left").
  YamlMap(const YAML::Node& node, std::string path, std::string file = {});

  bool has(const std::string& key) const;
  double get_double(const std::string& key, double fallback);
  double require_double(const std::string& key);
  int get_int(const std::string& key, int fallback);
  bool get_bool(const std::string& key, bool fallback);
  std::string get_string(const std::string& key, const std::string& fallback);
  std::string require_string(const std::string& key);
  // A scalar read as text (numbers allowed), for expressions.
  std::string get_scalar_text(const std::string& key, const std::string& fallback);
  std::vector<double> get_double_list(const std::string& key, const std::vector<double>& fallback);
  YamlMap sub(const std::string& key);  // a nested map (empty if absent)
  // Marks key as known without reading it.
  void allow(const std::string& key) { known_.insert(key); }
  // Throws InputError for keys that were not read/allowed.
  void finish() const;

  const std::string& path() const { return path_; }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  // "file: path.key (line N)" for messages (the line of the key's value where the key is present).
  std::string where(const std::string& key) const;
  const YAML::Node& node() const { return node_; }

 private:
  template <class T>
  T get_scalar(const std::string& key, T fallback, const char* expected);
  [[noreturn]] void type_error(const std::string& key, const std::string& expected) const;
  YAML::Node node_;
  std::string path_, file_;
  std::set<std::string> known_;
};

}  // namespace dgrte::io
