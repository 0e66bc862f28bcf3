// The direct engine's choice of protocol and slot (fitDirect, lib/coll/direct_plan.h): which operations it
// takes, in 16-byte lines, 128-byte lines or in bulk, and where it refuses them; both kinds of lines'
// default tops; the 2-rank defaults; and its windows for parts beyond an area (windowsFor); against slot
// sizes worked out here by hand.
#include <gtest/gtest.h>

#include <cstddef>

#include "algorithm.h"
#include "direct_plan.h"
#include "ipc_transport.h"
#include "local_transport.h"

namespace {

using alloy::DeviceComm;
using alloy::DirectFit;
using alloy::DirectLimits;
using alloy::fitDirect;
using alloy::kDirectBulk;
using alloy::kDirectLines;
using alloy::kDirectWideLines;

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

// The same host where every pair of GPUs carries 128-byte lines, its line areas sized as the transport sizes
// them for lines of up to wideTop bytes; and limits that allow those lines up to wideLinesMax.
DeviceComm fourRanksWithWideLines(size_t wideTop) {
  DeviceComm c = fourRanks();
  c.directLineAreaBytes = alloy::lineAreaBytes(c.directAreaBytes, wideTop);
  c.directWideLines = 1;
  return c;
}
DirectLimits wideLimits(size_t linesMax, size_t wideLinesMax) {
  DirectLimits l = limits(linesMax);
  l.wideLinesMax = wideLinesMax;
  return l;
}
size_t wideSlot(size_t bytes) { return (bytes + 119) / 120 * 128; }  // whole lines of 120 data bytes

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

// Above the 16-byte lines' limit and up to the 128-byte lines' own, where the links carry them: slots of whole
// 128-byte lines; larger, or where the links do not carry them, bulk.
TEST(DirectFit, AboveTheLinesLimitGoesAsWideLinesWhereTheLinksCarryThem) {
  const size_t parts[4] = {kMiB, kMiB, kMiB, kMiB};  // a 4 MiB two-shot allreduce: 8739 lines per part
  DirectFit fit = fitDirect(fourRanksWithWideLines(4 * kMiB), parts, 4, 4 * kMiB, wideLimits(kMiB, 4 * kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectWideLines);
  EXPECT_EQ(fit.slotStride, 8739u * 128);
  EXPECT_EQ(fit.slotStride, wideSlot(kMiB));
  fit = fitDirect(fourRanksWithWideLines(4 * kMiB), parts, 4, 4 * kMiB, wideLimits(kMiB, 4 * kMiB - 1));
  EXPECT_EQ(fit.protocol, kDirectBulk);
  EXPECT_EQ(fit.slotStride, kMiB);
  DeviceComm pcie = fourRanksWithWideLines(4 * kMiB);
  pcie.directWideLines = 0;
  fit = fitDirect(pcie, parts, 4, 4 * kMiB, wideLimits(kMiB, 4 * kMiB));
  EXPECT_EQ(fit.protocol, kDirectBulk);
  // At or below the 16-byte lines' limit those still go first.
  const size_t small = 4096;
  EXPECT_EQ(fitDirect(fourRanksWithWideLines(4 * kMiB), &small, 1, small, wideLimits(kMiB, 4 * kMiB)).protocol,
            kDirectLines);
}

// Line areas sized for 16-byte lines alone (4 MiB) do not hold a 4 MiB two-shot as 128-byte lines (4 slots of
// 8739 lines are 4.27 MiB): the operation goes in bulk rather than overrunning them.
TEST(DirectFit, WideLinesThatDoNotFitTheLineAreasGoInBulk) {
  const size_t parts[4] = {kMiB, kMiB, kMiB, kMiB};
  DeviceComm narrowAreas = fourRanksWithWideLines(0);
  EXPECT_EQ(narrowAreas.directLineAreaBytes, 4 * kMiB);
  const DirectFit fit = fitDirect(narrowAreas, parts, 4, 4 * kMiB, wideLimits(kMiB, 4 * kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
}

// The default band (no ALLOY_DIRECT_LL128_MAX_BYTES): at 3 and 4 ranks the two-shot allreduce up to 4 MiB, the
// reduce by parts up to 8 MiB and the reduce-scatter up to 2 MiB; nothing for the other algorithms, at 2
// ranks, or from 5 ranks on.
TEST(DirectFit, WideLinesDefaultBandByAlgorithmAndRankCount) {
  for (int n : {3, 4}) {
    EXPECT_EQ(alloy::defaultWideLinesMax(alloy::kDirectTwoShot, n), 4 * kMiB) << n << " ranks";
    EXPECT_EQ(alloy::defaultWideLinesMax(alloy::kDirectReduce, n), 8 * kMiB) << n << " ranks";
    EXPECT_EQ(alloy::defaultWideLinesMax(alloy::kDirectReduceScatter, n), 2 * kMiB) << n << " ranks";
    for (alloy::DirectAlgorithm a : {alloy::kDirectOneShot, alloy::kDirectAllGather, alloy::kDirectAllToAll,
                                     alloy::kDirectBroadcast, alloy::kDirectBroadcastTwoShot})
      EXPECT_EQ(alloy::defaultWideLinesMax(a, n), 0u) << n << " ranks, algorithm " << a;
  }
  for (int n : {1, 2, 5, 8})
    for (alloy::DirectAlgorithm a : {alloy::kDirectTwoShot, alloy::kDirectReduce, alloy::kDirectReduceScatter})
      EXPECT_EQ(alloy::defaultWideLinesMax(a, n), 0u) << n << " ranks, algorithm " << a;
}

// The default line areas hold the reduce's band as 128-byte lines at 3 and 4 ranks: a reduce of 8 MiB cut
// into nranks - 1 parts as partOf cuts it (the root's part empty) goes in lines, and with a first part one
// line group larger it goes in bulk. Nothing is set aside for lines at 2 or 5 ranks beyond the 16-byte
// lines' areas.
TEST(DirectFit, TheLineAreasHoldTheReduceBandAsWideLines) {
  for (int n : {3, 4}) {
    DeviceComm c = fourRanks();
    c.nranks = n;
    c.directAreaBytes = 32 * kMiB;
    c.directLineAreaBytes = alloy::lineAreaBytes(c.directAreaBytes, alloy::directWideLinesAreaDefault(n));
    c.directWideLines = 1;
    const size_t top = alloy::directWideReduceDefaultTop(n), count = top / 4;
    size_t parts[8];
    for (int p = 0; p < n - 1; ++p) parts[p] = alloy::partOf(count, 4, n - 1, p).count * 4;
    DirectFit fit = fitDirect(c, parts, n - 1, top, wideLimits(0, top));
    EXPECT_TRUE(fit.fits) << n << " ranks";
    EXPECT_EQ(fit.protocol, kDirectWideLines) << n << " ranks";
    parts[0] += 16 * 120;
    fit = fitDirect(c, parts, n - 1, top + 16 * 120, wideLimits(0, kNoLimit));
    EXPECT_TRUE(fit.fits) << n << " ranks";
    EXPECT_EQ(fit.protocol, kDirectBulk) << n << " ranks";
  }
  EXPECT_EQ(alloy::directWideLinesAreaDefault(2), 0u);
  EXPECT_EQ(alloy::directWideLinesAreaDefault(5), 0u);
}

// The 16-byte lines' default top: 512 KiB for the one-shot on 2 ranks (bulk overtakes the lines there),
// 1 MiB for every other algorithm and rank count.
TEST(DirectFit, LinesDefaultTopByAlgorithmAndRankCount) {
  EXPECT_EQ(alloy::defaultLinesMax(alloy::kDirectOneShot, 2), kMiB / 2);
  for (int n : {2, 3, 4, 8})
    for (alloy::DirectAlgorithm a : {alloy::kDirectOneShot, alloy::kDirectTwoShot, alloy::kDirectReduceScatter,
                                     alloy::kDirectAllGather, alloy::kDirectReduce, alloy::kDirectAllToAll,
                                     alloy::kDirectBroadcast, alloy::kDirectBroadcastTwoShot})
      if (n != 2 || a != alloy::kDirectOneShot)
        EXPECT_EQ(alloy::defaultLinesMax(a, n), kMiB) << n << " ranks, algorithm " << a;
}

// With no ALLOY_ variable set, a 2-rank host's default areas hold its largest one-shot allreduce
// (directOneShotMaxBytes) in bulk, and the two-shot of 32 MiB above it in one step: the sizes that ran on the
// rings with the 8 MiB areas before session 24.
TEST(DirectFit, TwoRankDefaultsHoldTheOneShotAndTheTwoShotAboveIt) {
  const alloy::EngineGeometry g = alloy::engineGeometry(2);
  DeviceComm c{};
  c.nranks = 2;
  c.directAreaBytes = g.directAreaBytes;
  c.directLineAreaBytes = alloy::lineAreaBytes(g.directAreaBytes, g.directWideLinesBytes);
  c.directBlocks = g.directBlocks;
  const size_t oneShot = alloy::directOneShotMaxBytes(2);
  EXPECT_EQ(oneShot, 8 * kMiB);
  DirectFit fit = fitDirect(c, &oneShot, 1, oneShot, alloy::directLimits(alloy::kDirectOneShot, 2));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
  const size_t halves[2] = {16 * kMiB, 16 * kMiB};
  fit = fitDirect(c, halves, 2, 32 * kMiB, alloy::directLimits(alloy::kDirectTwoShot, 2));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
  // Above 512 KiB the one-shot goes in bulk, at and below it in lines.
  const size_t lines = kMiB / 2, bulk = lines + 16;
  EXPECT_EQ(fitDirect(c, &lines, 1, lines, alloy::directLimits(alloy::kDirectOneShot, 2)).protocol, kDirectLines);
  EXPECT_EQ(fitDirect(c, &bulk, 1, bulk, alloy::directLimits(alloy::kDirectOneShot, 2)).protocol, kDirectBulk);
}

// The transport's line areas hold the default band's top as 128-byte lines at every rank count it covers,
// whatever the parts' rounding: a two-shot of 4 MiB split as partOf splits it, 3 and 4 ranks, with the bulk
// areas of those counts (32 MiB) and the 8 MiB of withSmallDirectAreas-like hosts; ALLOY_DIRECT_LL128_MAX_BYTES
// larger than a bulk area sizes them for a bulk area's data only.
TEST(DirectFit, TheLineAreasHoldTheDefaultBandAsWideLines) {
  for (int n : {3, 4})
    for (size_t area : {32 * kMiB, 8 * kMiB}) {
      DeviceComm c = fourRanks();
      c.nranks = n;
      c.directAreaBytes = area;
      c.directLineAreaBytes = alloy::lineAreaBytes(area, alloy::directWideLinesDefaultTop(n));
      c.directWideLines = 1;
      const size_t top = alloy::directWideLinesDefaultTop(n), count = top / 4;
      size_t parts[8];
      for (int p = 0; p < n; ++p) parts[p] = alloy::partOf(count, 4, n, p).count * 4;
      const DirectFit fit = fitDirect(c, parts, n, top, wideLimits(kMiB, top));
      EXPECT_TRUE(fit.fits) << n << " ranks, " << area << "-byte areas";
      EXPECT_EQ(fit.protocol, kDirectWideLines) << n << " ranks, " << area << "-byte areas";
    }
  EXPECT_EQ(alloy::lineAreaBytes(8 * kMiB, 0), 4 * kMiB);            // 16-byte lines only
  EXPECT_EQ(alloy::lineAreaBytes(8 * kMiB, kMiB), 4 * kMiB);         // wide lines of 1 MiB need less
  EXPECT_EQ(alloy::lineAreaBytes(8 * kMiB, 64 * kMiB), alloy::lineAreaBytes(8 * kMiB, 8 * kMiB));
  EXPECT_GE(alloy::lineAreaBytes(8 * kMiB, 8 * kMiB), wideSlot(8 * kMiB));
  EXPECT_EQ(alloy::lineAreaBytes(8 * kMiB, 8 * kMiB) % 4096, 0u);
}

}  // namespace
