// Block-wide forms of the flag protocol: one thread waits or publishes for the whole block. Shared by
// every engine kernel (point-to-point, reductions) so that all of them speak the same ring protocol.
#pragma once

#include <cstdint>

#include "device_comm.h"
#include "sync_primitives.cuh"

namespace alloy {

// Thread 0 waits for a flag `peer` raises; the block learns the outcome from the barrier itself. (A
// shared variable would be overwritten by thread 0's next wait while a slower warp still had to read
// it: a low-latency send has no other barrier between two waits.)
__device__ inline bool blockWait(const DeviceComm& c, int peer, const uint64_t* address, uint64_t target) {
  return __syncthreads_and(threadIdx.x != 0 || waitAtLeast(c, peer, address, target));
}

// Thread 0 stores the block's final value of one of this rank's own counters once every thread is past
// its read of the starting value: without the barrier, a warp that had not yet started (nothing else
// holds the block together when every chunk is low-latency and below the slot count) could read the
// new value as its start.
__device__ inline void blockStoreCounter(uint64_t* counter, uint64_t value) {
  __syncthreads();
  if (threadIdx.x == 0) *counter = value;
}

// After the whole block's stores, thread 0 publishes them: the fence orders every thread's stores
// (made visible to it by the barrier) before the flag at system scope (publishFence).
__device__ inline void blockPublish(const DeviceComm& c, uint64_t* flag, uint64_t value) {
  __syncthreads();
  if (threadIdx.x == 0) {
    publishFence(c);
    publishFlag(c, flag, value);
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
