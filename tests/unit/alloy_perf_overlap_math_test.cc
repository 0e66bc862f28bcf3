// Overlap mode's arithmetic (tools/alloy-perf/overlap_math.h): calibration, the compute kernel's exact
// expected values, how many collective calls span the load, medians.
#include <gtest/gtest.h>

#include "overlap_math.h"

namespace alloyperf {
namespace {

TEST(AlloyPerfOverlapMath, ScaledLoopIsProportionalAndBounded) {
  EXPECT_EQ(scaledLoop(4096, 4.0, 20.0), 20480);
  EXPECT_EQ(scaledLoop(20480, 25.0, 20.0), 16384);
  EXPECT_EQ(scaledLoop(10, 1000.0, 1.0), 1);                   // never below one step
  EXPECT_EQ(scaledLoop(1LL << 23, 1.0, 10.0), kMaxComputeLoop); // never past exact floats
  EXPECT_EQ(scaledLoop(4096, 0.0, 20.0), 4096);                 // nothing measured: unchanged
}

TEST(AlloyPerfOverlapMath, ExpectedValuesAreExactUpToTheLongestLoop) {
  EXPECT_EQ(computeInput(1025), 1.0f);
  EXPECT_EQ(computeExpected(1025, 10), 11.0f);
  // The largest value the kernel can make is 2^24 - 1, the last integer a float holds exactly.
  EXPECT_EQ(computeExpected(kInputSpan - 1, kMaxComputeLoop), 16777215.0f);
  EXPECT_NE(computeExpected(kInputSpan - 1, kMaxComputeLoop), computeExpected(kInputSpan - 2, kMaxComputeLoop));
}

TEST(AlloyPerfOverlapMath, IterationsSpanTheLoad) {
  EXPECT_EQ(iterationsToSpan(20.0, 300.0), 67);   // 66.7 rounded up: the loop outlasts the load
  EXPECT_EQ(iterationsToSpan(20.0, 20000.0), 1);
  EXPECT_EQ(iterationsToSpan(20.0, 90000.0), 1);  // longer than the load: one call
  EXPECT_EQ(iterationsToSpan(20.0, 0.001), kMaxOverlapIterations);
  EXPECT_EQ(iterationsToSpan(20.0, 0.0), kMaxOverlapIterations);
}

TEST(AlloyPerfOverlapMath, ExtendedIterationsCoverTheLoadWithAQuarterToSpare) {
  EXPECT_EQ(extendedIterations(10, 1.6), 20);   // the load ended at 1.6 loops: 16 calls, and a quarter
  EXPECT_EQ(extendedIterations(1, 1.01), 2);    // always at least one more
  EXPECT_EQ(extendedIterations(9000, 2.0), kMaxOverlapIterations);
}

TEST(AlloyPerfOverlapMath, Median) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({3.0}), 3.0);
  EXPECT_EQ(median({5.0, 1.0, 4.0}), 4.0);
  EXPECT_EQ(median({4.0, 1.0, 2.0, 9.0}), 3.0);
}

}  // namespace
}  // namespace alloyperf
