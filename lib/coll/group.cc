// alloySend, alloyRecv and groups. Outside a group each call is its own launch; inside one, calls are
// queued per thread and alloyGroupEnd turns each communicator's queue into one fused launch, so any
// pattern of sends and receives a correct program posts completes without deadlock.
#include <algorithm>
#include <memory>
#include <vector>

#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "error.h"
#include "p2p_plan.h"

namespace {

using namespace alloy;

struct PendingP2p {
  alloyComm_t comm;
  cudaStream_t stream;
  bool isSend;
  int peer;
  void* buffer;
  size_t bytes;
};

struct GroupState {
  int depth = 0;
  std::vector<PendingP2p> pending;
  // The first error inside the group: alloyGroupEnd returns it and enqueues nothing.
  alloyResult_t error = alloySuccess;
  std::string errorMessage;
};

thread_local GroupState group;

alloyResult_t launchPending(const std::vector<PendingP2p>& ops) {
  // One launch per communicator, in an order every rank agrees on (see alloyComm::orderKey): ranks that
  // queue two communicators' kernels on one stream must queue them alike, or each waits on the other.
  std::vector<alloyComm_t> comms;
  for (const PendingP2p& op : ops)
    if (std::find(comms.begin(), comms.end(), op.comm) == comms.end()) comms.push_back(op.comm);
  std::sort(comms.begin(), comms.end(), [](alloyComm_t a, alloyComm_t b) { return a->orderKey < b->orderKey; });
  // Every plan is checked before any is launched: a group that fails enqueues nothing at all, on any of
  // its communicators, rather than some of them (the peers of those would then be out of step).
  std::vector<std::unique_ptr<P2pPlan>> plans;
  std::vector<cudaStream_t> streams;
  for (const alloyComm_t comm : comms) {
    const cudaStream_t stream =
        std::find_if(ops.begin(), ops.end(), [&](const PendingP2p& op) { return op.comm == comm; })->stream;
    plans.push_back(std::make_unique<P2pPlan>(comm, kOpSendRecv));
    streams.push_back(stream);
    P2pPlan& plan = *plans.back();
    for (const PendingP2p& op : ops) {
      if (op.comm != comm) continue;
      if (op.stream != stream)
        return fail(alloyInvalidUsage, "alloyGroupEnd: operations on one communicator in a group must use one "
                    "stream (rank %d used two); nothing was enqueued", comm->rank);
      if (op.isSend) plan.addSend(op.peer, op.buffer, op.bytes);
      else plan.addRecv(op.peer, op.buffer, op.bytes);
    }
    ALLOY_TRY(plan.prepare("alloyGroupEnd"));
  }
  for (size_t c = 0; c < plans.size(); ++c) ALLOY_TRY(plans[c]->launch(streams[c], "alloyGroupEnd"));
  return alloySuccess;
}

alloyResult_t enqueueP2p(bool isSend, const void* buffer, size_t count, alloyDataType_t datatype, int peer,
                         alloyComm_t comm, cudaStream_t stream) {
  const char* fn = isSend ? "alloySend" : "alloyRecv";
  alloyResult_t result = checkGpuComm(comm, fn);
  size_t bytes = 0;
  if (result == alloySuccess) result = checkDataType(datatype, fn);
  if (result == alloySuccess) result = checkPeer(comm, peer, fn, "peer");
  if (result == alloySuccess) result = checkedBytes(count, dataTypeSize(datatype), fn, "count", &bytes);
  if (result == alloySuccess)
    result = checkDeviceBuffer(comm, buffer, bytes, fn, isSend ? "sendbuff" : "recvbuff");
  PendingP2p op{comm, stream, isSend, peer, const_cast<void*>(buffer), bytes};
  if (group.depth == 0) {
    ALLOY_TRY(result);
    return launchPending({op});
  }
  if (result != alloySuccess) {
    if (group.error == alloySuccess) {
      group.error = result;
      group.errorMessage = lastError();
    }
    return result;
  }
  group.pending.push_back(op);
  return alloySuccess;
}

}  // namespace

extern "C" {

ALLOY_API alloyResult_t alloySend(const void* sendbuff, size_t count, alloyDataType_t datatype, int peer,
                                  alloyComm_t comm, cudaStream_t stream) {
  return enqueueP2p(true, sendbuff, count, datatype, peer, comm, stream);
}

ALLOY_API alloyResult_t alloyRecv(void* recvbuff, size_t count, alloyDataType_t datatype, int peer,
                                  alloyComm_t comm, cudaStream_t stream) {
  return enqueueP2p(false, recvbuff, count, datatype, peer, comm, stream);
}

ALLOY_API alloyResult_t alloyGroupStart(void) {
  ++group.depth;
  return alloySuccess;
}

ALLOY_API alloyResult_t alloyGroupEnd(void) {
  if (group.depth == 0)
    return fail(alloyInvalidUsage, "alloyGroupEnd: no group is open on this thread (call alloyGroupStart first)");
  if (--group.depth > 0) return alloySuccess;
  std::vector<PendingP2p> ops;
  ops.swap(group.pending);
  const alloyResult_t error = group.error;
  group.error = alloySuccess;
  if (error != alloySuccess)
    return fail(error, "alloyGroupEnd: nothing was enqueued because an operation in the group failed: %s",
                group.errorMessage.c_str());
  return launchPending(ops);
}

}  // extern "C"
