// Turns a set of sends and receives on one communicator into one launch of the point-to-point kernel.
// Alltoall, alltoallv and groups of send/recv all go through it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "alloy.h"
#include "p2p_kernel.h"

namespace alloy {

class P2pPlan {
 public:
  explicit P2pPlan(alloyComm_t comm);
  // Sends and receives to one peer are matched in the order they are added, as in MPI and NCCL.
  void addSend(int peer, const void* buffer, size_t bytes);
  void addRecv(int peer, void* buffer, size_t bytes);
  // Checks the plan (self sends matched by self receives, size limits) and enqueues it on stream.
  alloyResult_t launch(cudaStream_t stream, const char* function);

 private:
  alloyComm_t comm_;
  std::vector<std::vector<P2pSegment>> sends_;  // by peer
  std::vector<std::vector<P2pSegment>> recvs_;  // by peer
};

}  // namespace alloy
