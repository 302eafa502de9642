#include "parallel/rank_layout.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {

RankLayout::RankLayout(int tp, int cp, int dp, int pp, int etp, int ep)
    : tp_(tp), cp_(cp), dp_(dp), pp_(pp), etp_(etp), ep_(ep) {
  PREFLIGHT_CHECK(tp >= 1 && cp >= 1 && dp >= 1 && pp >= 1 && etp >= 1 && ep >= 1);
}

RankLayout RankLayout::of(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  return RankLayout(p.tp, p.cp, p.dp, p.pp, s.expert_tp(), std::max(1, p.ep));
}

GroupShape RankLayout::shape(GroupKind g) const {
  switch (g) {
    case GroupKind::kTensor:
      return {tp_, 1};
    case GroupKind::kContext:
      return {cp_, tp_};
    case GroupKind::kData:
      return {dp_ * cp_, tp_};
    case GroupKind::kExpertTensor:
      return {etp_, 1};
    case GroupKind::kExpert:
      return {ep_, etp_};
    case GroupKind::kExpertData:
      return {std::max(1, stage_ranks() / (etp_ * ep_)), etp_ * ep_};
    case GroupKind::kPipeline:
    case GroupKind::kEmbedding:
      break;
  }
  return {1, 1};
}

std::vector<std::vector<int>> RankLayout::groups(GroupKind g, int stage) const {
  std::vector<std::vector<int>> out;
  const int n = stage_ranks();
  if (g == GroupKind::kEmbedding) {
    if (pp_ < 2) return out;
    for (int r = 0; r < n; ++r) out.push_back({rank(0, r), rank(pp_ - 1, r)});
    return out;
  }
  const GroupShape sh = shape(g);
  for (int base = 0; base < n; ++base) {
    if ((base / sh.stride) % sh.size != 0) continue;
    std::vector<int> m;
    m.reserve(sh.size);
    for (int i = 0; i < sh.size; ++i) m.push_back(rank(stage, base + i * sh.stride));
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<int> RankLayout::members(GroupKind g, int stage, int local) const {
  PREFLIGHT_CHECK(g != GroupKind::kPipeline && g != GroupKind::kEmbedding);
  PREFLIGHT_CHECK(local >= 0 && local < stage_ranks());
  const GroupShape sh = shape(g);
  const int base = local - ((local / sh.stride) % sh.size) * sh.stride;
  std::vector<int> m;
  m.reserve(sh.size);
  for (int i = 0; i < sh.size; ++i) m.push_back(rank(stage, base + i * sh.stride));
  return m;
}

const GroupPlacement& JobGroups::of(GroupKind g) const {
  switch (g) {
    case GroupKind::kTensor:
      return tp;
    case GroupKind::kData:
      return dp;
    case GroupKind::kPipeline:
      return pp;
    case GroupKind::kEmbedding:
      return embedding;
    case GroupKind::kContext:
      return cp;
    case GroupKind::kExpert:
      return ep;
    case GroupKind::kExpertTensor:
      return etp;
    case GroupKind::kExpertData:
      return edp;
  }
  return tp;
}

JobGroups place_job_groups(const Scenario& s) {
  const RankLayout l = RankLayout::of(s);
  const int gpn = s.cluster.gpus_per_node;
  auto place = [&](GroupKind g) {
    const GroupShape sh = l.shape(g);
    return place_group(sh.size, sh.stride, gpn);
  };
  JobGroups j;
  j.tp = place(GroupKind::kTensor);
  j.cp = place(GroupKind::kContext);
  j.dp = place(GroupKind::kData);
  j.etp = place(GroupKind::kExpertTensor);
  j.ep = place(GroupKind::kExpert);
  j.edp = place(GroupKind::kExpertData);
  const int n = l.stage_ranks();
  j.pp = place_group(2, n, gpn);
  // The pair is rank r < tp·cp·dp of the first stage and r + tp·cp·dp·(pp−1) of the last: on one
  // node exactly when the whole job is, even where that stride does not divide the node.
  const int embedding_stride = n * std::max(1, l.pp() - 1);
  j.embedding = n * l.pp() <= gpn ? place_group(2, 1, gpn) : place_group(2, embedding_stride, gpn);
  return j;
}

}  // namespace preflight
