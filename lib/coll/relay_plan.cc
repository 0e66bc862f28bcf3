#include "relay_plan.h"

namespace alloy {
namespace {

// The members of rail j on hosts other than `host`, in the rail's order.
std::vector<int> remoteOn(const LocalTopology& t, const std::vector<uint64_t>& hostOf, uint64_t host, int j) {
  std::vector<int> ranks;
  for (int rank : t.rails[j])
    if (hostOf[rank] != host) ranks.push_back(rank);
  return ranks;
}

// The member of rail j on `host`.
int memberOn(const LocalTopology& t, const std::vector<uint64_t>& hostOf, uint64_t host, int j) {
  for (int rank : t.rails[j])
    if (hostOf[rank] == host) return rank;
  return -1;  // not reached: every host holds every rail where the relay runs
}

}  // namespace

RelayPlan planRelay(const LocalTopology& t, const std::vector<uint64_t>& hostOf, int me,
                    const std::vector<size_t>& sendBytes, const std::vector<size_t>& sendOffsets,
                    const std::vector<size_t>& recvBytes, const std::vector<size_t>& recvOffsets,
                    const std::function<uint64_t(int j, int d)>& sentBy) {
  const int q = t.localRank, L = t.localSize;
  const uint64_t myHost = hostOf[me];
  const std::vector<int> myRail = remoteOn(t, hostOf, myHost, q);
  RelayPlan plan;
  // Per local index j: where this rank's packed blocks for j start, and where j's relayed blocks start.
  std::vector<size_t> packAt(L + 1, 0), relayAt(L + 1, 0);
  for (int j = 0; j < L; ++j) {
    packAt[j + 1] = packAt[j];
    relayAt[j + 1] = relayAt[j];
    if (j == q) continue;
    for (int d : remoteOn(t, hostOf, myHost, j)) {
      if (sendBytes[d] > 0) plan.packs.push_back(RelayCopy{packAt[j + 1], sendOffsets[d], sendBytes[d]});
      packAt[j + 1] += sendBytes[d];
    }
    for (int d : myRail) relayAt[j + 1] += sentBy(j, d);
  }
  plan.packBytes = packAt[L];
  plan.relayBytes = relayAt[L];
  for (int j = 0; j < L; ++j) {
    const int peer = t.localPeers[j];
    plan.inside.push_back({peer, true, RelayBuffer::kSend, sendOffsets[peer], sendBytes[peer]});
    plan.inside.push_back({peer, false, RelayBuffer::kRecv, recvOffsets[peer], recvBytes[peer]});
    if (j == q) continue;
    plan.inside.push_back({peer, true, RelayBuffer::kPack, packAt[j], packAt[j + 1] - packAt[j]});
    plan.inside.push_back({peer, false, RelayBuffer::kRelay, relayAt[j], relayAt[j + 1] - relayAt[j]});
  }
  // To each rail member d on another host: this rank's own block, then each source's relayed block in
  // local order; from d: d's own block, then those of d's host's other ranks in the same order.
  std::vector<size_t> next(relayAt.begin(), relayAt.end() - 1);
  for (int d : myRail) {
    plan.along.push_back({d, true, RelayBuffer::kSend, sendOffsets[d], sendBytes[d]});
    plan.along.push_back({d, false, RelayBuffer::kRecv, recvOffsets[d], recvBytes[d]});
    for (int j = 0; j < L; ++j) {
      if (j == q) continue;
      const size_t bytes = sentBy(j, d);
      plan.along.push_back({d, true, RelayBuffer::kRelay, next[j], bytes});
      next[j] += bytes;
      const int source = memberOn(t, hostOf, hostOf[d], j);
      plan.along.push_back({d, false, RelayBuffer::kRecv, recvOffsets[source], recvBytes[source]});
    }
  }
  return plan;
}

}  // namespace alloy
