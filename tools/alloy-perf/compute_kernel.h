// The one kernel of alloy-perf: the compute load of overlap mode (-O). Declared here in plain C++ so
// that host files need no CUDA compiler; compute_load.h drives it.
#ifndef ALLOY_PERF_COMPUTE_KERNEL_H_
#define ALLOY_PERF_COMPUTE_KERNEL_H_

#include <cuda_runtime.h>

namespace alloyperf {

// Blocks of `threads` threads of the kernel that fit on one SM at once.
cudaError_t computeKernelBlocksPerSm(int threads, int* blocks);

// Enqueues one launch on stream: thread t of blocks x threads reads in[t], applies `loop` dependent
// FMAs x = x * 1 + 1 (1 comes as an argument, so the compiler cannot fold the loop) and writes out[t].
cudaError_t launchComputeKernel(const float* in, float* out, long long loop, int blocks, int threads,
                                cudaStream_t stream);

}  // namespace alloyperf

#endif  // ALLOY_PERF_COMPUTE_KERNEL_H_
