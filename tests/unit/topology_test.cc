#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "rail_order.h"
#include "topology.h"

namespace {
alloy::EndpointBlob onHost(uint64_t host) {
  alloy::EndpointBlob blob{};
  blob.hostHash = host;
  return blob;
}
}  // namespace

TEST(Topology, LocalRankCountsRanksOnTheSameHostInCommunicatorOrder) {
  // Ranks 0..5 placed on hosts A B A B B A.
  std::vector<alloy::EndpointBlob> blobs = {onHost(1), onHost(2), onHost(1), onHost(2), onHost(2), onHost(1)};
  const int expectedLocalRank[] = {0, 0, 1, 1, 2, 2};
  for (int r = 0; r < 6; ++r) {
    alloy::LocalTopology topo = alloy::computeLocalTopology(blobs, r);
    EXPECT_EQ(topo.localRank, expectedLocalRank[r]) << r;
    EXPECT_EQ(topo.localSize, 3) << r;
    EXPECT_EQ(topo.hosts, 2) << r;
    EXPECT_EQ(topo.localPeers, (blobs[r].hostHash == 1 ? std::vector<int>{0, 2, 5} : std::vector<int>{1, 3, 4}));
  }
}

TEST(Topology, RailHoldsTheRanksOfThisLocalIndexOnEveryHost) {
  // Ranks 0..5 on hosts A B A B B A, and a third host C of three ranks after them: 0, 2, 5 on A; 1, 3, 4
  // on B; 6, 7, 8 on C.
  std::vector<alloy::EndpointBlob> blobs = {onHost(1), onHost(2), onHost(1), onHost(2), onHost(2),
                                            onHost(1), onHost(3), onHost(3), onHost(3)};
  const std::vector<int> rails[] = {{0, 1, 6}, {2, 3, 7}, {5, 4, 8}};
  for (int r = 0; r < 9; ++r) {
    const alloy::LocalTopology topo = alloy::computeLocalTopology(blobs, r);
    std::vector<int> expected = rails[topo.localRank];
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(topo.railPeers(), expected) << "rank " << r;
    // Every rank holds every rail, each ascending (rail 2 runs B's 4, A's 5, C's 8).
    ASSERT_EQ(topo.rails.size(), 3u) << "rank " << r;
    EXPECT_EQ(topo.hosts, 3) << "rank " << r;
    EXPECT_EQ(topo.smallestHostSize, 3) << "rank " << r;
    EXPECT_EQ(topo.hostIndexOf, (std::vector<int>{0, 1, 0, 1, 1, 0, 2, 2, 2})) << "rank " << r;
    for (int q = 0; q < 3; ++q) {
      std::vector<int> rail = rails[q];
      std::sort(rail.begin(), rail.end());
      EXPECT_EQ(topo.rails[q], rail) << "rank " << r << ", rail " << q;
    }
    // railOf: the rail of any rank, wherever it is (rank 4 is B's third, on rail 2).
    const int railOfEach[] = {0, 0, 1, 1, 2, 2, 0, 1, 2};
    for (int k = 0; k < 9; ++k) EXPECT_EQ(topo.railOf(k), railOfEach[k]) << "rank " << r << " asks for rank " << k;
  }
}

TEST(Topology, RailOrderIsRankOrderOnlyWhereEachRailsRanksAreConsecutive) {
  // Hosts A B A B: rail 0 is {0, 1}, rail 1 {2, 3}: rail order is rank order.
  const std::vector<alloy::EndpointBlob> interleaved = {onHost(1), onHost(2), onHost(1), onHost(2)};
  // Hosts A A B B: rail 0 is {0, 2}, rail 1 {1, 3}: the allgather must reorder.
  const std::vector<alloy::EndpointBlob> grouped = {onHost(1), onHost(1), onHost(2), onHost(2)};
  // Hosts A B B A: rail 0 is {0, 1}, rail 1 {2, 3} (A's second rank is 3, B's is 2, ascending: {2, 3}).
  const std::vector<alloy::EndpointBlob> mirrored = {onHost(1), onHost(2), onHost(2), onHost(1)};
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(alloy::railOrderIsRankOrder(alloy::computeLocalTopology(interleaved, r))) << "rank " << r;
    EXPECT_FALSE(alloy::railOrderIsRankOrder(alloy::computeLocalTopology(grouped, r))) << "rank " << r;
    EXPECT_TRUE(alloy::railOrderIsRankOrder(alloy::computeLocalTopology(mirrored, r))) << "rank " << r;
  }
}

TEST(Topology, NoRailWhereHostsHoldDifferentNumbersOfRanks) {
  // Two ranks on host A, one on B: rank 1 (A's second) has no partner on B.
  std::vector<alloy::EndpointBlob> blobs = {onHost(1), onHost(1), onHost(2)};
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(alloy::computeLocalTopology(blobs, r).railPeers().empty()) << "rank " << r;
    EXPECT_TRUE(alloy::computeLocalTopology(blobs, r).rails.empty()) << "rank " << r;
    EXPECT_EQ(alloy::computeLocalTopology(blobs, r).hosts, 2) << "rank " << r;
    EXPECT_EQ(alloy::computeLocalTopology(blobs, r).smallestHostSize, 1) << "rank " << r;
    EXPECT_EQ(alloy::computeLocalTopology(blobs, r).railOf(0), -1) << "rank " << r;
  }
  // One host: the rail is this rank alone.
  std::vector<alloy::EndpointBlob> one = {onHost(7), onHost(7)};
  EXPECT_EQ(alloy::computeLocalTopology(one, 1).railPeers(), std::vector<int>{1});
  EXPECT_EQ(alloy::computeLocalTopology(one, 1).hosts, 1);
}

TEST(Topology, HostIdentityIsStableAndNamesThisProcess) {
  alloy::EndpointBlob a, b;
  alloy::fillHostIdentity(&a);
  alloy::fillHostIdentity(&b);
  EXPECT_EQ(a.hostHash, b.hostHash);
  EXPECT_EQ(a.magic, alloy::kEndpointMagic);
  EXPECT_EQ(a.pid, static_cast<int32_t>(getpid()));
  EXPECT_EQ(a.cudaDevice, -1);
  EXPECT_NE(a.hostName[0], '\0');
}
