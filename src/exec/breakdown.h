// Breakdown: where one rank's (or one rank class's) wall time went, for every workload the
// execution core runs: the generated Megatron workload (exec/executor.h) and imported traces
// (interop/chakra_replay.h). The parts add up to the rank's end time; each instant counts once,
// compute before communication before host work.
#pragma once

#include "base/units.h"

namespace preflight {

struct Breakdown {
  SimTime compute;  // compute kernels (GEMMs, attention, memory-bound)
  // Device idle while the host works: launch-bound dispatch of a generated workload; in a trace
  // replay, only CPU ops running.
  SimTime host_overhead;
  SimTime tp_comm;     // exposed tensor-parallel communication
  SimTime pp_comm;     // exposed pipeline send/recv transfer time
  SimTime dp_comm;     // exposed data-parallel (and tied-embedding) gradient reduction
  SimTime ep_comm;     // exposed expert-parallel token dispatch/combine (all-to-all)
  SimTime cp_comm;     // exposed context-parallel K/V exchange
  SimTime other_comm;  // exposed communication of no known kind (trace nodes without a category)
  SimTime optimizer;   // optimizer step
  // The compute stream waiting for activation copies to or from host memory (offloading).
  SimTime offload;
  // Idle waiting for other ranks or stages (pipeline fill and drain); in a trace replay, nothing
  // running at all.
  SimTime bubble;

  SimTime exposed_comm() const {
    return tp_comm + pp_comm + dp_comm + ep_comm + cp_comm + other_comm;
  }
  SimTime total() const {
    return compute + host_overhead + exposed_comm() + optimizer + offload + bubble;
  }
};

}  // namespace preflight
