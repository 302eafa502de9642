#include "collective/decomposition.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace preflight {
namespace {

constexpr int kMaxChannels = 64;

// Part i of split(total, parts): sizes differ by at most one, the first total mod parts larger.
int64_t part_size(int64_t total, int64_t parts, int64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}
int64_t part_offset(int64_t total, int64_t parts, int64_t i) {
  return i * (total / parts) + std::min(i, total % parts);
}

struct Piece {
  int64_t offset = 0;
  int64_t bytes = 0;
};

// The group's ranks grouped by node (nodes in order of their first rank, ranks in GPU order) and
// the route of one hop. Built once per decompose() call.
class Placement {
 public:
  Placement(const GroupLayout& g, int channels) : g_(g) {
    std::map<int, int> index_of_node;
    node_of_rank_.resize(g.size());
    for (int r = 0; r < g.size(); ++r) {
      auto [it, inserted] = index_of_node.emplace(g.node[r], static_cast<int>(nodes_.size()));
      if (inserted) nodes_.emplace_back();
      nodes_[it->second].push_back(r);
      node_of_rank_[r] = it->second;
    }
    for (auto& ranks : nodes_) {
      std::sort(ranks.begin(), ranks.end(), [&](int a, int b) { return g.local[a] < g.local[b]; });
    }
    // rail_[c][i]: position, in nodes_[i], of channel c's rail GPU.
    rail_.assign(channels, std::vector<int>(nodes_.size()));
    const int m = g.nics_per_node;
    for (int c = 0; c < channels; ++c) {
      for (size_t i = 0; i < nodes_.size(); ++i) {
        std::vector<int> candidates;
        for (size_t p = 0; p < nodes_[i].size(); ++p) {
          if (g.owns_nic(g.local[nodes_[i][p]], c % m)) candidates.push_back(static_cast<int>(p));
        }
        rail_[c][i] = candidates.empty()
                          ? c % static_cast<int>(nodes_[i].size())
                          : candidates[(c / m) % static_cast<int>(candidates.size())];
      }
    }
  }

  int num_nodes() const { return static_cast<int>(nodes_.size()); }

  // Node i's members in channel c's chain order: starting after the rail GPU (ring: it is last)
  // or at it (tree: it is first).
  std::vector<int> chain(int c, int i, bool rail_first) const {
    const std::vector<int>& ranks = nodes_[i];
    const int p = static_cast<int>(ranks.size());
    const int start = rail_first ? rail_[c][i] : (rail_[c][i] + 1) % p;
    std::vector<int> out(p);
    for (int k = 0; k < p; ++k) out[k] = ranks[(start + k) % p];
    return out;
  }

  // Channel c's ring: nodes in order, each node's chain ending at its rail GPU.
  std::vector<int> ring(int c) const {
    std::vector<int> out;
    for (int i = 0; i < num_nodes(); ++i) {
      const std::vector<int> ch = chain(c, i, /*rail_first=*/false);
      out.insert(out.end(), ch.begin(), ch.end());
    }
    return out;
  }

  // A ring or tree hop on channel c: NVLink, or the sender's NIC on rail c mod M when it owns it.
  Transfer collective_hop(int step, int c, int src, int dst, Piece piece) const {
    Transfer t = base(step, c, src, dst, piece);
    if (g_.node[src] != g_.node[dst]) {
      t.route = Route::kNic;
      const int rail = c % g_.nics_per_node;
      t.nic = g_.owns_nic(g_.local[src], rail) ? rail : g_.own_nic(g_.local[src], c);
    }
    return t;
  }

  // A point-to-point send on channel c (§11 send/recv NIC choice, PXN level 2).
  Transfer p2p_hop(int step, int c, int src, int dst, Piece piece, bool pxn) const {
    Transfer t = base(step, c, src, dst, piece);
    if (g_.node[src] == g_.node[dst]) return t;
    t.route = Route::kNic;
    t.nic = g_.own_nic(g_.local[src], c);
    if (!pxn) return t;
    const int rail = g_.own_nic(g_.local[dst], c);
    if (g_.owns_nic(g_.local[src], rail)) return t;  // then rail is src's own NIC
    for (int q : nodes_[node_of_rank_[src]]) {
      if (g_.local[q] == g_.local[dst]) {
        t.route = Route::kPxn;
        t.nic = rail;
        t.relay = q;
        break;
      }
    }
    return t;
  }

 private:
  static Transfer base(int step, int c, int src, int dst, Piece piece) {
    Transfer t;
    t.step = step;
    t.channel = c;
    t.src = src;
    t.dst = dst;
    t.offset = Bytes(piece.offset);
    t.bytes = Bytes(piece.bytes);
    return t;
  }

  const GroupLayout& g_;
  std::vector<std::vector<int>> nodes_;
  std::vector<int> node_of_rank_;
  std::vector<std::vector<int>> rail_;
};

// Ring/NVLS layout: part c of rank j's slice.
Piece slice_piece(int64_t s, int n, int channels, int j, int c) {
  const int64_t slice = part_size(s, n, j);
  return {part_offset(s, n, j) + part_offset(slice, channels, c), part_size(slice, channels, c)};
}

int64_t ring_channel_bytes(int64_t s, int n, int channels, int c) {
  int64_t total = 0;
  for (int j = 0; j < n; ++j) total += slice_piece(s, n, channels, j, c).bytes;
  return total;
}

// Broadcast/reduce/tree layout: channel c's contiguous range cut into chunks.
std::vector<Piece> channel_chunks(int64_t s, int channels, int c, int64_t chunk) {
  const int64_t begin = part_offset(s, channels, c);
  const int64_t size = part_size(s, channels, c);
  std::vector<Piece> out;
  for (int64_t off = 0; off < size; off += chunk) {
    out.push_back({begin + off, std::min(chunk, size - off)});
  }
  return out;
}

void ring_collective(const Placement& pl, const DecompositionRequest& r, int n,
                     std::vector<Transfer>& out) {
  const int64_t s = r.bytes.count();
  const bool rs = r.op != DecompOp::kAllGather;
  const bool ag = r.op != DecompOp::kReduceScatter;
  for (int c = 0; c < r.channels; ++c) {
    if (ring_channel_bytes(s, n, r.channels, c) == 0) continue;
    const std::vector<int> ring = pl.ring(c);
    int step = 0;
    auto emit = [&](int shift) {  // position i sends the slice of position i - shift
      for (int i = 0; i < n; ++i) {
        const int owner = ring[((i - shift) % n + n) % n];
        out.push_back(pl.collective_hop(step, c, ring[i], ring[(i + 1) % n],
                                        slice_piece(s, n, r.channels, owner, c)));
      }
      ++step;
    };
    if (rs) {
      for (int k = 0; k < n - 1; ++k) emit(1 + k);
    }
    if (ag) {
      for (int k = 0; k < n - 1; ++k) emit(k);
    }
  }
}

void ring_pipeline(const Placement& pl, const DecompositionRequest& r, int n,
                   std::vector<Transfer>& out) {
  const bool from_root = r.op == DecompOp::kBroadcast;
  for (int c = 0; c < r.channels; ++c) {
    const std::vector<Piece> chunks =
        channel_chunks(r.bytes.count(), r.channels, c, r.chunk.count());
    if (chunks.empty()) continue;
    const std::vector<int> ring = pl.ring(c);
    const int root_pos =
        static_cast<int>(std::find(ring.begin(), ring.end(), r.root) - ring.begin());
    // chain[h] -> chain[h + 1]; broadcast starts at the root, reduce ends there.
    const int first = from_root ? root_pos : root_pos + 1;
    for (size_t k = 0; k < chunks.size(); ++k) {
      for (int h = 0; h + 1 < n; ++h) {
        out.push_back(pl.collective_hop(static_cast<int>(k) + h, c, ring[(first + h) % n],
                                        ring[(first + h + 1) % n], chunks[k]));
      }
    }
  }
}

void tree_all_reduce(const Placement& pl, const DecompositionRequest& r, int n,
                     std::vector<Transfer>& out) {
  const int nn = pl.num_nodes();
  for (int c = 0; c < r.channels; ++c) {
    const std::vector<Piece> chunks =
        channel_chunks(r.bytes.count(), r.channels, c, r.chunk.count());
    if (chunks.empty()) continue;
    // Rank tree: chains from each node's head; heads joined by binary tree c mod 2 (§8).
    std::vector<std::vector<int>> chains(nn);
    for (int i = 0; i < nn; ++i) chains[i] = pl.chain(c, i, /*rail_first=*/true);
    std::vector<int> parent(n, -1);
    int root = -1;
    for (int i = 0; i < nn; ++i) {
      for (size_t k = 1; k < chains[i].size(); ++k) parent[chains[i][k]] = chains[i][k - 1];
      const int up = double_binary_tree_parent(c % 2, i, nn);
      if (up < 0) {
        root = chains[i][0];
      } else {
        parent[chains[i][0]] = chains[up][0];
      }
    }
    // Depth top-down (ranks sorted by depth), height bottom-up.
    std::vector<int> depth(n, -1);
    std::vector<std::vector<int>> children(n);
    for (int v = 0; v < n; ++v) {
      if (parent[v] >= 0) children[parent[v]].push_back(v);
    }
    std::vector<int> order = {root};
    depth[root] = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      for (int ch : children[order[k]]) {
        depth[ch] = depth[order[k]] + 1;
        order.push_back(ch);
      }
    }
    PREFLIGHT_CHECK(static_cast<int>(order.size()) == n);
    std::vector<int> height(n, 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (parent[*it] >= 0) height[parent[*it]] = std::max(height[parent[*it]], height[*it] + 1);
    }
    const int h_root = height[root];
    for (size_t k = 0; k < chunks.size(); ++k) {
      const int kk = static_cast<int>(k);
      for (int v = 0; v < n; ++v) {
        if (v == root) continue;
        out.push_back(pl.collective_hop(kk + height[v], c, v, parent[v], chunks[k]));
        out.push_back(
            pl.collective_hop(kk + h_root + depth[parent[v]], c, parent[v], v, chunks[k]));
      }
    }
  }
}

void nvls(const Placement& pl, const DecompositionRequest& r, int n, std::vector<Transfer>& out) {
  const int64_t s = r.bytes.count();
  const bool rs = r.op != DecompOp::kAllGather;
  const bool ag = r.op != DecompOp::kReduceScatter;
  for (int c = 0; c < r.channels; ++c) {
    if (ring_channel_bytes(s, n, r.channels, c) == 0) continue;
    for (int h = 0; h < n; ++h) {
      const Piece piece = slice_piece(s, n, r.channels, h, c);
      for (int v = 0; v < n; ++v) {
        if (v == h) continue;
        if (rs) out.push_back(pl.collective_hop(0, c, v, h, piece));
        if (ag) out.push_back(pl.collective_hop(rs ? 1 : 0, c, h, v, piece));
      }
    }
  }
}

// One message of m bytes at `offset`, over min(C, max(1, m)) channels.
void p2p_message(const Placement& pl, const DecompositionRequest& r, int step, int src, int dst,
                 int64_t offset, int64_t m, std::vector<Transfer>& out) {
  const int64_t parts = std::min<int64_t>(r.channels, std::max<int64_t>(1, m));
  for (int64_t k = 0; k < parts; ++k) {
    const Piece piece{offset + part_offset(m, parts, k), part_size(m, parts, k)};
    out.push_back(pl.p2p_hop(step, static_cast<int>(k), src, dst, piece, r.pxn));
  }
}

bool valid_pair(DecompOp op, DecompAlgo algo) {
  switch (algo) {
    case DecompAlgo::kRing:
      return op == DecompOp::kAllReduce || op == DecompOp::kAllGather ||
             op == DecompOp::kReduceScatter || op == DecompOp::kBroadcast ||
             op == DecompOp::kReduce;
    case DecompAlgo::kTree:
      return op == DecompOp::kAllReduce;
    case DecompAlgo::kNvls:
      return op == DecompOp::kAllReduce || op == DecompOp::kAllGather ||
             op == DecompOp::kReduceScatter;
    case DecompAlgo::kDirect:
      return op == DecompOp::kAllToAll || op == DecompOp::kSendRecv;
  }
  return false;
}

Status validate_request(const GroupLayout& g, const DecompositionRequest& r) {
  PREFLIGHT_RETURN_IF_ERROR(g.validate());
  const int n = g.size();
  if (r.channels < 1 || r.channels > kMaxChannels) {
    return invalid_argument("channels must be in 1.." + std::to_string(kMaxChannels) + ", got " +
                            std::to_string(r.channels));
  }
  if (r.bytes.count() < 0) return invalid_argument("bytes must be >= 0");
  if (r.chunk.count() < 1) return invalid_argument("chunk must be >= 1 byte");
  if (!valid_pair(r.op, r.algo)) {
    return invalid_argument(std::string("algorithm ") + to_string(r.algo) + " cannot run " +
                            to_string(r.op));
  }
  if (r.algo == DecompAlgo::kNvls) {
    for (int v = 1; v < n; ++v) {
      if (g.node[v] != g.node[0]) return invalid_argument("nvls needs all ranks on one node");
    }
  }
  const bool rooted =
      r.op == DecompOp::kBroadcast || r.op == DecompOp::kReduce || r.op == DecompOp::kSendRecv;
  if (rooted && (r.root < 0 || r.root >= n)) {
    return invalid_argument("root " + std::to_string(r.root) + " outside the group of " +
                            std::to_string(n));
  }
  if (r.op == DecompOp::kSendRecv && (r.peer < 0 || r.peer >= n)) {
    return invalid_argument("peer " + std::to_string(r.peer) + " outside the group of " +
                            std::to_string(n));
  }
  return Status::ok_status();
}

}  // namespace

Status GroupLayout::validate() const {
  if (node.empty()) return invalid_argument("layout: the group has no rank");
  if (node.size() != local.size()) {
    return invalid_argument("layout: node and local differ in size");
  }
  if (gpus_per_node < 1) return invalid_argument("layout: gpus_per_node must be >= 1");
  if (nics_per_node < 1) return invalid_argument("layout: nics_per_node must be >= 1");
  std::set<std::pair<int, int>> gpus;
  for (int r = 0; r < size(); ++r) {
    if (node[r] < 0) {
      return invalid_argument("layout: rank " + std::to_string(r) + " has a negative node id");
    }
    if (local[r] < 0 || local[r] >= gpus_per_node) {
      return invalid_argument("layout: rank " + std::to_string(r) + " has GPU index " +
                              std::to_string(local[r]) + " outside 0.." +
                              std::to_string(gpus_per_node - 1));
    }
    if (!gpus.emplace(node[r], local[r]).second) {
      return invalid_argument("layout: rank " + std::to_string(r) + " shares a GPU with another");
    }
  }
  return Status::ok_status();
}

bool GroupLayout::owns_nic(int gpu, int nic) const {
  if (nics_per_node >= gpus_per_node) {
    return static_cast<int64_t>(nic) * gpus_per_node / nics_per_node == gpu;
  }
  return nic == static_cast<int64_t>(gpu) * nics_per_node / gpus_per_node;
}

int GroupLayout::own_nic(int gpu, int channel) const {
  PREFLIGHT_CHECK(gpu >= 0 && gpu < gpus_per_node && channel >= 0);
  const int64_t g = gpus_per_node;
  const int64_t m = nics_per_node;
  if (m < g) return static_cast<int>(gpu * m / g);
  // GPU gpu owns NICs first..last-1 with first = ⌈gpu·M/G⌉ (at least one as M >= G).
  const int64_t first = (gpu * m + g - 1) / g;
  const int64_t last = ((gpu + 1) * m + g - 1) / g;
  return static_cast<int>(first + channel % (last - first));
}

const char* to_string(Route r) {
  switch (r) {
    case Route::kNvlink:
      return "nvlink";
    case Route::kNic:
      return "nic";
    case Route::kPxn:
      return "pxn";
  }
  return "?";
}

const char* to_string(DecompAlgo a) {
  switch (a) {
    case DecompAlgo::kRing:
      return "ring";
    case DecompAlgo::kTree:
      return "tree";
    case DecompAlgo::kNvls:
      return "nvls";
    case DecompAlgo::kDirect:
      return "direct";
  }
  return "?";
}

const char* to_string(DecompOp op) {
  switch (op) {
    case DecompOp::kAllReduce:
      return "all_reduce";
    case DecompOp::kAllGather:
      return "all_gather";
    case DecompOp::kReduceScatter:
      return "reduce_scatter";
    case DecompOp::kBroadcast:
      return "broadcast";
    case DecompOp::kReduce:
      return "reduce";
    case DecompOp::kAllToAll:
      return "all_to_all";
    case DecompOp::kSendRecv:
      return "send_recv";
  }
  return "?";
}

int double_binary_tree_parent(int tree, int node, int nnodes) {
  PREFLIGHT_CHECK((tree == 0 || tree == 1) && node >= 0 && node < nnodes);
  auto tree0 = [nnodes](int v) {
    if (v == 0) return -1;
    const int b = v & -v;
    const int up = (v ^ b) | (b << 1);
    return up < nnodes ? up : (v ^ b);
  };
  if (tree == 0) return tree0(node);
  const bool even = nnodes % 2 == 0;
  // Tree 1's node v plays the part of tree 0's node role(v).
  const int role = even ? nnodes - 1 - node : (node - 1 + nnodes) % nnodes;
  const int up = tree0(role);
  if (up < 0) return -1;
  return even ? nnodes - 1 - up : (up + 1) % nnodes;
}

StatusOr<std::vector<Transfer>> decompose(const GroupLayout& g, const DecompositionRequest& r) {
  PREFLIGHT_RETURN_IF_ERROR(validate_request(g, r));
  const int n = g.size();
  std::vector<Transfer> out;
  if (n == 1 || r.bytes.count() == 0) return out;
  if (r.op == DecompOp::kSendRecv && r.root == r.peer) return out;
  const Placement pl(g, r.channels);
  switch (r.algo) {
    case DecompAlgo::kRing:
      if (r.op == DecompOp::kBroadcast || r.op == DecompOp::kReduce) {
        ring_pipeline(pl, r, n, out);
      } else {
        ring_collective(pl, r, n, out);
      }
      break;
    case DecompAlgo::kTree:
      tree_all_reduce(pl, r, n, out);
      break;
    case DecompAlgo::kNvls:
      nvls(pl, r, n, out);
      break;
    case DecompAlgo::kDirect: {
      const int64_t s = r.bytes.count();
      if (r.op == DecompOp::kSendRecv) {
        p2p_message(pl, r, 0, r.root, r.peer, 0, s, out);
        break;
      }
      for (int d = 1; d < n; ++d) {
        for (int i = 0; i < n; ++i) {
          const int j = (i + d) % n;
          p2p_message(pl, r, d - 1, i, j, part_offset(s, n, j), part_size(s, n, j), out);
        }
      }
      break;
    }
  }
  std::sort(out.begin(), out.end(), [](const Transfer& a, const Transfer& b) {
    return std::tie(a.step, a.channel, a.src, a.dst, a.offset) <
           std::tie(b.step, b.channel, b.src, b.dst, b.offset);
  });
  return out;
}

}  // namespace preflight
