#include "arguments.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "comm.h"
#include "error.h"

namespace alloy {

alloyResult_t checkedBytes(size_t count, size_t elementSize, const char* function, const char* argument,
                           size_t* bytes) {
  if (elementSize != 0 && count > SIZE_MAX / elementSize)
    return fail(alloyInvalidArgument, "%s: %s=%zu elements of %zu bytes overflows the address space",
                function, argument, count, elementSize);
  *bytes = count * elementSize;
  return alloySuccess;
}

alloyResult_t checkDeviceBuffer(alloyComm_t comm, const void* buffer, size_t bytes, const char* function,
                                const char* argument) {
  if (bytes == 0) return alloySuccess;
  if (buffer == nullptr)
    return fail(alloyInvalidArgument, "%s: %s is NULL but %zu bytes are to move through it", function,
                argument, bytes);
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, buffer) != cudaSuccess) {
    cudaGetLastError();
    return fail(alloyInvalidArgument, "%s: %s=%p is not memory CUDA knows", function, argument, buffer);
  }
  switch (attributes.type) {
    case cudaMemoryTypeManaged:
      return alloySuccess;
    case cudaMemoryTypeHost:
      if (attributes.devicePointer != nullptr) return alloySuccess;
      break;
    case cudaMemoryTypeDevice:
      if (attributes.device == comm->cudaDevice) return alloySuccess;
      return fail(alloyInvalidArgument, "%s: %s=%p is memory of CUDA device %d; the communicator uses device %d",
                  function, argument, buffer, attributes.device, comm->cudaDevice);
    default:
      break;
  }
  return fail(alloyInvalidArgument,
              "%s: %s=%p is not device-accessible memory (expected cudaMalloc, managed or mapped pinned memory)",
              function, argument, buffer);
}

alloyResult_t checkElementAligned(const void* buffer, size_t elementSize, const char* function, const char* argument) {
  if (elementSize > 1 && reinterpret_cast<uintptr_t>(buffer) % elementSize != 0)
    return fail(alloyInvalidArgument, "%s: %s=%p is not aligned to its %zu-byte elements; reductions need "
                "element-aligned buffers", function, argument, buffer, elementSize);
  return alloySuccess;
}

alloyResult_t checkPeer(alloyComm_t comm, int peer, const char* function, const char* argument) {
  if (peer < 0 || peer >= comm->nranks)
    return fail(alloyInvalidArgument, "%s: %s=%d is out of range (the communicator has ranks 0..%d)", function,
                argument, peer, comm->nranks - 1);
  return alloySuccess;
}

alloyResult_t checkRedOp(alloyRedOp_t op, const char* function) {
  if (op < 0 || op >= alloyNumOps)
    return fail(alloyInvalidArgument, "%s: op %d is not an alloyRedOp_t (expected 0..%d: sum, prod, max, min, avg)",
                function, static_cast<int>(op), alloyNumOps - 1);
  return alloySuccess;
}

bool rangesOverlap(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  return aBytes > 0 && bBytes > 0 && pa < pb + bBytes && pb < pa + aBytes;
}

alloyResult_t checkInPlaceOrDisjoint(const void* sendbuff, size_t sendBytes, const void* recvbuff, size_t recvBytes,
                                     const void* inPlaceSend, const char* function) {
  if (sendbuff == inPlaceSend || !rangesOverlap(sendbuff, sendBytes, recvbuff, recvBytes)) return alloySuccess;
  return fail(alloyInvalidArgument,
              "%s: sendbuff=%p overlaps recvbuff=%p without being in place (in place means sendbuff == %p)",
              function, sendbuff, recvbuff, inPlaceSend);
}

}  // namespace alloy
