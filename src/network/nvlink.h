// In-node GPU-to-GPU bandwidth, as NCCL's topology detection sees it (shared/reference/nccl.md
// §3): the one source of in-node bandwidth. NCCL's graph search (collective/nccl_model.cc)
// starts from one GPU's NVLinks at NCCL's per-link speed, and the analytical network times
// in-node send/recv, all-to-all and the alpha-beta model's in-node collectives at the same
// figure. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/units.h"
#include "config/scenario.h"

namespace preflight {

// NCCL's compute capability of a GPU architecture: volta 70, ampere 80, hopper 90, blackwell
// 100.
int compute_capability(GpuArchitecture architecture);

// M of an NCCL version "2.M" or "2.M.P"; 28 (the default, NCCL 2.28) when it does not parse
// (the NCCL planner reports bad versions).
int nccl_minor_version(std::string_view version);

// NCCL's bandwidth of one NVLink, GB/s per direction (ncclTopoNVLinkBw, nccl.md §3): SM60 18,
// SM70 and SM80 20, SM86 12, SM90 20.6 (20.0 before NCCL 2.20), SM100 40.1 (40.0 before 2.28).
double nccl_nvlink_gbs(int compute_capability, int nccl_minor);

// The factor on NCCL's per-link speed when the cluster overrides its GPU's NVLink bandwidth:
// cluster.nvlink_bandwidth / gpu.nvlink_bandwidth (1 when it does not).
double nvlink_scale(const ClusterConfig& c);

// One GPU's in-node bandwidth per direction: gpu.nvlinks × nccl_nvlink_gbs × nvlink_scale
// (H100: 18 × 20.6 = 370.8 GB/s, A100: 12 × 20 = 240 GB/s); without NVLink (gpu.nvlinks 0) its
// PCIe x16 link, width × code / 80 (Gen3 12, Gen4 24, Gen5 48 GB/s; nccl.md §3).
Bandwidth gpu_nvlink_bandwidth(const ClusterConfig& c, int nccl_minor = 28);

}  // namespace preflight
