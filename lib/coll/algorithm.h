// Which algorithm a collective of a given size runs. The thresholds are read from the environment on
// every call (documented in docs/environment.md), so they must be equal on every rank.
#pragma once

#include <cstddef>

namespace alloy {

// Largest allreduce (bytes of the buffer) that runs one-shot; larger ones run reduce-scatter then
// all-gather. ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES overrides the default for nranks.
size_t allreduceOneShotMaxBytes(int nranks);

// Part p of a count-element buffer split over n ranks: its first element and length. Parts are whole
// 16-byte vectors where the buffer is large enough, so that the reduction stays vectorised; the last
// parts may be shorter or empty.
struct Part {
  size_t first;
  size_t count;
};
Part partOf(size_t count, size_t elementSize, int n, int p);

}  // namespace alloy
