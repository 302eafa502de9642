#include "workload/layer_shape.h"

#include <algorithm>
#include <cmath>

#include "model/transformer.h"

namespace preflight {

namespace {

// The fraction of a NIC's line rate DeepEP's internode dispatch and combine kernels carry from
// four nodes on (DeepEP's README, internode table, corrected to NIC bytes: make_layer_shape).
constexpr double kFlexRdmaEfficiency = 0.88;

// HybridEP's across two nodes: its own H100 table (DeepEP docs/README_Hybrid-EP.md, 400 Gb/s
// per GPU, 16 SMs as Megatron's moe_hybridep_num_sms, kernel time only, 4,096 tokens of hidden
// 7,168, top-8) gives 16 ranks 71.71 GB/s of BF16 dispatch and 62.95 GB/s of combine in
// algorithm bandwidth, which counts the tokens a node keeps (half of them at two nodes), so the
// NICs carried 35.9 and 31.5 GB/s: 0.717 and 0.630 of the line rate, 0.671 over a dispatch and
// its combine (harmonic mean: equal bytes each way). At 32 and 64 ranks (4 and 8 nodes) the
// same table gives 0.86-0.87, DeepEP's figure above.
constexpr double kHybridEpTwoNodeEfficiency = 0.671;

// The framework ops of Megatron-Core's MoE layer (0.13-0.16, Transformer Engine 2.x, dropless,
// softmax top-k, TE's fused permutation) that the modelled kernels leave out, counted in
// megatron/core/transformer/moe/ (router.py TopKRouter, moe_utils.py, token_dispatcher.py) and
// Transformer Engine's pytorch/permutation.py; docs/moe.md "Host work of the MoE layer".
//  * Score function and top-k: the unfused router runs topk, softmax and the routing map's
//    zeros/scatter/casts (10 ops, the model times one top-k kernel: 9 more); the fused one is TE's
//    fused_topk_with_score_function (none more).
//  * Auxiliary load-balancing loss (a coefficient above 0): the unfused router's scores (softmax,
//    topk, scatter, casts), the per-expert counts, the loss and its logging, 14 ops; fused, the
//    fused scores, the counts, TE's fused aux-loss kernel and the logging, 5.
//  * The all-to-all dispatcher's preprocess: the token counts (4 sums and a slice copy), their
//    all-gather over the TP×EP ranks, and four copies of split sizes to the host before the
//    sync, 11; with EP 1 the sums and copy only, 6. The flex dispatcher's metadata (top-k, the
//    dispatch layout and notify kernels), 3, and after the dispatch its routing map's conversion
//    to a multi-hot map (fused_indices_to_multihot), 1.
//  * TE's fused permutation: three passes building the row-id map and the permute kernel (the
//    model times one: 3 more); the all-to-all dispatcher's sort of the received chunks (TE's
//    chunk-sort map and sort kernels, one modelled: 1 more) and the unsort (the same plus the
//    transpose copy of the counts: 2 more).
//  * Backward: the unfused router's autograd (the aux-loss scaler, the losses' and softmaxes'
//    gradients, scatter and top-k gradients, casts around the gating GEMMs, the router weight's
//    gradient hook), about 18 ops where the model times 3: 15 more; fused, 13: 10 more.
// One blocking host sync per layer and micro-batch (the dispatcher's) is modelled apart.
void moe_framework_ops(MoeRouterOps router, bool aux_loss, LayerShape* shape) {
  LayerShape& x = *shape;
  if (router == MoeRouterOps::kNone) return;
  const bool fused = router == MoeRouterOps::kFused;
  int routing = fused ? 0 : 9;
  if (aux_loss) routing += fused ? 5 : 14;
  int preprocess = 0;
  if (x.flex_dispatcher) {
    preprocess = 3;
  } else if (!x.allgather_dispatcher) {
    preprocess = x.ep > 1 ? 11 : 6;
  }
  x.moe_ops_router = routing;
  x.moe_ops_preprocess = preprocess;
  x.moe_ops_before_sync = routing + preprocess;
  x.moe_ops_permute = x.flex_dispatcher ? 3 + 1 : 3;
  x.moe_ops_sort = 1;  // where the dispatcher sorts (moe_ops.cc)
  x.moe_ops_unsort = 2;
  x.moe_ops_backward = fused ? 10 : 15;
}

}  // namespace

double expected_groups_reached(int64_t experts, int64_t groups, int64_t k) {
  if (groups <= 1 || experts <= 0 || k <= 0) return std::max<int64_t>(1, std::min(groups, k));
  const double e = static_cast<double>(experts);
  const double outside = e - e / static_cast<double>(groups);  // experts not in one group
  double missed = 1;  // P(none of the k distinct experts is in the group)
  for (int64_t i = 0; i < k; ++i) {
    const double d = static_cast<double>(i);
    missed *= std::max(0.0, (outside - d) / (e - d));
  }
  return static_cast<double>(groups) * (1 - missed);
}

LayerShape make_layer_shape(const Scenario& sc) {
  const ModelConfig& m = sc.model;
  LayerShape x;
  x.b = sc.training.micro_batch;
  x.s = sc.training.seq_len;
  x.h = m.hidden;
  x.tokens = x.b * x.s;
  x.tp = sc.parallelism.tp;
  x.heads_per_rank = m.heads / x.tp;
  x.kv_heads_per_rank = std::max<int64_t>(1, m.kv_heads / x.tp);
  x.head_dim = m.head_dim();
  x.qkv_out = (x.heads_per_rank + 2 * x.kv_heads_per_rank) * x.head_dim;
  x.ffn_per_rank = m.ffn_hidden / x.tp;
  x.swiglu = m.activation == Activation::kSwiglu;
  x.clamped_glu = x.swiglu && m.activation_clamp > 0;
  x.fc1_out = x.swiglu ? 2 * x.ffn_per_rank : x.ffn_per_rank;
  x.vocab_per_rank = padded_vocab(m, sc.parallelism.tp) / x.tp;
  x.sequence_parallel = sc.parallelism.sequence_parallel;
  x.elementwise_tokens = x.sequence_parallel ? x.tokens / x.tp : x.tokens;
  x.act_bytes = 2;
  x.gemm_bytes = sc.training.precision == Precision::kFp8 ? 1 : 2;
  x.flash = sc.training.flash_attention;
  x.flash_unpad = x.flash && sc.training.stack.flash_attention_unpad;
  x.dropout = m.dropout;
  x.bias = m.linear_bias;
  x.graph_scope = sc.training.cuda_graph_scope;
  x.rope = m.position_embedding == PositionEmbedding::kRope;
  x.rope_unfused = x.rope && m.rope_mscale != 1.0 && !sc.training.stack.fused_scaled_rope;
  x.mamba_megatron = sc.training.stack.mamba_mixer == MambaMixer::kMegatron;
  x.qk_norm = m.qk_layernorm;
  x.te_cross_entropy = sc.training.stack.te_cross_entropy;
  x.learned_positions = m.position_embedding == PositionEmbedding::kLearned;
  x.layernorm = m.norm == Norm::kLayerNorm;
  // Attention core and context parallelism.
  const ParallelismConfig& par = sc.parallelism;
  x.cp = par.cp;
  x.cp_a2a = par.cp > 1 && par.cp_kind == ContextParallelKind::kAllToAll;
  if (x.cp > 1) {
    x.tokens = x.b * x.s / x.cp;
    x.elementwise_tokens = x.sequence_parallel ? x.tokens / x.tp : x.tokens;
  }
  x.q_len = x.cp > 1 && !x.cp_a2a ? x.s / x.cp : x.s;
  x.rope_positions = x.s / x.cp;
  x.keys2 = static_cast<double>(x.s);
  // Packed samples: a query attends within its own document, Σs²/Σs on average (×2 for keys2).
  const int packed = sc.training.packed_sequence_length;
  if (packed > 0 && packed < x.s) x.keys2 = static_cast<double>(packed);
  // Packed documents are tiled each on its own (the varlen kernels' cu_seqlens), taken at their
  // weighted mean length.
  x.tile_keys2 = tiled_keys2(packed > 0 && packed < x.s ? packed : x.s, 0);
  x.qk_dim = x.head_dim;
  x.v_dim = x.head_dim;
  if (m.mla.enabled()) {
    x.q_lora = m.mla.q_lora_rank;
    x.kv_lora = m.mla.kv_lora_rank;
    x.rope_dim = m.mla.qk_rope_head_dim;
    x.qk_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    x.v_dim = m.mla.v_head_dim;
    x.kv_heads_per_rank = x.heads_per_rank;
    x.qkv_out = x.heads_per_rank * (2 * x.qk_dim + x.v_dim);
  }
  if (m.csa.enabled()) {
    // Heads, groups and the indexer's heads split over TP (validate_scenario checks they
    // divide); the latents and the K/V projection are duplicated, as MLA's down-projections are.
    const CsaConfig& a = m.csa;
    x.csa = true;
    x.q_lora = a.q_lora_rank;
    x.rope_dim = a.rope_dim;
    x.o_lora = a.o_lora_rank;
    x.o_groups = a.o_groups / x.tp;
    x.index_heads = std::max<int64_t>(1, a.index_heads / x.tp);
    x.index_dim = a.index_head_dim;
  }
  x.hc_streams = m.hyper_connections > 1 ? m.hyper_connections : 0;
  // Experts.
  if (m.moe.enabled()) {
    x.experts = m.moe.experts;
    x.top_k = m.moe.top_k;
    x.ep = par.ep;
    x.etp = sc.expert_tp();
    x.local_experts = x.experts / x.ep;
    x.expert_ffn_per_rank = m.moe.expert_ffn_hidden / x.etp;
    x.expert_fc1_out = x.swiglu ? 2 * x.expert_ffn_per_rank : x.expert_ffn_per_rank;
    x.shared_ffn_per_rank =
        static_cast<int64_t>(m.moe.shared_experts) * m.moe.shared_expert_ffn_hidden / x.tp;
    x.expert_h = m.moe.expert_width(m.hidden);
    x.moe_latent = m.moe.latent_size;
    x.allgather_dispatcher = m.moe.allgather_dispatcher;
    x.flex_dispatcher = m.moe.flex_dispatcher;
    x.flex_sms = m.moe.flex_dispatcher ? m.moe.flex_dispatcher_sms() : 0;
    // Per-expert host cost of a grouped GEMM: none when fused or under CUDA graphs; else the
    // stack's expert_launch_overhead per local expert, or without one a whole launch each.
    const StackConfig& stack = sc.training.stack;
    const int64_t local = std::max<int64_t>(1, x.local_experts);
    x.expert_gemm_separate = !stack.fused_grouped_gemm;
    x.fused_expert_mlp = stack.fused_grouped_gemm;
    if (!stack.fused_grouped_gemm && !sc.training.cuda_graphs) {
      if (stack.expert_launch_overhead_given) {
        x.expert_gemm_host = stack.expert_launch_overhead * local;
      } else {
        x.expert_gemm_launches = static_cast<int>(local);
      }
    }
    // Megatron-Core's dropless dispatchers wait on the host for the token counts, each MoE
    // layer's forward: the alltoall dispatcher copies tokens_per_expert to the host (.tolist())
    // for the all-to-all's split sizes; the flex dispatcher's HybridEP path reads the number of
    // permuted tokens to allocate its output when no bound is given ("None means no up-bound,
    // will cause a CPU sync", _HybridEPManager), DeepEP's normal kernels wait for the received
    // counts, and Transformer Engine's grouped GEMM takes its splits as a host list. Not with
    // EP 1, the all-gather dispatcher or CUDA graphs (a captured dispatch must be sync-free).
    x.dispatch_host_sync = x.ep > 1 && !x.allgather_dispatcher && !sc.training.cuda_graphs;
    moe_framework_ops(stack.moe_router, m.moe.router_aux_loss > 0, &x);
    // Node-limited routing with one copy per destination node: a token reaches M = group_topk
    // of the EP group's N nodes, M·(N−1)/N of them remote on average under balanced routing,
    // where a copy per routed expert sends k·(N−1)/N: the cross-node volume scales by M/k
    // (capped at 1). N as place_group (network/placement.h) counts it: members stride etp.
    const int gpn = sc.cluster.gpus_per_node;
    const int64_t per_node =
        x.etp >= gpn || gpn % x.etp != 0 ? 1 : std::min<int64_t>(x.ep, gpn / x.etp);
    const int64_t ep_nodes = (x.ep + per_node - 1) / per_node;
    if (m.moe.group_topk > 0 && ep_nodes > 1) {
      x.dispatch_copy_scale =
          std::min(1.0, static_cast<double>(std::min<int64_t>(m.moe.group_topk, ep_nodes)) /
                            static_cast<double>(x.top_k));
    }
    // The flex dispatcher (DeepEP, HybridEP) sends a token once to each rank that holds any of
    // its experts, and once over the network to each node (forwarded over NVLink there); it
    // combines after each rank has summed its own experts' outputs (DeepEP's dispatch layout:
    // num_tokens_per_rank, is_token_in_rank). The alltoall dispatcher sends one copy per routed
    // expert. Under balanced routing a token's k distinct experts reach on average
    // G·(1 − C(E − E/G, k)/C(E, k)) of G equal groups: ranks inside one node, nodes (at most
    // group_topk) once the group spans nodes.
    if (x.flex_dispatcher && x.top_k > 0) {
      const int64_t groups = ep_nodes > 1 ? ep_nodes : x.ep;
      double reached = expected_groups_reached(x.experts, groups, x.top_k);
      if (m.moe.group_topk > 0 && ep_nodes > 1) {
        reached = std::min(reached, static_cast<double>(m.moe.group_topk));
      }
      x.dispatch_copy_scale =
          std::min(x.dispatch_copy_scale, reached / static_cast<double>(x.top_k));
      // Across nodes the flex dispatcher moves its tokens with its own RDMA kernels, not NCCL's:
      // DeepEP's internode table (H800, one 400 Gb/s NIC per GPU: 58 and 51 GB/s at EP 32 and
      // 64) counts the tokens a node keeps as RDMA bytes (DeepEP issues #51, #141), so its NICs
      // carried 43.5 and 44.6 GB/s, kFlexRdmaEfficiency of the line rate, where the cluster's
      // links run at nic_efficiency (NCCL's rate): the dispatch's wire bytes grow by their ratio.
      // HybridEP carries less at two nodes (kHybridEpTwoNodeEfficiency).
      if (ep_nodes > 1) {
        const double rdma = ep_nodes == 2 && m.moe.flex_backend == MoeConfig::FlexBackend::kHybridEp
                                ? kHybridEpTwoNodeEfficiency
                                : kFlexRdmaEfficiency;
        x.dispatch_copy_scale *= std::max(1.0, sc.cluster.nic_efficiency / rdma);
      }
    }
    // FP8 dispatch: 1 byte per element and a 4-byte scale per 128, over act_bytes.
    if (m.moe.fp8_dispatch) x.dispatch_fp8_scale = (1.0 + 4.0 / 128.0) / x.act_bytes;
  }
  // Mamba-2 mixer: heads and groups split over TP (validate_scenario checks they divide).
  if (m.mamba.enabled()) {
    const MambaConfig& a = m.mamba;
    x.mamba_heads = a.heads / x.tp;
    x.mamba_groups = a.groups / x.tp;
    x.mamba_head_dim = a.head_dim;
    x.mamba_state = a.state;
    x.mamba_chunk = std::min<int64_t>(a.chunk, x.s);
    x.mamba_conv_kernel = a.conv_kernel;
    x.mamba_inner = x.mamba_heads * x.mamba_head_dim;
    x.mamba_conv_dim = x.mamba_inner + 2 * x.mamba_groups * x.mamba_state;
    x.mamba_in_proj = 2 * x.mamba_inner + 2 * x.mamba_groups * x.mamba_state + x.mamba_heads;
  }
  return x;
}

double tiled_keys2(int64_t len, int64_t window) {
  const int64_t t = kAttentionTile;
  const int64_t n = std::max<int64_t>(1, (len + t - 1) / t);
  const int64_t m = window > 0 ? std::min(n, 1 + (window - 1 + t - 1) / t) : n;
  // Σᵢ min(i + 1, m) over i < n: 1 + 2 + … + m, then m for each of the n − m tiles after.
  const double tiles = static_cast<double>(m) * static_cast<double>(m + 1) / 2 +
                       static_cast<double>(n - m) * static_cast<double>(m);
  return 2.0 * static_cast<double>(t) * tiles / static_cast<double>(n);
}

LayerShape make_layer_shape(const Scenario& sc, int layer) {
  LayerShape x = make_layer_shape(sc);
  const ModelConfig& m = sc.model;
  if (m.csa.enabled()) {
    // The window's keys in whole tiles (tiled_keys2), the kept compressed entries gathered
    // (sparse) on top; context parallelism is rejected with model.csa.
    const int s = static_cast<int>(x.s);
    x.csa_ratio = m.csa.ratio(layer);
    x.csa_indexed = m.csa.indexed(layer);
    x.csa_overlap = m.csa.overlap(layer);
    x.compressed_keys = csa_compressed_keys(m, layer, s, /*causal=*/true);
    x.index_candidates = csa_index_candidates(m, layer, s, /*causal=*/true);
    x.keys2 = 2 * (csa_window_keys(m, s, /*causal=*/true) + x.compressed_keys);
    x.tile_keys2 = tiled_keys2(x.s, m.sliding_window) + 2 * x.compressed_keys;
    return x;
  }
  const int n = m.sliding_window_pattern;
  const bool windowed = m.sliding_window > 0 && (n == 0 || (layer + 1) % n != 0);
  if (windowed && m.sliding_window < x.s) {
    // Mean keys per causal query with a window of w: (w(w+1)/2 + (s−w)·w)/s = w − w(w−1)/(2s).
    const double w = m.sliding_window;
    x.keys2 = std::min(x.keys2, 2 * w - w * (w - 1) / static_cast<double>(x.s));
    x.tile_keys2 = std::min(x.tile_keys2, tiled_keys2(x.s, m.sliding_window));
  }
  return x;
}

}  // namespace preflight
