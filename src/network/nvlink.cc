#include "network/nvlink.h"

#include <charconv>

namespace preflight {

int compute_capability(GpuArchitecture architecture) {
  return architecture_traits(architecture).compute_capability;
}

int nccl_minor_version(std::string_view version) {
  if (version.substr(0, 2) != "2.") return 28;
  int minor = 0;
  const auto r = std::from_chars(version.data() + 2, version.data() + version.size(), minor);
  return r.ec == std::errc() && minor > 0 ? minor : 28;
}

double nccl_nvlink_gbs(int compute_capability, int nccl_minor) {
  const int cc = compute_capability;
  if (cc >= 100) return nccl_minor >= 28 ? 40.1 : 40.0;
  if (cc >= 90) return nccl_minor >= 20 ? 20.6 : 20.0;
  if (cc == 86) return 12.0;
  return cc >= 70 ? 20.0 : 18.0;
}

double nvlink_scale(const ClusterConfig& c) {
  const double gpu = c.gpu.nvlink_bandwidth.bytes_per_second();
  const double cluster = c.nvlink_bandwidth.bytes_per_second();
  return gpu > 0 && cluster > 0 ? cluster / gpu : 1.0;
}

Bandwidth gpu_nvlink_bandwidth(const ClusterConfig& c, int nccl_minor) {
  if (c.gpu.nvlinks <= 0) {
    const int gen = c.pcie_gen < 3 ? 3 : c.pcie_gen > 6 ? 6 : c.pcie_gen;
    return Bandwidth::gigabytes_per_second(16.0 * (60 << (gen - 3)) / 80.0);
  }
  const double link = nccl_nvlink_gbs(compute_capability(c.gpu.architecture), nccl_minor);
  return Bandwidth::gigabytes_per_second(c.gpu.nvlinks * link * nvlink_scale(c));
}

}  // namespace preflight
