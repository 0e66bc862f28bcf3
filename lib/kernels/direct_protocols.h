// The direct engine's kernels, one per protocol (direct_kernel.h's launchDirect picks among them).
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "direct_kernel.h"

namespace alloy {
namespace direct {

cudaError_t launchBulk(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream);
cudaError_t launchNarrowLines(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream);
cudaError_t bulkBlocksPerSm(int* blocks);
cudaError_t narrowLinesBlocksPerSm(int* blocks);

}  // namespace direct
}  // namespace alloy
