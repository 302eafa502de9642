#include "collective/decomposition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collective/collective_flows.h"

namespace preflight {
namespace {

// `nodes` full nodes, ranks node-major.
GroupLayout full_nodes(int nodes, int gpus, int nics) {
  GroupLayout g;
  g.gpus_per_node = gpus;
  g.nics_per_node = nics;
  for (int i = 0; i < nodes; ++i) {
    for (int l = 0; l < gpus; ++l) {
      g.node.push_back(i);
      g.local.push_back(l);
    }
  }
  return g;
}

Transfer make(int step, int channel, int src, int dst, int64_t offset, int64_t bytes, Route route,
              int nic = -1, int relay = -1) {
  Transfer t;
  t.step = step;
  t.channel = channel;
  t.src = src;
  t.dst = dst;
  t.offset = Bytes(offset);
  t.bytes = Bytes(bytes);
  t.route = route;
  t.nic = nic;
  t.relay = relay;
  return t;
}

std::string describe(const Transfer& t) {
  return "step " + std::to_string(t.step) + " ch " + std::to_string(t.channel) + " " +
         std::to_string(t.src) + "->" + std::to_string(t.dst) + " @" +
         std::to_string(t.offset.count()) + "+" + std::to_string(t.bytes.count()) + " " +
         to_string(t.route) + " nic " + std::to_string(t.nic) + " relay " + std::to_string(t.relay);
}

std::vector<Transfer> decompose_ok(const GroupLayout& g, const DecompositionRequest& r) {
  StatusOr<std::vector<Transfer>> out = decompose(g, r);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : std::vector<Transfer>{};
}

// ---------------------------------------------------------------------------------------------
// Hand-worked examples.

TEST(Decomposition, RingAllReduceFourRanksTwoNodesTwoChannels) {
  // Ranks 0,1 on node 0 and 2,3 on node 1 (GPU 0, 1 each), 2 NICs per node: NIC k next to GPU k.
  // S = 1 MiB: slice j = 262,144 B at j·262,144; channel c carries its half at +c·131,072.
  // Channel 0 (rail NIC 0): each node's chain ends at GPU 0, so the ring is 1→0→3→2→1:
  //   1→0 NVLink, 0→3 NIC 0, 3→2 NVLink, 2→1 NIC 0.
  // Channel 1 (rail NIC 1): chains end at GPU 1, ring 0→1→2→3→0:
  //   0→1 NVLink, 1→2 NIC 1, 2→3 NVLink, 3→0 NIC 1.
  // Step s < 3 (reduce-scatter): a rank sends the slice of its predecessor^(s+1); step s ≥ 3
  // (all-gather): that of predecessor^(s−3). Slice sent by ranks 0..3:
  //   step   channel 0      channel 1
  //   0      1 2 3 0        3 0 1 2
  //   1      2 3 0 1        2 3 0 1
  //   2      3 0 1 2        1 2 3 0
  //   3      0 1 2 3        0 1 2 3
  //   4      1 2 3 0        3 0 1 2
  //   5      2 3 0 1        2 3 0 1
  // 48 transfers of 131,072 B; each rank sends 12 × 131,072 = 1,572,864 B = 2·3/4·1 MiB.
  const int slice_sent[2][6][4] = {
      {{1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}, {0, 1, 2, 3}, {1, 2, 3, 0}, {2, 3, 0, 1}},
      {{3, 0, 1, 2}, {2, 3, 0, 1}, {1, 2, 3, 0}, {0, 1, 2, 3}, {3, 0, 1, 2}, {2, 3, 0, 1}}};
  const int dst[2][4] = {{3, 0, 1, 2}, {1, 2, 3, 0}};
  const Route route[2][4] = {{Route::kNic, Route::kNvlink, Route::kNic, Route::kNvlink},
                             {Route::kNvlink, Route::kNic, Route::kNvlink, Route::kNic}};
  std::vector<Transfer> expected;
  for (int s = 0; s < 6; ++s) {
    for (int c = 0; c < 2; ++c) {
      for (int r = 0; r < 4; ++r) {
        const bool nic = route[c][r] == Route::kNic;
        expected.push_back(make(s, c, r, dst[c][r], slice_sent[c][s][r] * 262'144 + c * 131'072,
                                131'072, route[c][r], nic ? c : -1));
      }
    }
  }
  DecompositionRequest r;
  r.op = DecompOp::kAllReduce;
  r.algo = DecompAlgo::kRing;
  r.bytes = Bytes::mib(1);
  r.channels = 2;
  const std::vector<Transfer> got = decompose_ok(full_nodes(2, 2, 2), r);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], expected[i]) << describe(got[i]) << " vs " << describe(expected[i]);
  }
}

TEST(Decomposition, RingBroadcastPipelinesChunksAlongTheChainFromTheRoot) {
  // 3 ranks on one node, root 1, S = 10 B in chunks of 4: chain 1→2→0; chunks [0,4) [4,8)
  // [8,10); chunk k crosses hop h at step k + h.
  DecompositionRequest r;
  r.op = DecompOp::kBroadcast;
  r.bytes = Bytes(10);
  r.root = 1;
  r.chunk = Bytes(4);
  const std::vector<Transfer> expected = {
      make(0, 0, 1, 2, 0, 4, Route::kNvlink), make(1, 0, 1, 2, 4, 4, Route::kNvlink),
      make(1, 0, 2, 0, 0, 4, Route::kNvlink), make(2, 0, 1, 2, 8, 2, Route::kNvlink),
      make(2, 0, 2, 0, 4, 4, Route::kNvlink), make(3, 0, 2, 0, 8, 2, Route::kNvlink)};
  EXPECT_EQ(decompose_ok(full_nodes(1, 3, 1), r), expected);
}

TEST(Decomposition, TreeAllReduceFourNodesAlternatesTheTwoTrees) {
  // 4 nodes × 1 GPU, S = 1 MiB over 2 channels of 512 KiB, one chunk each (chunk = 1 MiB).
  // Tree 0 (channel 0): 0→2→{1,3}; heights 1,3: 0; 2: 1; root 0: H = 2. Up 1→2, 3→2 at step 0,
  // 2→0 at step 1; down 0→2 at step H + 0 = 2, 2→1 and 2→3 at step 3.
  // Tree 1 (channel 1, mirror v ↔ 3−v): 3→1→{0,2}: up 0→1, 2→1 at 0, 1→3 at 1; down 3→1 at 2,
  // 1→0 and 1→2 at 3. Every hop crosses nodes on NIC 0.
  DecompositionRequest r;
  r.op = DecompOp::kAllReduce;
  r.algo = DecompAlgo::kTree;
  r.bytes = Bytes::mib(1);
  r.channels = 2;
  r.chunk = Bytes::mib(1);
  const int64_t h = 524'288;
  auto t = [&](int step, int c, int src, int dst) {
    return make(step, c, src, dst, c * h, h, Route::kNic, 0);
  };
  const std::vector<Transfer> expected = {
      t(0, 0, 1, 2), t(0, 0, 3, 2), t(0, 1, 0, 1), t(0, 1, 2, 1), t(1, 0, 2, 0), t(1, 1, 1, 3),
      t(2, 0, 0, 2), t(2, 1, 3, 1), t(3, 0, 2, 1), t(3, 0, 2, 3), t(3, 1, 1, 0), t(3, 1, 1, 2)};
  EXPECT_EQ(decompose_ok(full_nodes(4, 1, 1), r), expected);
}

TEST(Decomposition, DoubleBinaryTreeMatchesNcclShapes) {
  // §8, 16 nodes: tree 0 is 0→8, 8→4,12, 4→2,6, …; tree 1 its mirror (v ↔ 15−v).
  EXPECT_EQ(double_binary_tree_parent(0, 0, 16), -1);
  EXPECT_EQ(double_binary_tree_parent(0, 8, 16), 0);
  EXPECT_EQ(double_binary_tree_parent(0, 4, 16), 8);
  EXPECT_EQ(double_binary_tree_parent(0, 12, 16), 8);
  EXPECT_EQ(double_binary_tree_parent(0, 2, 16), 4);
  EXPECT_EQ(double_binary_tree_parent(0, 6, 16), 4);
  EXPECT_EQ(double_binary_tree_parent(0, 1, 16), 2);
  EXPECT_EQ(double_binary_tree_parent(1, 15, 16), -1);
  EXPECT_EQ(double_binary_tree_parent(1, 7, 16), 15);
  EXPECT_EQ(double_binary_tree_parent(1, 11, 16), 7);
  // 5 nodes: tree 0 is 0→4→2→{1,3}; tree 1 shifts by one (v plays v−1): 1→0→3→{2,4}. The
  // leaves of tree 0 (1, 3) are interior or root in tree 1.
  const int t0[5] = {-1, 2, 4, 2, 0};
  const int t1[5] = {1, -1, 3, 0, 3};
  for (int v = 0; v < 5; ++v) {
    EXPECT_EQ(double_binary_tree_parent(0, v, 5), t0[v]) << v;
    EXPECT_EQ(double_binary_tree_parent(1, v, 5), t1[v]) << v;
  }
}

TEST(Decomposition, AllToAllRoutesInterNodeSendsThroughTheDestinationsRail) {
  // 2 nodes × 2 GPUs, NIC k next to GPU k, S = 4096: block j = 1024 B at j·1024. Rank 0 sends
  // block 1 to rank 1 over NVLink (step 0), block 2 to rank 2 (same GPU index) on its own NIC 0
  // (step 1), block 3 to rank 3 via rank 1's NIC 1 with rank 1 relaying (PXN, step 2). Without
  // PXN the last goes out of NIC 0.
  DecompositionRequest r;
  r.op = DecompOp::kAllToAll;
  r.algo = DecompAlgo::kDirect;
  r.bytes = Bytes(4096);
  std::vector<Transfer> from0;
  for (const Transfer& t : decompose_ok(full_nodes(2, 2, 2), r)) {
    if (t.src == 0) from0.push_back(t);
  }
  const std::vector<Transfer> pxn = {make(0, 0, 0, 1, 1024, 1024, Route::kNvlink),
                                     make(1, 0, 0, 2, 2048, 1024, Route::kNic, 0),
                                     make(2, 0, 0, 3, 3072, 1024, Route::kPxn, 1, 1)};
  EXPECT_EQ(from0, pxn);

  r.pxn = false;
  from0.clear();
  for (const Transfer& t : decompose_ok(full_nodes(2, 2, 2), r)) {
    if (t.src == 0) from0.push_back(t);
  }
  ASSERT_EQ(from0.size(), 3u);
  EXPECT_EQ(from0[2], make(2, 0, 0, 3, 3072, 1024, Route::kNic, 0));
}

TEST(Decomposition, SendRecvSpreadsTheMessageOverChannels) {
  // 10 B over 4 channels: 3, 3, 2, 2 B. Rank 1 (node 0, GPU 1) → rank 2 (node 1, GPU 0):
  // PXN through rank 0 (node 0, GPU 0) and its NIC 0.
  DecompositionRequest r;
  r.op = DecompOp::kSendRecv;
  r.algo = DecompAlgo::kDirect;
  r.bytes = Bytes(10);
  r.channels = 4;
  r.root = 1;
  r.peer = 2;
  const std::vector<Transfer> expected = {
      make(0, 0, 1, 2, 0, 3, Route::kPxn, 0, 0), make(0, 1, 1, 2, 3, 3, Route::kPxn, 0, 0),
      make(0, 2, 1, 2, 6, 2, Route::kPxn, 0, 0), make(0, 3, 1, 2, 8, 2, Route::kPxn, 0, 0)};
  EXPECT_EQ(decompose_ok(full_nodes(2, 2, 2), r), expected);
}

TEST(Decomposition, NicsAreSharedOrSplitBetweenGpus) {
  GroupLayout g;
  g.gpus_per_node = 8;
  g.nics_per_node = 4;  // NIC k next to GPUs 2k, 2k+1
  EXPECT_TRUE(g.owns_nic(3, 1));
  EXPECT_FALSE(g.owns_nic(3, 2));
  EXPECT_EQ(g.own_nic(5, 7), 2);
  g.gpus_per_node = 4;
  g.nics_per_node = 8;  // GPU l owns NICs 2l, 2l+1
  EXPECT_TRUE(g.owns_nic(1, 3));
  EXPECT_FALSE(g.owns_nic(1, 4));
  EXPECT_EQ(g.own_nic(1, 0), 2);
  EXPECT_EQ(g.own_nic(1, 5), 3);
}

// ---------------------------------------------------------------------------------------------
// Errors and empty results.

TEST(Decomposition, RejectsInvalidRequests) {
  const GroupLayout two_nodes = full_nodes(2, 4, 4);
  auto expect_invalid = [](const GroupLayout& g, const DecompositionRequest& r,
                           const std::string& what) {
    StatusOr<std::vector<Transfer>> out = decompose(g, r);
    ASSERT_FALSE(out.ok()) << what;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << what;
  };
  DecompositionRequest ok;
  ok.bytes = Bytes(1000);
  ASSERT_TRUE(decompose(two_nodes, ok).ok());

  GroupLayout g = two_nodes;
  g.node.clear();
  g.local.clear();
  expect_invalid(g, ok, "empty group");
  g = two_nodes;
  g.local.pop_back();
  expect_invalid(g, ok, "node/local sizes differ");
  g = two_nodes;
  g.local[3] = 4;
  expect_invalid(g, ok, "GPU index out of range");
  g = two_nodes;
  g.local[1] = 0;
  expect_invalid(g, ok, "two ranks on one GPU");
  g = two_nodes;
  g.node[0] = -1;
  expect_invalid(g, ok, "negative node id");
  g = two_nodes;
  g.nics_per_node = 0;
  expect_invalid(g, ok, "no NIC");

  DecompositionRequest r = ok;
  r.channels = 0;
  expect_invalid(two_nodes, r, "channels < 1");
  r.channels = 65;
  expect_invalid(two_nodes, r, "channels > 64");
  r = ok;
  r.bytes = Bytes(-1);
  expect_invalid(two_nodes, r, "negative size");
  r = ok;
  r.chunk = Bytes(0);
  expect_invalid(two_nodes, r, "empty chunk");

  const std::pair<DecompOp, DecompAlgo> bad_pairs[] = {
      {DecompOp::kAllGather, DecompAlgo::kTree},     {DecompOp::kBroadcast, DecompAlgo::kTree},
      {DecompOp::kAllToAll, DecompAlgo::kRing},      {DecompOp::kAllReduce, DecompAlgo::kDirect},
      {DecompOp::kBroadcast, DecompAlgo::kNvls},     {DecompOp::kSendRecv, DecompAlgo::kRing},
      {DecompOp::kReduceScatter, DecompAlgo::kTree}, {DecompOp::kAllToAll, DecompAlgo::kNvls}};
  for (auto [op, algo] : bad_pairs) {
    r = ok;
    r.op = op;
    r.algo = algo;
    expect_invalid(two_nodes, r, std::string(to_string(algo)) + " " + to_string(op));
    expect_invalid(full_nodes(1, 1, 1), r, std::string("one rank: ") + to_string(op));
  }
  r = ok;
  r.algo = DecompAlgo::kNvls;
  expect_invalid(two_nodes, r, "nvls across nodes");
  EXPECT_TRUE(decompose(full_nodes(1, 8, 8), r).ok());

  r = ok;
  r.op = DecompOp::kBroadcast;
  r.root = 8;
  expect_invalid(two_nodes, r, "root past the group");
  r.op = DecompOp::kReduce;
  r.root = -1;
  expect_invalid(two_nodes, r, "negative root");
  r = ok;
  r.op = DecompOp::kSendRecv;
  r.algo = DecompAlgo::kDirect;
  r.peer = 8;
  expect_invalid(two_nodes, r, "peer past the group");
}

const std::pair<DecompOp, DecompAlgo> kValidPairs[] = {
    {DecompOp::kAllReduce, DecompAlgo::kRing},     {DecompOp::kAllGather, DecompAlgo::kRing},
    {DecompOp::kReduceScatter, DecompAlgo::kRing}, {DecompOp::kBroadcast, DecompAlgo::kRing},
    {DecompOp::kReduce, DecompAlgo::kRing},        {DecompOp::kAllReduce, DecompAlgo::kTree},
    {DecompOp::kAllReduce, DecompAlgo::kNvls},     {DecompOp::kAllGather, DecompAlgo::kNvls},
    {DecompOp::kReduceScatter, DecompAlgo::kNvls}, {DecompOp::kAllToAll, DecompAlgo::kDirect},
    {DecompOp::kSendRecv, DecompAlgo::kDirect}};

TEST(Decomposition, GroupOfOneZeroBytesAndSelfSendAreEmpty) {
  GroupLayout one;
  one.node = {3};
  one.local = {5};
  for (auto [op, algo] : kValidPairs) {
    DecompositionRequest r;
    r.op = op;
    r.algo = algo;
    r.bytes = Bytes::mib(1);
    r.channels = 4;
    r.peer = 0;
    StatusOr<std::vector<Transfer>> out = decompose(one, r);
    ASSERT_TRUE(out.ok()) << to_string(op) << ": " << out.status().message();
    EXPECT_TRUE(out->empty()) << to_string(op);
    r.peer = 1;
    r.bytes = Bytes(0);
    out = decompose(full_nodes(1, 8, 8), r);
    ASSERT_TRUE(out.ok()) << to_string(op) << ": " << out.status().message();
    EXPECT_TRUE(out->empty()) << to_string(op) << " of 0 bytes";
  }
  DecompositionRequest self;
  self.op = DecompOp::kSendRecv;
  self.algo = DecompAlgo::kDirect;
  self.bytes = Bytes(100);
  self.root = self.peer = 2;
  StatusOr<std::vector<Transfer>> out = decompose(full_nodes(1, 4, 4), self);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->empty());
}

// ---------------------------------------------------------------------------------------------
// Property tests over random layouts and requests.

bool is_p2p(DecompOp op) { return op == DecompOp::kAllToAll || op == DecompOp::kSendRecv; }
bool is_ring_collective(const DecompositionRequest& r) {
  return r.algo == DecompAlgo::kRing &&
         (r.op == DecompOp::kAllReduce || r.op == DecompOp::kAllGather ||
          r.op == DecompOp::kReduceScatter);
}

int64_t part_size(int64_t total, int64_t parts, int64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}
int64_t part_offset(int64_t total, int64_t parts, int64_t i) {
  return i * (total / parts) + std::min(i, total % parts);
}

// Random nodes (1–8, sparse ids), GPUs per node {1,2,4,8}, NICs {1,2,3,4,8}; members: whole
// nodes, a stride (one TP/DP-style slot pattern), or a random non-empty subset per node; ranks
// node-major or shuffled.
GroupLayout random_layout(std::mt19937_64& rng, bool one_node) {
  auto pick = [&](std::initializer_list<int> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  };
  GroupLayout g;
  g.gpus_per_node = pick({1, 2, 4, 8});
  g.nics_per_node = pick({1, 2, 3, 4, 8});
  const int nodes = one_node ? 1 : std::uniform_int_distribution<int>(1, 8)(rng);
  std::vector<int> ids(16);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  const int pattern = std::uniform_int_distribution<int>(0, 2)(rng);
  int stride = 1;
  while (stride * 2 <= g.gpus_per_node && rng() % 2) stride *= 2;
  const int first = std::uniform_int_distribution<int>(0, stride - 1)(rng);
  std::vector<std::pair<int, int>> gpus;
  for (int i = 0; i < nodes; ++i) {
    std::vector<int> locals;
    for (int l = 0; l < g.gpus_per_node; ++l) {
      if (pattern == 0 || (pattern == 1 && l % stride == first) || (pattern == 2 && rng() % 2)) {
        locals.push_back(l);
      }
    }
    if (locals.empty())
      locals.push_back(std::uniform_int_distribution<int>(0, g.gpus_per_node - 1)(rng));
    for (int l : locals) gpus.emplace_back(ids[i], l);
  }
  if (rng() % 3 == 0) std::shuffle(gpus.begin(), gpus.end(), rng);
  for (auto [node, l] : gpus) {
    g.node.push_back(node);
    g.local.push_back(l);
  }
  return g;
}

DecompositionRequest random_request(std::mt19937_64& rng, int n, DecompOp op, DecompAlgo algo) {
  DecompositionRequest r;
  r.op = op;
  r.algo = algo;
  r.channels = std::uniform_int_distribution<int>(1, 16)(rng);
  if (rng() % 4 == 0) {  // tiny: fewer bytes than pieces, remainders everywhere
    r.bytes = Bytes(std::uniform_int_distribution<int64_t>(1, 4LL * n * r.channels)(rng));
  } else {  // log-uniform 1 B .. 1 GiB
    const double e = std::uniform_real_distribution<double>(0, 30)(rng);
    r.bytes = Bytes(std::max<int64_t>(1, static_cast<int64_t>(std::exp2(e))));
  }
  if (rng() % 2) {  // 1..12 pipeline chunks per channel instead of 512 KiB
    const int64_t per_channel = (r.bytes.count() + r.channels - 1) / r.channels;
    const int64_t k = std::uniform_int_distribution<int64_t>(1, 12)(rng);
    r.chunk = Bytes(std::max<int64_t>(1, (per_channel + k - 1) / k));
  }
  r.pxn = rng() % 4 != 0;
  r.root = std::uniform_int_distribution<int>(0, n - 1)(rng);
  r.peer = std::uniform_int_distribution<int>(0, n - 1)(rng);
  if (r.peer == r.root) r.peer = (r.root + 1) % n;
  return r;
}

// (1) Conservation: per step, bytes sent = bytes received; in all, the exact wire total; per
// rank, the nccl-tests share within the stated rounding.
void check_conservation(const GroupLayout& g, const DecompositionRequest& r,
                        const std::vector<Transfer>& ts) {
  const int n = g.size();
  const int64_t s = r.bytes.count();
  std::map<int, int64_t> step_sent, step_received;
  std::vector<int64_t> sent(n, 0), received(n, 0);
  int64_t total = 0;
  for (const Transfer& t : ts) {
    step_sent[t.step] += t.bytes.count();
    step_received[t.step] += t.bytes.count();
    sent[t.src] += t.bytes.count();
    received[t.dst] += t.bytes.count();
    total += t.bytes.count();
  }
  EXPECT_EQ(step_sent, step_received);
  EXPECT_EQ(std::accumulate(sent.begin(), sent.end(), int64_t{0}),
            std::accumulate(received.begin(), received.end(), int64_t{0}));
  // Wire totals: phases × (n−1) × S, exactly (remainders carried, not lost).
  int64_t phases = 1;
  if (r.op == DecompOp::kAllReduce) phases = 2;
  if (r.op == DecompOp::kSendRecv) {
    EXPECT_EQ(total, s);
  } else {
    EXPECT_EQ(total, phases * (n - 1) * s);
  }
  // Per rank sent vs k(n−1)/n·S, compared as n·sent vs k(n−1)S. Rounding (whole bytes): ring RS
  // and all-to-all send S − slice_r, under 1 B off; ring AG sends S − Σ_c piece(succ_c, c), under
  // C B off; ring AR under C + 1 B; NVLS AG sends (n−1)·slice_r and NVLS AR S + (n−2)·slice_r,
  // under n − 1 B off.
  int64_t bound = -1;  // bytes; -1: no per-rank rule (rooted ops, tree)
  if (is_ring_collective(r)) {
    bound = r.op == DecompOp::kAllReduce   ? r.channels + 1
            : r.op == DecompOp::kAllGather ? r.channels
                                           : 1;
  } else if (r.algo == DecompAlgo::kNvls) {
    bound = r.op == DecompOp::kReduceScatter ? 1 : n - 1;
  } else if (r.op == DecompOp::kAllToAll) {
    bound = 1;
    for (int v = 0; v < n; ++v) EXPECT_EQ(received[v], (n - 1) * part_size(s, n, v)) << v;
  }
  if (bound >= 0) {
    for (int v = 0; v < n; ++v) {
      const int64_t diff = n * sent[v] - phases * (n - 1) * s;
      EXPECT_LT(std::llabs(diff), std::max<int64_t>(1, n * bound))
          << "rank " << v << " sent " << sent[v];
    }
  }
  if (r.op == DecompOp::kSendRecv) {
    for (const Transfer& t : ts) {
      EXPECT_EQ(t.src, r.root);
      EXPECT_EQ(t.dst, r.peer);
    }
  }
}

// (2) Route hints agree with the layout.
void check_routes(const GroupLayout& g, const DecompositionRequest& r,
                  const std::vector<Transfer>& ts) {
  const int n = g.size();
  const int m = g.nics_per_node;
  for (const Transfer& t : ts) {
    SCOPED_TRACE(describe(t));
    ASSERT_TRUE(t.src >= 0 && t.src < n && t.dst >= 0 && t.dst < n && t.src != t.dst);
    ASSERT_TRUE(t.channel >= 0 && t.channel < r.channels && t.step >= 0);
    ASSERT_TRUE(t.bytes.count() >= 0 && t.offset.count() >= 0);
    const bool same_node = g.node[t.src] == g.node[t.dst];
    EXPECT_EQ(t.route == Route::kNvlink, same_node);
    if (t.route == Route::kNvlink) {
      EXPECT_EQ(t.nic, -1);
      EXPECT_EQ(t.relay, -1);
      continue;
    }
    ASSERT_TRUE(t.nic >= 0 && t.nic < m);
    if (t.route == Route::kNic) {
      EXPECT_EQ(t.relay, -1);
      EXPECT_TRUE(g.owns_nic(g.local[t.src], t.nic)) << "not the sender's own NIC";
    } else {
      EXPECT_TRUE(is_p2p(r.op) && r.pxn) << "PXN outside p2p or with pxn off";
      ASSERT_TRUE(t.relay >= 0 && t.relay < n);
      EXPECT_NE(t.relay, t.src);
      EXPECT_EQ(g.node[t.relay], g.node[t.src]);
      EXPECT_EQ(g.local[t.relay], g.local[t.dst]);
      EXPECT_TRUE(g.owns_nic(g.local[t.relay], t.nic));
      EXPECT_FALSE(g.owns_nic(g.local[t.src], t.nic));
    }
    if (is_p2p(r.op)) {
      const int rail = g.own_nic(g.local[t.dst], t.channel);
      bool relay_exists = false;
      for (int q = 0; q < n; ++q) {
        relay_exists |= g.node[q] == g.node[t.src] && g.local[q] == g.local[t.dst];
      }
      if (!r.pxn) {
        EXPECT_EQ(t.nic, g.own_nic(g.local[t.src], t.channel));
      } else if (!g.owns_nic(g.local[t.src], rail) && relay_exists) {
        EXPECT_EQ(t.route, Route::kPxn);
      } else {
        EXPECT_EQ(t.route, Route::kNic);
      }
      if (r.pxn && (g.owns_nic(g.local[t.src], rail) || relay_exists)) {
        EXPECT_EQ(t.nic, rail) << "not on the destination's rail";
      }
    } else {
      // Rail-aligned collectives: channel c leaves on NIC c mod M whenever the sending node has
      // a member next to it.
      bool node_has_rail = false;
      for (int q = 0; q < n; ++q) {
        node_has_rail |= g.node[q] == g.node[t.src] && g.owns_nic(g.local[q], t.channel % m);
      }
      if (node_has_rail) {
        EXPECT_EQ(t.nic, t.channel % m);
      }
    }
  }
}

// Data flow: the transfers' pieces tile [0, S); replaying them step by step (all sends of a step
// read the state before it) gives every rank what the operation promises. Each rank holds, per
// piece, the set of ranks whose contribution it has (a bit mask); a receive either reduces
// (disjoint sets: union) or overwrites with a superset (a copy of a more reduced piece);
// anything else would count a contribution twice.
void check_data_flow(const GroupLayout& g, const DecompositionRequest& r,
                     const std::vector<Transfer>& ts) {
  const int n = g.size();
  const int64_t s = r.bytes.count();
  std::map<int64_t, int64_t> pieces;  // offset -> bytes, non-empty pieces
  for (const Transfer& t : ts) {
    if (t.bytes.count() == 0) continue;
    auto [it, inserted] = pieces.emplace(t.offset.count(), t.bytes.count());
    ASSERT_EQ(it->second, t.bytes.count()) << "two sizes for the piece at " << it->first;
  }
  int64_t end = 0;
  std::map<int64_t, int> index;
  for (auto [off, bytes] : pieces) {
    ASSERT_EQ(off, end) << "pieces do not tile the buffer";
    index[off] = static_cast<int>(index.size());
    end = off + bytes;
  }
  ASSERT_EQ(end, s) << "bytes lost";
  const int np = static_cast<int>(pieces.size());
  const uint64_t full = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  auto slice_of = [&](int64_t off) {  // the rank whose slice holds this offset
    int v = 0;
    while (v + 1 < n && part_offset(s, n, v + 1) <= off) ++v;
    return v;
  };
  std::vector<int> owner(np);
  for (auto [off, p] : index) owner[p] = slice_of(off);
  std::vector<uint64_t> mask(static_cast<size_t>(n) * np, 0);
  auto at = [&](int v, int p) -> uint64_t& { return mask[static_cast<size_t>(v) * np + p]; };
  for (int v = 0; v < n; ++v) {
    for (int p = 0; p < np; ++p) {
      if (r.op == DecompOp::kAllGather) {
        at(v, p) = owner[p] == v ? uint64_t{1} << v : 0;
      } else if (r.op == DecompOp::kBroadcast) {
        at(v, p) = v == r.root ? uint64_t{1} << v : 0;
      } else {
        at(v, p) = uint64_t{1} << v;
      }
    }
  }
  for (size_t i = 0; i < ts.size();) {
    size_t j = i;
    std::vector<std::tuple<int, int, uint64_t>> writes;
    for (; j < ts.size() && ts[j].step == ts[i].step; ++j) {
      if (ts[j].bytes.count() == 0) continue;
      const int p = index[ts[j].offset.count()];
      const uint64_t from = at(ts[j].src, p);
      ASSERT_NE(from, 0u) << describe(ts[j]) << ": sends a piece it does not hold";
      writes.emplace_back(ts[j].dst, p, from);
    }
    for (auto [v, p, from] : writes) {
      uint64_t& cur = at(v, p);
      if ((cur & from) == 0) {
        cur |= from;
      } else {
        ASSERT_EQ(cur & ~from, 0u) << "rank " << v << " piece " << p << ": counted twice";
        cur = from;
      }
    }
    i = j;
  }
  for (int v = 0; v < n; ++v) {
    for (int p = 0; p < np; ++p) {
      SCOPED_TRACE("rank " + std::to_string(v) + " piece " + std::to_string(p));
      switch (r.op) {
        case DecompOp::kAllReduce:
          ASSERT_EQ(at(v, p), full);
          break;
        case DecompOp::kReduceScatter:
          if (owner[p] == v) {
            ASSERT_EQ(at(v, p), full);
          }
          break;
        case DecompOp::kAllGather:
          ASSERT_EQ(at(v, p), uint64_t{1} << owner[p]);
          break;
        case DecompOp::kBroadcast:
          ASSERT_EQ(at(v, p), uint64_t{1} << r.root);
          break;
        case DecompOp::kReduce:
          if (v == r.root) {
            ASSERT_EQ(at(v, p), full);
          }
          break;
        default:
          break;
      }
    }
  }
}

// All-to-all and send/recv: the parts of each (src, dst) message tile its block.
void check_p2p_blocks(const GroupLayout& g, const DecompositionRequest& r,
                      const std::vector<Transfer>& ts) {
  const int n = g.size();
  const int64_t s = r.bytes.count();
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> parts;
  for (const Transfer& t : ts)
    parts[{t.src, t.dst}].emplace_back(t.offset.count(), t.bytes.count());
  EXPECT_EQ(parts.size(), r.op == DecompOp::kSendRecv ? 1u : static_cast<size_t>(n) * (n - 1));
  for (auto& [pair, list] : parts) {
    std::sort(list.begin(), list.end());
    const int64_t begin = r.op == DecompOp::kSendRecv ? 0 : part_offset(s, n, pair.second);
    const int64_t size = r.op == DecompOp::kSendRecv ? s : part_size(s, n, pair.second);
    int64_t end = begin;
    for (auto [off, bytes] : list) {
      EXPECT_EQ(off, end);
      end = off + bytes;
    }
    EXPECT_EQ(end, begin + size);
    EXPECT_LE(list.size(), static_cast<size_t>(r.channels));
  }
}

// (3) Ring: per channel, every rank sends exactly one transfer per step, always to the same
// successor; successors form one n-cycle that visits each node once (a node's ranks contiguous).
// Broadcast/reduce: per channel the hops form one path through all ranks from / to the root.
void check_ring(const GroupLayout& g, const DecompositionRequest& r,
                const std::vector<Transfer>& ts) {
  const int n = g.size();
  std::set<int> nodes(g.node.begin(), g.node.end());
  std::map<int, std::vector<int>> succ;                   // channel -> successor per rank
  std::map<std::pair<int, int>, std::vector<int>> sends;  // (channel, step) -> count per rank
  for (const Transfer& t : ts) {
    auto [it, inserted] = succ.try_emplace(t.channel, std::vector<int>(n, -1));
    std::vector<int>& sc = it->second;
    ASSERT_TRUE(sc[t.src] == -1 || sc[t.src] == t.dst) << describe(t) << ": two successors";
    sc[t.src] = t.dst;
    auto [jt, ins] = sends.try_emplace({t.channel, t.step}, std::vector<int>(n, 0));
    ++jt->second[t.src];
  }
  for (auto& [c, sc] : succ) {
    SCOPED_TRACE("channel " + std::to_string(c));
    if (is_ring_collective(r)) {
      int v = 0, crossings = 0;
      for (int k = 0; k < n; ++k) {
        ASSERT_NE(sc[v], -1);
        crossings += g.node[v] != g.node[sc[v]];
        v = sc[v];
        if (k + 1 < n) {
          ASSERT_NE(v, 0) << "cycle shorter than the group";
        }
      }
      ASSERT_EQ(v, 0) << "not a cycle";
      EXPECT_EQ(crossings, nodes.size() > 1 ? static_cast<int>(nodes.size()) : 0);
    } else {
      // A path: start at the rank nobody sends to.
      std::vector<int> indegree(n, 0);
      for (int u = 0; u < n; ++u) {
        if (sc[u] >= 0) ++indegree[sc[u]];
      }
      const int start =
          r.op == DecompOp::kBroadcast
              ? r.root
              : static_cast<int>(std::find(indegree.begin(), indegree.end(), 0) - indegree.begin());
      ASSERT_EQ(indegree[start], 0);
      int v = start;
      for (int k = 0; k + 1 < n; ++k) {
        ASSERT_NE(sc[v], -1) << "path shorter than the group";
        v = sc[v];
      }
      EXPECT_EQ(sc[v], -1);
      if (r.op == DecompOp::kReduce) {
        EXPECT_EQ(v, r.root);
      }
    }
  }
  if (is_ring_collective(r)) {
    const int steps = (r.op == DecompOp::kAllReduce ? 2 : 1) * (n - 1);
    for (auto& [key, counts] : sends) {
      EXPECT_LT(key.second, steps);
      for (int v = 0; v < n; ++v) EXPECT_EQ(counts[v], 1) << "rank " << v << " step " << key.second;
    }
    EXPECT_EQ(sends.size(), succ.size() * steps);
  }
}

// (4) Tree: per channel, on its first piece, each tree edge is used once up then later once down;
// the up edges give every rank but one (the root) exactly one parent, with no cycle, at most 3
// children (2 for the root); each node has one head (its only member with a parent elsewhere, or
// the root), and channels 0 and 1 have their roots on different nodes (double binary tree).
void check_tree(const GroupLayout& g, const DecompositionRequest& r,
                const std::vector<Transfer>& ts) {
  const int n = g.size();
  std::map<int, int64_t> first_piece;  // channel -> lowest offset
  for (const Transfer& t : ts) {
    auto [it, ins] = first_piece.try_emplace(t.channel, t.offset.count());
    it->second = std::min(it->second, t.offset.count());
  }
  std::map<int, int> root_node;
  for (auto [c, off] : first_piece) {
    SCOPED_TRACE("channel " + std::to_string(c));
    std::map<std::pair<int, int>, int> first_step;  // directed edge -> step
    for (const Transfer& t : ts) {
      if (t.channel != c || t.offset.count() != off) continue;
      ASSERT_TRUE(first_step.emplace(std::make_pair(t.src, t.dst), t.step).second)
          << describe(t) << ": edge used twice for one piece";
    }
    std::vector<int> parent(n, -1);
    std::vector<int> children(n, 0);
    for (auto [edge, step] : first_step) {
      auto back = first_step.find({edge.second, edge.first});
      ASSERT_NE(back, first_step.end()) << "edge used one way only";
      if (step < back->second) {
        ASSERT_EQ(parent[edge.first], -1) << "rank " << edge.first << " has two parents";
        parent[edge.first] = edge.second;
        ++children[edge.second];
      }
    }
    ASSERT_EQ(first_step.size(), 2u * (n - 1));
    const int root = static_cast<int>(std::find(parent.begin(), parent.end(), -1) - parent.begin());
    ASSERT_LT(root, n);
    EXPECT_EQ(std::count(parent.begin(), parent.end(), -1), 1);
    EXPECT_LE(children[root], 2);
    std::map<int, int> heads;  // node -> members whose parent is elsewhere (or none)
    for (int v = 0; v < n; ++v) {
      EXPECT_LE(children[v], 3);
      int u = v, hops = 0;
      while (parent[u] >= 0 && hops <= n) {
        u = parent[u];
        ++hops;
      }
      EXPECT_EQ(u, root) << "rank " << v << " does not reach the root";
      if (parent[v] < 0 || g.node[parent[v]] != g.node[v]) ++heads[g.node[v]];
    }
    for (auto [node, count] : heads) EXPECT_EQ(count, 1) << "node " << node;
    root_node[c] = g.node[root];
  }
  std::set<int> nodes(g.node.begin(), g.node.end());
  if (nodes.size() > 1 && root_node.count(0) && root_node.count(1)) {
    EXPECT_NE(root_node[0], root_node[1]);
  }
}

TEST(Decomposition, PropertiesHoldOverRandomLayoutsAndRequests) {
  std::mt19937_64 rng(20240611);
  constexpr int kCases = 600;
  std::map<std::string, int> seen;
  for (int k = 0; k < kCases; ++k) {
    const auto [op, algo] = kValidPairs[k % std::size(kValidPairs)];
    const GroupLayout g = random_layout(rng, algo == DecompAlgo::kNvls);
    const int n = g.size();
    const DecompositionRequest r = random_request(rng, n, op, algo);
    SCOPED_TRACE("case " + std::to_string(k) + ": " + to_string(op) + "/" + to_string(algo) +
                 " n=" + std::to_string(n) + " G=" + std::to_string(g.gpus_per_node) +
                 " M=" + std::to_string(g.nics_per_node) + " S=" + std::to_string(r.bytes.count()) +
                 " C=" + std::to_string(r.channels) + " chunk=" + std::to_string(r.chunk.count()) +
                 " root=" + std::to_string(r.root) + " peer=" + std::to_string(r.peer) +
                 " pxn=" + std::to_string(r.pxn));
    StatusOr<std::vector<Transfer>> out = decompose(g, r);
    ASSERT_TRUE(out.ok()) << out.status().message();
    const std::vector<Transfer>& ts = *out;
    if (n == 1) {
      EXPECT_TRUE(ts.empty());
      continue;
    }
    ASSERT_FALSE(ts.empty());
    ++seen[std::string(to_string(op)) + "/" + to_string(algo)];
    EXPECT_TRUE(std::is_sorted(ts.begin(), ts.end(), [](const Transfer& a, const Transfer& b) {
      return std::tie(a.step, a.channel, a.src, a.dst, a.offset) <
             std::tie(b.step, b.channel, b.src, b.dst, b.offset);
    }));
    check_conservation(g, r, ts);
    check_routes(g, r, ts);
    if (is_p2p(op)) {
      check_p2p_blocks(g, r, ts);
    } else {
      check_data_flow(g, r, ts);
    }
    if (algo == DecompAlgo::kRing) check_ring(g, r, ts);
    if (algo == DecompAlgo::kTree) check_tree(g, r, ts);
    if (HasFailure()) break;  // one failing case is enough to read
  }
  EXPECT_EQ(seen.size(), std::size(kValidPairs)) << "some (op, algo) never ran on >1 rank";
}

TEST(Decomposition, IsDeterministic) {
  std::mt19937_64 rng(7);
  const GroupLayout g = random_layout(rng, false);
  DecompositionRequest r = random_request(rng, g.size(), DecompOp::kAllToAll, DecompAlgo::kDirect);
  EXPECT_EQ(decompose_ok(g, r), decompose_ok(g, r));
}

// NCCL's network transport sends LL and LL128 buffers with their flags: an all-reduce's flows
// under LL carry twice the payload of Simple's, under LL128 128/120 of it, pair by pair.
TEST(CollectiveFlows, LlAndLl128FlowsCarryTheirFlagsOnTheWire) {
  EXPECT_EQ(protocol_wire_factor("Simple"), 1.0);
  EXPECT_EQ(protocol_wire_factor(""), 1.0);
  EXPECT_EQ(protocol_wire_factor("LL"), 2.0);
  EXPECT_DOUBLE_EQ(protocol_wire_factor("LL128"), 128.0 / 120.0);
  std::vector<int> members(16);
  std::iota(members.begin(), members.end(), 0);  // 2 nodes of 8 GPUs
  const auto flows = [&](const char* protocol) {
    CollectiveFlows cf(8, 8, false);
    CollectivePlan plan;
    plan.algorithm = Algorithm::kRing;
    plan.protocol = protocol;
    plan.channels = 8;
    std::vector<GpuFlow> out;
    cf.add(members, CollectiveKind::kAllReduce, Bytes::mib(60), plan, &out);
    return out;
  };
  const std::vector<GpuFlow> simple = flows("Simple"), ll = flows("LL"), ll128 = flows("LL128");
  ASSERT_FALSE(simple.empty());
  ASSERT_EQ(ll.size(), simple.size());
  ASSERT_EQ(ll128.size(), simple.size());
  for (size_t i = 0; i < simple.size(); ++i) {
    EXPECT_EQ(ll[i].bytes, 2 * simple[i].bytes);
    EXPECT_NEAR(static_cast<double>(ll128[i].bytes),
                static_cast<double>(simple[i].bytes) * 128 / 120, 0.5);
  }
}

}  // namespace
}  // namespace preflight
