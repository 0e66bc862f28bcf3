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
alloyResult_t checkPeer(alloyComm_t comm, int peer, const char* function, const char* argument);

}  // namespace alloy
