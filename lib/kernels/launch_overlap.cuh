// Launches of the engines' kernels that may overlap the previous kernel on the stream (programmatic
// dependent launch, compute capability 9.0 and up). Between two back-to-back small operations a GPU spent
// 1.7-2.1 us from one launch's end to the next one's first instruction, about 40% of each operation
// (2 x H200, host-cost --trace; docs/benchmarks.md, "Where a small operation's GPU time goes"). With the
// launch attribute, the next kernel's blocks are set up while this one runs and wait in hardware for it.
//
// The contract on both sides: every kernel launched this way calls awaitPreviousGrid() before it touches
// memory (it returns once the previous grid has completed and its stores are visible, whatever kernel
// that was), and calls releaseNextGrid() once all of its own blocks are resident, which is at their first
// instruction (every engine launch is resident as a whole: ipc_transport.cc). A kernel launched without
// the attribute (the user's, the elementwise ones) waits for this one's end as usual; a kernel launched
// with it is bound by the same contract to wait before reading what this one wrote.
#pragma once

#include <cuda_runtime.h>

namespace alloy {

__device__ inline void awaitPreviousGrid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ inline void releaseNextGrid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A launched kernel's first step: the previous grid done, then the next one's blocks free to be set up
// (after the wait, so that at most one grid waits behind a running one).
__device__ inline void enterOverlapped() {
  awaitPreviousGrid();
  releaseNextGrid();
}

// kernel<<<blocks, threads, 0, stream>>>(args), overlapping the previous kernel's end where `overlap`
// (DeviceComm::earlyLaunch); the launch's error, as cudaGetLastError would give it.
template <typename Args>
cudaError_t launchOverlapping(void (*kernel)(Args), unsigned blocks, unsigned threads, cudaStream_t stream,
                              const Args& args, bool overlap) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.stream = stream;
  config.attrs = overlap ? &attribute : nullptr;
  config.numAttrs = overlap ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args);
}

}  // namespace alloy
