#include "overlap_math.h"

#include <algorithm>
#include <cmath>

namespace alloyperf {

float computeInput(long long slot) { return static_cast<float>(slot % kInputSpan); }

float computeExpected(long long slot, long long loop) { return static_cast<float>(slot % kInputSpan + loop); }

long long scaledLoop(long long loop, double measuredMs, double targetMs) {
  if (!(measuredMs > 0) || !(targetMs > 0)) return loop;
  const double scaled = std::round(static_cast<double>(loop) * targetMs / measuredMs);
  return static_cast<long long>(std::min(std::max(scaled, 1.0), static_cast<double>(kMaxComputeLoop)));
}

int iterationsToSpan(double spanMs, double usPerIteration) {
  if (!(usPerIteration > 0)) return kMaxOverlapIterations;
  const double n = std::ceil(spanMs * 1000.0 / usPerIteration);
  return static_cast<int>(std::min(std::max(n, 1.0), static_cast<double>(kMaxOverlapIterations)));
}

int extendedIterations(int iterations, double shortfall) {
  const double n = std::ceil(iterations * shortfall * 1.25);
  return static_cast<int>(std::min(std::max(n, iterations + 1.0), static_cast<double>(kMaxOverlapIterations)));
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2) return values[mid];
  const double upper = values[mid];
  return (*std::max_element(values.begin(), values.begin() + mid) + upper) / 2;
}

}  // namespace alloyperf
