// Block-wide forms of the flag protocol: one thread waits or publishes for the whole block. Shared by
// every engine kernel (point-to-point, reductions) so that all of them speak the same ring protocol.
#pragma once

#include <cstdint>

#include "device_comm.h"
#include "sync_primitives.cuh"

namespace alloy {

// Thread 0 waits; the block learns the outcome through shared memory.
__device__ inline bool blockWait(const DeviceComm& c, const uint64_t* address, uint64_t target) {
  __shared__ int ok;
  if (threadIdx.x == 0) ok = waitAtLeast(c, address, target);
  __syncthreads();
  return ok;
}

// After the whole block's stores, thread 0 publishes them: the fence orders every thread's stores
// (made visible to it by the barrier) before the flag at system scope.
__device__ inline void blockPublish(uint64_t* flag, uint64_t value) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    storeReleaseSys(flag, value);
  }
}

// After the whole block's loads of a slot, thread 0 hands the slot back. The loads have returned (their
// values were stored elsewhere before the barrier), so a release store suffices: no fence waits for this
// block's own writes to land, which keeps the receiver's side of a small message short.
__device__ inline void blockRelease(uint64_t* flag, uint64_t value) {
  __syncthreads();
  if (threadIdx.x == 0) storeReleaseSys(flag, value);
}

}  // namespace alloy
