#include "scratch_pool.h"

#include <cstdint>

#include "env.h"

namespace alloy {

ScratchPool::~ScratchPool() {
  // Scratch still allocated or freed on a stream that has not reached the free yet is released once it
  // is: CUDA defers the pool's destruction until then.
  if (pool_ != nullptr) cudaMemPoolDestroy(pool_);
}

cudaError_t ScratchPool::create(int device) {
  if (pool_ != nullptr) return cudaSuccess;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t made = nullptr;
  cudaError_t err = cudaMemPoolCreate(&made, &props);
  if (err != cudaSuccess) return err;
  uint64_t keep = static_cast<uint64_t>(envInt("ALLOY_SCRATCH_KEEP_BYTES", 64ll << 20, 0));
  err = cudaMemPoolSetAttribute(made, cudaMemPoolAttrReleaseThreshold, &keep);
  if (err != cudaSuccess) {
    cudaMemPoolDestroy(made);
    return err;
  }
  pool_ = made;
  return cudaSuccess;
}

}  // namespace alloy
