#include "interop/chakra_trace.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "interop/chakra_et.pb.h"

namespace preflight {
namespace {

namespace pb = ::preflight::chakra_et;

// Largest message accepted: a node is a few hundred bytes; a megabyte-sized one is corrupt.
constexpr uint64_t kMaxMessage = uint64_t{64} << 20;

// Base-128 varint at `*pos` of `in`; false when it runs past the end or over 10 bytes.
bool read_varint(std::string_view in, size_t* pos, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= in.size()) return false;
    const auto b = static_cast<uint8_t>(in[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

void write_varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// An integer attribute in any integer wire type (bool too); false for other types.
bool attr_int(const pb::AttributeProto& a, int64_t* out) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      *out = a.int32_val();
      return true;
    case pb::AttributeProto::kInt64Val:
      *out = a.int64_val();
      return true;
    case pb::AttributeProto::kUint32Val:
      *out = a.uint32_val();
      return true;
    case pb::AttributeProto::kUint64Val:
      *out = static_cast<int64_t>(a.uint64_val());
      return true;
    case pb::AttributeProto::kSint32Val:
      *out = a.sint32_val();
      return true;
    case pb::AttributeProto::kSint64Val:
      *out = a.sint64_val();
      return true;
    case pb::AttributeProto::kFixed32Val:
      *out = a.fixed32_val();
      return true;
    case pb::AttributeProto::kFixed64Val:
      *out = static_cast<int64_t>(a.fixed64_val());
      return true;
    case pb::AttributeProto::kSfixed32Val:
      *out = a.sfixed32_val();
      return true;
    case pb::AttributeProto::kSfixed64Val:
      *out = a.sfixed64_val();
      return true;
    case pb::AttributeProto::kBoolVal:
      *out = a.bool_val() ? 1 : 0;
      return true;
    default:
      return false;
  }
}

std::string node_label(const ChakraNode& n) {
  return "node " + std::to_string(n.id) + " ('" + n.name.substr(0, 80) + "', byte offset " +
         std::to_string(n.offset) + ")";
}

// The attributes simulators read, into `n`; an error names the attribute.
Status read_attrs(const pb::Node& p, ChakraNode* n) {
  for (const pb::AttributeProto& a : p.attr()) {
    const std::string& name = a.name();
    int64_t v = 0;
    auto need_int = [&](int64_t lo, int64_t hi) -> Status {
      if (!attr_int(a, &v)) {
        return invalid_argument("attribute " + name + ": expected an integer value");
      }
      if (v < lo || v > hi) {
        return invalid_argument("attribute " + name + ": " + std::to_string(v) +
                                " is out of range [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
      }
      return Status();
    };
    constexpr int64_t kMax = int64_t{1} << 62;
    constexpr int64_t kRankMax = (int64_t{1} << 31) - 1;
    if (name == "is_cpu_op") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, 1));
      n->is_cpu_op = v != 0;
    } else if (name == "num_ops") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, kMax));
      n->num_ops = v;
    } else if (name == "tensor_size") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, kMax));
      n->tensor_size = v;
    } else if (name == "comm_type") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, 9));
      n->comm_type = static_cast<int>(v);
    } else if (name == "comm_size") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, kMax));
      n->comm_size = v;
    } else if (name == "comm_src") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, kRankMax));
      n->comm_src = static_cast<int>(v);
    } else if (name == "comm_dst") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, kRankMax));
      n->comm_dst = static_cast<int>(v);
    } else if (name == "comm_tag") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(-kMax, kMax));
      n->comm_tag = v;
    } else if (name == "stream") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(-kMax, kMax));
      n->stream = v;
    } else if (name == "preflight.duration_ps") {
      PREFLIGHT_RETURN_IF_ERROR(need_int(0, kMax));
      n->duration_ps = v;
    } else if (name == "pg_name") {
      if (a.value_case() == pb::AttributeProto::kStringVal) {
        n->pg_name = a.string_val();
      } else if (attr_int(a, &v)) {
        n->pg_name = std::to_string(v);
      } else {
        return invalid_argument("attribute pg_name: expected a string");
      }
    } else if (name == "preflight.category") {
      if (a.value_case() != pb::AttributeProto::kStringVal) {
        return invalid_argument("attribute preflight.category: expected a string");
      }
      n->category = a.string_val();
    }
  }
  return Status();
}

// Every dependency names a node of the trace, ids are unique, and the graph is acyclic.
Status check_graph(const ChakraTrace& t, const std::string& file) {
  std::unordered_map<uint64_t, size_t> index;
  index.reserve(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    auto [it, fresh] = index.emplace(t.nodes[i].id, i);
    if (!fresh) {
      return invalid_argument(file + ": " + node_label(t.nodes[i]) + ": id " +
                              std::to_string(t.nodes[i].id) + " is also used by " +
                              node_label(t.nodes[it->second]));
    }
  }
  std::vector<int> pending(t.nodes.size(), 0);
  std::vector<std::vector<size_t>> dependents(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const ChakraNode& n = t.nodes[i];
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps}) {
      for (uint64_t d : *deps) {
        auto it = index.find(d);
        if (it == index.end()) {
          return invalid_argument(file + ": " + node_label(n) + ": " +
                                  (deps == &n.data_deps ? "data_deps" : "ctrl_deps") +
                                  " names node " + std::to_string(d) +
                                  ", which the file does not hold");
        }
        pending[i]++;
        dependents[it->second].push_back(i);
      }
    }
  }
  // Kahn's algorithm: whatever is left unvisited lies on or behind a cycle.
  std::vector<size_t> ready;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  size_t visited = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++visited;
    for (size_t d : dependents[i]) {
      if (--pending[d] == 0) ready.push_back(d);
    }
  }
  if (visited < t.nodes.size()) {
    // Walk back from an unvisited node through unvisited dependencies until a node repeats.
    size_t i = 0;
    while (pending[i] == 0) ++i;
    std::vector<char> seen(t.nodes.size(), 0);
    while (!seen[i]) {
      seen[i] = 1;
      const ChakraNode& n = t.nodes[i];
      for (const auto* deps : {&n.data_deps, &n.ctrl_deps}) {
        for (uint64_t d : *deps) {
          const size_t j = index[d];
          if (pending[j] > 0) {
            i = j;
            goto next;
          }
        }
      }
      break;
    next:;
    }
    return invalid_argument(file + ": " + node_label(t.nodes[i]) +
                            ": its dependencies form a cycle");
  }
  return Status();
}

StatusOr<std::string> inflate(std::string_view bytes, const std::string& file) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::GzipInputStream gz(&raw, google::protobuf::io::GzipInputStream::GZIP);
  std::string out;
  const void* data = nullptr;
  int size = 0;
  while (gz.Next(&data, &size)) {
    out.append(static_cast<const char*>(data), static_cast<size_t>(size));
    if (out.size() > (uint64_t{4} << 30)) {
      return invalid_argument(file + ": the gzip stream inflates to more than 4 GiB");
    }
  }
  if (gz.ZlibErrorCode() < 0) {
    return invalid_argument(file + ": not a valid gzip stream (" +
                            std::string(gz.ZlibErrorMessage() ? gz.ZlibErrorMessage() : "zlib") +
                            ")");
  }
  return out;
}

void add_int(pb::Node* p, const char* name, int64_t v) {
  pb::AttributeProto* a = p->add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void add_int32(pb::Node* p, const char* name, int32_t v) {
  pb::AttributeProto* a = p->add_attr();
  a->set_name(name);
  a->set_int32_val(v);
}

void add_string(pb::Node* p, const char* name, const std::string& v) {
  pb::AttributeProto* a = p->add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

StatusOr<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return invalid_argument(path + ": read error");
  return ss.str();
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Process groups from METADATA_NODEs: PyTorch's execution-trace observer records them as a JSON
// list of objects with "pg_name" and "ranks" in inputs.values. Other metadata is ignored.
void groups_from_metadata(const ChakraTrace& t, ChakraGroups* groups) {
  for (const ChakraNode& n : t.nodes) {
    if (n.type != ChakraNodeType::kMetadata || n.inputs_values.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(n.inputs_values, nullptr, /*allow_exceptions=*/false);
    // The list may itself be wrapped in a one-element list or a string.
    if (j.is_array() && j.size() == 1 && j[0].is_string()) {
      j = nlohmann::json::parse(j[0].get<std::string>(), nullptr, false);
    }
    if (!j.is_array()) continue;
    for (const auto& pg : j) {
      if (!pg.is_object() || !pg.contains("ranks") || !pg["ranks"].is_array()) continue;
      std::string name;
      if (pg.contains("pg_name") && pg["pg_name"].is_string()) {
        name = pg["pg_name"].get<std::string>();
      } else if (pg.contains("pg_name") && pg["pg_name"].is_number_integer()) {
        name = std::to_string(pg["pg_name"].get<int64_t>());
      } else {
        continue;
      }
      std::vector<int> ranks;
      bool ok = true;
      for (const auto& r : pg["ranks"]) {
        if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > (1 << 30)) {
          ok = false;
          break;
        }
        ranks.push_back(static_cast<int>(r.get<int64_t>()));
      }
      std::sort(ranks.begin(), ranks.end());
      if (ok && !ranks.empty() && std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end()) {
        groups->emplace(name, std::move(ranks));
      }
    }
  }
}

}  // namespace

const char* to_string(ChakraNodeType t) {
  switch (t) {
    case ChakraNodeType::kInvalid:
      return "INVALID_NODE";
    case ChakraNodeType::kMetadata:
      return "METADATA_NODE";
    case ChakraNodeType::kMemLoad:
      return "MEM_LOAD_NODE";
    case ChakraNodeType::kMemStore:
      return "MEM_STORE_NODE";
    case ChakraNodeType::kComp:
      return "COMP_NODE";
    case ChakraNodeType::kSend:
      return "COMM_SEND_NODE";
    case ChakraNodeType::kRecv:
      return "COMM_RECV_NODE";
    case ChakraNodeType::kColl:
      return "COMM_COLL_NODE";
  }
  return "?";
}

const char* to_string(ChakraCommType t) {
  switch (t) {
    case ChakraCommType::kAllReduce:
      return "ALL_REDUCE";
    case ChakraCommType::kReduce:
      return "REDUCE";
    case ChakraCommType::kAllGather:
      return "ALL_GATHER";
    case ChakraCommType::kGather:
      return "GATHER";
    case ChakraCommType::kScatter:
      return "SCATTER";
    case ChakraCommType::kBroadcast:
      return "BROADCAST";
    case ChakraCommType::kAllToAll:
      return "ALL_TO_ALL";
    case ChakraCommType::kReduceScatter:
      return "REDUCE_SCATTER";
    case ChakraCommType::kReduceScatterBlock:
      return "REDUCE_SCATTER_BLOCK";
    case ChakraCommType::kBarrier:
      return "BARRIER";
  }
  return "?";
}

StatusOr<ChakraTrace> parse_chakra_trace(std::string_view bytes, const std::string& file) {
  // libprotobuf logs parse failures (invalid UTF-8 in a string field) to stderr; the error we
  // return says it once, in our format.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  std::string inflated;
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
      static_cast<uint8_t>(bytes[1]) == 0x8b) {
    PREFLIGHT_ASSIGN_OR_RETURN(inflated, inflate(bytes, file));
    bytes = inflated;
  }
  ChakraTrace t;
  size_t pos = 0;
  bool metadata = false;
  pb::Node p;  // reused: parsing into it again reuses its allocations
  while (pos < bytes.size()) {
    const size_t at = pos;
    uint64_t len = 0;
    if (!read_varint(bytes, &pos, &len)) {
      return invalid_argument(file + ": byte offset " + std::to_string(at) +
                              ": truncated length prefix (a base-128 varint) at the end of the "
                              "file");
    }
    if (len > kMaxMessage || len > bytes.size() - pos) {
      return invalid_argument(file + ": byte offset " + std::to_string(at) + ": message length " +
                              std::to_string(len) + " runs past the end of the file (" +
                              std::to_string(bytes.size() - pos) +
                              " bytes left): truncated or not a Chakra trace");
    }
    const char* data = bytes.data() + pos;
    pos += len;
    if (!metadata) {
      pb::GlobalMetadata m;
      if (!m.ParseFromArray(data, static_cast<int>(len))) {
        return invalid_argument(file + ": byte offset " + std::to_string(at) +
                                ": the first message is not a valid GlobalMetadata");
      }
      t.version = m.version();
      metadata = true;
      continue;
    }
    if (!p.ParseFromArray(data, static_cast<int>(len))) {
      return invalid_argument(
          file + ": node #" + std::to_string(t.nodes.size()) + " (byte offset " +
          std::to_string(at) +
          "): not a valid Node message (malformed protobuf, or invalid UTF-8 in a string field)");
    }
    ChakraNode n;
    n.offset = static_cast<int64_t>(at);
    n.id = p.id();
    n.name = p.name();
    const int type = static_cast<int>(p.type());
    if (type < 0 || type > 7) {
      n.type = ChakraNodeType::kInvalid;
      return invalid_argument(file + ": " + node_label(n) + ": unknown node type " +
                              std::to_string(type) + " (expected 0-7, Chakra's NodeType)");
    }
    n.type = static_cast<ChakraNodeType>(type);
    n.data_deps.assign(p.data_deps().begin(), p.data_deps().end());
    n.ctrl_deps.assign(p.ctrl_deps().begin(), p.ctrl_deps().end());
    n.start_time_micros = p.start_time_micros();
    n.duration_micros = p.duration_micros();
    if (n.duration_micros > (uint64_t{1} << 40)) {
      return invalid_argument(file + ": " + node_label(n) + ": duration_micros " +
                              std::to_string(n.duration_micros) + " is over 12 days");
    }
    if (p.has_inputs()) n.inputs_values = p.inputs().values();
    Status s = read_attrs(p, &n);
    if (!s.ok()) return invalid_argument(file + ": " + node_label(n) + ": " + s.message());
    t.nodes.push_back(std::move(n));
  }
  if (!metadata) return invalid_argument(file + ": empty file (expected a GlobalMetadata message)");
  PREFLIGHT_RETURN_IF_ERROR(check_graph(t, file));
  return t;
}

std::string write_chakra_trace(const ChakraTrace& t) {
  std::string out;
  std::string buf;
  pb::GlobalMetadata m;
  m.set_version(t.version);
  m.SerializeToString(&buf);
  write_varint(buf.size(), &out);
  out += buf;
  for (const ChakraNode& n : t.nodes) {
    pb::Node p;
    p.set_id(n.id);
    p.set_name(n.name);
    p.set_type(static_cast<pb::NodeType>(n.type));
    for (uint64_t d : n.data_deps) p.add_data_deps(d);
    for (uint64_t d : n.ctrl_deps) p.add_ctrl_deps(d);
    p.set_start_time_micros(n.start_time_micros);
    p.set_duration_micros(n.duration_micros);
    if (!n.inputs_values.empty()) p.mutable_inputs()->set_values(n.inputs_values);
    {
      pb::AttributeProto* a = p.add_attr();
      a->set_name("is_cpu_op");
      a->set_bool_val(n.is_cpu_op);
    }
    if (n.num_ops > 0) add_int(&p, "num_ops", n.num_ops);
    if (n.tensor_size > 0) {
      pb::AttributeProto* a = p.add_attr();
      a->set_name("tensor_size");
      a->set_uint64_val(static_cast<uint64_t>(n.tensor_size));
    }
    if (n.comm_type >= 0) add_int(&p, "comm_type", n.comm_type);
    if (n.type == ChakraNodeType::kColl || n.type == ChakraNodeType::kSend ||
        n.type == ChakraNodeType::kRecv) {
      add_int(&p, "comm_size", n.comm_size);
    }
    if (n.comm_src >= 0) add_int32(&p, "comm_src", n.comm_src);
    if (n.comm_dst >= 0) add_int32(&p, "comm_dst", n.comm_dst);
    if (n.type == ChakraNodeType::kSend || n.type == ChakraNodeType::kRecv) {
      add_int32(&p, "comm_tag", static_cast<int32_t>(n.comm_tag));
    }
    if (!n.pg_name.empty()) add_string(&p, "pg_name", n.pg_name);
    if (n.stream >= 0) add_int(&p, "stream", n.stream);
    if (n.duration_ps >= 0) add_int(&p, "preflight.duration_ps", n.duration_ps);
    if (!n.category.empty()) add_string(&p, "preflight.category", n.category);
    buf.clear();
    p.SerializeToString(&buf);
    write_varint(buf.size(), &out);
    out += buf;
  }
  return out;
}

std::string write_chakra_groups(const ChakraGroups& g) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, ranks] : g) j[name] = ranks;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

StatusOr<ChakraGroups> parse_chakra_groups(const std::string& text, const std::string& file) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(file + ": not valid JSON");
  if (!j.is_object()) {
    return invalid_argument(file + ": expected an object mapping group names to rank lists");
  }
  ChakraGroups g;
  for (const auto& [name, ranks] : j.items()) {
    if (!ranks.is_array() || ranks.empty()) {
      return invalid_argument(file + ": group '" + name + "': expected a non-empty list of ranks");
    }
    std::vector<int> r;
    for (const auto& v : ranks) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 30)) {
        return invalid_argument(file + ": group '" + name + "': " +
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                ": expected a rank (a non-negative integer)");
      }
      r.push_back(static_cast<int>(v.get<int64_t>()));
    }
    std::sort(r.begin(), r.end());
    if (std::adjacent_find(r.begin(), r.end()) != r.end()) {
      return invalid_argument(file + ": group '" + name + "': a rank appears twice");
    }
    g.emplace(name, std::move(r));
  }
  return g;
}

StatusOr<ChakraWorkload> load_chakra_workload(const std::string& prefix) {
  ChakraWorkload w;
  w.prefix = prefix;
  for (int r = 0;; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    if (!file_exists(path)) {
      if (r == 0) {
        return not_found(path +
                         ": cannot open (a Chakra workload is one file per rank, "
                         "PREFIX.<rank>.et, from rank 0)");
      }
      break;
    }
    PREFLIGHT_ASSIGN_OR_RETURN(const std::string bytes, read_file(path));
    PREFLIGHT_ASSIGN_OR_RETURN(ChakraTrace t, parse_chakra_trace(bytes, path));
    w.ranks.push_back(std::move(t));
  }
  const std::string groups = prefix + ".comm_group.json";
  if (file_exists(groups)) {
    PREFLIGHT_ASSIGN_OR_RETURN(const std::string text, read_file(groups));
    PREFLIGHT_ASSIGN_OR_RETURN(w.groups, parse_chakra_groups(text, groups));
  } else {
    for (const ChakraTrace& t : w.ranks) groups_from_metadata(t, &w.groups);
  }
  return w;
}

Status write_chakra_workload(const ChakraWorkload& w, const std::string& prefix) {
  auto write = [](const std::string& path, const std::string& bytes) -> Status {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return invalid_argument(path + ": cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return invalid_argument(path + ": write error");
    return Status();
  };
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    PREFLIGHT_RETURN_IF_ERROR(
        write(prefix + "." + std::to_string(r) + ".et", write_chakra_trace(w.ranks[r])));
  }
  if (!w.groups.empty()) {
    PREFLIGHT_RETURN_IF_ERROR(write(prefix + ".comm_group.json", write_chakra_groups(w.groups)));
  }
  return Status();
}

}  // namespace preflight
