// YamlReader: typed, strict access to one YAML mapping with error messages that name the source
// file and the key path ("scenario.yaml: model.hidden: 'abc': expected a positive integer").
// It remembers the first error and which keys were read, so `finish()` can reject unknown keys.
// Not thread-safe; one per section being read. A KeyRecorder (below) lists the keys readers are
// asked for, so tests can cover every scenario key without a hand-kept list.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/units.h"

namespace preflight {

// The getter a key was read with (KeyRecorder): the kind of value the key takes.
enum class KeyKind {
  kInt,         // get_int, required_int
  kIntOrAuto,   // get_int_or_auto
  kUint64,      // get_uint64
  kDouble,      // get_double
  kBool,        // get_bool
  kString,      // get_string
  kChoice,      // get_choice (RecordedKey::choices)
  kBytes,       // get_bytes ("80GiB")
  kBandwidth,   // get_bandwidth ("900GB/s")
  kTime,        // get_time ("1.5us")
  kFlopRate,    // get_flop_rate ("312TFLOPS")
  kDoubleList,  // get_double_list
  kChoiceList,  // get_choice_list (RecordedKey::choices)
  kSkipped,     // skip(): read elsewhere (a preset name, a subsection, a list)
};
const char* to_string(KeyKind kind);

struct RecordedKey {
  std::string path;  // the full key path, "model.moe.experts"
  KeyKind kind = KeyKind::kString;
  std::vector<std::string> choices;  // kChoice only
};

// An opt-in census of scenario keys, for tests (tests/edge_values_test.cc). While a recorder is
// alive, every YamlReader on the same thread adds each key path it is asked for, once, in the
// order first asked, with the getter's kind; a key first skipped and later read takes the
// getter's kind. Keys a reader is never asked for (a section read only when present, such as
// model.moe or training.lora) appear only when the loaded scenario has them. Recorders nest:
// the innermost records, and the outer one resumes when it ends. With no recorder alive a getter
// pays one thread-local load and branch. Not thread-safe; create, use and destroy it on one
// thread. REQUIRES: recorders on a thread end in the reverse order they began (as scoped
// objects do).
class KeyRecorder {
 public:
  KeyRecorder();
  ~KeyRecorder();
  KeyRecorder(const KeyRecorder&) = delete;
  KeyRecorder& operator=(const KeyRecorder&) = delete;

  const std::vector<RecordedKey>& keys() const { return keys_; }

 private:
  friend class YamlReader;
  void record(const std::string& path, KeyKind kind, const std::vector<std::string>* choices);

  KeyRecorder* outer_;
  std::vector<RecordedKey> keys_;
  std::map<std::string, size_t> index_;  // path -> its position in keys_
};

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
  // A list of `choices` ([a, b], or one scalar "a,b" as --set writes it): their indices in the
  // order given, each once; empty when the key is absent, and an error for an empty list.
  std::vector<int> get_choice_list(const std::string& key, const std::vector<std::string>& choices);
  uint64_t get_uint64(const std::string& key, uint64_t fallback);
  // Values with a unit. `max_value`, when given, is the largest value accepted, written with a
  // unit ("100TB/s"); a larger value records "expected at most 100TB/s".
  // REQUIRES: max_value is empty or parses as the getter's unit.
  SimTime get_time(const std::string& key, SimTime fallback, std::string_view max_value = {});
  Bytes get_bytes(const std::string& key, Bytes fallback, std::string_view max_value = {});
  Bandwidth get_bandwidth(const std::string& key, Bandwidth fallback,
                          std::string_view max_value = {});
  FlopRate get_flop_rate(const std::string& key, FlopRate fallback,
                         std::string_view max_value = {});
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
  template <typename T, typename Parse>
  T get_unit(const std::string& key, T fallback, std::string_view max_value, Parse parse);
  // Tells this thread's KeyRecorder, if any, that `key` was asked for as `kind`.
  void record(const std::string& key, KeyKind kind,
              const std::vector<std::string>* choices = nullptr) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::set<std::string> known_;
  Status status_;
};

}  // namespace preflight
