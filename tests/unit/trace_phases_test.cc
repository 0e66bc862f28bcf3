// host-cost --trace's arithmetic (tools/host-cost/trace_phases.h) on records made up here: which launches
// count, and each phase's median from the stamps a launch has.
#include "trace_phases.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using alloy::KernelTraceRecord;

// A lines launch: entry at `entry` ns, then loaded, sent, received and end after the given ns each.
KernelTraceRecord launch(uint64_t operation, uint64_t entry, uint64_t loaded, uint64_t sent, uint64_t received,
                         uint64_t end) {
  KernelTraceRecord r{};
  r.operation = operation;
  r.stamp[alloy::kTraceEntry] = entry;
  r.stamp[alloy::kTraceLoaded] = entry + loaded;
  r.stamp[alloy::kTraceSent] = sent ? r.stamp[alloy::kTraceLoaded] + sent : 0;
  r.stamp[alloy::kTraceReceived] = received ? r.stamp[alloy::kTraceLoaded] + sent + received : 0;
  r.stamp[alloy::kTraceEnd] = r.stamp[alloy::kTraceLoaded] + sent + received + end;
  return r;
}

TEST(TracePhases, MediansOfTheNewestConsecutiveLaunches) {
  std::vector<KernelTraceRecord> ring(16);  // slots never written stay zero
  // An older launch (operation 3) not followed by 4: outside the newest run. Five launches 10 us apart.
  ring[3] = launch(3, 1000, 9000, 9000, 9000, 9000);
  for (uint64_t i = 0; i < 5; ++i) ring[10 + i] = launch(10 + i, 1000000 + i * 10000, 400, 100, 3000 + i, 300);
  const TracePhases p = tracePhases(ring, 100);
  EXPECT_EQ(p.launches, 5u);
  EXPECT_DOUBLE_EQ(p.loaded, 0.4);
  EXPECT_DOUBLE_EQ(p.sent, 0.1);
  EXPECT_DOUBLE_EQ(p.received, 3.002);  // 3000..3004 ns: the median
  EXPECT_DOUBLE_EQ(p.end, 0.3);
  EXPECT_DOUBLE_EQ(p.total, 3.802);
  // From one launch's end to the next one's entry: 10000 - (3800 + i) ns for i = 0..3; the median of four is
  // the upper middle one.
  EXPECT_NEAR(p.gap, 6.199, 1e-9);
}

TEST(TracePhases, LatestCutsTheRunAndMissingStampsLeaveTheirPhases) {
  std::vector<KernelTraceRecord> ring;
  for (uint64_t i = 0; i < 6; ++i) ring.push_back(launch(20 + i, 5000 * (i + 1), 200, 0, 0, 1000 + 100 * i));
  const TracePhases bulk = tracePhases(ring, 3);
  EXPECT_EQ(bulk.launches, 3u);  // operations 23, 24, 25
  EXPECT_LT(bulk.sent, 0);       // bulk steps stamp neither
  EXPECT_LT(bulk.received, 0);
  EXPECT_DOUBLE_EQ(bulk.end, 1.4);  // loaded -> end, the median of 1.3, 1.4, 1.5
  EXPECT_DOUBLE_EQ(bulk.loaded, 0.2);
}

TEST(TracePhases, RoundsAsMeansPerRoundAndTheirMedianOverLaunches) {
  std::vector<KernelTraceRecord> ring;
  // Three launches of 4 rounds each: per round 10, 20, 30 us of stores, 5 us of reduction, 40-42 us whole.
  for (uint64_t i = 0; i < 3; ++i) {
    KernelTraceRecord r = launch(30 + i, 1000000 * (i + 1), 200, 0, 0, 200000);
    r.rounds = 4;
    r.roundNs[alloy::kRoundStores] = 4 * 10000 * (i + 1);
    r.roundNs[alloy::kRoundReduce] = 4 * 5000;
    r.roundNs[alloy::kRoundWhole] = 4 * (40000 + 1000 * i);
    ring.push_back(r);
  }
  ring.push_back(launch(33, 5000000, 200, 0, 0, 1000));  // one window: no rounds, left out of theirs
  const TracePhases p = tracePhases(ring, 100);
  EXPECT_EQ(p.launches, 4u);
  EXPECT_DOUBLE_EQ(p.rounds, 4);
  EXPECT_DOUBLE_EQ(p.roundStores, 20);
  EXPECT_DOUBLE_EQ(p.roundReduce, 5);
  EXPECT_DOUBLE_EQ(p.roundWhole, 41);
  const TracePhases lines = tracePhases({launch(1, 1000, 100, 100, 100, 100)}, 100);
  EXPECT_LT(lines.rounds, 0);
  EXPECT_LT(lines.roundWhole, 0);
}

TEST(TracePhases, NoRecordsGiveNoPhases) {
  const TracePhases none = tracePhases(std::vector<KernelTraceRecord>(8), 100);
  EXPECT_EQ(none.launches, 0u);
  EXPECT_LT(none.gap, 0);
  EXPECT_LT(none.total, 0);
}

}  // namespace
