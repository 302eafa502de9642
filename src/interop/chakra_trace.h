// MLCommons Chakra execution traces (ET), the workload format of ASTRA-sim 2.x: one file per rank,
// `PREFIX.<rank>.et`, a stream of protobuf messages each preceded by its byte length as a base-128
// varint — one GlobalMetadata, then Nodes until the end of the file (schema:
// interop/chakra_et.proto). A node is a compute kernel or CPU op (COMP_NODE, with a measured
// duration or FLOPs and bytes), a collective (COMM_COLL_NODE: comm_type, comm_size, pg_name), a
// point-to-point send or receive, a memory load/store or metadata; `data_deps` and `ctrl_deps`
// name the nodes of the same file it waits for. This header holds the plain values, the reader
// (gzip-compressed files too) and the writer. docs/interop.md. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace preflight {

// Chakra's NodeType, with its wire values.
enum class ChakraNodeType : uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kSend = 5,
  kRecv = 6,
  kColl = 7,
};
const char* to_string(ChakraNodeType t);

// Chakra's CollectiveCommType, with its wire values.
enum class ChakraCommType : int {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* to_string(ChakraCommType t);

// One node, with the attributes simulators read pulled out of its `attr` list. Integer
// attributes are accepted in any integer wire type (int32_val, uint64_val, ...); the writer uses
// the types Chakra's converters write (comm_type/comm_size int64_val, comm_src/dst/tag
// int32_val, tensor_size uint64_val, is_cpu_op bool_val).
struct ChakraNode {
  uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::kInvalid;
  std::vector<uint64_t> data_deps;
  std::vector<uint64_t> ctrl_deps;
  uint64_t start_time_micros = 0;
  uint64_t duration_micros = 0;
  bool is_cpu_op = false;
  int64_t num_ops = 0;      // FLOPs (roofline timing when no duration is given)
  int64_t tensor_size = 0;  // bytes touched (COMP) or moved (MEM_LOAD/MEM_STORE)
  int comm_type = -1;       // a ChakraCommType value (COMM_COLL_NODE); -1 when absent
  int64_t comm_size = 0;    // bytes (all-gather: the per-rank input, as ASTRA-sim reads it)
  int comm_src = -1;        // COMM_RECV_NODE: the sending rank
  int comm_dst = -1;        // COMM_SEND_NODE: the receiving rank
  int64_t comm_tag = 0;
  std::string pg_name;  // communicator group ("" or "0": all ranks)
  int64_t stream = -1;  // the GPU stream (PyTorch converter's `stream`); -1 when absent
  // Preflight's own attributes (ignored by other tools): the exact duration in picoseconds,
  // which duration_micros rounds, and the breakdown category ("compute", "optimizer", "tp",
  // "pp", "dp", "ep", "cp").
  int64_t duration_ps = -1;
  std::string category;
  std::string inputs_values;  // IOInfo inputs.values (METADATA_NODE: process groups as JSON)
  int64_t offset = 0;         // byte offset of the node's length prefix in its (inflated) file
};

struct ChakraTrace {
  std::string version = "0.0.4";  // GlobalMetadata.version
  std::vector<ChakraNode> nodes;
};

// Communicator groups: pg_name → member ranks, ascending. ASTRA-sim's --comm-group-configuration
// JSON ({"1": [0, 1, 2, 3], ...}).
using ChakraGroups = std::map<std::string, std::vector<int>>;

// Parses one rank's trace. `file` names it in errors, which read "FILE: byte offset N: ..." for
// framing problems and "FILE: node ID ('name', byte offset N): ..." for bad nodes. Checks that
// node ids are unique, that every dependency names a node of the file, and that the dependencies
// have no cycle. Files starting with the gzip magic are inflated first (offsets then count in
// the inflated stream). Never crashes on any input.
StatusOr<ChakraTrace> parse_chakra_trace(std::string_view bytes, const std::string& file);

// The file's bytes: GlobalMetadata, then every node, each length-prefixed. Attributes are
// written only when set (is_cpu_op always, as Chakra's converter does).
std::string write_chakra_trace(const ChakraTrace& t);

// Reads PREFIX.0.et, PREFIX.1.et, ... up to the first missing rank (at least rank 0). Also reads
// the communicator groups, from PREFIX.comm_group.json when it exists, else from the process
// groups that METADATA_NODEs carry (PyTorch's JSON list of {"pg_name", "ranks"}).
struct ChakraWorkload {
  std::string prefix;
  std::vector<ChakraTrace> ranks;
  ChakraGroups groups;
};
StatusOr<ChakraWorkload> load_chakra_workload(const std::string& prefix);

// The groups file's text, and its parser (`file` names it in errors). Ranks must be
// non-negative and unique within a group.
std::string write_chakra_groups(const ChakraGroups& g);
StatusOr<ChakraGroups> parse_chakra_groups(const std::string& text, const std::string& file);

// Writes `w.ranks[r]` to PREFIX.r.et and, when there are groups, PREFIX.comm_group.json.
Status write_chakra_workload(const ChakraWorkload& w, const std::string& prefix);

}  // namespace preflight
