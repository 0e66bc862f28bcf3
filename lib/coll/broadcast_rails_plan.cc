#include "broadcast_rails_plan.h"

#include "algorithm.h"

namespace alloy {
namespace {

// The rank of rail q on the host of `rank`.
int onRail(const LocalTopology& t, int q, int rank) {
  for (int r : t.rails[q])
    if (t.hostIndexOf[r] == t.hostIndexOf[rank]) return r;
  return -1;
}

}  // namespace

BroadcastRailsPlan planBroadcastRails(const LocalTopology& t, int me, int root, size_t bytes) {
  BroadcastRailsPlan plan;
  const int parts = t.localSize;
  const int q = t.localRank;  // this rank's part, and its rail
  const Part mine = partOf(bytes, 1, parts, q);
  const bool rootHost = t.hostIndexOf[me] == t.hostIndexOf[root];
  if (me == root) {
    for (int j = 0; j < parts; ++j) {
      const Part p = partOf(bytes, 1, parts, j);
      if (j != q && p.count > 0) plan.scatter.push_back({onRail(t, j, root), true, p.first, p.count});
    }
  } else if (rootHost && mine.count > 0) {
    plan.scatter.push_back({root, false, mine.first, mine.count});
  }
  if (mine.count > 0) {
    const int source = onRail(t, q, root);
    for (int r : t.rails[q]) {
      if (me == source && r != me) plan.along.push_back({r, true, mine.first, mine.count});
    }
    if (me != source) plan.along.push_back({source, false, mine.first, mine.count});
  }
  for (int j = 0; j < parts; ++j) {
    const int peer = t.localPeers[j];
    if (peer == me) continue;
    const Part p = partOf(bytes, 1, parts, j);
    if (mine.count > 0 && peer != root) plan.gather.push_back({peer, true, mine.first, mine.count});
    if (p.count > 0 && me != root) plan.gather.push_back({peer, false, p.first, p.count});
  }
  return plan;
}

}  // namespace alloy
