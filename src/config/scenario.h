// Scenario: the resolved inputs of one simulation — model, cluster (with its GPU), training,
// parallelism and simulation settings. Plain copyable values, filled by the loader from YAML,
// presets and --set overrides; `validate_scenario()` names the first violated rule.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/units.h"
#include "config/kernel_table.h"
#include "config/model_config.h"
#include "config/packet_config.h"
#include "config/stack_config.h"

namespace preflight {

// GEMM precision, as Transformer Engine runs it (docs/precision.md). fp8 is per-tensor delayed
// scaling (E4M3 forward, E5M2 gradients); fp8_blockwise scales 1x128/128x128 tiles (DeepSeek-V3);
// mxfp8 is the OCP microscaling format (32-element blocks, E8M0 scales; Blackwell); nvfp4 is
// NVIDIA's 4-bit format (16-element blocks, E4M3 scales; Blackwell). Attention softmax, norms,
// residuals and the optimizer stay in bf16/fp32 in every mode.
enum class Precision { kFp16, kBf16, kFp8, kFp8Blockwise, kMxfp8, kNvfp4 };
// How per-tensor fp8 (training.precision: fp8) finds each tensor's scale (Transformer Engine's
// recipes): delayed scaling takes it from the amax history of earlier iterations, the amax of
// the tensor at hand folded into the cast kernel (TE's DelayedScaling, Megatron-Core's default
// fp8_recipe); current scaling computes the amax of the tensor at hand first (a reduction pass
// over it, then the scale, then the cast: TE's Float8CurrentScalingQuantizer), reduced over the
// TP group where sequence parallelism all-gathers the tensor (docs/precision.md).
enum class Fp8Recipe { kDelayed, kCurrent };
enum class Recompute { kNone, kSelective, kFull };
// What selective recompute replays (Megatron-Core's --recompute-modules, its names): the
// attention core; the two pre-GEMM norms; the MoE experts' activation function; a dense MLP;
// the whole MoE layer (router, dispatch, experts, combine); the shared experts; MLA's up
// projections. Each drops the tensors only it needs from what a layer keeps for its backward
// and runs its forward again before that backward (docs/memory.md §2, docs/workload.md).
enum class RecomputeModule {
  kCoreAttn,
  kLayerNorm,
  kMoeAct,
  kMlp,
  kMoe,
  kSharedExperts,
  kMlaUpProj,
};
inline constexpr int kRecomputeModuleCount = 7;
// Pipeline schedules (workload/schedule.h): zb_h1/zb_h2 are the zero-bubble schedules of Qi et
// al. 2024 (backward split into input-gradient B and weight-gradient W passes); dualpipe is
// DeepSeek-V3's bidirectional schedule.
enum class Schedule { kGpipe, kOneFOneB, kInterleaved, kZeroBubbleH1, kZeroBubbleH2, kDualPipe };
// Context parallelism: ring attention (K/V blocks passed around the CP ring, overlapped with the
// attention of the block at hand) or all-to-all (Ulysses: heads scattered, sequence gathered).
enum class ContextParallelKind { kRing, kAllToAll };

// Efficiency constants of a GPU and the software stack on it. These are the only calibrated
// numbers in Preflight; each has a physical meaning (docs/calibration.md).
struct GpuCalibration {
  double gemm_efficiency = 0.8;       // best achievable GEMM throughput / dense peak
  double gemm_k_overhead = 64;        // pipeline fill/drain of one GEMM tile, in K elements
  double memory_efficiency = 0.65;    // achieved / peak HBM bandwidth for element-wise kernels
  double attention_efficiency = 0.6;  // fused (Flash) attention forward throughput / dense peak
  // Backward / forward efficiency of the fused attention kernel: cuDNN on H100, head dim 128,
  // sequence 8K reaches 518 TFLOP/s backward (FlashAttention-3 paper, Shah et al. 2024, Fig. 6)
  // against ~600 forward (Fig. 5): 0.87.
  double attention_backward_ratio = 0.87;
  // The fixed cost of one work unit of the fused attention kernel (cuDNN's: a block of 128
  // queries of one head, which loads its Q tile, fills the pipeline, then normalises and stores
  // its output), in tiles of its own work: a unit that computes n key tiles takes as long as
  // n + attention_unit_overhead would at the kernel's rate. Measured, not fitted: cuDNN 9.27's
  // forward kernels in cudnn-frontend's attention benchmark (benchmark/attention_inference,
  // 64 query heads, causal, 2K-32K tokens, full and 128-token windows) take 1.7 tiles a unit on
  // H200 and 3.7-4.8 on B200 and GB200 (docs/compute.md "Fused attention"). 0 = none (no
  // measurement: Ampere and older).
  double attention_unit_overhead = 0;
  // NVFP4 GEMMs' throughput against FP8's at their peaks' ratio: the same block-scaled MMA with
  // twice the scale density (an E4M3 scale per 16 elements) and half the operand bytes per
  // FLOP, so scale staging, operand feeding and the epilogue weigh more. Assumed 0.90 where no
  // fit exists; fitted per generation on the published set's dense NVFP4 rows
  // (docs/calibration.md).
  double nvfp4_efficiency = 0.90;
  // Mamba-2's SSD chunked-scan kernels (mamba_ssm's Triton mamba_chunk_scan_combined, which
  // Megatron-Core runs): their FLOPs / the bf16 dense peak. On one H100 the forward processes
  // ~1.2e7 tokens/s at 128 heads × 64, state 128 (vLLM PR 27299's microbenchmark of the
  // original kernels), 6.3-8.4 MFLOP per token at chunk 128-256: 77-101 TFLOP/s, 0.08-0.10.
  double ssd_efficiency = 0.09;
  // The HBM fraction the SSD scan's kernels reach on their bytes; 0 = memory_efficiency, as on
  // Hopper, where the microbenchmark above runs at its FLOP bound. The Triton kernels are bound
  // by latency more than by bandwidth (PyTorch's fused-SSD study), so on Blackwell they keep
  // Hopper's speed per SM rather than Blackwell's HBM (the Blackwell presets, docs/compute.md).
  double ssd_memory_efficiency = 0;
  // Host time to dispatch one kernel: the stack's (training.stack) unless the GPU's YAML sets it.
  SimTime launch_overhead = SimTime::microseconds(10);
  bool launch_overhead_given = false;             // the GPU's YAML set launch_overhead (loader)
  SimTime kernel_gap = SimTime::microseconds(3);  // device idle between dependent kernels
  SimTime collective_latency = SimTime::microseconds(20);      // fixed cost of one collective
  SimTime collective_step_latency = SimTime::microseconds(2);  // per ring/tree step
  // Mid-size inefficiency of NCCL collectives against its own tuning model: the bandwidth term
  // grows by 4k·x(1−x), x = S/(S + S_mid), largest at S = S_mid (docs/collectives.md).
  double collective_midsize_penalty = 0.6;         // k
  Bytes collective_midsize_bytes = Bytes::mib(8);  // S_mid
  // Compute under an overlapped collective runs on the SMs its NCCL channels leave free: the
  // kernel's time grows by factor × channels/SMs × overlap (1 = exactly the SM share).
  double comm_sm_interference = 1.0;
};

// A GPU's generation (cluster.gpu.architecture, one of volta, ampere, hopper, blackwell): NCCL's
// tuning follows its compute capability (network/nvlink.h), NVLS, MXFP8 and the NVLink
// per-link speed its hardware, the roofline its measured FP8/BF16 ratio. One parse, in the
// loader (an unknown name is an error that lists the known ones); what a generation has is
// data, in architecture_traits(), and nothing else compares architectures by name.
enum class GpuArchitecture { kVolta, kAmpere, kHopper, kBlackwell };

struct ArchitectureTraits {
  GpuArchitecture architecture;
  const char* name;        // cluster.gpu.architecture
  int compute_capability;  // NCCL's SM version: 70, 80, 90, 100
  // NVLink generation's bandwidth per link and direction: NVLink 2-4 25 GB/s, NVLink 5 50 GB/s
  // (A100 12 links = 300 GB/s, H100 18 = 450 GB/s, B200 18 = 900 GB/s).
  double nvlink_per_link_bytes_per_s;
  bool nvls;     // NVLink SHARP in the NVSwitch generation it ships with (Hopper and later)
  bool fp8;      // FP8 tensor cores (Hopper and later)
  bool mxfp8;    // microscaled FP8/FP4 MMA in hardware (Blackwell)
  int pcie_gen;  // of the GPU<->NIC path in its systems: V100 Gen3, A100 Gen4, later Gen5
  // Per SM and clock: dense bf16/fp16 tensor-core FLOPs (V100 1,024, A100 2,048, H100 4,096,
  // B200 8,192: each datasheet peak over SMs x boost clock) and exponentials the special-function
  // units evaluate (MUFU.EX2: 16 on every generation here, CUDA C++ Programming Guide, "Throughput
  // of Native Arithmetic Instructions"). Their ratio prices FlashAttention's softmax against its
  // GEMMs (docs/compute.md "Fused attention").
  int tensor_flops_per_clock;
  int sfu_exp_per_clock;
};

// The generations in GpuArchitecture order.
const std::vector<ArchitectureTraits>& architecture_table();
const ArchitectureTraits& architecture_traits(GpuArchitecture a);

struct GpuConfig {
  std::string name;
  std::string description;
  GpuArchitecture architecture = GpuArchitecture::kAmpere;
  int sm_count = 0;
  Bytes hbm_capacity;
  Bandwidth hbm_bandwidth;
  Bandwidth nvlink_bandwidth;  // per GPU, one direction
  int nvlinks = 0;             // NVLink links per GPU (0 = PCIe only)
  bool nvls = false;           // NVLink SHARP (multicast NVSwitch): Hopper and later
  FlopRate peak_fp32, peak_tf32, peak_fp16, peak_bf16, peak_fp8;
  FlopRate peak_fp4;   // NVFP4/MXFP4 dense tensor-core peak (Blackwell); 0 = not supported
  bool mxfp8 = false;  // microscaled FP8 in hardware (Blackwell); derived from the architecture
  // Exponentials per SM and clock (the architecture's; Blackwell Ultra doubles them), and the SM
  // clock they run at (GHz; 0: the clock of the half-precision peak, peak / (SMs x the
  // architecture's tensor FLOPs per SM and clock), which a part with cut-down tensor cores must
  // give instead).
  int sfu_exp_per_clock = 16;
  double sm_clock_ghz = 0;
  GpuCalibration calibration;

  // Softmax exponentials per second: SMs x sfu_exp_per_clock x the SM clock.
  double exp_per_second() const;

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

// NIC busBw / line rate measured on the InfiniBand and RoCE clusters of microbenchmarks.csv, on
// which NCCL's collective curves are calibrated (docs/calibration.md).
inline constexpr double kMeasuredNicEfficiency = 0.96;

struct ClusterConfig {
  std::string name = "custom";
  std::string description;
  GpuConfig gpu;
  // A node is the part of one NVLink domain (all GPUs one NVSwitch hop apart) the job uses: a
  // DGX host, or the job's GPUs in one NVL72 rack.
  int nodes = 1;
  int gpus_per_node = 8;
  int domain_gpus = 8;  // GPUs of a whole domain (NVL72: 72); > gpus_per_node when partly used
  int tray_gpus = 8;    // allocation unit within a domain (NVL72 compute tray: 4)
  Bandwidth nvlink_bandwidth;  // per GPU, one direction; defaults to the GPU's
  int nics_per_node = 8;
  Bandwidth nic_bandwidth;  // per NIC, one direction
  // Fraction of line rate the NICs reach: measured NIC busBw / line rate (microbenchmarks.csv,
  // kMeasuredNicEfficiency). All NIC traffic runs at it: all-to-all and send/recv through the
  // network backend, the flow network's links, and NCCL's collectives relative to the curves
  // they were calibrated on (collective/nccl_collectives.cc).
  double nic_efficiency = kMeasuredNicEfficiency;
  // The scale-out fabric's link layer (cluster.fabric): InfiniBand (credit-based flow control,
  // as the DGX SuperPOD reference designs build) or RoCEv2 Ethernet (PFC, ECN). The packet
  // network's default simulation.packet.link_layer; the other rungs do not depend on it.
  LinkLayer fabric = LinkLayer::kRoce;
  // The NCCL tuner plugin the cluster's software installs (cluster.nccl_tuner; NCCL_TUNER_PLUGIN):
  // "" none (NCCL's own choice), "aws-ofi-p6" the AWS OFI plugin's region tuner on P6-B200 EFA
  // instances, which picks every collective's algorithm and protocol there
  // (collective/ofi_tuner.h).
  std::string nccl_tuner;
  SimTime network_latency = SimTime::microseconds(5);
  double gpu_hour_price = 0;  // USD
  std::string cpu_vendor =
      "intel";       // host CPU (NCCL's low-latency caps differ for AMD, nccl.md §5.4)
  int pcie_gen = 4;  // GPU<->NIC PCIe generation (x16), caps NCCL's per-channel NIC bw
  // GPU <-> host memory copy bandwidth per GPU, one direction (pinned cudaMemcpyAsync on a copy
  // engine): what activation offloading (parallelism.offload_layers) moves at. PCIe systems: x16
  // of pcie_gen at 0.8 of the line rate (51.2 GB/s for Gen5, SimAI's "PCIe Gen5 effective");
  // Grace systems: their NVLink-C2C share (cluster presets).
  Bandwidth host_bandwidth = Bandwidth::gigabytes_per_second(25.6);
  // Host CPU time per framework op against the hosts the stacks' launch costs were fitted on
  // (1). Every host cost of an iteration scales by it: the launches, the grouped GEMM's loop
  // over its experts, Transformer Engine's loops. A what-if for a slower or faster host; no
  // preset sets it (config/cluster_section.cc says why).
  double host_overhead_factor = 1.0;
  TopologyConfig topology;

  int total_gpus() const { return nodes * gpus_per_node; }
  // Inter-node bandwidth one GPU gets when every GPU of its node sends at once.
  Bandwidth nic_share_per_gpu() const {
    return nic_bandwidth * (nic_efficiency * nics_per_node / gpus_per_node);
  }
};

// LoRA fine-tuning (Hu et al. 2021): the base weights are frozen, and each target linear layer
// W (d_in → d_out) gains a trainable low-rank path B·A (A: d_in → rank, B: rank → d_out).
struct LoraConfig {
  int rank = 0;  // 0 = no LoRA (all weights train)
  // Linear layers that carry an adapter: of qkv, proj, fc1, fc2 (dense MLPs).
  std::vector<std::string> targets;
  bool enabled() const { return rank > 0; }
  bool targets_layer(const std::string& name) const {
    return std::find(targets.begin(), targets.end(), name) != targets.end();
  }
};

struct TrainingConfig {
  StackConfig stack;
  LoraConfig lora;
  int seq_len = 0;
  int global_batch = 0;
  int micro_batch = 1;
  Precision precision = Precision::kBf16;
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  // with precision fp8 only
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
  // Fine-tuning on packed samples (SFT/LoRA on SQuAD packed to seq_len): several documents per
  // sample, attention within each (cu_seqlens). The attention work is that of sequences of this
  // length-weighted mean length, Σs²/Σs (0: one sequence per sample).
  int packed_sequence_length = 0;
  // Megatron's first_last_layers_bf16 with num_layers_at_start_in_bf16 /
  // num_layers_at_end_in_bf16: the first and last layers' linear layers in bf16 under a
  // low-precision training.precision (NVIDIA's NVFP4 recipe keeps the last ~15 % of layers in
  // bf16; docs/precision.md).
  int bf16_layers_at_start = 0, bf16_layers_at_end = 0;
  // CUDA graphs over the whole iteration (Megatron's cuda_graph_impl local / full_iteration):
  // the host launches a graph, not kernels, so per-kernel launch cost and host syncs vanish.
  bool cuda_graphs = false;
  // Transformer Engine's per-layer graphs of some modules (Megatron's cuda_graph_impl
  // transformer_engine with cuda_graph_scope; training.cuda_graphs: scoped): GraphScope bits.
  uint32_t cuda_graph_scope = 0;
};

// The modules training.cuda_graph_scope may name (Megatron-Core's cuda_graph_scope values that
// Preflight models): attention with its input norm, a dense MLP with its norm, a MoE layer's
// router with its norm, its token dispatcher's preprocessing, and a hybrid's Mamba-2 mixer with
// its norm.
enum GraphScope : uint32_t {
  kGraphAttn = 1,
  kGraphMlp = 2,
  kGraphMoeRouter = 4,
  kGraphMoePreprocess = 8,
  kGraphMamba = 16,
};

// The scopes' names in the YAML, in bit order: kGraphScopeNames[k] names the scope 1 << k.
inline constexpr const char* kGraphScopeNames[] = {"attn", "mlp", "moe_router", "moe_preprocess",
                                                   "mamba"};

struct ParallelismConfig {
  int tp = 1;
  int pp = 1;
  int dp = 0;   // 0 = auto: GPUs / (tp·cp·pp), which the loader resolves
  int vpp = 1;  // virtual pipeline stages (model chunks) per pipeline rank
  // Uneven pipelines (Megatron's --decoder-first/last-pipeline-num-layers): layers on the first
  // and last stage (0 = an even split); the other stages share the rest evenly. With vpp > 1
  // each stage's layers split over its chunks as evenly as they go, the lighter chunks being the
  // first stage's first (it holds the embedding) and the last stage's last (the loss), as Llama
  // 3 405B's 126 layers ran on 16 stages × 8 chunks (chunk_layers()).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Layers of every virtual stage (model chunk) in model order, pp·vpp entries: an explicit
  // layout (a list, or Megatron's layout string such as "Et|(tt|)*30mL"), the account_for_*
  // split, or the default split when pp·vpp does not divide the layers (config/pipeline_layout.h).
  // Empty: an even split, or first/last_stage_layers.
  std::vector<int> pipeline_layout;
  std::string pipeline_split;  // how an uneven layout was chosen, for the summary ("" = given)
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  // The modules selective recompute replays, one bit per RecomputeModule; 0 = Megatron's
  // default, the attention core alone. Read through recomputes().
  unsigned recompute_modules = 0;
  // Whether the backward replays `m`: recompute selective and `m` chosen (or, with no choice
  // made, `m` the attention core).
  bool recomputes(RecomputeModule m) const {
    if (recompute != Recompute::kSelective) return false;
    const unsigned chosen = recompute_modules != 0 ? recompute_modules : 1u;
    return (chosen >> static_cast<int>(m)) & 1u;
  }
  bool distributed_optimizer = false;
  // ZeRO over the DP group (Rajbhandari et al. 2020): 1 shards the optimizer states (as
  // distributed_optimizer does), 2 also the gradients, 3 also the weights.
  int zero_stage = 0;
  // Gradients reduced (and, sharded, kept) in fp32 rather than the half precision they are
  // computed in: Megatron's --accumulate-allreduce-grads-in-fp32 (on with bf16), FSDP's
  // reduce_dtype (fp32 in Composer's DEFAULT mixed precision, bf16 in PURE). Not given: fp32
  // unless training.precision is fp16 (gradient_bytes_per_element).
  bool grad_reduce_in_fp32 = true;
  bool grad_reduce_in_fp32_given = false;
  Schedule schedule = Schedule::kOneFOneB;
  // Expert parallelism: the routed experts are split over `ep` ranks; expert layers are laid out
  // as etp × ep × edp over the tp × cp × dp ranks of a stage (Megatron-Core's MoE folding), so
  // ep·etp must divide tp·cp·dp. etp 0 = tp.
  int ep = 1;
  int etp = 0;
  // Context parallelism: the sequence is split over `cp` ranks (GPUs = tp·cp·pp·dp).
  int cp = 1;
  ContextParallelKind cp_kind = ContextParallelKind::kRing;
  // Overlap switches (docs/workload.md "Overlap"): TP collectives pipelined with their GEMMs in
  // chunks (Transformer Engine's userbuffers), the DP parameter all-gather overlapped with the
  // next forward (Megatron --overlap-param-gather), PP send/recv on their own stream
  // (--overlap-p2p-comm), and the EP all-to-all of one micro-batch with the compute of another
  // (DualPipe does this by construction; with 1F1B or interleaved, overlap_moe_comm: Megatron's
  // --overlap-moe-expert-parallel-comm, its combined 1F1B schedule, one more warm-up forward
  // and each steady-state forward run with the next backward as one overlapped pair).
  bool tp_comm_overlap = false;
  bool overlap_moe_comm = false;
  bool overlap_param_gather = false;
  bool overlap_p2p = false;
  bool overlap_grad_reduce = false;
  // Megatron's DDP gradient (and parameter all-gather) bucket; 0 = Megatron-Core's default,
  // max(40M, 1M·dp·cp) parameters at the gradient's width (grad_bucket_parameters(),
  // workload/generator.h).
  Bytes grad_bucket_size;
  // Activation offloading to host memory (Megatron-Core --cpu-offloading-num-layers with
  // Transformer Engine's offload context): the saved activations of the first `offload_layers`
  // layers go to the host during the forward and come back before their backward, on a copy
  // stream (docs/memory.md, docs/workload.md "Activation offloading"). Megatron's rules: fewer
  // than the model's layers, PP 1, no recompute, no CUDA graphs.
  int offload_layers = 0;
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

// A GPU that runs its kernels `factor` times as long as its peers within [from, until) of the
// iteration: a thermally throttled, power-capped or otherwise degraded GPU (a straggler). The
// kernel's start decides. Communication and host work are not slowed.
struct SlowRank {
  int rank = 0;  // the GPU's global rank (Megatron's order, parallel/rank_layout.h)
  double factor = 1;
  SimTime from;
  SimTime until = SimTime::max();
};

// A network link that carries `capacity` times its line rate within [from, until) of the
// iteration: a link that degraded (a port that fell back to a lower speed, a flapping cable,
// a lane down) or one shared with traffic outside the job. Only the flow network has links.
struct DegradedLink {
  // What the link is, by the topology's node names (network/topology.h find_channels):
  // "nic3.5-leaf0.5" both directions of that link, "nic3.5>leaf0.5" one direction, "leaf0.5"
  // every link of that node.
  std::string link;
  double capacity = 1;  // fraction of line rate, (0, 1]
  SimTime from;
  SimTime until = SimTime::max();
};

// The network backends a scenario can choose (simulation.network; network/backends.h builds
// them).
enum class NetworkKind : uint8_t {
  kAnalytical,  // closed-form bandwidths, no contention between traffic kinds
  kFlow,        // the analytical figures for planning, plus a flow-level fabric
  kPacket,      // the analytical figures for planning, plus a packet-level fabric
};
inline constexpr NetworkKind kNetworkKinds[] = {NetworkKind::kAnalytical, NetworkKind::kFlow,
                                                NetworkKind::kPacket};
// "analytical", "flow", "packet".
const char* to_string(NetworkKind kind);

// How compute kernels are timed (the `compute` section): the calibrated roofline, or a kernel
// table measured on the GPU with the roofline for what it does not cover
// (compute/measured_model.h).
enum class ComputeModelKind : uint8_t { kRoofline, kMeasured };
const char* to_string(ComputeModelKind k);

struct ComputeConfig {
  ComputeModelKind model = ComputeModelKind::kRoofline;
  std::string kernel_table;                  // the file, as resolved (compute.kernel_table)
  std::shared_ptr<const KernelTable> table;  // its rows; set exactly when model is kMeasured
};

struct SimulationConfig {
  std::string network = "analytical";
  uint64_t seed = 0;
  std::vector<SlowRank> slow_ranks;               // simulation.slow_ranks
  std::vector<DegradedLink> degraded_links;       // simulation.degraded_links (flow network only)
  PacketNetworkConfig packet;                     // simulation.packet (packet network only)
  FlowRouting flow_routing = FlowRouting::kEcmp;  // simulation.flow.routing (flow network only)
};

struct Scenario {
  std::string source;  // file the scenario came from ("<default>", "<flags>")
  // What the loader decided for the user or thinks they should know (a switch turned off as
  // Megatron would, a default that flatters the result, a value past the model's limits): one
  // sentence each, printed by the summary and in the JSON report's "notes".
  std::vector<std::string> notes;
  // What makes the result look better than a real job would, or runs the model past what it was
  // built for (a sequence beyond its max_seq_len, the balanced MoE router left as the default, TP
  // across nodes): one sentence each, printed on stderr by the CLI and in the JSON's "warnings".
  std::vector<std::string> warnings;
  // The job-defining keys (training.*, parallelism.*, model.moe.routing, simulation.network) the
  // scenario and --set left out, with the value the loader took for each: the summary names
  // them, the JSON lists them under "defaults".
  std::vector<std::pair<std::string, std::string>> defaults;
  ModelConfig model;
  ClusterConfig cluster;
  TrainingConfig training;
  ParallelismConfig parallelism;
  CollectivesConfig collectives;
  ComputeConfig compute;
  SimulationConfig simulation;

  int expert_tp() const { return parallelism.etp > 0 ? parallelism.etp : parallelism.tp; }
  // Expert data parallelism: replicas of each expert shard across the stage's tp·cp·dp ranks.
  int expert_dp() const {
    return parallelism.tp * parallelism.cp * parallelism.dp / (parallelism.ep * expert_tp());
  }

  int num_microbatches() const {
    return training.global_batch / (training.micro_batch * parallelism.dp);
  }
};

// Transformer layers of each pipeline stage (all its model chunks together), in order.
// REQUIRES: validate_scenario(s).ok().
std::vector<int> stage_layers(const Scenario& s);

// Transformer layers of each model chunk, in model order: chunk k = c·pp + stage is stage
// `stage`'s c-th virtual stage (pp·vpp entries; vpp 1: stage_layers). A stage whose layers do
// not divide by vpp gives its extra layers to its last chunks (the first stage, so its first
// chunk, which holds the embedding, is the lighter) or its first chunks (every other stage, so
// the last stage's last chunk, which holds the loss head, is). REQUIRES: validate_scenario(s).
std::vector<int> chunk_layers(const Scenario& s);

// Checks the cross-field rules (divisibility, GPU count = tp·pp·dp, ...). Returns the first
// violation as "key.path: value: what was expected".
Status validate_scenario(const Scenario& s);

// The model-only rules of hybrid models (model.hybrid_pattern, model.mamba): one pattern
// character per layer, each one of M * - E; model.mamba exactly when there is an M (its heads
// a multiple of its groups), model.moe exactly when there is an E (without dense_layers or
// layer_interval, which the pattern replaces). Returns the first violation as "key: value:
// what was expected"; OK for a model without pattern and without model.mamba.
Status validate_hybrid_model(const ModelConfig& m);

const char* to_string(Activation a);
const char* to_string(Norm n);
const char* to_string(PositionEmbedding p);
const char* to_string(Precision p);
const char* to_string(Fp8Recipe r);
const char* to_string(Recompute r);
const char* to_string(RecomputeModule m);
// The chosen modules in RecomputeModule order, comma-separated ("core_attn" when none is).
std::string recompute_modules_string(const ParallelismConfig& p);
// "none", "full", or "selective (core_attn,moe_act)": the recompute a summary states.
std::string recompute_description(const ParallelismConfig& p);
const char* to_string(Schedule s);
const char* to_string(MoeRouting r);
const char* to_string(GpuArchitecture a);
const char* to_string(ContextParallelKind k);

}  // namespace preflight
