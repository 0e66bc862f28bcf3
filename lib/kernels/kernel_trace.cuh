// The device side of kernel_trace.h: block 0's first thread stamps the moments of a direct-engine launch
// into shared memory as they pass and writes them out as one record when the operation is counted. In
// builds without ALLOY_KERNEL_TRACE every function here is empty and DirectLaunch has no trace field.
#pragma once

#include "direct_kernel.h"
#include "kernel_trace.h"
#include "sync_primitives.cuh"

namespace alloy {
namespace direct {

#if ALLOY_KERNEL_TRACE
static __shared__ uint64_t traceStamps[kTraceStamps];
static __shared__ uint64_t traceRoundNs[kTraceRoundPhases];
static __shared__ uint64_t traceRounds;

__device__ inline bool traceOwner() { return blockIdx.x == 0 && threadIdx.x == 0; }

// The round sums are zeroed before the kernel's first barrier (blockMayRun's), which every thread passes
// before it adds to them.
__device__ inline void traceStart() {
  if (!traceOwner()) return;
  for (int k = 0; k < kTraceStamps; ++k) traceStamps[k] = 0;
  for (int k = 0; k < kTraceRoundPhases; ++k) traceRoundNs[k] = 0;
  traceRounds = 0;
  traceStamps[kTraceEntry] = globalTimerNs();
}

// Now, on block 0; 0 elsewhere (where nothing is summed).
__device__ inline uint64_t traceClock() { return blockIdx.x == 0 ? globalTimerNs() : 0; }

// Adds the time since `since` (a traceClock of this thread) to round phase p, on the one thread of block 0
// that `owner` names for that phase; the block's next barrier publishes the sum to thread 0.
__device__ inline void traceRoundAdd(KernelTraceRound p, uint64_t since, bool owner) {
  if (blockIdx.x == 0 && owner) traceRoundNs[p] += globalTimerNs() - since;
}

// One more round summed (block 0's first thread, after its round's kRoundWhole).
__device__ inline void traceRoundCounted() {
  if (traceOwner()) ++traceRounds;
}

__device__ inline void traceStamp(KernelTraceStamp k) {
  if (traceOwner()) traceStamps[k] = globalTimerNs();
}

__device__ inline void traceFinish(const DirectLaunch& a, uint64_t operation) {
  if (!traceOwner() || a.trace == nullptr) return;
  traceStamps[kTraceEnd] = globalTimerNs();
  KernelTraceRecord& r = a.trace[operation % kKernelTraceRecords];
  for (int k = 0; k < kTraceStamps; ++k) r.stamp[k] = traceStamps[k];
  for (int k = 0; k < kTraceRoundPhases; ++k) r.roundNs[k] = traceRoundNs[k];
  r.rounds = traceRounds;
  r.operation = operation;
  r.algorithm = a.algorithm;
  r.protocol = a.protocol;
}
#else
__device__ inline void traceStart() {}
__device__ inline uint64_t traceClock() { return 0; }
__device__ inline void traceRoundAdd(KernelTraceRound, uint64_t, bool) {}
__device__ inline void traceRoundCounted() {}
__device__ inline void traceStamp(KernelTraceStamp) {}
__device__ inline void traceFinish(const DirectLaunch&, uint64_t) {}
#endif

}  // namespace direct
}  // namespace alloy
