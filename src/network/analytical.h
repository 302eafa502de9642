// The analytical network backend (network_backend.h): closed-form bandwidths, no fabric.
#pragma once

#include <memory>

#include "config/scenario.h"
#include "network/network_backend.h"

namespace preflight {

// In-node figures at NCCL minor version `nccl_minor`'s per-link NVLink speed.
std::unique_ptr<NetworkBackend> make_analytical_network(const ClusterConfig& cluster,
                                                        int nccl_minor);

}  // namespace preflight
