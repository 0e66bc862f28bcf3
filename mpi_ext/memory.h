// Which engine can serve a buffer: the GPU engine (memory CUDA knows and the device can reach) or the
// MPI library (ordinary host memory, and all memory of a process without a CUDA device).
#pragma once

#include <cstddef>

#include "problem.h"

namespace alloy_mpix {

// Bit flags: the kinds of one rank's buffers combine with |; execute.cc agrees on them across ranks.
enum MemoryKind : int { kNoData = 0, kHostMemory = 1, kGpuMemory = 2 };

struct Region {
  const void* base = nullptr;  // first byte this rank reads or writes
  size_t bytes = 0;            // 0: the rank moves nothing through this buffer
};

bool processHasCudaDevice();

// The kind of the memory at region.base; a problem where the GPU engine would be needed but cannot use
// it: memory of another CUDA device than `device`, the one the communicator's GPU engine uses.
Problem classify(const Region& region, int device, const char* function, const char* argument, int* kind);

bool overlap(const Region& a, const Region& b);

}  // namespace alloy_mpix
