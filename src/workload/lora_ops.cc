#include "workload/lora_ops.h"

#include <string>

#include "workload/layer_ops.h"

namespace preflight {
namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The LoRA target a base GEMM belongs to ("qkv.fwd" → "qkv"), or "" when it is not one.
std::string target_of(const LoraConfig& lora, const std::string& name) {
  for (const char* t : {"qkv", "proj", "fc1", "fc2"}) {
    const std::string base = std::string(t) + ".";
    if (starts_with(name, base.c_str()) && lora.targets_layer(t)) return t;
  }
  return "";
}

}  // namespace

void apply_lora(const Scenario& s, std::vector<Op>* ops) {
  const LoraConfig& lora = s.training.lora;
  if (!lora.enabled()) return;
  const int64_t r = lora.rank;
  std::vector<Op> out;
  out.reserve(ops->size() * 2);
  for (Op& op : *ops) {
    const std::string& name = op.name;
    if (starts_with(name, "lora.")) {  // already applied
      out.push_back(std::move(op));
      continue;
    }
    if (op.type == OpType::kGemm && ends_with(name, ".wgrad")) continue;  // frozen weight
    if (name == "embedding.bwd") continue;                                // frozen embedding
    const std::string t = op.type == OpType::kGemm ? target_of(lora, name) : "";
    const bool forward = ends_with(name, ".fwd") || ends_with(name, ".fwd.recompute");
    const bool dgrad = ends_with(name, ".dgrad");
    const Op base = op;
    out.push_back(std::move(op));
    if (t.empty() || (!forward && !dgrad)) continue;
    const std::string p = "lora." + t;
    if (forward) {
      // Base: C[T×d_out] = X[T×d_in]·W (m = T, n = d_out, k = d_in).
      const int64_t tokens = base.m, d_out = base.n, d_in = base.k;
      const std::string sfx = ends_with(name, ".recompute") ? ".fwd.recompute" : ".fwd";
      out.push_back(gemm_op((p + ".a" + sfx).c_str(), tokens, r, d_in, base.batch, 2));
      out.push_back(gemm_op((p + ".b" + sfx).c_str(), tokens, d_out, r, base.batch, 2, true));
    } else {
      // Base input gradient: dX[T×d_in] = dY[T×d_out]·Wᵀ (m = T, n = d_in, k = d_out).
      const int64_t tokens = base.m, d_in = base.n, d_out = base.k;
      out.push_back(gemm_op((p + ".b.dgrad").c_str(), tokens, r, d_out, base.batch, 2));
      out.push_back(gemm_op((p + ".b.wgrad").c_str(), d_out, r, tokens, base.batch, 2, true));
      out.push_back(gemm_op((p + ".a.dgrad").c_str(), tokens, d_in, r, base.batch, 2, true));
      out.push_back(gemm_op((p + ".a.wgrad").c_str(), r, d_in, tokens, base.batch, 2, true));
    }
  }
  *ops = std::move(out);
}

}  // namespace preflight
