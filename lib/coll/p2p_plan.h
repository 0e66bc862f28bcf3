// Turns a set of sends and receives on one communicator into one launch: the point-to-point kernel for
// the ranks of this host, and rounds of the network channel for the ranks of other hosts (staged, rung
// and awaited on the stream around the kernel; net_rounds.h). Alltoall, alltoallv and groups of send/recv all go
// through it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "alloy.h"
#include "net_rounds.h"
#include "p2p_kernel.h"

namespace alloy {

class P2pPlan {
 public:
  // operation: what the launch serves, for fault reports.
  P2pPlan(alloyComm_t comm, Operation operation);
  // Empties the plan for another launch, as if it were constructed anew, but keeps the memory of its tables:
  // a group's plans are reused from one alloyGroupEnd to the next (lib/coll/group.cc), so that a small
  // grouped send/recv allocates nothing.
  void reset(alloyComm_t comm, Operation operation);
  // Sends and receives to one peer are matched in the order they are added, as in MPI and NCCL.
  void addSend(int peer, const void* buffer, size_t bytes);
  void addRecv(int peer, void* buffer, size_t bytes);
  // Receives `bytes` from peer into buffer and passes them on to every rank of `to`, chunk by chunk as
  // they arrive (each of them receives them with addRecv from this rank). Every rank involved must be on
  // this host and exchange nothing else with this rank in the plan, and bytes must exceed the
  // low-latency limit (forwarding is bulk only); prepare() fails otherwise.
  void addForward(int peer, void* buffer, size_t bytes, const std::vector<int>& to);
  // Checks the plan (self sends matched by self receives, size limits) and builds the launch; enqueues
  // nothing, so that an operation of several plans (a group over communicators, an allreduce in two
  // launches) can check all of them before it launches any.
  alloyResult_t prepare(const char* function);
  // Enqueues the plan on stream, after the communicator's previous launch; prepares it first if needed.
  alloyResult_t launch(cudaStream_t stream, const char* function);

 private:
  struct Forward {  // addForward's arguments
    int from;
    P2pSegment into;
    std::vector<int> to;
  };
  alloyResult_t appendForward(const Forward& f, const char* function);

  alloyComm_t comm_;
  std::vector<std::vector<P2pSegment>> sends_;  // by peer, sized at the first send or at prepare()
  std::vector<std::vector<P2pSegment>> recvs_;  // by peer, likewise
  std::vector<Forward> forwards_;
  bool prepared_ = false;
  P2pLaunch args_;                 // tasks name the ranks of this host by their local index
  std::vector<NetRound> rounds_;   // what goes to and comes from ranks on other hosts
};

}  // namespace alloy
