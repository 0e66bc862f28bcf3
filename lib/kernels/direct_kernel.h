// The direct engine: reductions of small and medium buffers inside a host in one launch, without rings.
// Every rank stores what a peer needs straight into that peer's staging area (a fixed region after the
// rings, DeviceComm::directOffset), then raises one flag per block; the peer reduces from its own memory.
// There is no flow control per chunk: an operation is one or two bulk steps, each ended by a flag that
// every block of every rank raises towards every peer, which is the whole cost at small sizes.
//
// Reuse of the staging without acknowledgements: the areas come in two generations, used by operations
// alternately. A rank writes generation g of a peer's area again two operations later, and by then it
// has received the peer's data of the operation in between, which the peer sent only after its previous
// launch, the last reader of generation g, had ended (one communicator's launches run one after the
// other on each rank). This holds because every launch has all directBlocks blocks, each of which
// exchanges a flag with the same block of every peer, even when its share of the data is empty: every
// block then counts the same operations (SignalLayout::directEpoch), and the generation is the count's
// parity.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "device_comm.h"

namespace alloy {

enum DirectAlgorithm : int {
  // Every rank's whole buffer to every peer; each rank reduces all of them: one step.
  kDirectOneShot = 0,
  // Part p of every rank's buffer to rank p, which reduces it into its own part and into every peer's
  // result area (step 1); then every rank copies the peers' reduced parts out of its result area (step 2).
  kDirectTwoShot = 1,
  // Step 1 of the two-shot alone: rank p ends with part p reduced (alloyReduceScatter).
  kDirectReduceScatter = 2,
};

struct DirectLaunch {
  DeviceComm comm;
  int op;         // alloyRedOp_t
  int algorithm;  // DirectAlgorithm
  const char* src;  // this rank's input: the whole buffer
  char* dst;        // one-shot, two-shot: the whole output buffer; reduce-scatter: this rank's part
  // Parts (two-shot, reduce-scatter): part p is bytes [partFirst[p], partFirst[p] + partBytes[p]) of src
  // (and of dst, two-shot). One-shot: part 0 is the whole buffer.
  size_t partFirst[kMaxLocalRanks];
  size_t partBytes[kMaxLocalRanks];
  size_t slotStride;  // bytes between two source ranks' slots in an area (a multiple of 16)
};

static_assert(sizeof(DirectLaunch) <= 4096, "DirectLaunch must fit in kernel parameter space");

// Enqueues comm.directBlocks blocks of the kernel for type on stream. type and op must be valid, and
// nranks * slotStride at most comm.directAreaBytes (checked by the caller).
cudaError_t launchDirect(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream);

// How many blocks one SM of the current device holds at once of the kernel's most demanding datatype.
cudaError_t directKernelBlocksPerSm(int* blocks);

}  // namespace alloy
