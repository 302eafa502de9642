// Partitions of the packet network (packet_partitions.cc): the same outputs for any thread
// count, the same as one partition where the partitions' tie order cannot matter, and what
// crosses between partitions (packets, credits, PAUSE frames, CNPs, NACKs) arriving as it would
// on one queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/simulator.h"
#include "network/packet/packet_network.h"

namespace preflight::packet {
namespace {

constexpr double kRate = 100e9 / 8;                          // bytes/s: 100 Gb/s links
const SimTime kLinkLatency = SimTime::picoseconds(650'000);  // network links
const SimTime kHostLatency = SimTime::picoseconds(100'000);  // a GPU's link into its NIC

// `leaves` leaf switches under one spine, `per_leaf` NICs on each, a GPU behind each NIC: the
// shape of a rail-optimized fabric (each leaf a rail), every link 100 Gb/s.
struct Rails {
  Topology t;
  std::vector<int> leaf, nic, gpu;  // nic and gpu: leaf-major
  int spine = -1;
  int per_leaf = 0;
  Rails(int leaves, int nics_per_leaf) : per_leaf(nics_per_leaf) {
    const Bandwidth bw = Bandwidth::bytes_per_second(kRate);
    spine = t.add_node(TopoNode{NodeKind::kSwitch, -1, 0, 2, 0, "spine"});
    for (int l = 0; l < leaves; ++l) {
      leaf.push_back(
          t.add_node(TopoNode{NodeKind::kSwitch, -1, l, 1, 0, "leaf" + std::to_string(l)}));
      t.add_link(leaf.back(), spine, bw, kLinkLatency, LinkTier::kLeafSpine);
    }
    for (int l = 0; l < leaves; ++l) {
      for (int k = 0; k < nics_per_leaf; ++k) {
        const std::string id = std::to_string(l) + "." + std::to_string(k);
        nic.push_back(t.add_node(TopoNode{NodeKind::kNic, k, k, 0, 0, "nic" + id}));
        gpu.push_back(t.add_node(TopoNode{NodeKind::kGpu, k, k, 0, 0, "gpu" + id}));
        t.add_link(nic.back(), leaf[l], bw, kLinkLatency, LinkTier::kNicLeaf);
        t.add_link(gpu.back(), nic.back(), bw, kHostLatency, LinkTier::kHostNic);
      }
    }
  }
  // The directed channel from node a to node b.
  int channel(int a, int b) const {
    for (size_t l = 0; l < t.links.size(); ++l) {
      if (t.links[l].a == a && t.links[l].b == b) return static_cast<int>(2 * l);
      if (t.links[l].a == b && t.links[l].b == a) return static_cast<int>(2 * l + 1);
    }
    return -1;
  }
  // GPU i to GPU j: through their NICs, their leaves and (on different leaves) the spine.
  std::vector<int> path(int i, int j) const {
    const int li = i / per_leaf, lj = j / per_leaf;
    std::vector<int> hops = {gpu[i], nic[i], leaf[li]};
    if (li != lj) hops.insert(hops.end(), {spine, leaf[lj]});
    hops.insert(hops.end(), {nic[j], gpu[j]});
    std::vector<int> out;
    for (size_t h = 0; h + 1 < hops.size(); ++h) out.push_back(channel(hops[h], hops[h + 1]));
    return out;
  }
};

PacketConfig infiniband(int partitions, int threads) {
  PacketConfig c;
  c.link_layer = LinkLayer::kInfiniband;
  c.header = PacketConfig::kIbHeader;
  c.cc = CongestionControl::kNone;
  c.pfc = false;
  c.ecn = false;
  c.partitions = partitions;
  c.threads = threads;
  return c;
}

struct Flow {
  int from, to;
  int64_t bytes;
  SimTime delay;
};

struct Outcome {
  std::vector<SimTime> finish;  // per flow
  PacketStats stats;
  std::vector<PacketNetwork::Completion> completions;
  int partitions = 0;
};

// Starts `flows` (each at its delay) and, as each finishes, a second flow of the same size
// back the other way, 1 us later (the job reacting to a finish, as the executor does).
Outcome run(const Rails& r, PacketConfig config, const std::vector<Flow>& flows) {
  Simulator sim;
  PacketNetwork net(r.t, config, &sim);
  Outcome out;
  out.finish.assign(2 * flows.size(), SimTime::max());
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow f = flows[i];
    net.start_flow(f.bytes, r.path(f.from, f.to), f.delay, [&, i, f](SimTime t) {
      out.finish[i] = t;
      net.start_flow(f.bytes, r.path(f.to, f.from), SimTime::microseconds(1),
                     [&, i](SimTime u) { out.finish[flows.size() + i] = u; });
    });
  }
  sim.run();
  out.stats = net.stats();
  out.completions = net.completions();
  out.partitions = net.partitions();
  return out;
}

// `config` on one partition and one thread: what the partitions are compared with.
Outcome run_on_one_queue(const Rails& r, PacketConfig config, const std::vector<Flow>& flows) {
  config.partitions = 1;
  config.threads = 1;
  return run(r, config, flows);
}

void expect_same(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(a.finish.size(), b.finish.size());
  for (size_t i = 0; i < a.finish.size(); ++i) EXPECT_EQ(a.finish[i], b.finish[i]) << "flow " << i;
  EXPECT_EQ(a.stats.packets, b.stats.packets);
  EXPECT_EQ(a.stats.delivered, b.stats.delivered);
  EXPECT_EQ(a.stats.credit_stalls, b.stats.credit_stalls);
  EXPECT_EQ(a.stats.ecn_marks, b.stats.ecn_marks);
  EXPECT_EQ(a.stats.cnps, b.stats.cnps);
  EXPECT_EQ(a.stats.events, b.stats.events);
  EXPECT_EQ(a.stats.windows, b.stats.windows);
  ASSERT_EQ(a.completions.size(), b.completions.size());
  for (size_t i = 0; i < a.completions.size(); ++i) {
    EXPECT_EQ(a.completions[i].time, b.completions[i].time);
  }
}

// Rail-aligned traffic: every flow stays under its leaf, and each flow's reply.
std::vector<Flow> rail_traffic(const Rails& r) {
  std::vector<Flow> flows;
  const int n = static_cast<int>(r.nic.size());
  for (int i = 0; i < n; ++i) {
    const int leaf = i / r.per_leaf, k = i % r.per_leaf;
    const int j = leaf * r.per_leaf + (k + 1) % r.per_leaf;
    flows.push_back({i, j, int64_t{1} << 20, SimTime::picoseconds(37'000 * i)});
  }
  return flows;
}

// Every GPU to a GPU on the next leaf (through the spine) and an incast of three senders on
// other leaves into GPU 0: packets and credits cross partitions, and the spine's port down to
// leaf 0 is held by credits.
std::vector<Flow> cross_traffic(const Rails& r) {
  std::vector<Flow> flows;
  const int n = static_cast<int>(r.nic.size());
  for (int i = 0; i < n; ++i)
    flows.push_back({i, (i + r.per_leaf) % n, int64_t{1} << 19, SimTime()});
  for (int s : {r.per_leaf, 2 * r.per_leaf, 3 * r.per_leaf + 1}) {
    flows.push_back({s, 0, int64_t{1} << 20, SimTime::microseconds(3)});
  }
  return flows;
}

TEST(PacketPartitions, OneLeafEachWithTheSameOutputsOnAnyThreadCount) {
  const Rails r(4, 4);
  const std::vector<Flow> flows = cross_traffic(r);
  const Outcome one = run(r, infiniband(4, 1), flows);
  EXPECT_EQ(one.partitions, 4);
  EXPECT_GT(one.stats.windows, 0);
  EXPECT_GT(one.stats.credit_stalls, 0);  // the incast holds the spine's port down to leaf 0
  for (int threads : {2, 3, 4}) {
    SCOPED_TRACE(threads);
    expect_same(one, run(r, infiniband(4, threads), flows));
  }
}

TEST(PacketPartitions, RailTrafficRunsAsOnOneQueue) {
  // Flows that share no port run the same on any number of partitions: the windows change
  // only the order of events at one instant in different partitions, which nothing reads.
  const Rails r(4, 4);
  const std::vector<Flow> flows = rail_traffic(r);
  const Outcome single = run(r, infiniband(1, 1), flows);
  EXPECT_EQ(single.partitions, 1);
  EXPECT_EQ(single.stats.windows, 0);
  for (int partitions : {2, 4}) {
    const Outcome split = run(r, infiniband(partitions, 2), flows);
    EXPECT_EQ(split.partitions, partitions);
    for (size_t i = 0; i < flows.size() * 2; ++i) {
      EXPECT_EQ(split.finish[i], single.finish[i]) << partitions << " partitions, flow " << i;
    }
    EXPECT_EQ(split.stats.packets, single.stats.packets);
    EXPECT_EQ(split.stats.delivered, single.stats.delivered);
  }
}

TEST(PacketPartitions, WhatCrossesPartitionsArrivesAsOnOneQueue) {
  // Packets into other partitions' switches, credits back up the spine's links. Where ports
  // are contended, events at one instant in different partitions may run in another order than
  // on one queue (a packet's turn at a port, 0.33 us at 100 Gb/s), so a contended flow may
  // finish a few turns apart; the run as a whole ends within 1 % and the packets are the same.
  const Rails r(4, 4);
  const std::vector<Flow> flows = cross_traffic(r);
  const Outcome single = run(r, infiniband(1, 1), flows);
  const Outcome split = run(r, infiniband(4, 2), flows);
  EXPECT_EQ(split.stats.packets, single.stats.packets);
  EXPECT_EQ(split.stats.delivered, single.stats.delivered);
  double worst = 0;
  for (size_t i = 0; i < single.finish.size(); ++i) {
    ASSERT_NE(split.finish[i], SimTime::max()) << "flow " << i;
    worst = std::max(worst, std::abs((split.finish[i] - single.finish[i]).to_seconds()) /
                                single.finish[i].to_seconds());
  }
  EXPECT_LT(worst, 0.03);
  const SimTime last = *std::max_element(single.finish.begin(), single.finish.end());
  const SimTime split_last = *std::max_element(split.finish.begin(), split.finish.end());
  EXPECT_NEAR(split_last.to_seconds(), last.to_seconds(), 0.01 * last.to_seconds());
  EXPECT_NEAR(static_cast<double>(split.stats.credit_stalls),
              static_cast<double>(single.stats.credit_stalls),
              0.05 * static_cast<double>(single.stats.credit_stalls));
  std::printf("cross traffic on 4 partitions against 1: worst flow %.2f %%, last %.3f us vs %.3f\n",
              100 * worst, split_last.to_microseconds(), last.to_microseconds());
}

TEST(PacketPartitions, DcqcnOnInfiniBandCrossesWithItsCnps) {
  // InfiniBand with DCQCN marking at the switches: the receivers' CNPs reach senders in other
  // partitions; each port marks from its own stream, so any thread count gives the same marks.
  const Rails r(4, 4);
  std::vector<Flow> flows;
  for (int s : {4, 8, 12, 5, 9, 13}) flows.push_back({s, 0, int64_t{4} << 20, SimTime()});
  PacketConfig c = infiniband(4, 1);
  c.cc = CongestionControl::kDcqcn;
  c.ecn = true;
  const Outcome one = run(r, c, flows);
  EXPECT_GT(one.stats.ecn_marks, 0);
  EXPECT_GT(one.stats.cnps, 0);
  c.threads = 2;
  expect_same(one, run(r, c, flows));
}

PacketConfig roce(int partitions, int threads) {
  PacketConfig c;  // RoCEv2: PFC, ECN, DCQCN
  c.partitions = partitions;
  c.threads = threads;
  return c;
}

// Six senders on three other leaves into GPU 0 (the spine's port down to leaf 0 the bottleneck),
// and each finished flow's reply.
std::vector<Flow> incast(int64_t bytes) {
  std::vector<Flow> flows;
  for (int s : {4, 8, 12, 5, 9, 13}) flows.push_back({s, 0, bytes, SimTime()});
  return flows;
}

TEST(PacketPartitions, RoceWithPfcAndDcqcnCrossesWithItsPausesAndCnps) {
  // RoCE's PAUSE frames go up links between partitions (the spine's port to leaf 0 fills, the
  // leaves' ports up to the spine pause), its receivers' CNPs back to their senders: the same
  // outputs on any thread count, and within a few percent of one queue.
  const Rails r(4, 4);
  const std::vector<Flow> flows = incast(int64_t{4} << 20);
  PacketConfig c = roce(4, 1);
  c.switch_buffer = int64_t{1} << 20;  // a shallow buffer: PFC pauses the spine's senders
  const Outcome one = run(r, c, flows);
  EXPECT_EQ(one.partitions, 4);
  EXPECT_GT(one.stats.pauses, 0);
  EXPECT_GT(one.stats.cnps, 0);
  EXPECT_EQ(one.stats.drops, 0);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(threads);
    c.threads = threads;
    const Outcome split = run(r, c, flows);
    expect_same(one, split);
    EXPECT_EQ(split.stats.pauses, one.stats.pauses);
  }
  const Outcome single = run_on_one_queue(r, c, flows);
  const SimTime last = *std::max_element(single.finish.begin(), single.finish.end());
  const SimTime split_last = *std::max_element(one.finish.begin(), one.finish.end());
  EXPECT_NEAR(split_last.to_seconds(), last.to_seconds(), 0.05 * last.to_seconds());
}

PacketConfig lossy_roce(int partitions, int threads) {
  PacketConfig c = roce(partitions, threads);
  c.pfc = false;
  c.ecn = false;
  c.cc = CongestionControl::kNone;
  c.switch_buffer = int64_t{256} << 10;
  c.nack_interval = SimTime::microseconds(20);
  return c;
}

SimTime last_finish(const Outcome& o) {
  return *std::max_element(o.finish.begin(), o.finish.end());
}

TEST(PacketPartitions, LossyRoceRecoversByGoBackNAcrossPartitions) {
  // RoCE without PFC or congestion control and a shallow buffer: four senders under leaf 1 into
  // GPU 0 overflow leaf 1's port up to the spine. The receiver (partition 0) NACKs each gap,
  // and the NACK reaches its sender (partition 1) as a message carrying the packet to go back
  // to; a lost last packet is resent by its sender's timeout, judged between windows. The
  // contention is all in one partition, so the run meets one queue's within a few percent.
  const Rails r(4, 4);
  std::vector<Flow> flows;
  for (int s : {4, 5, 6, 7}) flows.push_back({s, 0, int64_t{1} << 20, SimTime()});
  const Outcome split = run(r, lossy_roce(4, 2), flows);
  const Outcome single = run(r, lossy_roce(1, 1), flows);
  EXPECT_EQ(split.partitions, 4);
  EXPECT_GT(split.stats.drops, 0);
  EXPECT_GT(split.stats.retransmitted, 0);
  EXPECT_GT(single.stats.drops, 0);
  for (const SimTime t : split.finish) EXPECT_NE(t, SimTime::max());
  std::printf(
      "lossy RoCE, one leaf's incast, 4 partitions against 1: last %.3f us vs %.3f, drops "
      "%lld vs %lld, resent %lld vs %lld\n",
      last_finish(split).to_microseconds(), last_finish(single).to_microseconds(),
      static_cast<long long>(split.stats.drops), static_cast<long long>(single.stats.drops),
      static_cast<long long>(split.stats.retransmitted),
      static_cast<long long>(single.stats.retransmitted));
  EXPECT_NEAR(last_finish(split).to_seconds(), last_finish(single).to_seconds(),
              0.05 * last_finish(single).to_seconds());
}

TEST(PacketPartitions, LossyIncastFromSeveralPartitionsIsTheSameOnAnyThreadCount) {
  // Six senders on three leaves into GPU 0, dropping at the leaves and at the spine: which
  // packet a full queue drops depends on the order of same-instant arrivals, which partitions
  // change, and go-back-N without congestion control amplifies it (every loss resends a whole
  // window). The outputs are still the same for any thread count, and every flow completes.
  const Rails r(4, 4);
  const std::vector<Flow> flows = incast(int64_t{1} << 18);
  const Outcome one = run(r, lossy_roce(4, 1), flows);
  EXPECT_GT(one.stats.drops, 0);
  EXPECT_GT(one.stats.retransmitted, 0);
  for (const SimTime t : one.finish) EXPECT_NE(t, SimTime::max());
  for (int threads : {2, 4}) {
    SCOPED_TRACE(threads);
    const Outcome split = run(r, lossy_roce(4, threads), flows);
    expect_same(one, split);
    EXPECT_EQ(split.stats.drops, one.stats.drops);
    EXPECT_EQ(split.stats.retransmitted, one.stats.retransmitted);
  }
  const Outcome single = run(r, lossy_roce(1, 1), flows);
  std::printf(
      "lossy RoCE, three leaves' incast, 4 partitions against 1: last %.3f us vs %.3f, "
      "drops %lld vs %lld\n",
      last_finish(one).to_microseconds(), last_finish(single).to_microseconds(),
      static_cast<long long>(one.stats.drops), static_cast<long long>(single.stats.drops));
}

TEST(PacketPartitions, HpccAcksCarryTheirTelemetryAcrossPartitions) {
  // HPCC on RoCE: each switch egress stamps the packet it sends (in-band telemetry), packets
  // take their records into the next partition, and each ACK takes them back to its sender's
  // partition, whose rate acts on them. The six-sender incast through the spine: the same
  // outputs on any thread count; HPCC holds the spine's queue down on partitions as on one
  // queue, and the run ends within 2 % of one queue's.
  const Rails r(4, 4);
  const std::vector<Flow> flows = incast(int64_t{1} << 20);
  PacketConfig c = roce(4, 1);
  c.cc = CongestionControl::kHpcc;
  const Outcome one = run(r, c, flows);
  EXPECT_GT(one.stats.acks, 0);
  EXPECT_EQ(one.stats.drops, 0);
  for (const SimTime t : one.finish) EXPECT_NE(t, SimTime::max());
  c.threads = 3;
  const Outcome threaded = run(r, c, flows);
  expect_same(one, threaded);
  EXPECT_EQ(threaded.stats.acks, one.stats.acks);
  const Outcome single = run_on_one_queue(r, c, flows);
  std::printf("HPCC incast on 4 partitions against 1: last %.3f us vs %.3f\n",
              last_finish(one).to_microseconds(), last_finish(single).to_microseconds());
  EXPECT_NEAR(last_finish(one).to_seconds(), last_finish(single).to_seconds(),
              0.02 * last_finish(single).to_seconds());
}

// Rails with a second spine: per-packet routing has two ways up from each leaf.
Rails two_spines() {
  Rails r(4, 4);
  const int spine2 = r.t.add_node(TopoNode{NodeKind::kSwitch, -1, 1, 2, 0, "spine2"});
  for (int l : r.leaf) {
    r.t.add_link(l, spine2, Bandwidth::bytes_per_second(kRate), kLinkLatency, LinkTier::kLeafSpine);
  }
  r.t.finalize();
  return r;
}

// Per-packet routing's four cases: spraying or adaptive, on InfiniBand or RoCE with PFC.
struct PerPacketCase {
  PacketRouting routing;
  bool ib;
  std::string name() const {
    return std::string(routing == PacketRouting::kSpray ? "spray" : "adaptive") +
           (ib ? " on InfiniBand" : " on RoCE");
  }
  PacketConfig config(int partitions, int threads) const {
    PacketConfig c = ib ? infiniband(partitions, threads) : roce(partitions, threads);
    c.routing = routing;
    return c;
  }
};

const PerPacketCase kPerPacket[] = {{PacketRouting::kSpray, true},
                                    {PacketRouting::kSpray, false},
                                    {PacketRouting::kAdaptive, true},
                                    {PacketRouting::kAdaptive, false}};

TEST(PacketPartitions, PerPacketRoutingIsTheSameOnAnyThreadCount) {
  // Each packet of the cross traffic picks its way up from its leaf (spraying at random,
  // adaptive onto the shorter queue) and the receivers place packets as they come: the same
  // outputs on any thread count, on InfiniBand and on RoCE with PFC.
  const Rails r = two_spines();
  const std::vector<Flow> flows = cross_traffic(r);
  for (const PerPacketCase& k : kPerPacket) {
    SCOPED_TRACE(k.name());
    const Outcome one = run(r, k.config(4, 1), flows);
    EXPECT_EQ(one.partitions, 4);
    for (const SimTime t : one.finish) EXPECT_NE(t, SimTime::max());
    expect_same(one, run(r, k.config(4, 3), flows));
  }
}

TEST(PacketPartitions, PerPacketRoutingMeetsOneQueueOverSeeds) {
  // Where packets meet at contended ports the partitions change which of two same-instant
  // arrivals goes first; under per-packet routing that moves the run about as much as another
  // seed does (one queue, seeds 0-3: spraying 542-562 us on InfiniBand, 562-610 on RoCE;
  // adaptive 540-542 and 570-635). Over four seeds the mean of the last finish on 4 partitions
  // is within 4 % of one queue's (+1.8, +3.0, +0.2 and -0.7 % when written).
  const Rails r = two_spines();
  const std::vector<Flow> flows = cross_traffic(r);
  for (const PerPacketCase& k : kPerPacket) {
    SCOPED_TRACE(k.name());
    double single = 0, split = 0;
    for (uint64_t seed = 0; seed < 4; ++seed) {
      PacketConfig one_queue = k.config(1, 1), four = k.config(4, 1);
      one_queue.seed = four.seed = seed;
      single += last_finish(run(r, one_queue, flows)).to_seconds() / 4;
      split += last_finish(run(r, four, flows)).to_seconds() / 4;
    }
    EXPECT_NEAR(split, single, 0.04 * single);
  }
}

TEST(PacketPartitions, AtMostOnePerLeafAndNoneWithoutHostLinks) {
  const Rails r(3, 2);
  Simulator sim;
  EXPECT_EQ(PacketNetwork(r.t, infiniband(8, 2), &sim).partitions(), 3);
  // NICs with no host link: a flow may start at a NIC at once, so no window is safe.
  Topology bare;
  const Bandwidth bw = Bandwidth::bytes_per_second(kRate);
  const int sw0 = bare.add_node(TopoNode{NodeKind::kSwitch, -1, 0, 1, 0, "sw0"});
  const int sw1 = bare.add_node(TopoNode{NodeKind::kSwitch, -1, 1, 1, 0, "sw1"});
  bare.add_link(sw0, sw1, bw, kLinkLatency, LinkTier::kLeafSpine);
  for (int sw : {sw0, sw1}) {
    const int nic = bare.add_node(TopoNode{NodeKind::kNic, sw, 0, 0, 0, "nic"});
    bare.add_link(nic, sw, bw, kLinkLatency, LinkTier::kNicLeaf);
  }
  EXPECT_EQ(PacketNetwork(bare, infiniband(2, 2), &sim).partitions(), 1);
}

TEST(PacketPartitions, SupportedWhereNothingIsFastForwarded) {
  PacketConfig c = infiniband(4, 1);
  const char* why = nullptr;
  EXPECT_TRUE(partitions_supported(c, &why));
  EXPECT_EQ(why, nullptr);
  PacketConfig rocev2;  // RoCE: go-back-N's NACKs cross as messages
  EXPECT_TRUE(partitions_supported(rocev2, &why));
  rocev2.pfc = false;
  EXPECT_TRUE(partitions_supported(rocev2, &why));
  PacketConfig spray = c;
  spray.routing = PacketRouting::kSpray;
  EXPECT_TRUE(partitions_supported(spray, &why));
  PacketConfig hpcc = c;
  hpcc.cc = CongestionControl::kHpcc;
  EXPECT_TRUE(partitions_supported(hpcc, &why));
  PacketConfig ff = c;
  ff.fast_forward = true;
  EXPECT_FALSE(partitions_supported(ff, &why));
  EXPECT_NE(std::string(why).find("fast_forward"), std::string::npos);
}

}  // namespace
}  // namespace preflight::packet
