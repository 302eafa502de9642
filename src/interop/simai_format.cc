#include "interop/simai_format.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/text.h"

namespace preflight {
namespace {

// Bounds that keep every later sum inside int64 picoseconds: 1e12 ns (1,000 s) per field,
// a petabyte per message, ten million layer lines.
constexpr int64_t kMaxNs = 1'000'000'000'000;
constexpr int64_t kMaxBytes = 1'000'000'000'000'000;
constexpr int64_t kMaxLayers = 10'000'000;
constexpr int64_t kMaxDegree = 1 << 24;

constexpr const char* kHybrid = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
constexpr const char* kMicro = "MICRO";

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) out.push_back(tok);
  return out;
}

std::string where(const std::string& file, int line) {
  return file + ":" + std::to_string(line) + ": ";
}

Status field_error(const std::string& file, int line, int field, const std::string& token,
                   const std::string& expected) {
  std::string shown = token.size() > 40 ? token.substr(0, 40) + "..." : token;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return invalid_argument(where(file, line) + "field " + std::to_string(field) + " '" + shown +
                          "': expected " + expected);
}

// An integer in [lo, hi], whole token.
bool parse_int(const std::string& tok, int64_t lo, int64_t hi, int64_t* out) {
  int64_t v = 0;
  const char* end = tok.data() + tok.size();
  auto [p, ec] = std::from_chars(tok.data(), end, v);
  if (ec != std::errc() || p != end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

struct CommName {
  const char* name;
  CollectiveKind kind;
};
constexpr CommName kCommNames[] = {
    {"ALLREDUCE", CollectiveKind::kAllReduce},         {"ALLGATHER", CollectiveKind::kAllGather},
    {"REDUCESCATTER", CollectiveKind::kReduceScatter}, {"ALLTOALL", CollectiveKind::kAllToAll},
    {"ALLREDUCEALLTOALL", CollectiveKind::kAllToAll},  // read as an all-to-all
    {"BROADCAST", CollectiveKind::kBroadcast},
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parse_comm_type(std::string tok, SimaiComm* c) {
  c->group = SimaiGroup::kDefault;
  if (ends_with(tok, "_DP_EP")) {
    c->group = SimaiGroup::kDataExpert;
    tok.resize(tok.size() - 6);
  } else if (ends_with(tok, "_EP")) {
    c->group = SimaiGroup::kExpert;
    tok.resize(tok.size() - 3);
  }
  if (tok == "NONE") {
    c->none = true;
    return true;
  }
  for (const CommName& n : kCommNames) {
    if (tok == n.name) {
      c->none = false;
      c->kind = n.kind;
      return true;
    }
  }
  return false;
}

std::string comm_type_name(const SimaiComm& c) {
  if (c.none) return "NONE";
  std::string s = "ALLREDUCE";
  for (const CommName& n : kCommNames) {
    if (n.kind == c.kind) {
      s = n.name;
      break;
    }
  }
  if (c.group == SimaiGroup::kExpert) s += "_EP";
  if (c.group == SimaiGroup::kDataExpert) s += "_DP_EP";
  return s;
}

Status parse_header(const std::vector<std::string>& toks, const std::string& file,
                    SimaiWorkload* w) {
  w->policy = toks[0];
  if (w->policy != kHybrid && w->policy != kMicro) {
    return field_error(file, 1, 1, toks[0], "the policy HYBRID_TRANSFORMER_FWD_IN_BCKWD or MICRO");
  }
  for (size_t i = 1; i < toks.size(); ++i) {
    std::string key = toks[i];
    if (key.size() > 1 && key.back() == ':') {
      key.pop_back();
    } else if (key != "pp_comm") {
      return field_error(file, 1, static_cast<int>(i + 1), toks[i], "a 'key:' token");
    }
    if (i + 1 >= toks.size()) {
      return field_error(file, 1, static_cast<int>(i + 1), toks[i], "a value after the key");
    }
    ++i;
    const std::string& tok = toks[i];
    const int field = static_cast<int>(i + 1);
    int64_t v = 0;
    auto degree = [&](int* out) -> Status {
      if (!parse_int(tok, 1, kMaxDegree, &v)) {
        return field_error(file, 1, field, tok, "a positive integer for " + key);
      }
      *out = static_cast<int>(v);
      return Status();
    };
    if (key == "model_parallel_NPU_group") {
      PREFLIGHT_RETURN_IF_ERROR(degree(&w->tp));
    } else if (key == "ep") {
      PREFLIGHT_RETURN_IF_ERROR(degree(&w->ep));
    } else if (key == "pp") {
      PREFLIGHT_RETURN_IF_ERROR(degree(&w->pp));
    } else if (key == "vpp") {
      PREFLIGHT_RETURN_IF_ERROR(degree(&w->vpp));
    } else if (key == "ga") {
      PREFLIGHT_RETURN_IF_ERROR(degree(&w->ga));
    } else if (key == "all_gpus") {
      PREFLIGHT_RETURN_IF_ERROR(degree(&w->all_gpus));
    } else if (key == "pp_comm") {
      if (!parse_int(tok, 0, kMaxBytes, &v)) {
        return field_error(file, 1, field, tok, "a byte count for pp_comm");
      }
      w->pp_comm = v;
    } else if (!parse_int(tok, INT64_MIN, INT64_MAX, &v)) {
      // checkpoints, checkpoint_initiates and keys of newer AICB versions: integers, unused.
      return field_error(file, 1, field, tok, "an integer for " + key);
    }
  }
  return Status();
}

Status parse_layer(const std::vector<std::string>& f, const std::string& file, int line,
                   SimaiLayer* l) {
  if (f.size() != 12) {
    return invalid_argument(where(file, line) + "expected 12 fields (name, -1, then forward, " +
                            "input-gradient and weight-gradient compute ns, comm type and " +
                            "bytes, and the update ns), found " + std::to_string(f.size()));
  }
  l->name = f[0];
  // Names go into the JSON report and the trace, which must be UTF-8.
  if (const size_t bad = invalid_utf8_at(l->name); bad != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(l->name[bad]));
    return invalid_argument(where(file, line) + "field 1 (the layer name): not UTF-8 text (byte " +
                            byte + " at offset " + std::to_string(bad) + "): expected UTF-8");
  }
  if (!parse_int(f[1], INT64_MIN, INT64_MAX, &l->dependency)) {
    return field_error(file, line, 2, f[1], "an integer (-1)");
  }
  auto ns = [&](int i, int64_t* out) -> Status {
    if (!parse_int(f[i], 0, kMaxNs, out)) {
      return field_error(file, line, i + 1, f[i], "a compute time in ns (0 .. 1e12)");
    }
    return Status();
  };
  auto comm = [&](int i, SimaiComm* out) -> Status {
    if (!parse_comm_type(f[i], out)) {
      return field_error(file, line, i + 1, f[i],
                         "a comm type: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER or ALLTOALL, "
                         "optionally with _EP or _DP_EP");
    }
    if (!parse_int(f[i + 1], 0, kMaxBytes, &out->bytes)) {
      return field_error(file, line, i + 2, f[i + 1], "a message size in bytes");
    }
    return Status();
  };
  PREFLIGHT_RETURN_IF_ERROR(ns(2, &l->fwd_ns));
  PREFLIGHT_RETURN_IF_ERROR(comm(3, &l->fwd));
  PREFLIGHT_RETURN_IF_ERROR(ns(5, &l->ig_ns));
  PREFLIGHT_RETURN_IF_ERROR(comm(6, &l->ig));
  PREFLIGHT_RETURN_IF_ERROR(ns(8, &l->wg_ns));
  PREFLIGHT_RETURN_IF_ERROR(comm(9, &l->wg));
  return ns(11, &l->update_ns);
}

}  // namespace

StatusOr<SimaiWorkload> parse_simai_workload(const std::string& text, const std::string& file) {
  std::vector<std::string> lines;
  {
    std::string cur;
    for (char c : text) {
      if (c == '\n') {
        if (!cur.empty() && cur.back() == '\r') cur.pop_back();
        lines.push_back(std::move(cur));
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    if (!cur.empty()) lines.push_back(std::move(cur));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find('\0') != std::string::npos) {
      return invalid_argument(where(file, static_cast<int>(i + 1)) +
                              "expected text, found a NUL byte");
    }
  }
  SimaiWorkload w;
  if (lines.empty() || split_ws(lines[0]).empty()) {
    return invalid_argument(where(file, 1) +
                            "expected a header line (HYBRID_TRANSFORMER_FWD_IN_BCKWD and "
                            "key: value fields), found " +
                            (lines.empty() ? "an empty file" : "a blank line"));
  }
  PREFLIGHT_RETURN_IF_ERROR(parse_header(split_ws(lines[0]), file, &w));
  if (lines.size() < 2) {
    return invalid_argument(where(file, 2) +
                            "expected the number of layer lines, found the end of the file");
  }
  const std::vector<std::string> count = split_ws(lines[1]);
  int64_t layers = 0;
  if (count.size() != 1 || !parse_int(count[0], 0, kMaxLayers, &layers)) {
    return field_error(file, 2, 1, count.empty() ? "" : count[0],
                       "the number of layer lines alone on the line (0 .. 10000000)");
  }
  size_t i = 2;
  while (static_cast<int64_t>(w.layers.size()) < layers) {
    if (i >= lines.size()) {
      return invalid_argument(where(file, static_cast<int>(i + 1)) + "expected " +
                              std::to_string(layers) + " layer lines (line 2), found " +
                              std::to_string(w.layers.size()) + ": the file ends early");
    }
    const std::vector<std::string> f = split_ws(lines[i]);
    ++i;
    if (f.empty()) continue;  // blank lines are whitespace to SimAI's reader
    SimaiLayer l;
    PREFLIGHT_RETURN_IF_ERROR(parse_layer(f, file, static_cast<int>(i), &l));
    w.layers.push_back(std::move(l));
  }
  for (; i < lines.size(); ++i) {
    if (!split_ws(lines[i]).empty()) {
      return invalid_argument(where(file, static_cast<int>(i + 1)) +
                              "expected the end of the file after the " + std::to_string(layers) +
                              " layer lines declared on line 2");
    }
  }
  return w;
}

StatusOr<SimaiWorkload> load_simai_workload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open the SimAI workload file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_simai_workload(text.str(), path);
}

std::string write_simai_workload(const SimaiWorkload& w) {
  std::ostringstream out;
  out << w.policy;
  if (w.policy != kMicro) {
    out << " model_parallel_NPU_group: " << w.tp << " ep: " << w.ep << " pp: " << w.pp
        << " vpp: " << w.vpp << " ga: " << w.ga;
    if (w.all_gpus > 0) out << " all_gpus: " << w.all_gpus;  // 0: not given
    out << " checkpoints: 0 checkpoint_initiates: 0 pp_comm: " << w.pp_comm;
  }
  out << '\n' << w.layers.size() << '\n';
  for (const SimaiLayer& l : w.layers) {
    out << l.name << '\t' << l.dependency << '\t' << l.fwd_ns << '\t' << comm_type_name(l.fwd)
        << '\t' << l.fwd.bytes << '\t' << l.ig_ns << '\t' << comm_type_name(l.ig) << '\t'
        << l.ig.bytes << '\t' << l.wg_ns << '\t' << comm_type_name(l.wg) << '\t' << l.wg.bytes
        << '\t' << l.update_ns << '\n';
  }
  return out.str();
}

}  // namespace preflight
