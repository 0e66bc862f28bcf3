// The memory pool that a communicator's operations take their stream-ordered scratch from
// (lib/coll/stream_scratch.h), made at the first operation that needs scratch and destroyed with the
// communicator.
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

#include <mutex>

namespace alloy {

class ScratchPool {
 public:
  ScratchPool() = default;
  ~ScratchPool();
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  // The pool of `device` (the communicator's), made at the first call; an error of CUDA's otherwise.
  cudaError_t get(int device, cudaMemPool_t* pool);

 private:
  std::mutex mutex_;  // two threads may start operations of one communicator on different streams
  cudaMemPool_t pool_ = nullptr;
};

}  // namespace alloy
