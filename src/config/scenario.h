// Scenario: the resolved inputs of one simulation — model, cluster (with its GPU), training,
// parallelism and simulation settings. Plain copyable values, filled by the loader from YAML,
// presets and --set overrides; `validate_scenario()` names the first violated rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/units.h"

namespace preflight {

enum class Activation { kGelu, kSwiglu };
enum class Norm { kLayerNorm, kRmsNorm };
enum class PositionEmbedding { kLearned, kRope, kAlibi };
enum class Precision { kFp16, kBf16, kFp8 };
enum class Recompute { kNone, kSelective, kFull };
enum class Schedule { kGpipe, kOneFOneB, kInterleaved };

// A dense decoder-only transformer (GPT/LLaMA family).
struct ModelConfig {
  std::string name = "custom";
  std::string description;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // = heads for multi-head attention; < heads for GQA/MQA
  int ffn_hidden = 0;  // intermediate size of the MLP (4·hidden for GPT)
  int vocab = 0;       // unpadded; Megatron pads it to a multiple of 128·tp
  Activation activation = Activation::kGelu;
  Norm norm = Norm::kLayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::kLearned;
  bool tied_embeddings = true;
  bool linear_bias = true;
  bool dropout = true;
  int max_seq_len = 2048;

  int head_dim() const { return hidden / heads; }
};

// Efficiency constants of a GPU and the software stack on it. These are the only calibrated
// numbers in Preflight; each has a physical meaning (docs/calibration.md).
struct GpuCalibration {
  double gemm_efficiency = 0.8;       // best achievable GEMM throughput / dense peak
  double gemm_k_overhead = 64;        // pipeline fill/drain of one GEMM tile, in K elements
  double memory_efficiency = 0.65;    // achieved / peak HBM bandwidth for element-wise kernels
  double attention_efficiency = 0.6;  // fused (Flash) attention throughput / dense peak
  SimTime launch_overhead = SimTime::microseconds(10);     // host time to dispatch one kernel
  SimTime kernel_gap = SimTime::microseconds(3);           // device idle between dependent kernels
  Bandwidth nvlink_busbw;                                  // measured in-node all-reduce busBw
  SimTime collective_latency = SimTime::microseconds(20);  // fixed cost of one collective
  SimTime collective_step_latency = SimTime::microseconds(2);  // per ring/tree step
  // Mid-size inefficiency of NCCL collectives against its own tuning model: the bandwidth term
  // grows by 4k·x(1−x), x = S/(S + S_mid), largest at S = S_mid (docs/collectives.md).
  double collective_midsize_penalty = 0.6;         // k
  Bytes collective_midsize_bytes = Bytes::mib(8);  // S_mid
};

struct GpuConfig {
  std::string name;
  std::string description;
  std::string architecture;
  int sm_count = 0;
  Bytes hbm_capacity;
  Bandwidth hbm_bandwidth;
  Bandwidth nvlink_bandwidth;  // per GPU, one direction
  int nvlinks = 0;             // NVLink links per GPU (0 = PCIe only)
  bool nvls = false;           // NVLink SHARP (multicast NVSwitch): Hopper and later
  FlopRate peak_fp32, peak_tf32, peak_fp16, peak_bf16, peak_fp8;
  GpuCalibration calibration;

  // Dense tensor-core peak for a GEMM in `p` (fp8 falls back to bf16 where there is none).
  FlopRate peak_for(Precision p) const;
};

// The cluster's fabric: how hosts, NVLink domains and NICs are wired (docs/topology.md). Read
// from `cluster.topology`; built into a Topology by build_topology() (network/topology_builders.h).
// 0 means "derive from the kind and the cluster" (the builder resolves it).
struct TopologyConfig {
  // nvswitch | rail_optimized | spine_leaf | fat_tree | hpn | nvl72. The loader fills in
  // nvswitch for one node and rail_optimized otherwise when the key is absent.
  std::string kind;
  double oversubscription = 1;  // leaf down : up capacity, >= 1 ("2:1" -> 2)
  int su_nodes = 0;     // hosts per scalable unit (rail group); 0: 32 (SuperPOD RA), hpn 128
  int leaf_radix = 0;   // ports per leaf/ToR; 0: 64 (QM9700), hpn 256 (51.2T at 200G)
  int spine_radix = 0;  // ports per spine/core; 0: as leaf_radix
  int tiers = 0;        // most switch tiers: 0 = spine_leaf/hpn 2, rail_optimized up to 3
  int k = 0;            // fat-tree arity (even); 0: the smallest even k that holds the NICs
  int planes = 2;       // hpn: ports per NIC, each to its own ToR and plane
  int nvl_domain = 72;  // nvl72: GPUs per NVLink domain
  // One network hop (cable + switch): SimAI's 500 ns link delay plus ~150 ns Quantum-2
  // forwarding (network_models.md §1.9, §6).
  SimTime link_latency = SimTime::picoseconds(650'000);
  // One NVLink hop: SimAI's nv_latency (network_models.md §1.9, §6).
  SimTime nvlink_latency = SimTime::picoseconds(25'000);
};

struct ClusterConfig {
  std::string name = "custom";
  std::string description;
  GpuConfig gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  Bandwidth nvlink_bandwidth;  // per GPU, one direction; defaults to the GPU's
  int nics_per_node = 8;
  Bandwidth nic_bandwidth;  // per NIC, one direction
  double nic_efficiency = 0.96;
  SimTime network_latency = SimTime::microseconds(5);
  double gpu_hour_price = 0;  // USD
  std::string cpu_vendor =
      "intel";       // host CPU (NCCL's low-latency caps differ for AMD, nccl.md §5.4)
  int pcie_gen = 4;  // GPU<->NIC PCIe generation (x16), caps NCCL's per-channel NIC bw
  TopologyConfig topology;

  int total_gpus() const { return nodes * gpus_per_node; }
  // Inter-node bandwidth one GPU gets when every GPU of its node sends at once.
  Bandwidth nic_share_per_gpu() const {
    return nic_bandwidth * (nic_efficiency * nics_per_node / gpus_per_node);
  }
};

struct TrainingConfig {
  int seq_len = 0;
  int global_batch = 0;
  int micro_batch = 1;
  Precision precision = Precision::kBf16;
  bool flash_attention =
      true;  // fused attention core (FlashAttention); false = Megatron's bmm+softmax
  double optimizer_bytes_per_param = 40;  // HBM traffic of the mixed-precision Adam step
  // Memory per GPU outside the model's tensors (docs/memory.md §5): CUDA context and kernel
  // images (0.3–0.7 GB), NCCL channel buffers of the TP/PP/DP communicators (0.5–1.5 GB),
  // cuBLAS/cuDNN workspaces.
  Bytes framework_overhead = Bytes::gib(3);
  // Caching-allocator fragmentation (reserved − allocated) as a fraction of the short-lived
  // tensors: activations and the largest transient buffer.
  double allocator_fragmentation = 0.10;
};

struct ParallelismConfig {
  int tp = 1;
  int pp = 1;
  int dp = 0;   // 0 = derived from the GPU count
  int vpp = 1;  // virtual pipeline stages (model chunks) per pipeline rank
  // Uneven pipelines (Megatron's --decoder-first/last-pipeline-num-layers): layers on the first
  // and last stage (0 = an even split); the other stages share the rest evenly. REQUIRES vpp 1.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool distributed_optimizer = false;
  // ZeRO over the DP group (Rajbhandari et al. 2020): 1 shards the optimizer states (as
  // distributed_optimizer does), 2 also the gradients, 3 also the weights.
  int zero_stage = 0;
  Schedule schedule = Schedule::kOneFOneB;
  bool overlap_grad_reduce = false;
  Bytes grad_bucket_size = Bytes(160'000'000);  // Megatron's DDP bucket: 40M fp32 gradients
};

// How collectives are chosen and timed: NCCL's tuning model picks the algorithm, protocol and
// channels (its environment variables have keys here, in NCCL's own syntax), and the time comes
// from the calibrated model (docs/collectives.md).
struct CollectivesConfig {
  std::string nccl_version = "2.28";  // NCCL behaviour to reproduce (2.18 ... 2.28)
  std::string algo;                   // NCCL_ALGO, e.g. "ring", "^nvls" ("" = NCCL's choice)
  std::string proto;                  // NCCL_PROTO, e.g. "simple", "^ll"
  int min_channels = 0;               // NCCL_MIN_NCHANNELS (0 = NCCL's default)
  int max_channels = 0;               // NCCL_MAX_NCHANNELS (0 = NCCL's default)
  bool pxn = true;                    // NCCL_PXN_DISABLE=0
  int nvls = 2;                       // NCCL_NVLS_ENABLE: 0 off, 1 on, 2 auto
  // Time model: calibrated (NCCL's choice, time corrected by measured curves) | nccl (NCCL's
  // own tuning-model time) | alpha_beta (the first version's ring/tree formulas).
  std::string model = "calibrated";
};

struct SimulationConfig {
  std::string network = "analytical";
  uint64_t seed = 0;
};

struct Scenario {
  std::string source;  // file the scenario came from ("<default>", "<flags>")
  ModelConfig model;
  ClusterConfig cluster;
  TrainingConfig training;
  ParallelismConfig parallelism;
  CollectivesConfig collectives;
  SimulationConfig simulation;

  int num_microbatches() const {
    return training.global_batch / (training.micro_batch * parallelism.dp);
  }
};

// Transformer layers of each pipeline stage (all its model chunks together), in order.
// REQUIRES: validate_scenario(s).ok().
std::vector<int> stage_layers(const Scenario& s);

// Checks the cross-field rules (divisibility, GPU count = tp·pp·dp, ...). Returns the first
// violation as "key.path: value: what was expected".
Status validate_scenario(const Scenario& s);

const char* to_string(Activation a);
const char* to_string(Norm n);
const char* to_string(PositionEmbedding p);
const char* to_string(Precision p);
const char* to_string(Recompute r);
const char* to_string(Schedule s);

}  // namespace preflight
