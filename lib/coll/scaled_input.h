// The input of a PreMulSum reduction (NCCL's ncclRedOpCreatePreMulSum, served by lib/nccl): each rank's
// input multiplied by that rank's own scalar, then summed. The reduction kernels know only the five
// built-in operators; instead one pass of the scaling kernel (scale_kernel.h) writes the scaled input
// where the collective then reads it, and the collective is the ordinary sum. The price is that pass: one
// more read and write of this rank's input on its GPU.
//
// Where the scaled input goes: into the collective's own output when that is as large as the input and
// is overwritten by the result anyway (allreduce; reduce at the root), so that the collective runs in
// place and needs no memory of its own; else into scratch taken on the stream (stream_scratch.h) and
// freed there after the collective (reduce elsewhere than the root, reduce-scatter), as the reducing
// collectives take theirs: stream-ordered, that operation's alone, captured by a CUDA graph as
// allocation nodes. The caller's sendbuff is never written.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "scale_kernel.h"
#include "stream_scratch.h"

namespace alloy {

class ScaledInput {
 public:
  ScaledInput(alloyComm_t comm, cudaStream_t stream) : comm_(comm), stream_(stream), scratch_(comm, stream) {}

  // Without a scalar (a built-in operator) the input is read as it is. With one, enqueues the scaling of
  // input's count elements into `into`, or into scratch where into is NULL. Arguments must have been
  // checked by the collective. The scratch, if any, lives until this object goes.
  alloyResult_t prepare(const PreMulScalar* scalar, alloyDataType_t type, const void* input, size_t count, void* into,
                        const char* function);
  // Where the collective reads this rank's input.
  const void* get() const { return input_; }

 private:
  alloyComm_t comm_;
  cudaStream_t stream_;
  StreamScratch scratch_;
  const void* input_ = nullptr;
};

}  // namespace alloy
