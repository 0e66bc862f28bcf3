// The arithmetic of overlap mode (-O), apart from any GPU so that it is unit-tested on CPU machines:
// how the compute load's loop is calibrated, what its kernel must leave in each slot, how many
// collective iterations cover the load, and the median that every reported time is.
#ifndef ALLOY_PERF_OVERLAP_MATH_H_
#define ALLOY_PERF_OVERLAP_MATH_H_

#include <vector>

namespace alloyperf {

// The compute kernel adds 1 to a float per step (an FMA with a = b = 1, which it cannot know), starting
// from slot % kInputSpan. Every value stays an integer below 2^24, so the float result is exact and the
// host can check it bit for bit: the loop is capped at kMaxComputeLoop steps.
constexpr int kInputSpan = 1024;
constexpr long long kMaxComputeLoop = (1LL << 24) - kInputSpan;

float computeInput(long long slot);
// The value slot must hold after the kernel ran `loop` steps.
float computeExpected(long long slot, long long loop);

// The loop length that should take targetMs, given that `loop` steps took measuredMs (the time is
// close to proportional: the fixed cost of a launch is a few microseconds). At least 1, at most
// kMaxComputeLoop; `loop` itself when nothing was measured.
long long scaledLoop(long long loop, double measuredMs, double targetMs);

// Collective iterations that last at least spanMs at usPerIteration each, measured alone: at least 1,
// at most kMaxOverlapIterations.
constexpr int kMaxOverlapIterations = 10000;
int iterationsToSpan(double spanMs, double usPerIteration);

// When `iterations` calls ended before the load did (the load ended `shortfall` times the loop's span
// after the loop's start, shortfall > 1): enough calls to cover it with a quarter to spare, at least
// one more, at most kMaxOverlapIterations.
int extendedIterations(int iterations, double shortfall);

// Median of values (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> values);

}  // namespace alloyperf

#endif  // ALLOY_PERF_OVERLAP_MATH_H_
