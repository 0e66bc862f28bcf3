#include "direct_kernel.h"

#include "direct_protocols.h"
#include "type_family.h"

namespace alloy {
namespace {

const direct::DirectKernels* const kAllKernels[] = {&direct::kBulkIntegerKernels, &direct::kBulkFloatingKernels,
                                                    &direct::kNarrowLinesIntegerKernels,
                                                    &direct::kNarrowLinesFloatingKernels,
                                                    &direct::kWideLinesIntegerKernels,
                                                    &direct::kWideLinesFloatingKernels};

const direct::DirectKernels& kernelsFor(int protocol, alloyDataType_t type) {
  const bool integer = familyOf(type) == TypeFamily::Integer;
  if (protocol == kDirectLines) return integer ? direct::kNarrowLinesIntegerKernels : direct::kNarrowLinesFloatingKernels;
  if (protocol == kDirectWideLines) return integer ? direct::kWideLinesIntegerKernels : direct::kWideLinesFloatingKernels;
  return integer ? direct::kBulkIntegerKernels : direct::kBulkFloatingKernels;
}

}  // namespace

cudaError_t launchDirect(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
#if ALLOY_KERNEL_TRACE
  DirectLaunch traced = launch;
  traced.trace = kernelTraceRing();
  return kernelsFor(launch.protocol, type).launch(traced, type, stream);
#else
  return kernelsFor(launch.protocol, type).launch(launch, type, stream);
#endif
}

cudaError_t directKernelBlocksPerSm(int* blocks) {
  int fewest = 0;
  bool first = true;
  for (const direct::DirectKernels* kernels : kAllKernels) {
    int perSm = 0;
    const cudaError_t err = kernels->blocksPerSm(&perSm);
    if (err != cudaSuccess) return err;
    fewest = first || perSm < fewest ? perSm : fewest;
    first = false;
  }
  *blocks = fewest;
  return cudaSuccess;
}

}  // namespace alloy
