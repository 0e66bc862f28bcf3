#include "broadcast_parts_plan.h"

#include "algorithm.h"
#include "group_reduce.h"

namespace alloy {
namespace {

// The rank of rail q on the host of `rank`.
int onRail(const LocalTopology& t, int q, int rank) {
  for (int r : t.rails[q])
    if (t.hostIndexOf[r] == t.hostIndexOf[rank]) return r;
  return -1;
}

// The last launch of both plans: this rank's part (`mine`, held after the earlier launches) to each of
// `group` but the root, and every other member's part from it; part j of the buffer is group[j]'s.
void gather(const std::vector<int>& group, int me, int root, size_t bytes, std::vector<PartMessage>* out) {
  const int parts = static_cast<int>(group.size());
  Part mine{0, 0};
  for (int j = 0; j < parts; ++j)
    if (group[j] == me) mine = partOf(bytes, 1, parts, j);
  for (int j = 0; j < parts; ++j) {
    const int peer = group[j];
    if (peer == me) continue;
    const Part p = partOf(bytes, 1, parts, j);
    if (mine.count > 0 && peer != root) out->push_back({peer, true, mine.first, mine.count});
    if (p.count > 0 && me != root) out->push_back({peer, false, p.first, p.count});
  }
}

// The first launch of both plans: the root's part j to group[j]; this rank's part from the root.
void scatter(const std::vector<int>& group, int me, int root, size_t bytes, std::vector<PartMessage>* out) {
  const int parts = static_cast<int>(group.size());
  for (int j = 0; j < parts; ++j) {
    const Part p = partOf(bytes, 1, parts, j);
    if (group[j] == root || p.count == 0) continue;
    if (me == root) out->push_back({group[j], true, p.first, p.count});
    if (me == group[j]) out->push_back({root, false, p.first, p.count});
  }
}

}  // namespace

PartLaunches planBroadcastOverRails(const LocalTopology& t, int me, int root, size_t bytes) {
  PartLaunches launches(3);
  const int parts = t.localSize;
  const int q = t.localRank;  // this rank's part, and its rail
  std::vector<int> rootHost(parts);
  for (int j = 0; j < parts; ++j) rootHost[j] = onRail(t, j, root);
  if (t.hostIndexOf[me] == t.hostIndexOf[root]) scatter(rootHost, me, root, bytes, &launches[0]);
  const Part mine = partOf(bytes, 1, parts, q);
  if (mine.count > 0) {
    const int source = rootHost[q];
    for (int r : t.rails[q])
      if (me == source && r != me) launches[1].push_back({r, true, mine.first, mine.count});
    if (me != source) launches[1].push_back({source, false, mine.first, mine.count});
  }
  gather(t.localPeers, me, root, bytes, &launches[2]);
  return launches;
}

PartLaunches planBroadcastScatterGather(int nranks, int me, int root, size_t bytes) {
  PartLaunches launches(2);
  const std::vector<int> everyone = allRanks(nranks);
  scatter(everyone, me, root, bytes, &launches[0]);
  gather(everyone, me, root, bytes, &launches[1]);
  return launches;
}

}  // namespace alloy
