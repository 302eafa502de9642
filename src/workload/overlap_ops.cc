#include "workload/overlap_ops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "base/check.h"
#include "workload/layer_ops.h"
#include "workload/precision_ops.h"

namespace preflight {
namespace {

// GEMMs whose input Transformer Engine all-gathers by ring exchange, and whose output it
// reduce-scatters by pipelined chunks (TE's default userbuffers methods).
constexpr const char* kRingExchange[] = {"qkv.fwd",    "fc1.fwd",   "mamba.in_proj.fwd",
                                         "proj.dgrad", "fc2.dgrad", "mamba.out_proj.dgrad"};
constexpr const char* kPipeline[] = {"proj.fwd", "fc2.fwd", "mamba.out_proj.fwd"};

// The layer-level name of a GEMM: without ".recompute" and an "mtp<d>." prefix.
std::string base_name(std::string n) {
  const std::string recompute = ".recompute";
  if (n.size() > recompute.size() &&
      n.compare(n.size() - recompute.size(), recompute.size(), recompute) == 0) {
    n.resize(n.size() - recompute.size());
  }
  const size_t dot = n.find('.');
  if (n.rfind("mtp", 0) == 0 && dot != std::string::npos && dot > 3 &&
      std::all_of(n.begin() + 3, n.begin() + static_cast<std::ptrdiff_t>(dot),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    n = n.substr(dot + 1);
  }
  return n;
}

template <size_t N>
bool is_one_of(const Op& op, const char* const (&names)[N]) {
  if (op.type != OpType::kGemm) return false;
  const std::string n = base_name(op.name);
  return std::any_of(std::begin(names), std::end(names), [&](const char* x) { return n == x; });
}

bool blocking_tp(const Op& op, CollectiveKind kind) {
  return op.type == OpType::kCollective && op.group == GroupKind::kTensor && !op.async &&
         op.collective == kind;
}

// Host cost of the kernels Transformer Engine's comm-GEMM overlap launches beyond the first
// GEMM chunk and the first transfer: one Python call into TE (the framework op the unsplit GEMM
// and collective stood for, launches as before) runs the rest of the chunks and the
// userbuffers transfers from its C++ loop, at about what TransformerEngine issue #2897 measures
// per GEMM of TE's C++ grouped-GEMM loop on GB200 (8.2-9.4 us: the cuBLAS launch and its
// set-up); nothing under CUDA graphs.
constexpr double kTeLoopLaunchUs = 9;

// Marks `op`, launched from TE's C++ loop after the first of its group, as such.
void launched_by_te(const Scenario& s, Op* op) {
  op->launches = 0;
  op->host_time = s.training.cuda_graphs ? SimTime() : SimTime::microseconds(kTeLoopLaunchUs);
}

// Part i of n of `total`, the parts differing by at most one and adding up to `total`.
int64_t part(int64_t total, int64_t i, int64_t n) { return total * (i + 1) / n - total * i / n; }

// Rows `rows` of `gemm`: FLOPs and activation traffic in proportion, the weight (B operand,
// `weight_bytes`) read whole by every chunk.
Op gemm_chunk(const Op& gemm, int64_t rows, double weight_bytes) {
  Op c = gemm;
  const double f = static_cast<double>(rows) / static_cast<double>(gemm.m);
  c.m = rows;
  c.flops = Flops(gemm.flops.count() * f);
  c.bytes = Bytes(
      std::llround((static_cast<double>(gemm.bytes.count()) - weight_bytes) * f + weight_bytes));
  return c;
}

double weight_bytes(const Scenario& s, const Op& gemm) {
  const double width = gemm.bytes_per_element == 1 ? gemm_operand_bytes(s.training.precision) : 2.0;
  return static_cast<double>(gemm.k) * static_cast<double>(gemm.n) *
         static_cast<double>(gemm.batch) * width;
}

// Ring exchange of all-gather `ag` into `gemm` over t ranks: transfer 1, GEMM chunk 0 on the
// local shard, then GEMM chunk i waiting for block i while block i+1 travels.
void ring_exchange(const Scenario& s, const Op& ag, const Op& gemm, int64_t t,
                   std::vector<Op>& out) {
  const double weight = weight_bytes(s, gemm);
  const std::string name = ag.name + ".overlap";
  auto transfer = [&](int64_t i) {
    Op x = collective_op(name.c_str(), CollectiveKind::kSendRecv, GroupKind::kTensor,
                         Bytes(part(ag.comm_bytes.count(), i, t)));
    x.category = ag.category;
    x.async = true;
    x.comm_chain = i > 1;  // forwards the block that just arrived
    return x;
  };
  out.push_back(transfer(1));
  Op first = gemm_chunk(gemm, part(gemm.m, 0, t), weight);
  out.push_back(first);
  for (int64_t i = 1; i < t; ++i) {
    Op chunk = gemm_chunk(gemm, part(gemm.m, i, t), weight);
    chunk.wait_comm = true;
    launched_by_te(s, &chunk);
    out.push_back(chunk);
    if (i + 1 < t) {
      out.push_back(transfer(i + 1));
      launched_by_te(s, &out.back());
    }
  }
}

// Pipelined chunks of `gemm` followed by collective `coll`: GEMM chunk i, then the collective of
// its rows on the communication stream.
void pipeline(const Scenario& s, const Op& gemm, const Op& coll, int64_t n, std::vector<Op>& out) {
  const double weight = weight_bytes(s, gemm);
  const std::string name = coll.name + ".overlap";
  for (int64_t i = 0; i < n; ++i) {
    Op chunk = gemm_chunk(gemm, part(gemm.m, i, n), weight);
    if (i > 0) {
      chunk.wait_comm = false;
      launched_by_te(s, &chunk);
    }
    out.push_back(chunk);
    Op c = coll;
    c.name = name;
    c.comm_bytes = Bytes(part(coll.comm_bytes.count(), i, n));
    c.async = true;
    c.comm_chain = false;  // needs the chunk just computed
    if (i > 0) launched_by_te(s, &c);
    out.push_back(c);
  }
}

}  // namespace

void apply_tp_comm_overlap(const Scenario& s, std::vector<Op>* ops) {
  PREFLIGHT_CHECK(ops != nullptr);
  const int64_t tp = s.parallelism.tp;
  if (!s.parallelism.tp_comm_overlap || tp <= 1) return;
  std::vector<Op>& in = *ops;
  std::vector<Op> out;
  out.reserve(in.size() * 2);
  for (size_t i = 0; i < in.size(); ++i) {
    const Op& op = in[i];
    if (i + 1 < in.size() && blocking_tp(op, CollectiveKind::kAllGather) &&
        is_one_of(in[i + 1], kRingExchange) && in[i + 1].m >= tp) {
      ring_exchange(s, op, in[i + 1], tp, out);
      ++i;
      continue;
    }
    // A pipelined pair needs a consumer after it to wait for the last chunk's collective.
    if (i + 2 < in.size() && is_one_of(op, kPipeline) &&
        (blocking_tp(in[i + 1], CollectiveKind::kReduceScatter) ||
         blocking_tp(in[i + 1], CollectiveKind::kAllReduce))) {
      const int64_t n = std::min<int64_t>(kTpOverlapPipelineSplits, op.m);
      pipeline(s, op, in[i + 1], n, out);
      in[i + 2].wait_comm = true;
      ++i;
      continue;
    }
    out.push_back(op);
  }
  *ops = std::move(out);
}

}  // namespace preflight
