#include "kernel_trace.h"

#include <cuda_runtime.h>

#include <mutex>

#include "error.h"

namespace alloy {
#if ALLOY_KERNEL_TRACE
namespace {
KernelTraceRecord* ring = nullptr;
std::once_flag ringMade;
}  // namespace

KernelTraceRecord* kernelTraceRing() {
  std::call_once(ringMade, [] {
    const size_t bytes = kKernelTraceRecords * sizeof(KernelTraceRecord);
    void* memory = nullptr;
    if (cudaMalloc(&memory, bytes) != cudaSuccess || cudaMemset(memory, 0, bytes) != cudaSuccess) {
      cudaGetLastError();
      if (memory != nullptr) cudaFree(memory);
      return;
    }
    ring = static_cast<KernelTraceRecord*>(memory);
  });
  return ring;
}
#endif
}  // namespace alloy

extern "C" ALLOY_API alloyResult_t alloyDebugKernelTrace(alloy::KernelTraceRecord* out, size_t max, size_t* count) {
  if (out == nullptr || count == nullptr)
    return alloy::fail(alloyInvalidArgument, "alloyDebugKernelTrace: out and count must not be NULL");
  *count = 0;
#if ALLOY_KERNEL_TRACE
  alloy::KernelTraceRecord* ring = alloy::kernelTraceRing();
  if (ring == nullptr)
    return alloy::fail(alloyCudaError, "alloyDebugKernelTrace: the trace ring could not be allocated");
  const size_t n = max < alloy::kKernelTraceRecords ? max : alloy::kKernelTraceRecords;
  ALLOY_CUDA_TRY(cudaMemcpy(out, ring, n * sizeof(alloy::KernelTraceRecord), cudaMemcpyDeviceToHost));
  *count = n;
  return alloySuccess;
#else
  (void)max;
  return alloy::fail(alloyNotSupported, "alloyDebugKernelTrace: this build has no kernel trace "
                                        "(configure with -DALLOY_KERNEL_TRACE=ON)");
#endif
}
