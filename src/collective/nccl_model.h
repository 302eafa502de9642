// NCCL's collective decision model (NCCL 2.18–2.28): from what topology detection sees on one
// communicator, derive the search graphs and channel counts (shared/reference/nccl.md §4), fill
// NCCL's latency/bandwidth tables (§5.1–5.7, §9) and pick the minimum-time (algorithm,
// protocol) for one collective as NCCL does (§5.8–5.9):
//   busBw     = graph.channels × (bwIntra if nodes ≤ 2 or CollNet, else bwInter) × protocol and
//               algorithm caps (§5.5; search channels, not comm channels)
//   bandwidth = busBw × ratio (Ring n/nsteps, Tree/CollNet 0.5, NVLS n/nsteps (2.28), §5.6)
//   latency   = base + per-step hardware latencies (§5.7)
//   time_us   = latency + bytes / (1000 × bandwidth), with the tree correction factor and the
//               ×1.4 multi-node Ring Simple plateau (§5.8); the strictly smallest time wins.
// Numbers are NCCL's internal ranking model, not measured durations (§5.10, §14: hardware is
// 1.3–3× slower at 64 KiB–64 MiB). A TuningModel is an immutable value: cheap queries, safe to
// share between threads.
//
// Simplifications (see nccl_model.cc for each rule's source):
//  - The graph search is a capacity count, not NCCL's path-by-path recursion. On one node every
//    ring/tree channel at speed b loads each GPU's NVLink port with b (same order, sameChannels);
//    across nodes a channel enters and leaves through one NIC and loads the busiest port
//    c − ⌊c/G⌋ times; an NVLS channel loads every port once and its head's twice. Every node is
//    alike, each NIC sits on a GPU's PCIe switch (typeInter = PXB), the tree pattern is
//    BALANCED_TREE, the communicator reaches ⌈nics × ranks_per_node / gpus_per_node⌉ NICs.
//  - Without an NVSwitch, GPUs are fully connected by nvlinks/(gpus−1) links per pair.
//  - CollNet graphs are not searched: the chain graph copies the tree graph, the direct graph has
//    one head per NIC (≤ 8) at the NIC's per-channel cap. Calibrate from NCCL_DEBUG logs.
//  - One collective per call: no group aggregation, IB net (latencyInter 0), no tuner plugin
//    but AWS's OFI region tuner of P6 (Options::tuner, collective/ofi_tuner.h),
//    a sum over an NVLS-capable type (bf16/fp32; no fp8 ring penalty), no registered buffers,
//    CUDA 12 (no sm90 + CUDA 11.8 LL128 exception), no Intel P2P ×6/5 PCIe overhead.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace preflight::nccl {

// NCCL's index order, which is also the tie-break order of the selection (§0, §5.8).
enum class Algo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
enum class Proto { kLL, kLL128, kSimple };
enum class Coll { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce };
inline constexpr int kNumAlgos = 7;
inline constexpr int kNumProtos = 3;
inline constexpr int kNumColls = 5;

// NCCL's spelling: "Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT";
// "LL", "LL128", "Simple"; "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce".
const char* to_string(Algo a);
const char* to_string(Proto p);
const char* to_string(Coll c);
// Case-insensitive NCCL names (as in NCCL_ALGO / NCCL_PROTO); unknown names are errors.
StatusOr<Algo> parse_algo(std::string_view name);
StatusOr<Proto> parse_proto(std::string_view name);
StatusOr<Coll> parse_coll(std::string_view name);

// What NCCL's topology detection sees for one communicator; every node is alike.
struct Platform {
  int compute_capability = 80;  // 70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell (2.25+)
  int nodes = 1;
  int ranks_per_node = 8;    // ppn: communicator ranks (= GPUs used) on each node
  int gpus_per_node = 8;     // GPUs in the node
  int nvlinks_per_gpu = 12;  // 0 = no NVLink (PCIe only)
  // Factor on NCCL's per-link speed (network/nvlink.h): the cluster's NVLink bandwidth over its
  // GPU's datasheet figure, 1 for the GPU as shipped.
  double nvlink_scale = 1.0;
  bool nvswitch = true;
  int nics_per_node = 8;
  double nic_gbps = 200;      // line rate per NIC, Gb/s
  int pcie_gen = 4;           // GPU<->NIC PCIe generation, x16 (3..6)
  bool amd_cpu = false;       // NET overhead 2 µs and llMaxBws row 1 for multi-node (§5.3, §5.4)
  bool nvls_capable = false;  // multicast-capable NVSwitch (Hopper+, CUDA 12.1+ driver)
};

struct Options {
  // "2.M" (M = 18..28; means the release tag of §0, e.g. 2.28 = 2.28.9) or "2.M.P". The patch
  // level matters only for 2.28 (< 2.28.7: NVLSTree NET latency 14, older Blackwell caps).
  std::string version = "2.28";
  // NCCL_ALGO / NCCL_PROTO: comma list, optional leading '^' (all except); "" = default.
  // 2.24+ also "list;func:list;..." (e.g. "ring;allreduce:tree,ring"), later parts win.
  // Naming LL128 in a list forces it on even where auto-LL128 would not enable it (§5.9).
  std::string algo;
  std::string proto;
  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS: clamp ring/tree channels (0 = default). They do
  // not change NVLS channels nor the tuning bandwidths, which use search channels (§2, §4.2).
  int min_channels = 0, max_channels = 0;
  int nvls = 2;           // NCCL_NVLS_ENABLE: 0 off, 1 on (error if unsupported), 2 auto
  int nvls_channels = 0;  // NCCL_NVLS_NCHANNELS (0 = default: 16 Hopper, 24/32 Blackwell)
  bool collnet = false;   // NCCL_COLLNET_ENABLE with a SHARP plugin (all ops supported)
  // A tuner plugin that overrides the choice (NCCL_TUNER_PLUGIN; collective/ofi_tuner.h):
  // "" none, "aws-ofi-p6" the AWS OFI plugin's region tuner of P6-B200 instances.
  std::string tuner;
};

// One search graph (§4.1), identical on every node. GB/s per channel.
struct Graph {
  int channels = 0;
  double bw_intra = 0, bw_inter = 0;
  bool nvlink = true;         // typeIntra is NVLink (else PCI): picks the latency row (§5.1)
  bool same_channels = true;  // every channel has the same intra-node order (Bcast latency)
};

// One costed (algorithm, protocol). time_us = latency_us + bytes / (1000 · bandwidth_gbs).
struct Choice {
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  int channels = 0;          // channels the call uses (§4.4); NVLS: nvlsChannels
  double latency_us = 0;     // the table latency, ×1.4 (×1.9 pre-Ampere) on the Ring plateau
  double bandwidth_gbs = 0;  // the table bandwidth (algBw-like, §5.6) × tree correction
  double time_us = 0;        // NCCL's model time (§5.8)
  // The same bandwidth with unbounded links (every search graph's bandwidth infinite): what the
  // protocol's per-channel caps alone allow (LL's llMaxBw, LL128's and the tree's and the NVLS
  // tree's per-channel maxima, with the §5.6 ratio and the tree correction); 0 where none binds.
  // A fabric that carries the links itself (the flow and packet rungs) still takes this long.
  double protocol_bandwidth_gbs = 0;
};

class TuningModel {
 public:
  // Runs the searches and fills the tables. Errors (one line): invalid platform or option,
  // unknown version or algorithm/protocol name, nvls = 1 where NVLS is unsupported.
  static StatusOr<TuningModel> create(const Platform& p, const Options& o);

  // Search results (§4.1, §4.3). All empty for a group of one rank; nvls_graph() also when
  // NVLS is unsupported or off.
  const Graph& ring_graph() const { return ring_; }
  const Graph& tree_graph() const { return tree_; }
  const Graph& nvls_graph() const { return nvls_; }
  int comm_channels() const { return comm_channels_; }  // collChannels (§4.2)
  int nvls_channels() const { return nvls_channels_; }  // 0 when NVLS is off (§9)
  int ranks() const { return n_ranks_; }

  // NCCL's tables: latency (µs, §5.7) and stored bandwidth (GB/s, §5.5–5.6) of one
  // (collective, algorithm, protocol); bandwidth 0 = not costed, unavailable or disabled.
  double latency_us(Coll c, Algo a, Proto p) const;
  double bandwidth_gbs(Coll c, Algo a, Proto p) const;

  // Every available (algo, proto) for `bytes` in NCCL index order, with its time (§5.8).
  // `bytes` follows nccl-tests: AllGather/ReduceScatter = the whole gathered buffer.
  // 2.19–2.23: when overrides leave nothing, Ring with its saved bandwidth (§5.8).
  // A group of one rank or 0 bytes: one zero-time Ring/Simple entry with 0 channels.
  // REQUIRES: bytes >= 0.
  std::vector<Choice> candidates(Coll c, int64_t bytes) const;
  // The strictly fastest candidate (ties to the lower index), or the tuner plugin's pick among
  // the candidates where it makes one. Error when none is available (NCCL 2.24+ "no
  // algorithm/protocol available") or bytes < 0.
  StatusOr<Choice> choose(Coll c, int64_t bytes) const;

 private:
  using Table = std::array<std::array<std::array<double, kNumProtos>, kNumAlgos>, kNumColls>;
  TuningModel() = default;
  int channels_for(Coll c, Algo a, Proto p, int64_t bytes) const;
  Choice cost(Coll c, Algo a, Proto p, double bw, int64_t bytes) const;

  std::string tuner_;  // Options::tuner
  int minor_ = 28;     // NCCL 2.<minor_>
  int cc_ = 80;
  int nodes_ = 1, n_ranks_ = 1;
  Graph ring_, tree_, nvls_, collnet_direct_;
  int comm_channels_ = 0, nvls_channels_ = 0;
  Table lat_{}, bw_{};
  Table protocol_bw_{};  // bw_ with unbounded links (Choice::protocol_bandwidth_gbs)
  std::array<std::array<double, kNumProtos>, kNumColls> ring_backup_{};  // 2.19–2.23
};

}  // namespace preflight::nccl
