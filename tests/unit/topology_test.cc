#include <gtest/gtest.h>

#include <vector>

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
    EXPECT_EQ(topo.localPeers, (blobs[r].hostHash == 1 ? std::vector<int>{0, 2, 5} : std::vector<int>{1, 3, 4}));
  }
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
