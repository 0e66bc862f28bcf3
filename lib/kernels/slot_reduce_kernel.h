// The reduction of buffers that have already arrived: one slot per rank in a scratch buffer (filled by
// the point-to-point engine and the network), this rank's own contribution read from its input, reduced
// element by element in rank order. The reducing collectives between hosts use it after their exchange
// (lib/coll/across_hosts.h); it waits for nobody, so it needs no communicator.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"

namespace alloy {

struct SlotReduce {
  const char* slots;  // rank r's contribution at slots + r * slotStride, for every rank r but `own`
  size_t slotStride;  // bytes; a multiple of the element size
  const char* ownInput;  // rank `own`'s contribution (may equal dst: each element is read before written)
  int own;
  int ranks;          // contributions, reduced in rank order 0, 1, ..., ranks - 1 (avg divides by ranks)
  char* dst;
  size_t count;       // elements
  int op;             // alloyRedOp_t
};

// Enqueues the reduction on stream; nothing when count is 0. type and op must be valid (checked by the
// caller), and every pointer element-aligned.
cudaError_t launchSlotReduce(const SlotReduce& reduce, alloyDataType_t type, cudaStream_t stream);

}  // namespace alloy
