// One reduction among a group of ranks of a communicator that spans hosts: an exchange through the
// point-to-point engine (CUDA IPC on this host, the network channel to others), then a reduction of what
// arrived in member order. The schedules between hosts (across_hosts.cc, allreduce_doubling.cc) are built
// from it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "algorithm.h"
#include "alloy.h"
#include "p2p_plan.h"
#include "slot_reduce_kernel.h"
#include "stream_scratch.h"

namespace alloy {

struct Reduction {
  alloyDataType_t type;
  alloyRedOp_t op;
  Operation operation;
  const char* function;
};

// Member m (members[m], a communicator rank; this rank is members[me]) reduces elements
// [parts[m].first, parts[m].first + parts[m].count) of every member's input: the exchange brings every
// other member's copy of this rank's range into a slot of scratch memory, then the slots and this rank's
// own range are reduced in member order into dst. Members whose ranges are equal therefore compute the
// same bits. prepare() checks and builds everything and enqueues nothing but the scratch allocation, so
// that an operation of several steps can prepare all of them before it launches any.
class GroupReduce {
 public:
  GroupReduce(alloyComm_t comm, const Reduction& r, cudaStream_t stream);

  alloyResult_t prepare(const std::vector<int>& members, int me, const char* input, const std::vector<Part>& parts,
                        char* dst);
  alloyResult_t launch();

 private:
  alloyComm_t comm_;
  Reduction r_;
  cudaStream_t stream_;
  StreamScratch slots_;
  P2pPlan exchange_;
  SlotReduce reduce_{};
};

// Every rank of an n-rank communicator, in rank order: the flat schedules' group.
std::vector<int> allRanks(int n);

}  // namespace alloy
