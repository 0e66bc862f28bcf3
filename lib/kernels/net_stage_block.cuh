// What one block does for a small operation between hosts (net_stage_kernel.h): stage this rank's send
// bytes into the host-mapped outboxes and ring the doorbell, copy this rank's own blocks, wait for the
// proxy's release and copy the received bytes out of the inboxes. Shared by the staging kernel, where the
// block is the whole launch, and by the point-to-point kernel, which runs it as its last block so that an
// operation with peers on this host as well is one launch (p2p_kernel.h, launchP2pWithNetStage).
#pragma once

#include <cstddef>
#include <cstdint>

#include "net_stage_kernel.h"

namespace alloy {
namespace netstage {

// The copies read or write host memory over PCIe, where every access is a transaction of its own: 16
// bytes per thread per step where both ends and the length allow it, else bytes. Loads bypass the
// caches (the inboxes are rewritten by the host between operations).
__device__ inline void copyBytes(const P2pSegment& c) {
  const uintptr_t ends = reinterpret_cast<uintptr_t>(c.src) | reinterpret_cast<uintptr_t>(c.dst) | c.bytes;
  if (ends % sizeof(int4) == 0) {
    const int4* src = reinterpret_cast<const int4*>(c.src);
    int4* dst = reinterpret_cast<int4*>(c.dst);
    for (size_t i = threadIdx.x; i < c.bytes / sizeof(int4); i += blockDim.x) dst[i] = __ldcv(src + i);
    return;
  }
  for (size_t i = threadIdx.x; i < c.bytes; i += blockDim.x) c.dst[i] = __ldcv(c.src + i);
}

__device__ inline uint32_t loadAcquireSystem(const uint32_t* word) {
  uint32_t value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(word) : "memory");
  return value;
}

// Polls a's doorbell from thread 0 until the proxy releases it. The proxy releases it once the operation
// is done, and also when the channel fails or the communicator is aborted, so this wait ends; the abort
// flag is read as well, every 1024 polls (each poll crosses PCIe, about 1 us), in case the proxy is gone.
// Whether it was aborted, on every thread; the barrier also orders the block's later loads after the
// release that thread 0 saw.
__device__ inline bool awaitRelease(const NetStageLaunch& a) {
  bool aborted = false;
  if (threadIdx.x == 0)
    for (unsigned polls = 1; !aborted && loadAcquireSystem(a.bell) != 0; ++polls)
      aborted = polls % 1024 == 0 && *reinterpret_cast<volatile int*>(&a.fault->abortFlag) != 0;
  return __syncthreads_or(aborted);
}

// The block's work for launch a: ring (a.ring) and wait (a.wait) as the launch says.
__device__ inline void runStage(const NetStageLaunch& a) {
  if (a.ring) {
    // The box's previous operation ended its launch at the ring (NetStageLaunch::waitFree): the proxy may
    // still be reading the outboxes.
    if (a.waitFree && awaitRelease(a)) return;
    for (int k = 0; k < a.staged; ++k) copyBytes(a.copies[k]);
    // Every thread's stores reach the host before the doorbell does: the proxy reads the outboxes as
    // soon as it sees the ring. The barrier makes them thread 0's to order, and its one system fence
    // orders them before the ring (as blockPublish does), where a fence on every thread cost each warp one.
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      *reinterpret_cast<volatile uint32_t*>(a.bell) = a.ringValue;
    }
  }
  for (int k = a.staged; k < a.local; ++k) copyBytes(a.copies[k]);
  if (!a.wait || awaitRelease(a)) return;
  for (int k = a.local; k < a.count; ++k) copyBytes(a.copies[k]);
}

}  // namespace netstage
}  // namespace alloy
