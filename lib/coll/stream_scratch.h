// Stream-ordered scratch memory of one operation: allocated on the stream before the operation's first
// step and freed on it after the last, so that it is that operation's alone even when operations run at
// once on several streams or replay from graphs (capture turns both calls into graph nodes). It comes from
// the communicator's pool (lib/core/scratch_pool.h), which keeps freed scratch across synchronisations.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "comm.h"
#include "error.h"

namespace alloy {

class StreamScratch {
 public:
  StreamScratch(alloyComm_t comm, cudaStream_t stream) : comm_(comm), stream_(stream) {}
  ~StreamScratch() {
    if (base_ != nullptr) cudaFreeAsync(base_, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  alloyResult_t allocate(size_t bytes, const char* function) {
    if (bytes == 0) return alloySuccess;
    cudaMemPool_t pool = comm_->scratchPool.get();
    if (pool == nullptr) return fail(alloyInternalError, "%s: the communicator has no scratch memory pool", function);
    const cudaError_t err = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&base_), bytes, pool, stream_);
    if (err != cudaSuccess) {
      cudaGetLastError();
      base_ = nullptr;
      return fail(alloyCudaError,
                  "%s: cannot allocate %zu bytes of scratch memory on the stream (cudaMallocFromPoolAsync: %s)",
                  function, bytes, cudaGetErrorString(err));
    }
    return alloySuccess;
  }
  char* get() const { return base_; }

 private:
  alloyComm_t comm_;
  cudaStream_t stream_;
  char* base_ = nullptr;
};

}  // namespace alloy
