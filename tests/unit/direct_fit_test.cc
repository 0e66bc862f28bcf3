// The direct engine's choice of protocol and slot (fitDirect, lib/coll/direct_plan.h): which operations it
// takes, in 16-byte lines, 128-byte lines or in bulk, and where it refuses them, against slot sizes worked
// out here by hand.
#include <gtest/gtest.h>

#include <cstddef>

#include "direct_plan.h"
#include "ipc_transport.h"

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

// The default areas of a 4-rank host whose GPUs carry wide lines: 8 MiB for bulk, the line areas sized
// from it as the transport sizes them, 32 blocks.
DeviceComm ranks(int n, bool wideLines = true) {
  DeviceComm c{};
  c.nranks = n;
  c.directAreaBytes = 8 * kMiB;
  c.directLineAreaBytes = alloy::directLineAreaBytes(c.directAreaBytes);
  c.directBlocks = 32;
  c.directWideLines = wideLines ? 1 : 0;
  return c;
}

DirectLimits limits(size_t linesMax, size_t wideLinesMax = kNoLimit, size_t directMax = kNoLimit) {
  return DirectLimits{linesMax, wideLinesMax, directMax};
}

size_t wideSlot(size_t bytes) { return (bytes + 119) / 120 * 128; }

TEST(DirectFit, SmallOneShotTravelsAsLinesOfTwiceItsBytesRoundedToWholeLines) {
  const size_t bytes = 13;  // 2 lines of 8 data bytes: 32 bytes of lines
  const DirectFit fit = fitDirect(ranks(4), &bytes, 1, bytes, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectLines);
  EXPECT_EQ(fit.slotStride, 32u);
}

TEST(DirectFit, AboveTheLinesLimitGoesAsWideLinesWhereTheLinksCarryThem) {
  const size_t bytes = kMiB + 1;
  DirectFit fit = fitDirect(ranks(4), &bytes, 1, bytes, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectWideLines);
  EXPECT_EQ(fit.slotStride, wideSlot(bytes));  // 8739 lines of 120 data bytes
  EXPECT_EQ(fit.slotStride, 8739u * 128);
  fit = fitDirect(ranks(4, false), &bytes, 1, bytes, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
  EXPECT_EQ(fit.slotStride, kMiB + 16);  // rounded up to a 16-byte vector
}

TEST(DirectFit, TheWideLinesLimitSendsLargerOperationsToBulk) {
  const size_t at = 3 * kMiB / 2, over = at + 8;
  EXPECT_EQ(fitDirect(ranks(4), &at, 1, at, limits(kMiB, at)).protocol, kDirectWideLines);
  const DirectFit fit = fitDirect(ranks(4), &over, 1, over, limits(kMiB, at));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectBulk);
  EXPECT_EQ(fit.slotStride, at + 16);  // rounded up to a 16-byte vector
}

TEST(DirectFit, NarrowLinesThatDoNotFitTheirAreaTakeWideLines) {
  // Narrow lines take twice the bytes: a quarter of the line area holds about 1.07 MiB of their data.
  const size_t room = alloy::directLineAreaBytes(8 * kMiB) / 4;
  const size_t fits = room / 2 / 8 * 8, over = fits + 8;
  DirectFit fit = fitDirect(ranks(4), &fits, 1, fits, limits(kNoLimit));
  EXPECT_EQ(fit.protocol, kDirectLines);
  EXPECT_EQ(fit.slotStride, 2 * fits);
  fit = fitDirect(ranks(4), &over, 1, over, limits(kNoLimit));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectWideLines);
  EXPECT_EQ(fit.slotStride, wideSlot(over));
}

TEST(DirectFit, TheLineAreasHoldAsWideLinesWhatTheBulkAreasHold) {
  for (int n = 2; n <= alloy::kMaxLocalRanks; ++n) {
    const size_t largestBulk = 8 * kMiB / n / 16 * 16;
    const DirectFit fit = fitDirect(ranks(n), &largestBulk, 1, largestBulk, limits(0));
    EXPECT_TRUE(fit.fits) << n << " ranks";
    EXPECT_EQ(fit.protocol, kDirectWideLines) << n << " ranks";
  }
}

TEST(DirectFit, BulkSlotsMustFitTheirArea) {
  const size_t fits = 2 * kMiB, over = fits + 1;  // 4 slots in 8 MiB
  EXPECT_TRUE(fitDirect(ranks(4, false), &fits, 1, fits, limits(0)).fits);
  EXPECT_FALSE(fitDirect(ranks(4, false), &over, 1, over, limits(0)).fits);
  EXPECT_FALSE(fitDirect(ranks(4), &over, 1, over, limits(0, 0)).fits);  // ALLOY_DIRECT_LL128_MAX_BYTES=0
}

TEST(DirectFit, TheLargestPartSetsTheSlot) {
  const size_t parts[4] = {100, 300, 200, 50};
  DirectFit fit = fitDirect(ranks(4), parts, 4, 650, limits(kMiB));
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.protocol, kDirectLines);
  EXPECT_EQ(fit.slotStride, 608u);  // 300 bytes: 38 lines of 16
  fit = fitDirect(ranks(4), parts, 4, 650, limits(0));
  EXPECT_EQ(fit.protocol, kDirectWideLines);
  EXPECT_EQ(fit.slotStride, 384u);  // 300 bytes: 3 lines of 128
}

TEST(DirectFit, RefusesAnEmptyPartTheLimitAndAMissingEngine) {
  const size_t withEmpty[4] = {64, 64, 0, 64};
  EXPECT_FALSE(fitDirect(ranks(4), withEmpty, 4, 192, limits(kMiB)).fits);
  const size_t bytes = 4096;
  EXPECT_FALSE(fitDirect(ranks(4), &bytes, 1, bytes, limits(kMiB, kNoLimit, bytes - 1)).fits);  // ALLOY_DIRECT_MAX_BYTES
  EXPECT_TRUE(fitDirect(ranks(4), &bytes, 1, bytes, limits(kMiB, kNoLimit, bytes)).fits);
  DeviceComm none = ranks(4);
  none.directAreaBytes = 0;
  none.directLineAreaBytes = 0;
  EXPECT_FALSE(fitDirect(none, &bytes, 1, bytes, limits(kMiB)).fits);  // ALLOY_DIRECT_BYTES=0
  DeviceComm noBlocks = ranks(4);
  noBlocks.directBlocks = 0;  // a transport that never connected
  EXPECT_FALSE(fitDirect(noBlocks, &bytes, 1, bytes, limits(kMiB)).fits);
}

}  // namespace
