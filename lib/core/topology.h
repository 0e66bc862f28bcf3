// Where the ranks of a communicator are: which share this rank's host, and its position among them.
#pragma once

#include <vector>

#include "endpoint.h"

namespace alloy {

struct LocalTopology {
  int localRank = 0;           // position among the ranks on this host, ordered by communicator rank
  int localSize = 1;           // ranks of the communicator on this host
  std::vector<int> localPeers; // communicator ranks on this host, ascending (includes this rank)
  std::vector<int> localIndexOf;  // by communicator rank: its position in localPeers, or -1 (another host)
  int hosts = 1;               // hosts the communicator's ranks are on
  // By communicator rank: the index of its host, hosts numbered in the order of their lowest ranks. The
  // rails list their ranks in rank order, which puts hosts in a different order on different rails where
  // hosts' ranks are shuffled; schedules that need one order of hosts on every rail sort by this.
  std::vector<int> hostIndexOf;
  int smallestHostSize = 1;    // ranks of the communicator on the host that holds the fewest
  // rails[q]: the ranks at position q on their hosts (counted in rank order, as localRank is), one per
  // host, ascending: the rail that hierarchical schedules cross hosts on. Every rank computes every rail
  // alike, so a schedule may address the ranks of another local index's rail. Empty unless every host
  // holds localSize ranks, since an uneven host has no partner on some rails (those schedules then stay
  // flat).
  std::vector<std::vector<int>> rails;
  // This rank's rail (rails[localRank], this rank included); empty where rails is.
  const std::vector<int>& railPeers() const;
  // The index q of the rail that holds `rank` (its position on its host); -1 where rails is empty.
  int railOf(int rank) const;
  bool spansHosts() const { return localSize < static_cast<int>(localIndexOf.size()); }
};

// hostOf: every rank's host identity (EndpointBlob::hostHash), by communicator rank.
LocalTopology computeLocalTopology(const std::vector<uint64_t>& hostOf, int myRank);
LocalTopology computeLocalTopology(const std::vector<EndpointBlob>& blobs, int myRank);

}  // namespace alloy
