#include "launch_overlap.cuh"
#include "net_stage_block.cuh"

namespace alloy {
namespace {

// One block, resident at its first instruction: it may let the next grid be set up at once.
__global__ void __launch_bounds__(kNetStageThreads) netStageKernel(const NetStageLaunch a) {
  enterOverlapped();
  netstage::runStage(a);
}

}  // namespace

cudaError_t launchNetStage(const NetStageLaunch& launch, cudaStream_t stream, bool overlap) {
  return launchOverlapping(netStageKernel, 1, kNetStageThreads, stream, launch, overlap);
}

}  // namespace alloy
