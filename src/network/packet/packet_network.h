// PacketNetwork: the packet-level rung of the network (docs/packet_network.md). Flows along
// routed paths of a Topology (directed channels 2·link + dir, as the Router gives them) are cut
// into MTU packets with their headers and carried hop by hop: serialization at each port's line
// rate, propagation at each link's latency, FIFO output queues, and at the network switches a
// shared buffer with PFC, ECN marking and loss:
//  * Sender (the first NIC on the path): the NIC's egress port serves its flows round-robin, each
//    paced at its congestion-control rate (RoCEv2 NICs, HPCC/SimAI's RdmaHw: a flow is eligible
//    when its next-send time has come); PFC pauses stop the port after the packet on the wire.
//  * Switch buffer (Broadcom-like shared buffer, as the HPCC/SimAI ns-3 MMU): per ingress port
//    `reserve` bytes free, then shared usage; PFC pauses the upstream port once its shared usage
//    reaches the dynamic threshold pfc_alpha·(buffer − Σ headroom − Σ reserve − shared used) and
//    resumes it `resume_offset` below; without PFC an arriving packet is dropped when its egress
//    queue would pass dt_alpha·(buffer − used) (Choudhury–Hahne dynamic threshold).
//  * ECN (RED at the switch egress, on dequeue): the queue at dequeue above kmin marks with
//    probability pmax·(q − kmin)/(kmax − kmin), above kmax always; thresholds are given at
//    40 Gb/s (DCQCN's paper) and scale with the port's line rate.
//  * Receiver (the last NIC): in-order packets advance the flow; a marked packet sends a CNP to
//    the sender, at most one per flow per cnp_interval (DCQCN's notification point); a gap (a
//    dropped packet) sends a NACK and the sender goes back to the missing packet (go-back-N), at
//    most one NACK per expected packet per nack_interval; a sender whose last packet was lost
//    resends from the receiver's next one after nack_interval. CNPs and NACKs are not queued: they
//    reach the sender after the path's propagation delay (they ride the highest priority, whose
//    queues hold nothing else).
//  * DCQCN (Zhu et al., SIGCOMM 2015) at the sender: on a CNP Rt = Rc, Rc ·= (1 − α/2),
//    α ← (1 − g)α + g; α decays by (1 − g) every alpha_interval without a CNP; rate increases
//    come from a timer and a byte counter, in fast recovery (Rc = (Rt + Rc)/2) for the first F
//    steps, then additive (Rt += R_AI) and hyper (Rt += R_HAI) increase.
//  * HPCC (Li et al., SIGCOMM 2019; the HPCC/SimAI ns-3 model's single-rate form) at the sender:
//    each switch egress stamps the data packet it dequeues with its time, bytes sent and queue
//    (in-band telemetry, up to 5 hops, 42 header bytes); the receiver echoes them in a per-packet
//    ACK, which reaches the sender after the path's propagation delay. Per hop the sender takes
//    U_j = txRate/B_j + min(q, q_prev)/(B_j·T) (T the flow's base RTT), U the largest, smooths
//    u over T, and sets R = Rc/(u/η) + R_AI when u ≥ η or after maxStage additive steps, else
//    R = Rc + R_AI; the reference Rc commits once per RTT, the other ACKs apply R (fast react).
//    The window R·T bounds the bytes in flight.
//  * InfiniBand (link_layer: infiniband): no PFC, ECN or drops; each switch ingress port
//    advertises credit_buffer bytes of receive buffer to the port upstream, which sends a
//    packet only when the credits cover its wire bytes and spends them; the switch returns a
//    packet's credits when it forwards the packet, and they reach the upstream port after the
//    link's latency (IBTA vol. 1 §7.9, link-level flow control: the flow-control packets ride
//    their own virtual lane, unqueued here). A full buffer holds the upstream port, and the
//    ports before it in turn (congestion spreading; head-of-line blocking of the flows that
//    share them). Returned credits cost no event: the port takes in those that have arrived
//    whenever it looks for credits, and a port starved of them is woken once, when the return
//    that feeds it arrives. Its receivers send nothing back (no ECN, drops or ACKs), so with
//    per-flow routing a packet is delivered when its last hop's serialization ends, at the
//    arrival time then known, without an arrival event.
//  * Fast-forward (config fast_forward, off by default): every fast_forward_window the network
//    measures each active flow's delivery rate. When the same flows have run two windows in a
//    row at rates within the tolerance, with no drop, as many PFC pauses and credit stalls
//    (within two) as the window before and no flow held back by DCQCN, the state is taken as
//    steady and the network jumps ahead: every pending event of the network moves later by the
//    jump (Simulator::advance), each flow is credited its measured rate times the jump in whole
//    packets (its packets in flight renumbered after them), the ports on its path their wire
//    bytes, and each port the fraction of the jump link-level flow control held it in the
//    window (its held time and series; a 4:1 incast's ports held by credits or PAUSE frames many
//    times a window are a periodic state). The jump stops two windows before the first flow
//    would send its last packet, before any event outside the network (a kernel's end, a flow
//    about to start) and before any pending start or finish; the endings run exactly.
//  * Routing: a flow's packets follow its ECMP path, or (routing: spray | adaptive) each switch
//    picks a packet's next hop among the equal-cost ones toward the flow's receiving NIC, at
//    random (a hash of the flow, the packet and the switch) or the one whose output queue holds
//    the fewest bytes (ties by the same hash). The receiver then places packets as they come
//    (out of order, as RDMA NICs with adaptive routing do), sends no NACK for a gap, and a lost
//    packet is resent after the sender's timeout (the scenario allows these on lossless fabrics
//    only).
// Events: a packet's next hop is known when it goes on a wire, so its arrival there (or its
// delivery, with quiet receivers) is scheduled then; the end of a serialization costs an event
// only where the port has a packet queued, and a NIC is woken once per send, when its wire and a
// flow's pacing both allow it. A paced train through idle switch ports costs one event a packet
// at the NIC and one at each switch it crosses.
// Hops before the first NIC and after the last (PCIe inside the hosts) add their latency only.
// Deterministic: marking draws come from a generator seeded by `seed`, in event order.
// Partitions (config partitions > 1; docs/packet_network.md "Partitions"): the NICs and
// switches are split into partitions, each with its own event queue, run side by side (on up to
// `threads` threads) in windows of simulated time no longer than the shortest link between two
// partitions, so that nothing one partition sends another (a packet, a returned credit, a PAUSE,
// a CNP) can land inside the window it was sent in; at each window's end the partitions take in
// what the others sent them, in a fixed order. A flow's finish reaches the job's simulator (the
// executor), whose next flow can reach a NIC only after the hops before it: the windows are cut
// short where that could fall inside one. Each switch port draws its ECN marks from its own
// stream. The partitions, not the threads, fix every output: the same for any thread count.
// A NACK crosses to its sender's partition as a message with the packet to go back to; a
// sender's timeout (a lost last packet) is judged between windows by the job's thread, which
// alone may read the receiver's progress and the flow's drops (summed from the partitions that
// dropped them) at once, and goes back at the window's end (per-packet routing's timeouts
// alike). HPCC's telemetry travels with a packet into the next partition and with its ACK back
// to the sender's. Partitions need no fast-forward: its check reads every flow at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "base/line_allocator.h"
#include "base/units.h"
#include "config/scenario.h"
#include "engine/simulator.h"
#include "network/routing.h"
#include "network/topology.h"

namespace preflight {
namespace packet {

using PacketConfig = PacketNetworkConfig;  // config/scenario.h: simulation.packet

struct PacketStats {
  int64_t flows = 0;
  int64_t packets = 0;    // data packets put on a wire at their sender (retransmissions too)
  int64_t delivered = 0;  // packets that reached their receiver in order
  int64_t ecn_marks = 0;
  int64_t cnps = 0;
  int64_t pauses = 0;  // PAUSE frames sent
  int64_t drops = 0;
  int64_t retransmitted = 0;  // packets sent again after a NACK
  int64_t acks = 0;           // HPCC's per-packet acknowledgements
  int64_t credit_stalls = 0;  // InfiniBand: times a port found too few credits for its packet
  int64_t events = 0;
  int64_t windows = 0;  // with partitions: the windows they ran in
  // Fast-forward (PacketConfig::fast_forward): the jumps taken, the simulated time they covered
  // and the data packets credited to flows across them (counted in `packets` and `delivered`
  // too; ECN marks and CNPs are extrapolated over a jump at the rate of the window before it).
  int64_t fast_forwards = 0;
  SimTime skipped;
  int64_t skipped_packets = 0;
};

// A first-in, first-out queue on one growing array: pop_front moves a cursor, and the array
// closes up once half of it is spent, so a queue that cycles allocates nothing in the steady
// state (a std::deque frees a node and takes a new one every few hundred elements: with
// partitions on several threads, heap traffic and neighbouring nodes' lines shared between
// them).
template <typename T>
class Fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    items_.emplace_back(std::forward<Args>(args)...);
  }
  void push_back(const T& v) { items_.push_back(v); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 64 && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  auto begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() { return items_.end(); }

 private:
  std::vector<T, LineAllocator<T>> items_;  // whole lines: see LineAllocator
  size_t head_ = 0;
};

class PacketNetwork final {
 public:
  using Done = std::function<void(SimTime finish)>;

  // `topology` must outlive the network; events go on `sim` (with partitions, the network's own
  // events go on the partitions' queues, and `sim` gets each flow's finish and the windows').
  // REQUIRES: config.partitions > 1 only where partitions_supported(config) and the topology
  // has host links into its NICs (partition_topology).
  PacketNetwork(const Topology& topology, PacketConfig config, Simulator* sim);
  ~PacketNetwork();
  PacketNetwork(const PacketNetwork&) = delete;
  PacketNetwork& operator=(const PacketNetwork&) = delete;

  // Starts, `delay` after now, a flow of `bytes` along `path` (directed channels, as
  // Router::route gives them); `done` fires, from an event, when its last byte has arrived.
  // Returns the flow's id. A flow of no bytes or no path completes after `delay` plus the path's
  // latency.
  int start_flow(int64_t bytes, std::vector<int> path, SimTime delay, Done done);

  // The counters, summed over the partitions.
  PacketStats stats() const;
  // The partitions the network runs in (1: one event queue, the job's).
  int partitions() const { return static_cast<int>(parts_.size()); }
  // With partitions, no window passes an event of the job's simulator from now on (which may
  // change a link's rate: degraded links); else a window may run up to the shortest host link
  // past one, as no flow it starts reaches a NIC sooner.
  void sync_with_job();
  // Sets `channel`'s line rate (bytes/s) from its next packet on: a degraded link, or its
  // restoration.
  void set_rate(int channel, double bytes_per_second);
  // A channel's output queue now, its longest queue so far, its payload and header bytes sent,
  // and how long link-level flow control (PFC's pauses, or InfiniBand's want of credits) has
  // held it up to `now`.
  int64_t queue_bytes(int channel) const { return ports_[channel].queue_bytes; }
  int64_t max_queue(int channel) const { return ports_[channel].max_queue; }
  int64_t bytes_sent(int channel) const { return ports_[channel].tx_bytes; }
  SimTime paused_time(int channel, SimTime now) const;
  // A flow's sending rate now (DCQCN's Rc, or the line rate without congestion control).
  Bandwidth rate(int flow) const { return Bandwidth::bytes_per_second(flows_[flow].rc); }
  // Each finished flow of bytes, in the order they finished: its completion time (from its
  // first byte's turn at the sender to its last byte's arrival) and that over the time it would
  // take on an idle path (its wire bytes at the sender's rate, one packet's store and forward
  // at each further hop, the path's latency).
  struct Completion {
    SimTime time;
    double slowdown = 1;
  };
  const std::vector<Completion>& completions() const { return completions_; }

  // A switch port's output queue and flow-control hold (PFC pause or want of credits) over the
  // run up to `end`, in slices of equal length (at most kSeriesSlices; the slice starts at 1 µs
  // and doubles, neighbours merging, as the run outgrows them): per slice the time-weighted
  // mean queue, the longest queue and the fraction of the slice the port was held. Empty for a
  // port no packet queued at.
  static constexpr int kSeriesSlices = 256;
  struct Slice {
    SimTime from;
    double mean_queue = 0;  // bytes
    int64_t max_queue = 0;  // bytes
    double held = 0;        // fraction of the slice
  };
  std::vector<Slice> port_series(int channel, SimTime end) const;

 private:
  // The line rate (bytes/s) DCQCN's ECN thresholds and rate steps are given for (40 Gb/s, its
  // paper's NICs); they scale with each port's or flow's line rate.
  static constexpr double kRate40G = 40e9 / 8;
  struct Packet {
    int flow = 0;
    int64_t seq = 0;
    int32_t payload = 0;
    int32_t hop = 0;          // index into the flow's path of the channel it is on or next takes
    int32_t in_channel = -1;  // the channel it arrived on (switch buffer accounting)
    bool ecn = false;
    int8_t int_hops = 0;  // HPCC: telemetry records it carries (in int_records)
  };
  // HPCC's in-band telemetry of one switch egress, stamped when a packet leaves it.
  struct IntRecord {
    int channel = -1;
    SimTime time;
    int64_t tx_bytes = 0;  // the port's wire bytes sent before this packet
    int64_t queue = 0;     // its queue after the packet left
  };
  static constexpr int kMaxIntHops = 5;
  // Each port, switch and flow on cache lines of its own, and within a port and a flow what
  // the receiving side writes on lines apart from what the sending side writes: with
  // partitions, two threads writing neighbours' lines would take them from each other
  // (false sharing) at every packet.
  struct alignas(64) Port {
    int from = 0, to = 0;
    double rate = 0;  // bytes/s
    SimTime latency;
    int64_t kmin = 0, kmax = 0;
    Fifo<int> queue;  // packet ids (of its partition's packets)
    int64_t queue_bytes = 0, max_queue = 0, tx_bytes = 0;
    // The packet on the wire ends its serialization at free_at (busy while now < free_at). An
    // event marks that end only when something waits for the port (done_pending): a queued
    // packet, or a NIC's flows (a wake-up when the wire is free and a flow's pacing allows).
    SimTime free_at;
    bool done_pending = false;
    bool paused = false;
    bool starved = false;                // InfiniBand: waiting for the downstream port's credits
    SimTime paused_since, paused_total;  // paused or starved
    // A NIC's egress: the flows it sends, served round-robin.
    std::vector<int, LineAllocator<int>> senders;
    size_t next_sender = 0;
    // A flow among `senders` may have nothing left to send (its last packet sent, or it
    // finished): send_from_flows prunes the rotation only then, its scan being O(senders).
    bool prune = false;
    SimTime full_time;  // the serialization of a full packet (mtu + header) at `rate`
    SimTime wake_at = SimTime::max();  // a pending wake-up for paced senders
    int64_t current_wire = 0;          // the wire bytes of the packet on the wire
    // InfiniBand: credits on their way back up the link (when they arrive, bytes), in arrival
    // order. They are taken in when the port next looks for credits, so a credit costs no
    // event; a port starved of credits gets one wake-up, at the return that feeds it.
    Fifo<std::pair<SimTime, int64_t>> returns;
    bool credit_wake = false;  // a kCredit wake-up is pending
    uint64_t rng = 0;          // with partitions: its ECN marks' stream
    // InfiniBand: bytes the downstream port can still take.
    int64_t credits = 0;
    // The switch it leads into (that switch's partition writes these): the bytes it brought in
    // that the switch still buffers, and whether the switch has paused it.
    alignas(64) int64_t ingress = 0;
    bool paused_up = false;
  };
  struct alignas(64) SwitchState {
    int64_t used = 0;                   // bytes buffered
    int64_t shared = 0;                 // Σ over ingress ports of max(0, used − reserve)
    int64_t headroom = 0, reserve = 0;  // Σ over its ingress ports
  };
  struct alignas(64) Flow {
    // Set at its start.
    std::vector<int> path;
    int begin = 0, end = 0;  // the simulated hops: path[begin .. end]
    int64_t bytes = 0, packets = 0;
    SimTime head, tail;  // latency of the hops before begin and after end
    SimTime back;        // CNP/NACK delay: the simulated hops' latency
    Done done;
    double line = 0;  // its NIC's pacing rate (bytes/s)
    // Per-packet routing: the receiving NIC the switches route toward.
    int dst_nic = -1;
    SimTime base_rtt;  // HPCC
    // The sender's.
    int64_t next_seq = 0;
    bool started = false;
    bool in_rotation = false;  // among its NIC port's senders
    // Congestion control (bytes/s).
    double rc = 0, rt = 0, alpha = 1;
    SimTime next_avail;
    double pace_rate = -1;  // the rate its pacing last used, and a full packet's time at it
    SimTime pace_full;
    int64_t byte_count = 0;
    int time_stage = 0, byte_stage = 0;
    bool reacting = false;  // a CNP has come: the timers run
    uint32_t increase_gen = 0, alpha_gen = 0;
    int64_t drops_handled = 0;  // its packets lost that a timeout has resent
    bool timeout_pending = false;
    bool ending_counted = false;  // with partitions: its sender's partition counts it ending
    // HPCC: the reference rate and stage committed once per RTT, the smoothed utilization, the
    // last telemetry per hop, the packets acknowledged and the window (bytes).
    double hp_rc = 0, hp_u = 1;
    int hp_stage = 0;
    int64_t hp_last_update = -1;  // next_seq when Rc was last committed (-1: no ACK yet)
    IntRecord hp_hops[kMaxIntHops];
    int hp_nhops = 0;
    int64_t acked = 0;
    double window = 0;
    SimTime started_at;     // its first byte's turn at the sender
    int64_t ff_credit = 0;  // fast-forward, during a jump: the packets credited to it
    // The receiver's (and, for a loss, the switch's that dropped it).
    alignas(64) int64_t expected = 0;
    bool finished = false;
    bool cnp_sent = false;
    SimTime last_cnp;
    int64_t nacked = -1;  // the expected packet last NACKed, and when
    SimTime last_nack;
    int64_t nack_seq = 0;
    int64_t drops = 0;  // its packets lost
    // Fast-forward: when its last packet was delivered; the packets delivered by the last check
    // and when the last of them was (negative: none yet); the delivery rate (packets/s) between
    // the two checks before, from delivery to delivery (0: not measured yet).
    SimTime last_delivery;
    int64_t ff_mark = 0;
    SimTime ff_mark_time = SimTime::picoseconds(-1);
    double ff_rate = 0;
    int64_t ff_in_flight = 0;  // its packets sent and not delivered at the last check
    // Per-packet routing: the packets received (out of order; `expected` is the first one
    // missing).
    std::vector<uint8_t> got;
    int64_t received = 0;
  };

  enum Event : int64_t {
    kStart,
    kTxDone,
    kArrive,
    kPause,
    kResume,
    kWake,
    kCnp,
    kNack,
    kAlpha,
    kIncrease,
    kFinish,
    kTimeout,
    kAck,
    kCredit,  // InfiniBand: a port starved of credits is woken by their return
    kCheck,   // fast-forward: the end of a measuring window
    kTick,    // partitions: the next window (on the job's simulator)
  };
  // A switch port's series: the queue area, the held time and the longest queue per slice, and
  // when they were last brought up to date.
  struct PortTrace {
    SimTime last;
    std::vector<double, LineAllocator<double>> area;  // byte·seconds
    std::vector<double, LineAllocator<double>> held;  // seconds
    std::vector<int64_t, LineAllocator<int64_t>> peak;
  };
  // What one partition sends another (or the job's simulator) within a window, taken in at its
  // end: an event, a packet arriving at its next hop, credits returned up a link, a flow's finish.
  struct Message {
    // kNack: a go-back-N NACK for the sender's partition; kTimeout: a sender's timeout, which
    // the job's thread judges between windows (it reads the receiver's and the drops' state).
    // kAck: HPCC's acknowledgement of `packet`, for the sender's partition.
    enum Kind : int8_t { kEvent, kPacket, kReturn, kDone, kNack, kTimeout, kAck };
    Kind kind = kEvent;
    int part = 0;  // the partition it goes to (kDone, kTimeout: the job's thread)
    SimTime at;
    // kEvent: the event; kReturn: the channel; kDone, kNack, kTimeout: the flow.
    int64_t payload = 0;
    // kReturn: the bytes; kNack: the packet to go back to; kPacket and kAck under HPCC: where
    // the packet's telemetry (kMaxIntHops records) starts in the sender's int_outbox.
    int64_t wire = 0;
    Packet packet;  // kPacket
  };
  // A partition: the switches and NICs it owns (their ports' egress, their buffers, the flows
  // they send and receive), its event queue, its packets and counters. With one partition the
  // queue is the job's simulator; the job's simulator is a partition's own too when there are
  // several (main_: the flows' finishes and the windows).
  struct alignas(64) Part final : EventHandler {
    PacketNetwork* net = nullptr;
    int index = 0;
    Simulator* sim = nullptr;
    std::unique_ptr<Simulator> own;
    PacketStats stats;
    // Its packets and free slots, and (below) its outbox, on lines of their own (LineAllocator).
    std::vector<Packet, LineAllocator<Packet>> packets;
    std::vector<int, LineAllocator<int>> free_packets;
    std::vector<IntRecord> int_records;  // kMaxIntHops per packet id (HPCC only)
    uint64_t rng = 0;                    // ECN marks, in event order (one partition)
    std::vector<PortTrace, LineAllocator<PortTrace>> traces;  // its switch ports' series
    SimTime slice = SimTime::microseconds(1);
    int held_ports = 0;  // ports held by PFC or want of credits
    // Flows whose last packet it sent, less those it finished: a flow can finish within a
    // window only if its last packet is on its way when the window starts.
    int64_t ending = 0;
    std::vector<Message, LineAllocator<Message>> outbox;
    std::vector<IntRecord> int_outbox;  // HPCC: the telemetry of its outbox's packets and ACKs
    // With partitions: the flows of the packets its switches dropped since the last window's
    // end (each flow's count is summed between windows: a flow's packets may be dropped in
    // several partitions), and the NACKs on their way to its senders (the packet each goes back
    // to; a kNack event's index is its slot) with their free slots.
    std::vector<int, LineAllocator<int>> dropped;
    std::vector<std::pair<int, int64_t>> nacks;  // (flow, packet)
    std::vector<int> free_nacks;
    void on_event(int64_t payload) override { net->handle(*this, payload); }
  };
  // The workers running the partitions' windows beside the job's thread: thread w (0, the
  // job's, to threads_ − 1) runs the w-th of threads_ runs of consecutive partitions (runs, not
  // every threads_-th partition: neighbouring partitions' data lie side by side, and two
  // threads writing neighbours measurably took cache lines from each other).
  // A window starts when `epoch` moves on; each worker counts itself off in `left`. Between
  // windows a worker spins a while, then sleeps on `epoch` (packet_partitions.cc).
  struct Pool {
    std::vector<std::thread> workers;
    std::atomic<uint32_t> epoch{0};
    std::atomic<int> left{0};
    bool stop = false;            // read after an epoch's acquire
    SimTime end;                  // the window's end, likewise
    std::vector<int64_t> events;  // per worker: the events it ran in the window
  };

  void handle(Part& c, int64_t payload);
  // An event's payload: the event, a generation (24 bits) and an index (32 bits).
  static int64_t encode(Event e, int64_t index, uint32_t gen);
  void schedule(Part& c, SimTime at, Event e, int64_t index, uint32_t gen = 0);
  // splitmix64: a small, fast, well-mixed generator; one stream per network (per port with
  // partitions), drawn in event order (ECN marks), or hashed per packet (per-packet routing).
  static uint64_t next_random(uint64_t* state);

  bool is_switch(int node) const { return topo_.nodes[node].kind == NodeKind::kSwitch; }
  SimTime wire_time(int64_t wire, double rate) const;
  int64_t wire_bytes(const Packet& p) const { return p.payload + header_; }
  int alloc_packet(Part& c);
  Part& part_of_channel(int channel) { return *parts_[part_of_[ports_[channel].from]]; }
  const Part& part_of_channel(int channel) const { return *parts_[part_of_[ports_[channel].from]]; }
  // A sender is done with a flow once it has sent its last packet and, with one partition,
  // once the flow finished (its receiver's state, which partitions do not share: they run on
  // fabrics without loss, where the last packet sent is the last one).
  bool sent_all(const Flow& f) const { return f.next_seq >= f.packets || (single_ && f.finished); }

  // InfiniBand: takes in the credits of `channel` that have come back by now, and schedules
  // the wake-up of a starved port at its next return.
  void take_returns(Part& c, int channel);
  void arm_credit_wake(Part& c, int channel);
  void try_send(Part& c, int channel);
  // Puts `packet` on `channel`'s wire now. What the end of its serialization does to it is done
  // here, at times then known: its arrival at the next hop is scheduled, or (quiet receivers,
  // its last hop) it is delivered; the port gets an event at the end only if something waits.
  void transmit(Part& c, int channel, int packet);
  void tx_done(Part& c, int channel);
  bool busy(const Part& c, const Port& p) const { return c.sim->now() < p.free_at; }
  // Makes sure a busy port is served when its wire is free: a kTxDone at free_at for a queued
  // packet, or a NIC's wake-up at the first moment both its wire and one of its flows' pacing
  // allow a send.
  void arm_port(Part& c, int channel);
  void arrive(Part& c, int packet);
  // The receiver takes `packet`, arrived at `now` (in order: advances its flow, sends what the
  // congestion control asks for, finishes the flow with its last packet).
  void deliver(Part& c, int packet, SimTime now);
  bool send_from_flows(Part& c, int channel);
  // Puts `flow` (back) among its NIC port's senders and tries the port.
  void rotate(Part& c, int flow);
  // Switch buffer accounting of the bytes that came in on `channel` into its switch.
  void account(int channel, int64_t delta);
  int64_t pfc_threshold(int sw) const;
  void check_pause(Part& c, int channel);
  void check_resume(Part& c, int channel);
  // DCQCN's reaction point.
  void on_cnp(Part& c, int flow);
  void increase(Flow& f);
  // HPCC's reaction to an ACK carrying `packet`'s telemetry.
  void on_ack(Part& c, int packet);
  void hpcc_update(Part& c, Flow& f, int packet);
  // A flow may put another packet in flight (HPCC's window).
  bool window_open(const Flow& f) const;
  void arm_timeout(Part& c, int flow, SimTime at);
  // Go-back-N: a NACK that sends `flow`'s sender back to packet `seq`, arriving at `at`.
  void send_nack(Part& c, SimTime at, int flow, int64_t seq);
  // The sender's side of a NACK (or a timeout's resend): go back to packet `seq`.
  void go_back(Part& c, int flow, int64_t seq);
  // With partitions: a NACK for a sender of partition `to`, to arrive at `at`; and between
  // windows, a timeout that fired at `at` (packet_partitions.cc).
  void take_nack(Part& to, SimTime at, int flow, int64_t seq);
  void judge_timeout(int flow, SimTime at);
  // InfiniBand: whether `channel` holds credits for `wire` bytes; a port without them starves
  // until credits come.
  bool has_credit(Part& c, int channel, int64_t wire);
  // Brings `channel`'s series up to now (call before its queue or hold changes).
  void observe(Part& c, int channel);
  // Changes `channel`'s queue by `delta` bytes, its series kept.
  void change_queue(Part& c, int channel, int64_t delta);
  // Adds to `t` what its port held from t.last to `to` (queue `queue`, held that fraction of
  // the time: 1 or 0 from an event, the last window's fraction over a fast-forward jump), in
  // slices of `slice`.
  static void accumulate(PortTrace* t, SimTime to, int64_t queue, double held, SimTime slice);
  // Doubles `*slice`, merging each trace's neighbouring slices, until `to` falls in the last.
  using Traces = std::vector<PortTrace, LineAllocator<PortTrace>>;
  static void widen(Traces* traces, SimTime* slice, SimTime to);
  // Per-packet routing: the channel out of switch `node` for `packet`.
  int next_hop(const Part& c, int node, const Packet& packet);
  // With partitions and per-packet routing: fills the router's memo of every switch's next hops
  // toward `nic` from the job's thread, before a flow to it starts, so that the partitions'
  // threads only read it.
  void warm_next_hops(int nic);
  // The receiver's CNP for a marked packet of `flow` (DCQCN), at most one per cnp_interval.
  void notify_congestion(Part& c, int flow);
  // The receiver's side of per-packet routing: packets placed as they come.
  void deliver_unordered(Part& c, int packet);
  // Fast-forward (fast_forward.cc; one partition): the end of a measuring window; the jump,
  // `delta` on, with `credit[i]` packets for active_[i].
  void fast_forward_check(Part& c);
  void jump(Part& c, SimTime delta, const std::vector<int64_t>& credit);
  // Carries each port's link-level hold over a jump of `delta`: held the fraction of it the
  // last window held the port (its held time and series), a hold in progress resuming after it.
  void carry_holds(Part& c, SimTime delta);
  // Takes each port's held time now as the start of the next window's (ff_held_).
  void snapshot_holds(Part& c);
  // A flow's finish is scheduled `at`.
  void finish_at(Part& c, int flow, SimTime at);

  // Partitions (packet_partitions.cc). Splits the nodes and sets the windows' bounds.
  void partition(int wanted);
  // The job's simulator reached a window's start: runs the partitions to the window's end,
  // takes in what they sent each other, and schedules the next window.
  void tick();
  void schedule_tick(SimTime at);
  // Runs every partition's events before `end`, on the pool's threads where it pays.
  void run_window(SimTime end);
  // Takes in each partition's outbox, partitions in order: events, packets and credits into
  // the partitions they go to, finishes onto the job's simulator.
  void exchange();
  // Into partition `to` (idle), now: a packet arriving `at`, or credits returned to `channel`.
  // A packet (or, with `e` kAck, an ACK) from another partition, with its telemetry (HPCC's
  // kMaxIntHops records, or null).
  void take_packet(Part& to, SimTime at, const Packet& packet, const IntRecord* ints,
                   Event e = kArrive);
  // With partitions, a message's copy of packet `id`'s telemetry (HPCC; else -1).
  int64_t stash_ints(Part& c, int id);
  void take_return(Part& to, int channel, SimTime at, int64_t wire);

  const Topology& topo_;
  PacketConfig config_;
  Simulator* sim_;
  std::vector<Port> ports_;            // by channel
  std::vector<SwitchState> switches_;  // by node (used for switches only)
  std::vector<Flow> flows_;
  std::vector<Completion> completions_;
  bool credit_mode_ = false;     // InfiniBand's credit-based flow control
  std::vector<uint8_t> warmed_;  // per node: warm_next_hops has filled the router's memo
  // The receivers send nothing back (no drops, ECN, acknowledgements or per-packet routing):
  // a packet is delivered when its last hop's serialization ends, at its arrival time then
  // known, without an arrival event.
  bool quiet_receivers_ = false;
  Router router_;              // the equal-cost next hops of per-packet routing
  std::vector<int> trace_of_;  // by channel: its index in its partition's traces, or -1
  int64_t header_ = 0;         // wire bytes per packet beyond the payload
  // The partitions (one: the job's simulator), the partition of each node, and the context of
  // the job's simulator (parts_[0] with one partition).
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<int> part_of_;
  std::unique_ptr<Part> main_part_;
  Part* main_ = nullptr;
  bool single_ = true;  // one partition
  // Windows: at most `step_` long; a flow the job starts reaches its first NIC no sooner than
  // `host_` (the shortest host link into a NIC) after it, and its finish reaches the job `host_`
  // after its last packet leaves the network; `horizon_` is the last window's end.
  SimTime step_, host_, horizon_;
  bool exact_main_ = false;  // degraded links: no window passes an event of the job's simulator
  SimTime tick_at_ = SimTime::max();
  uint32_t tick_gen_ = 0;
  int threads_ = 1;
  int64_t window_events_ = 0;  // the events the last window ran
  std::unique_ptr<Pool> pool_;
  // Fast-forward's state (one partition): the flows started and not finished (pruned at each
  // check), a count of changes to that set, the starts and finishes scheduled and not yet
  // fired, and the counters at the last check.
  std::vector<int> active_;
  int64_t flow_epoch_ = 0;
  int64_t ff_epoch_ = -1;
  int pending_starts_ = 0, pending_finishes_ = 0;
  bool check_pending_ = false;
  PacketStats ff_snap_;
  // Link-level holds over the last window: each port's held time (paused_time) at the last
  // check, brought up to date at every check whose window held a port; when that was; whether
  // the last window held one.
  std::vector<SimTime> ff_held_;
  SimTime ff_check_time_;
  bool ff_held_at_check_ = false;  // a port was held at the last check
  bool ff_window_held_ = false;    // the window the last check closed held a port
  int64_t ff_holds_ = 0;           // PAUSE frames and credit stalls begun in that window
};

}  // namespace packet
}  // namespace preflight
