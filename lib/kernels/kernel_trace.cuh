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

__device__ inline bool traceOwner() { return blockIdx.x == 0 && threadIdx.x == 0; }

__device__ inline void traceStart() {
  if (!traceOwner()) return;
  for (int k = 0; k < kTraceStamps; ++k) traceStamps[k] = 0;
  traceStamps[kTraceEntry] = globalTimerNs();
}

__device__ inline void traceStamp(KernelTraceStamp k) {
  if (traceOwner()) traceStamps[k] = globalTimerNs();
}

__device__ inline void traceFinish(const DirectLaunch& a, uint64_t operation) {
  if (!traceOwner() || a.trace == nullptr) return;
  traceStamps[kTraceEnd] = globalTimerNs();
  KernelTraceRecord& r = a.trace[operation % kKernelTraceRecords];
  for (int k = 0; k < kTraceStamps; ++k) r.stamp[k] = traceStamps[k];
  r.operation = operation;
  r.algorithm = a.algorithm;
  r.protocol = a.protocol;
}
#else
__device__ inline void traceStart() {}
__device__ inline void traceStamp(KernelTraceStamp) {}
__device__ inline void traceFinish(const DirectLaunch&, uint64_t) {}
#endif

}  // namespace direct
}  // namespace alloy
