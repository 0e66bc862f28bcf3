// The stream's copies between user buffers on the GPU and the network channel's staging in host memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"

namespace alloy {

struct StagedCopy {
  void* dst;
  const void* src;
  size_t bytes;
};

// Enqueues c on the stream so that a copy engine runs it at every size. CUDA runs a linear copy of up
// to about 1 KiB from host to device on the compute engine instead (one H200, driver 580, CUDA 13: a
// round of a 4 KiB copy to the host, a doorbell and a 1 KiB copy back took 276 us per round with two
// processes on the GPU, 20 us at 1.5 KiB), and where ranks share a GPU a round that mixes both engines
// waits for the other process's time slice. A copy of two rows (cudaMemcpy2DAsync) goes to a copy
// engine at any size: below kRowsBelowBytes the bytes go as two rows, plus a two-row copy of the last
// two bytes where the count is odd. docs/architecture.md, "Copy engines for the staging copies", has the
// measurements (tools/copy-engines reproduces them).
alloyResult_t enqueueStagedCopy(const StagedCopy& c, cudaStream_t stream);

constexpr size_t kRowsBelowBytes = 4096;

}  // namespace alloy
