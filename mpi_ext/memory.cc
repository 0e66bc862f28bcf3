#include "memory.h"

#include <cuda_runtime.h>

namespace alloy_mpix {

bool processHasCudaDevice() {
  static const bool present = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: not an error for a host-memory program
      return false;
    }
    return count > 0;
  }();
  return present;
}

Problem classify(const Region& region, int device, const char* function, const char* argument, int* kind) {
  *kind = kNoData;
  if (region.bytes == 0) return {};
  if (region.base == nullptr)
    return problem(MPI_ERR_BUFFER, "%s: %s is NULL but %zu bytes are to move through it", function, argument,
                   region.bytes);
  *kind = kHostMemory;
  if (!processHasCudaDevice()) return {};
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, region.base) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  switch (attributes.type) {
    case cudaMemoryTypeManaged:
      *kind = kGpuMemory;
      return {};
    case cudaMemoryTypeHost:  // pinned: the GPU engine reaches it where it is mapped into the device
      if (attributes.devicePointer != nullptr) *kind = kGpuMemory;
      return {};
    case cudaMemoryTypeDevice: {
      *kind = kGpuMemory;
      if (attributes.device != device)
        return problem(MPI_ERR_BUFFER,
                       "%s: %s=%p is memory of CUDA device %d, but this communicator's MPIX calls run on device "
                       "%d (the current device at its first call with GPU memory)",
                       function, argument, region.base, attributes.device, device);
      return {};
    }
    default:  // unregistered, pageable host memory
      return {};
  }
}

bool overlap(const Region& a, const Region& b) {
  const char* pa = static_cast<const char*>(a.base);
  const char* pb = static_cast<const char*>(b.base);
  return a.bytes > 0 && b.bytes > 0 && pa < pb + b.bytes && pb < pa + a.bytes;
}

}  // namespace alloy_mpix
