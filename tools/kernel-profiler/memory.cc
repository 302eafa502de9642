// Memory rows: the achieved HBM bandwidth of a representative kernel of the row's family at the
// row's byte count. A memory row of the simulator stands for a memory-bound framework kernel
// (a norm, an activation, a cast, a residual add) by its name and the HBM bytes it reads and
// writes; the profiler cannot run the framework's own kernel, so it runs a plain vectorized kernel
// of the same shape of traffic and reports its time for those bytes:
//   names containing "norm" or "ln"           an RMSNorm-like row kernel: read x, write y, rows of
//                                             `hidden` = 4096 or the divisor of the element count
//                                             nearest to it (bytes / 2 read, bytes / 2 written);
//   names containing "act", "swiglu", "gelu"  an elementwise kernel of two inputs and one output
//                                             (SwiGLU: bytes / 3 each);
//   anything else (a "*" row too)             a copy with a scale (bytes / 2 read, bytes / 2
//                                             written).
// The result is what a well-written kernel of that family achieves, not the exact framework
// kernel: a fused kernel that does more arithmetic per byte, or a poorly vectorized one, differs.
//
// The kernels read HBM, not L2: the loop rotates over enough copies of the buffers that their
// total reaches twice the L2 cache, so a copy is evicted before it is used again.
#include <algorithm>
#include <cctype>
#include <cstdint>

#include "kernels.h"
#include "profiler.h"

namespace preflight::kp {
namespace {

enum class Family { kNorm, kActivation, kCopy };

Family family_of(const std::string& name) {
  std::string n = name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("norm") || has("ln")) return Family::kNorm;
  if (has("act") || has("swiglu") || has("gelu")) return Family::kActivation;
  return Family::kCopy;
}

// The divisor of `count` nearest to 4096 (a transformer's hidden size): rows x hidden = count.
int64_t hidden_for(int64_t count) {
  constexpr int64_t kHidden = 4096;
  if (count <= kHidden) return count;
  for (int64_t delta = 0; delta < kHidden; ++delta) {
    if (count % (kHidden - delta) == 0) return kHidden - delta;
    if (count % (kHidden + delta) == 0) return kHidden + delta;
  }
  return 1;
}

int64_t align_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

}  // namespace

Measurement measure_memory(const Context& ctx, const Row& row) {
  const bool half = row.dtype == "fp16";
  constexpr int64_t kElem = 2;  // bf16 and fp16
  const Family family = family_of(row.name);
  const int tensors = family == Family::kActivation ? 3 : 2;
  // Elements per tensor; a remainder of bytes that is not a whole element per tensor is dropped.
  const int64_t count = row.bytes / (tensors * kElem);
  if (count == 0) {
    throw Skip{"fewer bytes than one element per tensor of the kernel (" + std::to_string(tensors) +
               " tensors of 2-byte elements)"};
  }
  const int64_t tensor_bytes = align_up(count * kElem, 256);
  const int64_t set_bytes = tensors * tensor_bytes;

  // Copies of the buffers rotated through the loop: at least two L2 caches' worth in all.
  const int64_t l2 = std::max(ctx.prop.l2CacheSize, 1);
  const int64_t sets = std::clamp<int64_t>(2 * l2 / set_bytes + 1, 1, 1024);
  const int64_t hidden = family == Family::kNorm ? hidden_for(count) : 0;
  require_device_memory(static_cast<double>(sets) * set_bytes + hidden * kElem);

  DeviceBuffer buffers(static_cast<size_t>(sets * set_bytes));
  DeviceBuffer weight(static_cast<size_t>(hidden * kElem));
  const Elem elem = half ? Elem::kFp16 : Elem::kBf16;
  KP_CUDA(fill_random(buffers.get(), sets * set_bytes / kElem, elem, 3, ctx.stream));
  KP_CUDA(fill_random(weight.get(), hidden, elem, 4, ctx.stream));

  char* base = static_cast<char*>(buffers.get());
  auto launch = [&](int i) {
    char* set = base + (i % sets) * set_bytes;
    char* t1 = set + tensor_bytes;
    char* t2 = set + 2 * tensor_bytes;
    switch (family) {
      case Family::kNorm:
        KP_CUDA(launch_rmsnorm(set, weight.get(), t1, count / hidden, hidden, half, ctx.stream));
        break;
      case Family::kActivation:
        KP_CUDA(launch_swiglu(set, t1, t2, count, half, ctx.stream));
        break;
      case Family::kCopy:
        KP_CUDA(launch_scale_copy(set, t1, count, half, ctx.stream));
        break;
    }
  };
  return time_launches(ctx, launch);
}

}  // namespace preflight::kp
