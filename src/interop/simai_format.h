// SimAI/AICB workload files: the `HYBRID_TRANSFORMER_FWD_IN_BCKWD` and `MICRO` text formats
// that AICB writes and SimAI reads. A file describes one pipeline stage of one DP replica: a
// header of `key: value` tokens (tp, ep, pp, ga, all_gpus, pp_comm), a layer count, then one line
// of 12 whitespace-separated fields per layer (forward, input-gradient and weight-gradient
// compute in ns, each followed by a communication type and a size in bytes, then the update
// time). Plain values, a parser and a writer; thread-safe. docs/interop.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "workload/workload.h"

namespace preflight {

// The communicator a SimAI comm type names: a bare type means TP in the forward and
// input-gradient columns and DP in the weight-gradient column; `_EP` the EP group; `_DP_EP` the
// DP group within an EP group.
enum class SimaiGroup : uint8_t { kDefault, kExpert, kDataExpert };

struct SimaiComm {
  bool none = true;  // NONE: no communication
  CollectiveKind kind = CollectiveKind::kAllReduce;
  SimaiGroup group = SimaiGroup::kDefault;
  int64_t bytes = 0;
};

struct SimaiLayer {
  std::string name;
  int64_t dependency = -1;  // field 2, always -1 in AICB files
  int64_t fwd_ns = 0;
  SimaiComm fwd;
  int64_t ig_ns = 0;
  SimaiComm ig;
  int64_t wg_ns = 0;
  SimaiComm wg;
  int64_t update_ns = 0;  // field 12: read and written back, not simulated
};

struct SimaiWorkload {
  std::string policy = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";  // or "MICRO"
  int tp = 1;  // model_parallel_NPU_group
  int ep = 1;
  int pp = 1;
  int vpp = 1;       // AICB writes the number of layers here; not used by the import
  int ga = 1;        // gradient-accumulation steps = micro-batches per iteration
  int all_gpus = 0;  // 0 (MICRO files): the scenario's cluster decides
  int64_t pp_comm = 0;  // bytes of one pipeline activation send
  std::vector<SimaiLayer> layers;
};

// Parses the text of a SimAI workload file. `file` names it in errors, which read
// "FILE:LINE: field N 'x': expected ..." (or "FILE:LINE: ..." for line-level problems).
// Never crashes on any input.
StatusOr<SimaiWorkload> parse_simai_workload(const std::string& text, const std::string& file);

// Reads and parses `path`.
StatusOr<SimaiWorkload> load_simai_workload(const std::string& path);

// The file text: the header line, the layer count, one tab-separated line per layer.
std::string write_simai_workload(const SimaiWorkload& w);

}  // namespace preflight
