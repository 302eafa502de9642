// YamlReader: typed, strict access to one YAML mapping with error messages that name the source
// file and the key path ("scenario.yaml: model.hidden: 'abc': expected a positive integer").
// It remembers the first error and which keys were read, so `finish()` can reject unknown keys.
// Not thread-safe; one per section being read.
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/units.h"

namespace preflight {

class YamlReader {
 public:
  // `node` must be a map or null (an absent section reads as empty).
  YamlReader(YAML::Node node, std::string source, std::string path);

  bool has(const std::string& key) const;
  // Each getter returns `fallback` when the key is absent, and records an error (returning the
  // fallback) when the value is malformed. `required_*` records "missing key" when absent.
  int get_int(const std::string& key, int fallback, int min_value = 1);
  int required_int(const std::string& key, int min_value = 1);
  // An integer >= min_value, or the word `auto`: returns `auto_value` when the key is absent or
  // says auto.
  int get_int_or_auto(const std::string& key, int auto_value, int min_value = 1);
  double get_double(const std::string& key, double fallback, double min_value, double max_value);
  bool get_bool(const std::string& key, bool fallback);
  // A flow or block sequence of numbers, each in [min_value, max_value] (at most 1,000,000).
  std::vector<double> get_double_list(const std::string& key, double min_value, double max_value);
  std::string get_string(const std::string& key, const std::string& fallback);
  // One of `choices`; returns its index.
  int get_choice(const std::string& key, int fallback, const std::vector<std::string>& choices);
  uint64_t get_uint64(const std::string& key, uint64_t fallback);
  SimTime get_time(const std::string& key, SimTime fallback);
  Bytes get_bytes(const std::string& key, Bytes fallback);
  Bandwidth get_bandwidth(const std::string& key, Bandwidth fallback);
  FlopRate get_flop_rate(const std::string& key, FlopRate fallback);
  // Marks `key` as known without reading it (for keys handled elsewhere, e.g. `preset`).
  void skip(const std::string& key);
  // Records an error at `key` with `message` ("... : expected ...").
  void fail(const std::string& key, const std::string& message);

  // Returns the first error, or an error naming an unknown key, or OK.
  Status finish();
  const Status& status() const { return status_; }
  std::string key_path(const std::string& key) const;

 private:
  // The scalar text at `key`, or records an error if the value is not a scalar.
  bool scalar(const std::string& key, std::string* out);

  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::set<std::string> known_;
  Status status_;
};

}  // namespace preflight
