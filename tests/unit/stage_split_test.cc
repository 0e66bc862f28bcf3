// net-stages' arithmetic (tools/net-stages/stage_split.h) on made-up calls and channel stamps, worked out by
// hand: which operations belong to which call, the medians, and the stages no call had.
#include <gtest/gtest.h>

#include <vector>

#include "stage_split.h"

namespace {

constexpr int64_t kUs = 1000;  // the stamps are nanoseconds

// posted: a microsecond before sent where the operation sends (0 otherwise, as the channel stamps it).
alloy::NetStages op(uint32_t id, int64_t rung, int64_t sent, int64_t in, int64_t released) {
  const int64_t posted = sent != 0 ? sent - 1 : 0;
  return alloy::NetStages{id, rung * kUs, posted * kUs, sent * kUs, in * kUs, released * kUs};
}

CallTimes call(int64_t start, int64_t enqueued, int64_t done) { return CallTimes{start * kUs, enqueued * kUs, done * kUs}; }

}  // namespace

TEST(StageSplit, EachCallTakesTheOperationsRungWithinIt) {
  // Three calls; the second has two operations (rounds), the first and third one each.
  const std::vector<CallTimes> calls = {call(0, 5, 40), call(100, 104, 160), call(200, 207, 250)};
  const std::vector<alloy::NetStages> stages = {
      op(1, 10, 15, 20, 30),                           // call 0
      op(2, 110, 112, 118, 125), op(3, 126, 0, 140, 150),  // call 1: the second receives only
      op(4, 209, 0, 219, 240),                         // call 2: receives only
  };
  const StageSplit s = splitStages(calls, stages);
  EXPECT_EQ(s.calls, 3u);
  EXPECT_DOUBLE_EQ(s.opsPerCall, 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.enqueue, 5);        // 5, 4, 7
  EXPECT_DOUBLE_EQ(s.toRung, 10);        // 10, 10, 9
  EXPECT_DOUBLE_EQ(s.rungToPosted, 4);   // 4 and 1, as below
  EXPECT_DOUBLE_EQ(s.rungToSent, 5);     // 5 and 2 (the third call's first operation sends nothing): the upper
  EXPECT_DOUBLE_EQ(s.rungToIn, 10);      // 10, 8, 10
  EXPECT_DOUBLE_EQ(s.network, 31);       // 20, 40 (110 -> 150), 31
  EXPECT_DOUBLE_EQ(s.afterRelease, 10);  // 10, 10, 10
  EXPECT_DOUBLE_EQ(s.total, 50);         // 40, 60, 50
}

TEST(StageSplit, CallsWithoutOperationsAndStagesNoCallHadAreLeftOut) {
  const std::vector<CallTimes> calls = {call(0, 2, 20), call(100, 103, 130)};
  const std::vector<alloy::NetStages> stages = {op(7, 50, 0, 60, 70), op(8, 110, 0, 115, 120)};  // 50: in no call
  const StageSplit s = splitStages(calls, stages);
  EXPECT_EQ(s.calls, 1u);
  EXPECT_DOUBLE_EQ(s.opsPerCall, 1);
  EXPECT_DOUBLE_EQ(s.total, 30);
  EXPECT_LT(s.rungToPosted, 0);  // no operation sent
  EXPECT_LT(s.rungToSent, 0);
  EXPECT_DOUBLE_EQ(s.rungToIn, 5);
}

TEST(StageSplit, NoOperationsGiveNoCalls) {
  const StageSplit s = splitStages({call(0, 1, 2)}, {});
  EXPECT_EQ(s.calls, 0u);
  EXPECT_LT(s.total, 0);
  EXPECT_LT(s.network, 0);
}

// net-latency's transfers: the sender's and receiver's stamps of each transfer together, medians over three
// transfers worked out by hand; a pair whose sender did not send or whose receiver did not receive is left
// out.
TEST(TransferSplit, BothEndsOfEachTransferTogether) {
  const auto end = [](int64_t rang, alloy::NetStages stages, int64_t seen) {
    return RankedOperation{rang * kUs, stages, seen * kUs};
  };
  // Sender: rang, rung, posted (sent a microsecond later); receiver: in, released, seen.
  const std::vector<RankedOperation> senders = {
      end(0, op(1, 2, 8, 0, 9), 10), end(100, op(2, 101, 107, 0, 108), 110), end(200, op(3, 203, 206, 0, 207), 210),
      end(300, op(4, 301, 0, 305, 306), 310),  // received instead of sending: left out
  };
  const std::vector<RankedOperation> receivers = {
      end(1, op(5, 1, 0, 10, 11), 12), end(90, op(6, 95, 0, 109, 110), 111), end(190, op(7, 195, 0, 209, 210), 212),
      end(300, op(8, 300, 0, 320, 321), 322),
  };
  const TransferSplit t = splitTransfers(senders, receivers);
  EXPECT_EQ(t.transfers, 3u);
  EXPECT_DOUBLE_EQ(t.ringToProxy, 2);     // 2, 1, 3
  EXPECT_DOUBLE_EQ(t.proxyToPosted, 5);   // posted = sent - 1: 5, 5, 2
  EXPECT_DOUBLE_EQ(t.postedToIn, 3);      // 10 - 7, 109 - 106, 209 - 205: 3, 3, 4
  EXPECT_DOUBLE_EQ(t.inToReleased, 1);    // 1, 1, 1
  EXPECT_DOUBLE_EQ(t.releasedToSeen, 1);  // 1, 1, 2
  EXPECT_DOUBLE_EQ(t.total, 12);          // 12, 11, 12
}

TEST(TransferSplit, NoTransfersGiveNoStages) {
  const TransferSplit t = splitTransfers({}, {});
  EXPECT_EQ(t.transfers, 0u);
  EXPECT_LT(t.total, 0);
  EXPECT_LT(t.postedToIn, 0);
}
