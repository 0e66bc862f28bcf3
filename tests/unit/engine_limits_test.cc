// Host-side rules of the GPU engine that need no GPU: the channel clamp that keeps every block of a
// launch resident (residentChannelLimit), and the low-latency flags' range (llFlag).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device_comm.h"
#include "ipc_transport.h"

namespace {

// n ranks on one host; gpuOf[r] names rank r's GPU, residentBlocks what that GPU holds.
std::vector<alloy::EndpointBlob> ranksOn(const std::vector<int>& gpuOf, int residentBlocks) {
  std::vector<alloy::EndpointBlob> blobs(gpuOf.size());
  for (size_t r = 0; r < gpuOf.size(); ++r) {
    std::memset(&blobs[r], 0, sizeof(blobs[r]));
    blobs[r].hostHash = 42;
    blobs[r].gpuUuid[0] = static_cast<uint8_t>(gpuOf[r]);
    blobs[r].residentBlocks = residentBlocks;
  }
  return blobs;
}

TEST(ResidentChannelLimit, OneRankPerGpuKeepsEveryChannel) {
  // 2 ranks: 3 tasks x 32 channels = 96 of an H100's 132 blocks.
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 1}, 132)), 32);
  // 8 ranks: 15 tasks, 132 / 15 = 8 channels fit.
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 1, 2, 3, 4, 5, 6, 7}, 132)), 8);
}

TEST(ResidentChannelLimit, RanksSharingAGpuSplitIt) {
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 0}, 132)), 22);           // 66 blocks each, 3 tasks
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 0, 0}, 132)), 8);         // 44 each, 5 tasks
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 0, 0, 0}, 132)), 4);      // 33 each, 7 tasks
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 0, 1, 1}, 132)), 9);      // 66 each, 7 tasks
}

TEST(ResidentChannelLimit, TheSmallestShareDecidesAndOneChannelIsTheFloor) {
  std::vector<alloy::EndpointBlob> blobs = ranksOn({0, 1}, 132);
  blobs[1].residentBlocks = 12;  // a smaller GPU: 12 / 3 tasks
  EXPECT_EQ(alloy::residentChannelLimit(blobs), 4);
  EXPECT_EQ(alloy::residentChannelLimit(ranksOn({0, 0, 0, 0, 0, 0, 0, 0}, 16)), 1);
}

TEST(LowLatencyFlag, NeverZeroAndDistinctAcrossTwoToThe32) {
  // Zero is what a cleared line holds; flags of seq + 1 modulo 2^32 gave it to chunk 2^32 - 1.
  for (uint64_t seq : {0ull, 1ull, (1ull << 32) - 2, (1ull << 32) - 1, 1ull << 32, (1ull << 33) - 2, ~0ull - 1})
    EXPECT_NE(alloy::llFlag(seq), 0u) << "seq " << seq;
  EXPECT_NE(alloy::llFlag((1ull << 32) - 1), alloy::llFlag((1ull << 32) - 2));
  EXPECT_NE(alloy::llFlag(1ull << 32), alloy::llFlag((1ull << 32) - 1));
}

}  // namespace
