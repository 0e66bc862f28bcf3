// alltoallv between hosts through the rails (issue #12's rail relay, as NCCL's PXN and VCCL's relaybuff):
// a block for rank d on another host goes first, over CUDA IPC, to the rank of this host with d's local
// index (the rank facing d's rail), which sends it on with its own block for d, so that every rank
// sends over the network only along its own rail: to (hosts - 1) ranks instead of (nranks - L). Each
// NIC then serves its own rail, and a rank's messages between hosts are L times fewer and L times
// larger. docs/architecture.md, "Rail relay for alltoallv", says what it costs.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"

namespace alloy {

// Whether the relay runs: relaybuff given, the communicator spans hosts that each hold the same L > 1
// ranks (LocalTopology::rails), and ALLOY_ALLTOALLV_RELAY is not 0. The same on every rank where every
// rank passes relaybuff or none.
bool alltoallvRelayApplies(alloyComm_t comm, const void* relaybuff);

// The callers have checked every argument (counts, displacements and buffers in elements of elementSize).
alloyResult_t alltoallvThroughRails(const char* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                    char* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                    void* relaybuff, size_t elementSize, alloyComm_t comm, cudaStream_t stream,
                                    const char* function);

}  // namespace alloy
