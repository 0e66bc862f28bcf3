// Checks shared by the collective entry points. Each names the function and the argument it rejects,
// and runs before anything is enqueued.
#pragma once

#include <cstddef>

#include "alloy.h"

namespace alloy {

// *bytes = count * elementSize, or alloyInvalidArgument when that overflows size_t.
alloyResult_t checkedBytes(size_t count, size_t elementSize, const char* function, const char* argument,
                           size_t* bytes);
// A buffer of `bytes` bytes must be non-NULL (when bytes > 0) and device-accessible from the
// communicator's GPU: device memory of that GPU, managed memory, or mapped pinned host memory.
alloyResult_t checkDeviceBuffer(alloyComm_t comm, const void* buffer, size_t bytes, const char* function,
                                const char* argument);
// Reductions read and write whole elements: a buffer must start at a multiple of the element size (data
// movement takes any alignment). NULL passes: checkDeviceBuffer has the say on it.
alloyResult_t checkElementAligned(const void* buffer, size_t elementSize, const char* function, const char* argument);
alloyResult_t checkPeer(alloyComm_t comm, int peer, const char* function, const char* argument);
// alloyInvalidArgument naming the function when op is not a value of alloyRedOp_t.
alloyResult_t checkRedOp(alloyRedOp_t op, const char* function);
bool rangesOverlap(const void* a, size_t aBytes, const void* b, size_t bBytes);
// For collectives that may run in place: sendbuff and recvbuff must either not overlap at all, or
// sendbuff must sit exactly at inPlaceSend (the position NCCL defines as in place for the collective).
alloyResult_t checkInPlaceOrDisjoint(const void* sendbuff, size_t sendBytes, const void* recvbuff, size_t recvBytes,
                                     const void* inPlaceSend, const char* function);

}  // namespace alloy
