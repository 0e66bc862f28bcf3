#include "compute_kernel.h"

namespace alloyperf {

namespace {

// A dependent chain per thread: every step waits for the last, so the time is the loop length times
// the FMA latency, with the SM's other warps filling the pipeline; no memory traffic beside the
// collective's but one load and one store per thread.
__global__ void fmaChainKernel(const float* in, float* out, long long loop, float a, float b) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float x = in[t];
  for (long long i = 0; i < loop; ++i) x = fmaf(x, a, b);
  out[t] = x;
}

}  // namespace

cudaError_t computeKernelBlocksPerSm(int threads, int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, fmaChainKernel, threads, 0);
}

cudaError_t launchComputeKernel(const float* in, float* out, long long loop, int blocks, int threads,
                                cudaStream_t stream) {
  float one = 1.0f;
  // cudaLaunchKernel returns this launch's own error; cudaGetLastError after <<<>>> could also return
  // one that an earlier call of the process (the library's) left behind.
  void* args[] = {&in, &out, &loop, &one, &one};
  return cudaLaunchKernel(reinterpret_cast<const void*>(fmaChainKernel), dim3(blocks), dim3(threads), args, 0,
                          stream);
}

}  // namespace alloyperf
