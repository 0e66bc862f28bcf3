// Which algorithm a collective of a given size runs. The thresholds are read from the environment on
// every call (documented in docs/environment.md), so they must be equal on every rank.
#pragma once

#include <cstddef>

namespace alloy {

// Largest allreduce (bytes of the buffer) that runs one-shot; larger ones run reduce-scatter then
// all-gather. ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES overrides the default for nranks.
size_t allreduceOneShotMaxBytes(int nranks);

}  // namespace alloy
