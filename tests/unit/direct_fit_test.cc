// The direct engine's choice of protocol and slot (fitDirect, lib/coll/direct_plan.h): which operations it
// takes, in lines or in bulk, and where it refuses them, against slot sizes worked out here by hand.
#include <gtest/gtest.h>

#include <cstddef>

#include "direct_plan.h"

namespace {

using alloy::DeviceComm;
using alloy::DirectFit;
using alloy::fitDirect;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kNoLimit = ~size_t{0};

// The default areas of a 4-rank host: 8 MiB for bulk, 4 MiB for lines, 32 blocks.
DeviceComm fourRanks() {
  DeviceComm c{};
  c.nranks = 4;
  c.directAreaBytes = 8 * kMiB;
  c.directLineAreaBytes = 4 * kMiB;
  c.directBlocks = 32;
  return c;
}

TEST(DirectFit, SmallOneShotTravelsAsLinesOfTwiceItsBytesRoundedToWholeLines) {
  const size_t bytes = 13;  // 2 lines of 8 data bytes: 32 bytes of lines
  const DirectFit fit = fitDirect(fourRanks(), &bytes, 1, bytes, kMiB, kNoLimit);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.lowLatency, 1);
  EXPECT_EQ(fit.slotStride, 32u);
}

TEST(DirectFit, AboveTheLowLatencyLimitGoesInBulk) {
  const size_t bytes = kMiB + 1;
  const DirectFit fit = fitDirect(fourRanks(), &bytes, 1, bytes, kMiB, kNoLimit);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.lowLatency, 0);
  EXPECT_EQ(fit.slotStride, kMiB + 16);  // rounded up to a 16-byte vector
}

TEST(DirectFit, LinesThatDoNotFitTheirAreaFallBackToBulk) {
  // 4 slots of lines must fit 4 MiB: 512 KiB of data per slot at most.
  const size_t fits = 512 * 1024, over = fits + 8;
  DirectFit fit = fitDirect(fourRanks(), &fits, 1, fits, kNoLimit, kNoLimit);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.lowLatency, 1);
  EXPECT_EQ(fit.slotStride, kMiB);
  fit = fitDirect(fourRanks(), &over, 1, over, kNoLimit, kNoLimit);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.lowLatency, 0);
  EXPECT_EQ(fit.slotStride, fits + 16);
}

TEST(DirectFit, BulkSlotsMustFitTheirArea) {
  const size_t fits = 2 * kMiB, over = fits + 1;  // 4 slots in 8 MiB
  EXPECT_TRUE(fitDirect(fourRanks(), &fits, 1, fits, 0, kNoLimit).fits);
  EXPECT_FALSE(fitDirect(fourRanks(), &over, 1, over, 0, kNoLimit).fits);
}

TEST(DirectFit, TheLargestPartSetsTheSlot) {
  const size_t parts[4] = {100, 300, 200, 50};
  const DirectFit fit = fitDirect(fourRanks(), parts, 4, 650, kMiB, kNoLimit);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.lowLatency, 1);
  EXPECT_EQ(fit.slotStride, 608u);  // 300 bytes: 38 lines of 16
}

TEST(DirectFit, RefusesAnEmptyPartTheLimitAndAMissingEngine) {
  const size_t withEmpty[4] = {64, 64, 0, 64};
  EXPECT_FALSE(fitDirect(fourRanks(), withEmpty, 4, 192, kMiB, kNoLimit).fits);
  const size_t bytes = 4096;
  EXPECT_FALSE(fitDirect(fourRanks(), &bytes, 1, bytes, kMiB, bytes - 1).fits);  // ALLOY_DIRECT_MAX_BYTES
  EXPECT_TRUE(fitDirect(fourRanks(), &bytes, 1, bytes, kMiB, bytes).fits);
  DeviceComm none = fourRanks();
  none.directAreaBytes = 0;
  none.directLineAreaBytes = 0;
  EXPECT_FALSE(fitDirect(none, &bytes, 1, bytes, kMiB, kNoLimit).fits);  // ALLOY_DIRECT_BYTES=0
  DeviceComm noBlocks = fourRanks();
  noBlocks.directBlocks = 0;  // a transport that never connected
  EXPECT_FALSE(fitDirect(noBlocks, &bytes, 1, bytes, kMiB, kNoLimit).fits);
}

}  // namespace
