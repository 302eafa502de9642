// PacketNetwork's partitions (the model: packet_network.h; docs/packet_network.md "Partitions"):
// a conservative, window-synchronous parallel discrete-event simulation (Chandy–Misra's
// lookahead, run in barrier-separated windows as in Lubachevsky's bounded-lag method). Each
// partition owns some NICs and switches and runs their events on its own queue. Whatever one
// partition does to another crosses a link whose latency is at least step_, so every partition
// can run the window [T, T + step_) alone; at the window's end the job's thread takes in each
// partition's outbox, partitions in order, and schedules the next window. Threads run the
// partitions of a window side by side; each partition runs the same events in the same order
// whichever thread runs it, so the outputs do not depend on the thread count.
#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "base/check.h"
#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {
namespace {

// A window of fewer events than this (the last window's count) runs on the job's thread alone:
// waking the workers costs more than they would save. The ThreadSanitizer build (make
// tsan-test) sets it to 0, so that every window of the tests runs on threads.
#ifndef PREFLIGHT_PACKET_SERIAL_BELOW
#define PREFLIGHT_PACKET_SERIAL_BELOW 128
#endif
constexpr int64_t kSerialBelow = PREFLIGHT_PACKET_SERIAL_BELOW;

// A worker waits this many pauses for the next window before it sleeps.
constexpr int kSpins = 4096;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

bool is_network(NodeKind k) { return k == NodeKind::kNic || k == NodeKind::kSwitch; }

}  // namespace

PacketNetwork::~PacketNetwork() {
  if (pool_ != nullptr) {
    pool_->stop = true;
    pool_->epoch.fetch_add(1, std::memory_order_release);
    pool_->epoch.notify_all();
    for (std::thread& t : pool_->workers) t.join();
  }
}

void PacketNetwork::partition(int wanted) {
  const auto& nodes = topo_.nodes;
  const int n = static_cast<int>(nodes.size());
  // Each NIC's switch (its first switch neighbour), and the leaves: the switches a NIC hangs
  // off, in node order.
  std::vector<int> leaf_of(n, -1);
  std::vector<uint8_t> is_leaf(n, 0);
  SimTime host = SimTime::max(), network = SimTime::max();
  for (const TopoLink& l : topo_.links) {
    for (int dir = 0; dir < 2; ++dir) {
      const int a = dir == 0 ? l.a : l.b, b = dir == 0 ? l.b : l.a;
      if (nodes[a].kind == NodeKind::kNic && nodes[b].kind == NodeKind::kSwitch && leaf_of[a] < 0) {
        leaf_of[a] = b;
        is_leaf[b] = 1;
      }
    }
    const bool na = is_network(nodes[l.a].kind), nb = is_network(nodes[l.b].kind);
    if (na && nb) network = std::min(network, l.latency);
    // A host link into a NIC: the least a flow's first hops take before its NIC, and its last
    // after the NIC it arrives at.
    if (na != nb && (nodes[l.a].kind == NodeKind::kNic || nodes[l.b].kind == NodeKind::kNic)) {
      host = std::min(host, l.latency);
    }
  }
  int leaves = 0;
  for (int v = 0; v < n; ++v) leaves += is_leaf[v];
  const int count = std::min({wanted, leaves, PacketConfig::kMaxPartitions});
  if (count < 2 || host == SimTime::max() || host <= SimTime()) return;
  // The leaves take the partitions in turn, each NIC its leaf's; the switches above them
  // likewise, in node order; a NIC on no switch and the hosts' nodes (which run no events) 0.
  std::vector<int> part(n, 0);
  int next = 0;
  for (int v = 0; v < n; ++v) {
    if (is_leaf[v]) part[v] = next++ % count;
  }
  next = 0;
  for (int v = 0; v < n; ++v) {
    if (nodes[v].kind == NodeKind::kSwitch && !is_leaf[v]) part[v] = next++ % count;
  }
  for (int v = 0; v < n; ++v) {
    if (leaf_of[v] >= 0) part[v] = part[leaf_of[v]];
  }
  SimTime cross = SimTime::max();
  for (const TopoLink& l : topo_.links) {
    if (is_network(nodes[l.a].kind) && is_network(nodes[l.b].kind) && part[l.a] != part[l.b]) {
      cross = std::min(cross, l.latency);
    }
  }
  if (cross <= SimTime()) return;  // a zero-latency link between partitions: no window
  // A window: no longer than the shortest link between partitions (nothing sent across lands
  // in the window it was sent in), nor than a flow's shortest way from its last packet's
  // send to the job's next start (the network's shortest link, then a host link in).
  step_ = std::min(cross, network == SimTime::max() ? cross : network + host);
  host_ = host;
  part_of_ = std::move(part);
  parts_.clear();
  for (int i = 0; i < count; ++i) {
    auto p = std::make_unique<Part>();
    p->net = this;
    p->index = i;
    p->own = std::make_unique<Simulator>();
    p->sim = p->own.get();
    parts_.push_back(std::move(p));
  }
  main_part_ = std::make_unique<Part>();
  main_part_->net = this;
  main_part_->index = -1;
  main_part_->sim = sim_;
  main_ = main_part_.get();
  single_ = false;
  // Each switch port marks from its own stream, so that its marks do not depend on the order
  // the partitions run in.
  for (size_t c = 0; c < ports_.size(); ++c) {
    uint64_t state = config_.seed ^ 0x5eedull ^ (0x9e3779b97f4a7c15ull * (c + 1));
    ports_[c].rng = next_random(&state);
  }
  threads_ = std::clamp(config_.threads, 1, count);
  if (threads_ > 1) {
    pool_ = std::make_unique<Pool>();
    pool_->events.assign(threads_, 0);
    for (int w = 1; w < threads_; ++w) {
      pool_->workers.emplace_back([this, w] {
        Pool& pool = *pool_;
        uint32_t seen = 0;
        for (;;) {
          uint32_t e = 0;
          for (int spins = 0; (e = pool.epoch.load(std::memory_order_acquire)) == seen;) {
            if (++spins < kSpins) {
              cpu_relax();
            } else {
              pool.epoch.wait(seen, std::memory_order_acquire);
            }
          }
          seen = e;
          if (pool.stop) return;
          int64_t ran = 0;
          const size_t n = parts_.size();
          for (size_t i = n * w / threads_; i < n * (w + 1) / threads_; ++i)
            ran += parts_[i]->sim->run_until(pool.end);
          pool.events[w] = ran;
          pool.left.fetch_sub(1, std::memory_order_release);
        }
      });
    }
  }
}

void PacketNetwork::sync_with_job() { exact_main_ = true; }

void PacketNetwork::schedule_tick(SimTime at) {
  if (single_ || at >= tick_at_) return;
  tick_at_ = at;
  ++tick_gen_;
  sim_->schedule(std::max(at, sim_->now()), main_, encode(kTick, 0, tick_gen_));
}

void PacketNetwork::tick() {
  tick_at_ = SimTime::max();
  const SimTime now = sim_->now();
  SimTime first = SimTime::max();
  for (const auto& p : parts_) first = std::min(first, p->sim->next_time());
  if (first == SimTime::max()) return;  // the next flow's start schedules the next window
  if (first > now) {
    schedule_tick(first);
    return;
  }
  SimTime end = now + step_;
  // The job's next event may start a flow (or, with degraded links, change a link's rate):
  // its first packet reaches a NIC host_ after it.
  const SimTime job = sim_->next_time();
  if (job != SimTime::max()) end = std::min(end, exact_main_ ? job : job + host_);
  // A flow whose last packet is on its way may finish within the window, and the job start
  // the next host_ after that.
  int64_t ending = 0;
  for (const auto& p : parts_) ending += p->ending;
  if (ending > 0) end = std::min(end, now + host_);
  if (end <= now) {
    schedule_tick(now);  // after the job's events at this instant
    return;
  }
  horizon_ = end;
  main_->stats.windows++;
  run_window(end);
  exchange();
  SimTime later = SimTime::max();
  for (const auto& p : parts_) later = std::min(later, p->sim->next_time());
  if (later != SimTime::max()) schedule_tick(later);
}

void PacketNetwork::run_window(SimTime end) {
  int64_t ran = 0;
  if (threads_ <= 1 || window_events_ < kSerialBelow) {
    for (const auto& p : parts_) ran += p->sim->run_until(end);
    window_events_ = ran;
    return;
  }
  Pool& pool = *pool_;
  pool.end = end;
  pool.left.store(threads_ - 1, std::memory_order_relaxed);
  pool.epoch.fetch_add(1, std::memory_order_release);
  pool.epoch.notify_all();
  for (size_t i = 0; i < parts_.size() / threads_; ++i) ran += parts_[i]->sim->run_until(end);
  while (pool.left.load(std::memory_order_acquire) > 0) cpu_relax();
  for (int w = 1; w < threads_; ++w) ran += pool.events[w];
  window_events_ = ran;
}

void PacketNetwork::exchange() {
  // The drops first: a timeout judged below reads every partition's.
  for (const auto& src : parts_) {
    for (const int flow : src->dropped) flows_[flow].drops++;
    src->dropped.clear();
  }
  for (const auto& src : parts_) {
    for (const Message& m : src->outbox) {
      switch (m.kind) {
        case Message::kEvent: {
          Part& to = *parts_[m.part];
          to.sim->schedule(m.at, &to, m.payload);
          break;
        }
        case Message::kPacket:
        case Message::kAck:
          take_packet(*parts_[m.part], m.at, m.packet,
                      m.wire < 0 ? nullptr : &src->int_outbox[static_cast<size_t>(m.wire)],
                      m.kind == Message::kAck ? kAck : kArrive);
          break;
        case Message::kReturn:
          take_return(*parts_[m.part], static_cast<int>(m.payload), m.at, m.wire);
          break;
        case Message::kDone:
          schedule(*main_, m.at, kFinish, m.payload);
          break;
        case Message::kNack:
          take_nack(*parts_[m.part], m.at, static_cast<int>(m.payload), m.wire);
          break;
        case Message::kTimeout:
          judge_timeout(static_cast<int>(m.payload), m.at);
          break;
      }
    }
    src->outbox.clear();
    src->int_outbox.clear();
  }
}

void PacketNetwork::take_packet(Part& to, SimTime at, const Packet& packet, const IntRecord* ints,
                                Event e) {
  const int id = alloc_packet(to);
  to.packets[id] = packet;
  if (ints != nullptr) {
    std::copy_n(ints, kMaxIntHops, &to.int_records[static_cast<size_t>(id) * kMaxIntHops]);
  }
  to.sim->schedule(std::max(at, to.sim->now()), &to, encode(e, id, 0));
}

int64_t PacketNetwork::stash_ints(Part& c, int id) {
  if (config_.cc != CongestionControl::kHpcc) return -1;
  const auto at = static_cast<int64_t>(c.int_outbox.size());
  const IntRecord* from = &c.int_records[static_cast<size_t>(id) * kMaxIntHops];
  c.int_outbox.insert(c.int_outbox.end(), from, from + kMaxIntHops);
  return at;
}

void PacketNetwork::take_nack(Part& to, SimTime at, int flow, int64_t seq) {
  int slot = 0;
  if (to.free_nacks.empty()) {
    slot = static_cast<int>(to.nacks.size());
    to.nacks.emplace_back(flow, seq);
  } else {
    slot = to.free_nacks.back();
    to.free_nacks.pop_back();
    to.nacks[slot] = {flow, seq};
  }
  to.sim->schedule(std::max(at, to.sim->now()), &to, encode(kNack, slot, 0));
}

// A sender's timeout with partitions: what its kTimeout does on one queue (packet_network.cc),
// judged by the job's thread between windows, when every partition stands at the window's end.
// A flow that lost packets goes back to the receiver's next one at the window's end (the
// timeout's time, or up to a window after it); one that lost none looks again later.
void PacketNetwork::judge_timeout(int flow, SimTime at) {
  Flow& f = flows_[flow];
  if (f.finished || f.expected >= f.next_seq) {
    f.timeout_pending = false;
    return;
  }
  const int owner = part_of_[ports_[f.path[f.begin]].from];
  if (f.drops == f.drops_handled) {
    parts_[owner]->sim->schedule(std::max(at + config_.nack_interval, horizon_),
                                 parts_[owner].get(), encode(kTimeout, flow, 0));
    return;
  }
  f.timeout_pending = false;
  f.drops_handled = f.drops;
  take_nack(*parts_[owner], horizon_, flow, f.expected);
}

void PacketNetwork::take_return(Part& to, int channel, SimTime at, int64_t wire) {
  ports_[channel].returns.emplace_back(at, wire);
  arm_credit_wake(to, channel);
}

}  // namespace packet
}  // namespace preflight
