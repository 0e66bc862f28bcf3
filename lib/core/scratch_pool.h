// The memory pool that a communicator's operations take their stream-ordered scratch from
// (lib/coll/stream_scratch.h), made with the communicator (a pool cannot be made while a stream is being
// captured, and an operation may be the first under capture) and destroyed with it.
//
// Why not the device's default pool, which cudaMallocAsync uses: its release threshold is 0, so every
// synchronisation of the stream hands the freed scratch back to the driver, and the next operation's
// cudaMallocAsync maps it again. An application that synchronises after each small operation paid that
// every call: an 8-byte allreduce between 2 virtual hosts took 250-310 us per synchronised call against
// 46 us back to back (2 x H200, tools/net-stages, 2026-11-27), 100-150 us of it in the enqueue and as much
// after the release. Raising the default pool's threshold would change the application's pool; this one
// is Alloy's and keeps up to ALLOY_SCRATCH_KEEP_BYTES reserved across synchronisations.
#pragma once

#include <cuda_runtime.h>

namespace alloy {

class ScratchPool {
 public:
  ScratchPool() = default;
  ~ScratchPool();
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  // Makes the pool on `device` (the communicator's), once; an error of CUDA's where it cannot.
  cudaError_t create(int device);
  // The pool; nullptr before create succeeded.
  cudaMemPool_t get() const { return pool_; }

 private:
  cudaMemPool_t pool_ = nullptr;
};

}  // namespace alloy
