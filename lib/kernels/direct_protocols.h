// The direct engine's kernels, per protocol and type family (direct_kernel.h's launchDirect picks among
// them): each set is instantiated in a file of its own, so that the four compile side by side.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "direct_kernel.h"

namespace alloy {
namespace direct {

struct DirectKernels {
  // Enqueues the kernel for `type`; cudaErrorInvalidValue for a type outside the set's family.
  cudaError_t (*launch)(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream);
  // The fewest blocks one SM holds at once of the set's kernels.
  cudaError_t (*blocksPerSm)(int* blocks);
};

extern const DirectKernels kBulkIntegerKernels;        // direct_bulk_integers.cu
extern const DirectKernels kBulkFloatingKernels;       // direct_bulk_floating.cu
extern const DirectKernels kNarrowLinesIntegerKernels;   // direct_narrow_lines_integers.cu
extern const DirectKernels kNarrowLinesFloatingKernels;  // direct_narrow_lines_floating.cu
extern const DirectKernels kWideLinesIntegerKernels;   // direct_wide_lines_integers.cu
extern const DirectKernels kWideLinesFloatingKernels;  // direct_wide_lines_floating.cu

}  // namespace direct
}  // namespace alloy
