#include "network/nvlink.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collective/collective_model.h"
#include "config/loader.h"
#include "network/backends.h"

namespace preflight {
namespace {

ClusterConfig cluster(const std::string& preset, const std::vector<std::string>& sets = {}) {
  StatusOr<ClusterConfig> c = load_cluster_preset(preset, sets);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : ClusterConfig{};
}

TEST(GpuNvlinkBandwidth, IsTheGpusNvlinksAtNcclsPerLinkSpeed) {
  // nccl.md §3: H100 SXM 18 links × 20.6 = 370.8 GB/s (360 in NCCL 2.18–2.19), A100 SXM
  // 12 × 20 = 240, B200 18 × 40.1 = 721.8 (40.0 per link before 2.28).
  EXPECT_NEAR(gpu_nvlink_bandwidth(cluster("dgx-h100")).gigabytes_per_second(), 370.8, 1e-9);
  EXPECT_NEAR(gpu_nvlink_bandwidth(cluster("dgx-h100"), 19).gigabytes_per_second(), 360, 1e-9);
  EXPECT_NEAR(gpu_nvlink_bandwidth(cluster("dgx-a100")).gigabytes_per_second(), 240, 1e-9);
  EXPECT_NEAR(gpu_nvlink_bandwidth(cluster("dgx-b200")).gigabytes_per_second(), 721.8, 1e-9);
  EXPECT_NEAR(gpu_nvlink_bandwidth(cluster("dgx-b200"), 27).gigabytes_per_second(), 720, 1e-9);
  // PCIe only: the Gen4 x16 link, 16 × 120 / 80 = 24 GB/s.
  EXPECT_NEAR(
      gpu_nvlink_bandwidth(cluster("dgx-a100", {"cluster.gpu.nvlinks=0"})).gigabytes_per_second(),
      24, 1e-9);
  EXPECT_EQ(nccl_minor_version("2.19.3"), 19);
  EXPECT_EQ(nccl_minor_version("bogus"), 28);
}

// The one source: NCCL's ring on one node, the analytical network's send/recv and the alpha-beta
// model all move with cluster.nvlink_bandwidth. Doubling DGX H100's 450 GB/s doubles the
// per-link speed NCCL sees, 2 × 20.6 = 41.2 GB/s: its ring graph grows from 12 × 30 = 360 GB/s
// to 12 × 60 = 720 GB/s (the SM90 intra-node speed array tops at 60), send/recv from 370.8 to
// 741.6 GB/s.
TEST(GpuNvlinkBandwidth, ClusterNvlinkBandwidthMovesEveryInNodeFigure) {
  const ClusterConfig base = cluster("dgx-h100");
  const ClusterConfig fast = cluster("dgx-h100", {"cluster.nvlink_bandwidth=900GB/s"});
  EXPECT_NEAR(nvlink_scale(fast), 2.0, 1e-12);
  GroupPlacement node;
  node.size = 8;
  node.per_node = 8;
  CollectivesConfig ring;
  ring.nvls = 0;
  double busbw[2], p2p[2], alpha_beta[2];
  int i = 0;
  for (const ClusterConfig* c : {&base, &fast}) {
    StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend("analytical", *c);
    ASSERT_TRUE(net.ok()) << net.status().message();
    StatusOr<CollectiveModel> m = CollectiveModel::nccl(*c, ring, **net, {node});
    ASSERT_TRUE(m.ok()) << m.status().message();
    busbw[i] = m->plan(CollectiveKind::kAllReduce, node, Bytes::gib(8)).busbw_gbps;
    p2p[i] = (*net)->p2p_bandwidth(false).gigabytes_per_second();
    alpha_beta[i] = (*net)->bus_bandwidth(node).gigabytes_per_second();
    ++i;
  }
  EXPECT_NEAR(p2p[0], 370.8, 1e-9);
  EXPECT_NEAR(p2p[1], 741.6, 1e-9);
  EXPECT_EQ(alpha_beta[0], p2p[0]);
  EXPECT_EQ(alpha_beta[1], p2p[1]);
  EXPECT_NEAR(busbw[0], 360, 360 * 0.01);
  EXPECT_NEAR(busbw[1], 720, 720 * 0.01);
}

}  // namespace
}  // namespace preflight
