#include "net_stage_block.cuh"

namespace alloy {
namespace {

__global__ void __launch_bounds__(kNetStageThreads) netStageKernel(const NetStageLaunch a) { netstage::runStage(a); }

}  // namespace

cudaError_t launchNetStage(const NetStageLaunch& launch, cudaStream_t stream) {
  netStageKernel<<<1, kNetStageThreads, 0, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace alloy
