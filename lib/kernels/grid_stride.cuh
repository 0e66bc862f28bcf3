// Launch geometry of the elementwise kernels (the slot reduction, the PreMulSum scaling): one block of
// kGridStrideThreads threads per that many elements, at most kGridStrideMaxBlocks of them, each thread then
// striding over the elements beyond the grid.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "type_dispatch.cuh"

namespace alloy {

constexpr int kGridStrideThreads = 256;
constexpr int kGridStrideMaxBlocks = 1024;  // enough blocks to fill an H100 several times

// Enqueues kernelOf(T{})(args) for the type of `type` over count elements on stream; nothing when count is 0.
template <typename KernelOf, typename Args>
cudaError_t launchGridStride(alloyDataType_t type, size_t count, KernelOf kernelOf, const Args& args,
                             cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const size_t wanted = (count + kGridStrideThreads - 1) / kGridStrideThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < kGridStrideMaxBlocks ? wanted : kGridStrideMaxBlocks);
  return withType(type, [&](auto tag) {
    kernelOf(tag)<<<blocks, kGridStrideThreads, 0, stream>>>(args);
    return cudaGetLastError();
  });
}

}  // namespace alloy
