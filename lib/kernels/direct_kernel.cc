#include "direct_kernel.h"

#include "direct_protocols.h"

namespace alloy {

cudaError_t launchDirect(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
  switch (launch.protocol) {
    case kDirectLines: return direct::launchNarrowLines(launch, type, stream);
    default: return direct::launchBulk(launch, type, stream);
  }
}

cudaError_t directKernelBlocksPerSm(int* blocks) {
  int fewest = 0;
  cudaError_t (*const probes[])(int*) = {direct::bulkBlocksPerSm, direct::narrowLinesBlocksPerSm};
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; ++i) {
    int perSm = 0;
    const cudaError_t err = probes[i](&perSm);
    if (err != cudaSuccess) return err;
    fewest = i == 0 || perSm < fewest ? perSm : fewest;
  }
  *blocks = fewest;
  return cudaSuccess;
}

}  // namespace alloy
