// The direct engine's choice of protocol and slot (fitDirect, lib/coll/direct_plan.h): which operations it
// takes, in lines or in bulk, and where it refuses them; and its windows for parts beyond an area
// (windowsFor); against slot sizes worked out here by hand.
#include <gtest/gtest.h>

#include <cstddef>

#include "direct_plan.h"

namespace {

using alloy::DeviceComm;
using alloy::DirectFit;
using alloy::DirectLimits;
using alloy::fitDirect;
using alloy::kDirectBulk;
using alloy::kDirectLines;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kNoLimit = ~size_t{0};

// The areas of a 4-rank host with 8 MiB for bulk (the default is 32): 4 MiB for lines, 32 blocks.
DeviceComm fourRanks() {
  DeviceComm c{};
  c.nranks = 4;
  c.directAreaBytes = 8 * kMiB;
  c.directLineAreaBytes = 4 * kMiB;
  c.directBlocks = 32;
  return c;
}

DirectLimits limits(size_t linesMax, size_t directMax = kNoLimit) { return DirectLimits{linesMax, directMax, 0}; }

TEST(DirectFit, SmallOneShotTravelsAsLinesOfTwiceItsBytesRoundedToWholeLines) {
  const size_t bytes = 13;  // 2 lines of 8 data bytes: 32 bytes of lines
  const DirectFit fit = fitDirect(fourRanks(), &bytes, 1, bytes, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectLines);
  EXPECT_EQ(fit.slotStride, 32u);
}

TEST(DirectFit, AboveTheLinesLimitGoesInBulk) {
  const size_t bytes = kMiB + 1;
  const DirectFit fit = fitDirect(fourRanks(), &bytes, 1, bytes, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
  EXPECT_EQ(fit.slotStride, kMiB + 16);  // rounded up to a 16-byte vector
}

TEST(DirectFit, LinesThatDoNotFitTheirAreaFallBackToBulk) {
  // 4 slots of lines must fit 4 MiB: 512 KiB of data per slot at most.
  const size_t fits = 512 * 1024, over = fits + 8;
  DirectFit fit = fitDirect(fourRanks(), &fits, 1, fits, limits(kNoLimit));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectLines);
  EXPECT_EQ(fit.slotStride, kMiB);
  fit = fitDirect(fourRanks(), &over, 1, over, limits(kNoLimit));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
  EXPECT_EQ(fit.slotStride, fits + 16);
}

TEST(DirectFit, BulkSlotsMustFitTheirArea) {
  const size_t fits = 2 * kMiB, over = fits + 1;  // 4 slots in 8 MiB
  EXPECT_TRUE(fitDirect(fourRanks(), &fits, 1, fits, limits(0)).fits);
  EXPECT_FALSE(fitDirect(fourRanks(), &over, 1, over, limits(0)).fits);
}

TEST(DirectFit, TheLargestPartSetsTheSlot) {
  const size_t parts[4] = {100, 300, 200, 50};
  DirectFit fit = fitDirect(fourRanks(), parts, 4, 650, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectLines);
  EXPECT_EQ(fit.slotStride, 608u);  // 300 bytes: 38 lines of 16
  fit = fitDirect(fourRanks(), parts, 4, 650, limits(0));
  EXPECT_EQ(fit.protocol, kDirectBulk);
  EXPECT_EQ(fit.slotStride, 304u);  // 300 bytes rounded up to a 16-byte vector
}

TEST(DirectFit, RefusesAnEmptyPartTheLimitAndAMissingEngine) {
  const size_t withEmpty[4] = {64, 64, 0, 64};
  // Refusals before any slot is sized say so with a zero stride (DirectPlan then tries no windows).
  EXPECT_FALSE(fitDirect(fourRanks(), withEmpty, 4, 192, limits(kMiB)).fits);
  EXPECT_EQ(fitDirect(fourRanks(), withEmpty, 4, 192, limits(kMiB)).slotStride, 0u);
  const size_t bytes = 4096;
  EXPECT_FALSE(fitDirect(fourRanks(), &bytes, 1, bytes, limits(kMiB, bytes - 1)).fits);  // ALLOY_DIRECT_MAX_BYTES
  EXPECT_EQ(fitDirect(fourRanks(), &bytes, 1, bytes, limits(kMiB, bytes - 1)).slotStride, 0u);
  EXPECT_TRUE(fitDirect(fourRanks(), &bytes, 1, bytes, limits(kMiB, bytes)).fits);
  DeviceComm none = fourRanks();
  none.directAreaBytes = 0;
  none.directLineAreaBytes = 0;
  EXPECT_FALSE(fitDirect(none, &bytes, 1, bytes, limits(kMiB)).fits);  // ALLOY_DIRECT_BYTES=0
  DeviceComm noBlocks = fourRanks();
  noBlocks.directBlocks = 0;  // a transport that never connected
  EXPECT_FALSE(fitDirect(noBlocks, &bytes, 1, bytes, limits(kMiB)).fits);
  EXPECT_EQ(fitDirect(noBlocks, &bytes, 1, bytes, limits(kMiB)).slotStride, 0u);
}

// Parts too large for one area go in windows through half an area each: 8 MiB / (2 x 4 slots) = 1 MiB of
// every part per window, 3 MiB out of each rank per window (no least amount asked here).
TEST(DirectWindows, HalfAnAreaPerWindowAsManyAsTheLargestPartNeeds) {
  alloy::DirectWindows w = alloy::windowsFor(fourRanks(), 2 * kMiB + 1, 0);
  EXPECT_TRUE(w.fits);
  EXPECT_EQ(w.windowBytes, kMiB);
  EXPECT_EQ(w.windows, 3);
  w = alloy::windowsFor(fourRanks(), 2 * kMiB, 0);
  EXPECT_EQ(w.windows, 2);
  DeviceComm odd = fourRanks();
  odd.directAreaBytes = 8 * kMiB + 200;  // 16-byte windows: 1 MiB + 16
  EXPECT_EQ(alloy::windowsFor(odd, kMiB, 0).windowBytes, kMiB + 16);
}

// ALLOY_DIRECT_WINDOW_MIN_BYTES: a window must move at least that much out of each rank. 4 ranks with
// 8 MiB areas move 3 MiB; 2 ranks with the 2-rank default of 8 MiB move 2 MiB, and with 32 MiB areas 8 MiB.
TEST(DirectWindows, RefusesWindowsThatMoveLessThanTheLeastPerRank) {
  EXPECT_TRUE(alloy::windowsFor(fourRanks(), 4 * kMiB, 3 * kMiB).fits);
  EXPECT_FALSE(alloy::windowsFor(fourRanks(), 4 * kMiB, 3 * kMiB + 1).fits);
  DeviceComm two = fourRanks();
  two.nranks = 2;
  EXPECT_FALSE(alloy::windowsFor(two, 64 * kMiB, 6 * kMiB).fits);
  two.directAreaBytes = 32 * kMiB;
  EXPECT_TRUE(alloy::windowsFor(two, 64 * kMiB, 6 * kMiB).fits);
}

// ALLOY_REDUCE_WINDOW_BYTES: windows of that size (rounded up to 16 bytes) where it is smaller than half an
// area's slot; a larger value leaves the half-area windows.
TEST(DirectWindows, AnUpperBoundNarrowsTheWindows) {
  alloy::DirectWindows w = alloy::windowsFor(fourRanks(), 2 * kMiB, 0, 512 * 1024);
  EXPECT_TRUE(w.fits);
  EXPECT_EQ(w.windowBytes, 512u * 1024);
  EXPECT_EQ(w.windows, 4);
  w = alloy::windowsFor(fourRanks(), 2 * kMiB, 0, 512 * 1024 - 20);
  EXPECT_EQ(w.windowBytes, 512u * 1024 - 16);
  EXPECT_EQ(w.windows, 5);
  w = alloy::windowsFor(fourRanks(), 2 * kMiB, 0, 4 * kMiB);
  EXPECT_EQ(w.windowBytes, kMiB);
  EXPECT_EQ(w.windows, 2);
}

TEST(DirectWindows, RefusesAreasTooSmallForAWindowAndTooManyWindows) {
  DeviceComm tiny = fourRanks();
  tiny.directAreaBytes = 127;  // less than 16 bytes per slot of half an area
  EXPECT_FALSE(alloy::windowsFor(tiny, kMiB, 0).fits);
  tiny.directAreaBytes = 128;  // 16-byte windows
  EXPECT_TRUE(alloy::windowsFor(tiny, 16 * size_t{alloy::kDirectMaxWindows}, 0).fits);
  EXPECT_FALSE(alloy::windowsFor(tiny, 16 * size_t{alloy::kDirectMaxWindows} + 1, 0).fits);
}

TEST(DirectFit, LineAreasAreHalfTheBulkAreasUpToFourMiB) {
  EXPECT_EQ(alloy::directLineAreaBytes(8 * kMiB), 4 * kMiB);
  EXPECT_EQ(alloy::directLineAreaBytes(32 * kMiB), 4 * kMiB);
  EXPECT_EQ(alloy::directLineAreaBytes(2 * kMiB), 1 * kMiB);
  EXPECT_EQ(alloy::directLineAreaBytes(12288), 4096u);  // whole 4 KiB pages
  EXPECT_EQ(alloy::directLineAreaBytes(0), 0u);
}

}  // namespace
