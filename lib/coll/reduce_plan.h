// Turns the sends and the reduction of one reducing collective on one rank into one launch of the
// reduction kernel. Every rank builds its plan from the same sizes, so the chunks one rank sends are
// the chunks its peers wait for.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "reduce_kernel.h"

namespace alloy {

class ReducePlan {
 public:
  // operation: what the launch serves, for fault reports.
  ReducePlan(alloyComm_t comm, alloyDataType_t type, alloyRedOp_t op, Operation operation);
  // bytes [src, src + bytes) to peer; nothing when bytes is 0.
  void addSend(int peer, const void* src, size_t bytes);
  // dst = reduction over ranks (in rank order) of every rank's `bytes`, this rank's read from src.
  // With sendFirst, src also goes to every peer, chunk by chunk before it is reduced (one-shot).
  void addReduce(const void* src, void* dst, size_t bytes, bool sendFirst);
  // This rank's share of a reduce-scatter of `count` elements of elementSize bytes cut by partOf
  // (algorithm.h): part p of send to every peer p, and this rank's part reduced into mine.
  void addReduceScatter(const char* send, char* mine, size_t count, size_t elementSize);
  // Enqueues the plan on stream, after the communicator's previous launch.
  alloyResult_t launch(cudaStream_t stream, const char* function);

 private:
  int lowLatency(size_t bytes) const;

  alloyComm_t comm_;
  alloyDataType_t type_;
  ReduceLaunch args_;
};

}  // namespace alloy
