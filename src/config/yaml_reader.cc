#include "config/yaml_reader.h"

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

}  // namespace

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

void YamlReader::skip(const std::string& key) { known_.insert(key); }

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
  if (!has(key)) {
    known_.insert(key);
    fail(key, "missing key: expected an integer >= " + std::to_string(min_value));
    return min_value;
  }
  return get_int(key, min_value, min_value);
}

uint64_t YamlReader::get_uint64(const std::string& key, uint64_t fallback) {
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
  std::string s;
  if (!scalar(key, &s)) return fallback;
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, quote(s) + ": expected true or false");
  return fallback;
}

std::string YamlReader::get_string(const std::string& key, const std::string& fallback) {
  std::string s;
  if (!scalar(key, &s)) return fallback;
  return s;
}

int YamlReader::get_choice(const std::string& key, int fallback,
                           const std::vector<std::string>& choices) {
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

SimTime YamlReader::get_time(const std::string& key, SimTime fallback) {
  std::string s;
  if (!scalar(key, &s)) return fallback;
  StatusOr<SimTime> v = parse_time(s);
  if (!v.ok()) {
    fail(key, v.status().message());
    return fallback;
  }
  return *v;
}

Bytes YamlReader::get_bytes(const std::string& key, Bytes fallback) {
  std::string s;
  if (!scalar(key, &s)) return fallback;
  StatusOr<Bytes> v = parse_bytes(s);
  if (!v.ok()) {
    fail(key, v.status().message());
    return fallback;
  }
  return *v;
}

Bandwidth YamlReader::get_bandwidth(const std::string& key, Bandwidth fallback) {
  std::string s;
  if (!scalar(key, &s)) return fallback;
  StatusOr<Bandwidth> v = parse_bandwidth(s);
  if (!v.ok()) {
    fail(key, v.status().message());
    return fallback;
  }
  return *v;
}

FlopRate YamlReader::get_flop_rate(const std::string& key, FlopRate fallback) {
  std::string s;
  if (!scalar(key, &s)) return fallback;
  StatusOr<FlopRate> v = parse_flop_rate(s);
  if (!v.ok()) {
    fail(key, v.status().message());
    return fallback;
  }
  return *v;
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
