// An nccl-tests table, predicted: one collective over every GPU of a cluster preset, for a range
// of sizes, with NCCL's choice of algorithm, protocol and channels (`preflight collective` and
// the Python module's collective()). A pure function of its request; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/loader.h"

namespace preflight {

struct CollectiveRequest {
  std::string cluster = "dgx-h100";    // cluster preset
  int nodes = 0;                       // 0: the preset's
  int gpus_per_node = 0;               // 0: the preset's
  std::string op = "all_reduce";       // all_reduce, all_gather, reduce_scatter, broadcast, reduce,
                                       // all_to_all, send_recv
  std::string sizes = "8B:16GiB";      // "MIN:MAX" doubling (nccl-tests -f 2) or "1MiB,1GiB"
  std::vector<std::string> overrides;  // cluster.* and collectives.* keys ("key=value")
  // analytical: the collective model's time; flow or packet: the planned algorithm's transfers
  // carried through the routed topology (as flows or packets) on the execution core.
  std::string network = "analytical";
  // Threads for the flow and packet networks, each size a simulation of its own (0: every core);
  // the rows are the same for any count.
  int jobs = 0;
};

struct CollectiveRow {
  int64_t bytes = 0;
  double time_us = 0;
  double algbw_gbps = 0;  // bytes / time, GB/s
  double busbw_gbps = 0;  // algbw times the op's bus factor (nccl-tests' PERFORMANCE.md)
  std::string algorithm;
  std::string protocol;  // empty where NCCL has none (send/recv, all-to-all)
  int channels = 0;
};

struct CollectiveTable {
  CollectiveSetup setup;  // the resolved cluster and collectives sections
  std::string op;
  std::string network = "analytical";
  int ranks = 0;  // the communicator: every GPU of the cluster
  std::vector<CollectiveRow> rows;
};

// "MIN:MAX" doubles from MIN to MAX (at most 64 sizes); "A,B,C" lists sizes. Errors name --sizes.
StatusOr<std::vector<Bytes>> parse_collective_sizes(const std::string& text);

// Errors (one line): an unknown preset, op, size or network, a bad override, fewer than 2 GPUs,
// an algorithm forced by collectives.algo that cannot run this op on this communicator, or on
// the flow and packet networks an op other than all_reduce, all_gather, reduce_scatter and
// broadcast.
StatusOr<CollectiveTable> predict_collective_table(const CollectiveRequest& request);

// The `preflight collective --json` document: op, network, ranks, nodes, gpus_per_node, cluster,
// nccl_version, model and rows[] of bytes, time_us, algbw_gbps, busbw_gbps, algorithm, protocol,
// channels.
nlohmann::json collective_table_to_json(const CollectiveTable& t);

}  // namespace preflight
