// Stream memory operations on a 32-bit word: a stream writes it, or waits until it holds a value, with
// no kernel and no SM spinning (cuStreamWriteValue32 / cuStreamWaitValue32). Both are captured into CUDA
// graphs as memory-operation nodes, so a replay repeats them with no host involvement. The driver entry
// points are looked up through the runtime on first use, so the library needs no link to libcuda (it
// loads on machines without a driver, where these are never called).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "alloy.h"

namespace alloy {

// word: a device-accessible address (device memory, or host memory mapped for the device).
// function names the API call for messages.
alloyResult_t streamWriteWord(cudaStream_t stream, void* word, uint32_t value, const char* function);
alloyResult_t streamWaitWordEquals(cudaStream_t stream, void* word, uint32_t value, const char* function);

}  // namespace alloy
