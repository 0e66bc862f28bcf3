#include "algorithm.h"

#include "call_env.h"

namespace alloy {

size_t allreduceOneShotMaxBytes(int nranks) {
  // One-shot moves (nranks - 1) * S out of every rank in one launch; reduce-scatter + all-gather moves
  // 2 * (nranks - 1) / nranks * S in two. On two ranks the bytes are the same: one-shot saves a launch
  // and a pipeline fill, and on 2 H200s over the rings stays ahead up to about 32 MB, where each rank
  // reducing the whole buffer (rather than half) starts to cost more (docs/api.md has the measurements;
  // the direct engine's crossover is lower: directOneShotMaxBytes). With more
  // ranks one-shot's extra traffic outweighs the launch from a few hundred KB on (not yet measured).
  const long long fallback = nranks <= 2 ? (32ll << 20) : (256ll << 10);
  const long long value = callEnvInt("ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES", fallback, 0);
  return static_cast<size_t>(value);
}

size_t directOneShotMaxBytes(int nranks) {
  // On 2 x H200 with 32 MiB areas (docs/benchmarks.md, "Session 24") the direct engine's one-shot took
  // 35.0 us at 8 MB against the two-shot's 36.8, and lost from 16 MB (67.2 against 62.3 us; 32 MB 133
  // against 113): one-shot moves the same bytes on 2 ranks with one round fewer, but each rank reduces
  // the whole buffer instead of half. From 3 ranks on the one-shot's extra traffic sets the limit alike
  // for both engines.
  if (nranks > 2) return allreduceOneShotMaxBytes(nranks);
  return static_cast<size_t>(callEnvInt("ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES", 8ll << 20, 0));
}

size_t directMaxBytes() {
  return static_cast<size_t>(callEnvInt("ALLOY_DIRECT_MAX_BYTES", LLONG_MAX, 0));
}

size_t directWindowMinBytes() {
  return static_cast<size_t>(callEnvInt("ALLOY_DIRECT_WINDOW_MIN_BYTES", 6ll << 20, 0));
}

size_t reduceWindowBytes() {
  return static_cast<size_t>(callEnvInt("ALLOY_REDUCE_WINDOW_BYTES", 2ll << 20, 0));
}

size_t directLowLatencyMaxBytes(size_t fallback) {
  return static_cast<size_t>(callEnvInt("ALLOY_DIRECT_LL_MAX_BYTES", static_cast<long long>(fallback), 0));
}

size_t directWideLinesMaxBytes(size_t fallback) {
  return static_cast<size_t>(callEnvInt("ALLOY_DIRECT_LL128_MAX_BYTES", static_cast<long long>(fallback), 0));
}

size_t reduceRootPartMaxBytes(int nranks) {
  const long long fallback = nranks == 3 ? (8ll << 20) : nranks == 4 ? (4ll << 20) : 0;
  return static_cast<size_t>(callEnvInt("ALLOY_REDUCE_ROOT_PART_MAX_BYTES", fallback, 0));
}

bool reduceRootFolds() { return callEnvInt("ALLOY_REDUCE_ROOT_FOLDS", 1, 0) != 0; }

Part partOf(size_t count, size_t elementSize, int n, int p) {
  const size_t align = 16 / elementSize;
  size_t per = (count + n - 1) / n;
  per = (per + align - 1) / align * align;
  const size_t first = per * p < count ? per * p : count;
  const size_t last = first + per < count ? first + per : count;
  return Part{first, last - first};
}

}  // namespace alloy
