// Stream-ordered scratch memory of one operation: allocated on the stream before the operation's first
// step and freed on it after the last, so that it is that operation's alone even when operations run at
// once on several streams or replay from graphs (capture turns both calls into graph nodes).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "error.h"

namespace alloy {

class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t stream) : stream_(stream) {}
  ~StreamScratch() {
    if (base_ != nullptr) cudaFreeAsync(base_, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  alloyResult_t allocate(size_t bytes, const char* function) {
    if (bytes == 0) return alloySuccess;
    const cudaError_t err = cudaMallocAsync(reinterpret_cast<void**>(&base_), bytes, stream_);
    if (err != cudaSuccess) {
      cudaGetLastError();
      base_ = nullptr;
      return fail(alloyCudaError, "%s: cannot allocate %zu bytes of scratch memory on the stream (cudaMallocAsync: %s)",
                  function, bytes, cudaGetErrorString(err));
    }
    return alloySuccess;
  }
  char* get() const { return base_; }

 private:
  cudaStream_t stream_;
  char* base_ = nullptr;
};

}  // namespace alloy
