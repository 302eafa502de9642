// Decomposition of one collective into per-step point-to-point transfers: the messages the flow-
// and packet-level network backends carry. decompose() is a pure, deterministic function of
// (layout, request); nothing is shared between calls. Ranks are the group's ranks 0..n-1; where
// they sit (node, GPU, NIC) comes from GroupLayout. Facts from shared/reference/nccl.md: §7 ring,
// §8 tree, §9 NVLS, §10 point-to-point and all-to-all, §11 PXN.
//
// Byte layout. S = request.bytes in the nccl-tests convention (all-reduce, broadcast, reduce:
// the buffer; all-gather: the output buffer; reduce-scatter: the input buffer; all-to-all: one
// rank's send buffer; send/recv: the message). "split(x, k)" cuts x bytes into k parts whose sizes
// differ by at most one byte, the first x mod k parts taking the extra byte; no byte is lost.
//  - Ring and NVLS (AR, AG, RS): slice j = split(S, n)[j] belongs to rank j (its AG input, its
//    RS output); channel c carries part c of every slice: piece(j, c) = split(slice j, C)[c].
//  - Ring broadcast/reduce and tree: channel c carries split(S, C)[c], streamed in pipeline
//    chunks of request.chunk bytes (the last one shorter).
//  - All-to-all: rank i sends block j = split(S, n)[j] of its send buffer to rank j; a message of
//    m bytes (a block, or send/recv's S) is spread over min(C, max(1, m)) channels, split evenly.
//  Transfer.offset locates each transfer's payload in that buffer. A channel that carries no byte
//  is left out; inside a used channel every step is kept, so a transfer may carry 0 bytes (a
//  step's synchronisation message) when S < n·C. S = 0 gives no transfer.
//
// Placement. Nodes are ordered by their first rank (§7); inside a node ranks go in GPU order.
// GPU l's own NICs: NIC k sits next to GPU ⌊k·G/M⌋ (G GPUs, M NICs per node), so with M ≥ G GPU l
// owns the NICs k with ⌊k·G/M⌋ = l, and with M < G it shares NIC ⌊l·M/G⌋. Ring and tree channel c
// cross nodes on rail k = c mod M (rail-aligned, crossNic 0, §7): on each node the channel's
// "rail GPU" is a member next to NIC k (the ((c div M) mod count)-th such member), or, if the
// node has no member there, its member c mod p (p members), which then uses its own NIC. The
// ring's chain on a node ends at the rail GPU (which sends over the network) and the tree's chain
// starts there (the node's head), so collective hops are always kNic on the sender's own NIC.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "base/units.h"

namespace preflight {

// How a transfer leaves its sender: NVLink inside a node; kNic: the sender's own NIC; kPxn: over
// NVLink to a relay GPU on the sender's node, then out of the relay's NIC (§11).
enum class Route : uint8_t { kNvlink, kNic, kPxn };

struct Transfer {
  int step = 0;     // algorithm step; all transfers of a step may run at once (see decompose())
  int channel = 0;  // 0..channels-1
  int src = 0;      // group ranks, 0..n-1, src != dst
  int dst = 0;
  Bytes offset;  // where the payload starts in the collective's buffer (see the byte layout)
  Bytes bytes;
  Route route = Route::kNvlink;  // kNvlink iff src and dst share a node
  int nic = -1;    // kNic, kPxn: NIC index on the sending node (the rail); -1 for kNvlink
  int relay = -1;  // kPxn: the group rank relaying (src's node, dst's GPU index); else -1

  bool operator==(const Transfer&) const = default;
};

// Where the group's ranks sit. A plain value; validate() names the first broken rule.
struct GroupLayout {
  std::vector<int> node;   // node id of rank r (any id >= 0)
  std::vector<int> local;  // GPU index of rank r on its node, 0..gpus_per_node-1
  int gpus_per_node = 8;
  int nics_per_node = 8;

  int size() const { return static_cast<int>(node.size()); }
  // OK iff node and local have the same size >= 1, gpus_per_node and nics_per_node >= 1, every
  // local index is in range, node ids are >= 0 and no two ranks share a GPU.
  Status validate() const;
  // Whether NIC `nic` is one of GPU `gpu`'s own NICs (see Placement above).
  bool owns_nic(int gpu, int nic) const;
  // The NIC GPU `gpu` uses on channel `channel`: its own NIC, or own NIC channel mod count when
  // it owns several (ncclTopoGetLocalNet, §11). REQUIRES: 0 <= gpu < gpus_per_node, channel >= 0.
  int own_nic(int gpu, int channel) const;
};

enum class DecompAlgo { kRing, kTree, kNvls, kDirect };  // kDirect: send/recv and all-to-all
enum class DecompOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};
const char* to_string(Route r);
const char* to_string(DecompAlgo a);
const char* to_string(DecompOp op);

struct DecompositionRequest {
  DecompOp op = DecompOp::kAllReduce;
  DecompAlgo algo = DecompAlgo::kRing;
  Bytes bytes;       // S, nccl-tests size convention (see the byte layout)
  int channels = 1;  // C, 1..64 (NCCL's MAXCHANNELS, §4.2)
  bool pxn = true;   // route inter-node p2p/all-to-all sends through the destination's rail (§11)
  int root = 0;      // broadcast, reduce: the root; send/recv: the sender
  int peer = 1;      // send/recv: the receiver
  // Pipeline chunk per channel for ring broadcast/reduce and tree (NCCL Simple: 512 KiB, §6).
  Bytes chunk = Bytes::kib(512);
};

// The transfers of one collective, sorted by (step, channel, src, dst, offset).
// Valid (op, algo): ring: all-reduce, all-gather, reduce-scatter, broadcast, reduce; tree:
// all-reduce; NVLS: all-reduce, all-gather, reduce-scatter, all ranks on one node; direct:
// all-to-all, send/recv. Steps and what one rank sends (n ranks, N nodes, C channels):
//  - Ring AR (§7): 2(n−1) steps; at step s every rank sends one piece per channel to its ring
//    successor: steps 0..n−2 reduce-scatter (position i sends the slice of position i−1−s),
//    steps n−1.. all-gather (position i sends the slice of position i−(s−n+1)). AG or RS alone:
//    n−1 steps of that phase. Per rank ≈ 2(n−1)/n·S (AR), (n−1)/n·S (AG, RS).
//  - Ring broadcast / reduce (§7 PipelineFrom/To): per channel a chain along the ring from the
//    root (broadcast) or ending at the root (reduce); chunk k crosses hop h at step k + h.
//  - Tree AR (§8): per channel, double binary tree t = c mod 2 across nodes (heads joined), a
//    chain inside each node from its head; chunk k goes up from a rank of height h (leaves 0) at
//    step k + h, and down from a rank of depth d at step k + H + d (H: the root's height), so the
//    up and down pipelines overlap as in NCCL. Each tree edge carries the channel's bytes once up,
//    once down: 2(n−1)·S in all.
//  - NVLS AR/RS/AG (§9, single node): modelled point to point: rank r sends its piece of slice h
//    to each head h ≠ r (reduce-scatter, step 0), then head h sends slice h to every other rank
//    (all-gather, step 1; step 0 for AG alone). NVSwitch multicast is not modelled: the switch
//    would replicate, here the sender sends each copy.
//  - All-to-all (§10): step d−1 (d = 1..n−1): rank i sends block (i+d) mod n to rank (i+d) mod n.
//    Send/recv: step 0, root → peer.
// Routes: kNvlink inside a node. Across nodes, ring/tree hops are kNic (see Placement). P2P and
// all-to-all (§11): with pxn, if a member on src's node has dst's GPU index and the NIC that GPU
// uses on this channel is not src's own, the transfer is kPxn via that member and its NIC;
// otherwise kNic on src's own NIC (the destination's rail NIC when src owns it).
// Errors (kInvalidArgument): invalid layout; channels outside 1..64; S < 0; chunk < 1; an
// (op, algo) pair not listed above; NVLS across nodes; root (broadcast, reduce, send/recv) or
// peer (send/recv) outside 0..n−1. After validation, a group of one rank, S = 0, or a send to
// oneself (root == peer, a local copy) give an empty vector.
StatusOr<std::vector<Transfer>> decompose(const GroupLayout& g, const DecompositionRequest& r);

// §8: the parent of node `node` in binary tree `tree` (0 or 1) of the double binary tree over
// `nnodes` nodes, or -1 for the root. Tree 0 (root 0): with b the lowest set bit of node, parent
// = (node xor b) or 2b, or node xor b when that is >= nnodes. Tree 1: the mirror image
// (node ↔ nnodes−1−node) for even nnodes, tree 0 shifted by one (node ↔ node−1) for odd.
// REQUIRES: tree in {0, 1}, 0 <= node < nnodes.
int double_binary_tree_parent(int tree, int node, int nnodes);

}  // namespace preflight
