#include "config/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/text.h"

namespace preflight {
namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Messages are one line: a value's line breaks (a YAML block scalar) are shown as \n.
std::string one_line(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

// The innermost live KeyRecorder of this thread, or null.
thread_local KeyRecorder* active_recorder = nullptr;

}  // namespace

const char* to_string(KeyKind kind) {
  switch (kind) {
    case KeyKind::kInt:
      return "int";
    case KeyKind::kIntOrAuto:
      return "int_or_auto";
    case KeyKind::kUint64:
      return "uint64";
    case KeyKind::kDouble:
      return "double";
    case KeyKind::kBool:
      return "bool";
    case KeyKind::kString:
      return "string";
    case KeyKind::kChoice:
      return "choice";
    case KeyKind::kBytes:
      return "bytes";
    case KeyKind::kBandwidth:
      return "bandwidth";
    case KeyKind::kTime:
      return "time";
    case KeyKind::kFlopRate:
      return "flop_rate";
    case KeyKind::kDoubleList:
      return "double_list";
    case KeyKind::kChoiceList:
      return "choice_list";
    case KeyKind::kSkipped:
      return "skipped";
  }
  return "unknown";
}

KeyRecorder::KeyRecorder() : outer_(active_recorder) { active_recorder = this; }

KeyRecorder::~KeyRecorder() { active_recorder = outer_; }

void KeyRecorder::record(const std::string& path, KeyKind kind,
                         const std::vector<std::string>* choices) {
  auto [it, fresh] = index_.emplace(path, keys_.size());
  if (!fresh && !(keys_[it->second].kind == KeyKind::kSkipped && kind != KeyKind::kSkipped)) {
    return;
  }
  RecordedKey key{path, kind, choices != nullptr ? *choices : std::vector<std::string>{}};
  if (fresh) {
    keys_.push_back(std::move(key));
  } else {
    keys_[it->second] = std::move(key);
  }
}

void YamlReader::record(const std::string& key, KeyKind kind,
                        const std::vector<std::string>* choices) const {
  if (active_recorder != nullptr) active_recorder->record(key_path(key), kind, choices);
}

YamlReader::YamlReader(YAML::Node node, std::string source, std::string path)
    : node_(std::move(node)), source_(std::move(source)), path_(std::move(path)) {
  if (node_ && !node_.IsNull() && !node_.IsMap()) {
    status_ = invalid_argument(source_ + ": " + path_ + ": expected a mapping of keys to values");
  }
}

std::string YamlReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool YamlReader::has(const std::string& key) const {
  return node_ && node_.IsMap() && node_[key] && !node_[key].IsNull();
}

void YamlReader::fail(const std::string& key, const std::string& message) {
  if (!status_.ok()) return;
  status_ = invalid_argument(one_line(source_ + ": " + key_path(key) + ": " + message));
}

void YamlReader::skip(const std::string& key) {
  record(key, KeyKind::kSkipped);
  known_.insert(key);
}

bool YamlReader::scalar(const std::string& key, std::string* out) {
  known_.insert(key);
  if (!has(key)) return false;
  const YAML::Node v = node_[key];
  if (!v.IsScalar()) {
    fail(key, "expected a single value, found a " + std::string(v.IsMap() ? "mapping" : "list"));
    return false;
  }
  *out = v.Scalar();
  return true;
}

int YamlReader::get_int(const std::string& key, int fallback, int min_value) {
  record(key, KeyKind::kInt);
  std::string s;
  if (!scalar(key, &s)) return fallback;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v > 1'000'000'000) {
    fail(key, quote(s) + ": expected an integer");
    return fallback;
  }
  if (v < min_value) {
    fail(key, quote(s) + ": expected an integer >= " + std::to_string(min_value));
    return fallback;
  }
  return static_cast<int>(v);
}

int YamlReader::get_int_or_auto(const std::string& key, int auto_value, int min_value) {
  record(key, KeyKind::kIntOrAuto);
  std::string s;
  if (!scalar(key, &s) || s == "auto") return auto_value;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v > 1'000'000'000 || v < min_value) {
    fail(key, quote(s) + ": expected an integer >= " + std::to_string(min_value) + " or auto");
    return auto_value;
  }
  return static_cast<int>(v);
}

int YamlReader::required_int(const std::string& key, int min_value) {
  record(key, KeyKind::kInt);
  if (!has(key)) {
    known_.insert(key);
    fail(key, "missing key: expected an integer >= " + std::to_string(min_value));
    return min_value;
  }
  return get_int(key, min_value, min_value);
}

uint64_t YamlReader::get_uint64(const std::string& key, uint64_t fallback) {
  record(key, KeyKind::kUint64);
  std::string s;
  if (!scalar(key, &s)) return fallback;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || s[0] == '-' || *end != '\0' || errno != 0) {
    fail(key, quote(s) + ": expected a non-negative integer");
    return fallback;
  }
  return v;
}

double YamlReader::get_double(const std::string& key, double fallback, double min_value,
                              double max_value) {
  record(key, KeyKind::kDouble);
  std::string s;
  if (!scalar(key, &s)) return fallback;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) {
    fail(key, quote(s) + ": expected a number");
    return fallback;
  }
  if (v < min_value || v > max_value) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ": expected a number in [%g, %g]", min_value, max_value);
    fail(key, quote(s) + buf);
    return fallback;
  }
  return v;
}

std::vector<double> YamlReader::get_double_list(const std::string& key, double min_value,
                                                double max_value) {
  record(key, KeyKind::kDoubleList);
  std::vector<double> out;
  known_.insert(key);
  if (!status_.ok() || !node_ || !node_.IsMap()) return out;
  const YAML::Node list = node_[key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) {
    fail(key, "expected a list of numbers such as [3, 1, 1, 1]");
    return out;
  }
  constexpr size_t kMaxItems = 1'000'000;
  if (list.size() > kMaxItems) {
    fail(key, std::to_string(list.size()) + " items: expected at most 1000000");
    return out;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = key + "[" + std::to_string(i) + "]";
    if (!item.IsScalar()) {
      fail(where, "expected a number");
      return {};
    }
    const std::string& text = item.Scalar();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min_value || v > max_value) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ": expected a number in [%g, %g]", min_value, max_value);
      fail(where, quote(text) + buf);
      return {};
    }
    out.push_back(v);
  }
  return out;
}

bool YamlReader::get_bool(const std::string& key, bool fallback) {
  record(key, KeyKind::kBool);
  std::string s;
  if (!scalar(key, &s)) return fallback;
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, quote(s) + ": expected true or false");
  return fallback;
}

std::string YamlReader::get_string(const std::string& key, const std::string& fallback) {
  record(key, KeyKind::kString);
  std::string s;
  if (!scalar(key, &s)) return fallback;
  return s;
}

int YamlReader::get_choice(const std::string& key, int fallback,
                           const std::vector<std::string>& choices) {
  record(key, KeyKind::kChoice, &choices);
  std::string s;
  if (!scalar(key, &s)) return fallback;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (s == choices[i]) return static_cast<int>(i);
  }
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) list += (i ? "|" : "") + choices[i];
  fail(key, quote(s) + ": expected one of " + list + did_you_mean(s, choices));
  return fallback;
}

std::vector<int> YamlReader::get_choice_list(const std::string& key,
                                             const std::vector<std::string>& choices) {
  record(key, KeyKind::kChoiceList, &choices);
  known_.insert(key);
  std::vector<int> out;
  if (!status_.ok() || !node_ || !node_.IsMap()) return out;
  const YAML::Node list = node_[key];
  if (!list || list.IsNull()) return out;
  std::string names;
  for (size_t i = 0; i < choices.size(); ++i) names += (i ? ", " : "") + choices[i];
  std::vector<std::string> items;
  if (list.IsScalar()) {
    const std::string& text = list.Scalar();
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      std::string item = text.substr(start, comma - start);
      const size_t a = item.find_first_not_of(' ');
      const size_t b = item.find_last_not_of(' ');
      items.push_back(a == std::string::npos ? "" : item.substr(a, b - a + 1));
      start = comma + 1;
    }
  } else if (list.IsSequence()) {
    if (list.size() > choices.size() * 4) {
      fail(key, std::to_string(list.size()) + " items: expected a list of " + names);
      return {};
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].IsScalar()) {
        fail(key + "[" + std::to_string(i) + "]", "expected one of " + names);
        return {};
      }
      items.push_back(list[i].Scalar());
    }
  } else {
    fail(key, "expected a list of " + names);
    return {};
  }
  if (items.empty() || (items.size() == 1 && items[0].empty())) {
    fail(key, "an empty list: expected at least one of " + names);
    return {};
  }
  for (const std::string& item : items) {
    const auto it = std::find(choices.begin(), choices.end(), item);
    if (it == choices.end()) {
      fail(key, quote(item) + ": expected one of " + names + did_you_mean(item, choices));
      return {};
    }
    const int index = static_cast<int>(it - choices.begin());
    if (std::find(out.begin(), out.end(), index) == out.end()) out.push_back(index);
  }
  return out;
}

// A value with a unit, parsed by `parse`, at most `max_value` (parsed the same way) when given.
template <typename T, typename Parse>
T YamlReader::get_unit(const std::string& key, T fallback, std::string_view max_value,
                       Parse parse) {
  std::string s;
  if (!scalar(key, &s)) return fallback;
  StatusOr<T> v = parse(s);
  if (!v.ok()) {
    fail(key, v.status().message());
    return fallback;
  }
  if (!max_value.empty()) {
    StatusOr<T> max = parse(max_value);
    PREFLIGHT_CHECK(max.ok());
    if (*max < *v) {
      fail(key, quote(s) + ": expected at most " + std::string(max_value));
      return fallback;
    }
  }
  return *v;
}

SimTime YamlReader::get_time(const std::string& key, SimTime fallback, std::string_view max_value) {
  record(key, KeyKind::kTime);
  return get_unit(key, fallback, max_value, parse_time);
}

Bytes YamlReader::get_bytes(const std::string& key, Bytes fallback, std::string_view max_value) {
  record(key, KeyKind::kBytes);
  return get_unit(key, fallback, max_value, parse_bytes);
}

Bandwidth YamlReader::get_bandwidth(const std::string& key, Bandwidth fallback,
                                    std::string_view max_value) {
  record(key, KeyKind::kBandwidth);
  return get_unit(key, fallback, max_value, parse_bandwidth);
}

FlopRate YamlReader::get_flop_rate(const std::string& key, FlopRate fallback,
                                   std::string_view max_value) {
  record(key, KeyKind::kFlopRate);
  return get_unit(key, fallback, max_value, parse_flop_rate);
}

Status YamlReader::finish() {
  if (!status_.ok()) return status_;
  if (node_ && node_.IsMap()) {
    for (const auto& kv : node_) {
      const std::string key = kv.first.Scalar();
      if (known_.count(key) == 0) {
        std::string list;
        for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
        const std::vector<std::string> keys(known_.begin(), known_.end());
        return invalid_argument(one_line(source_ + ": " + key_path(key) + ": unknown key" +
                                         did_you_mean(key, keys) + " (known keys: " + list + ")"));
      }
    }
  }
  return Status();
}

}  // namespace preflight
