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

// A thread's group, and what its launches reuse from one group to the next: the calls' queue, the
// communicators, streams and plans keep their memory (cleared, not freed), so that a small grouped
// send/recv, which nccl-tests and halo exchanges make back to back, allocates nothing on the host.
struct GroupState {
  int depth = 0;
  std::vector<PendingP2p> pending;
  // The first error inside the group: alloyGroupEnd returns it and enqueues nothing.
  alloyResult_t error = alloySuccess;
  std::string errorMessage;
  std::vector<alloyComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<std::unique_ptr<P2pPlan>> plans;  // the first comms.size() serve the launch in hand
};

thread_local GroupState group;

// The plans of `ops` (group.pending, or one call outside a group), checked and then launched.
alloyResult_t launchPending(const std::vector<PendingP2p>& ops) {
  // One launch per communicator, in an order every rank agrees on (see alloyComm::orderKey): ranks that
  // queue two communicators' kernels on one stream must queue them alike, or each waits on the other.
  std::vector<alloyComm_t>& comms = group.comms;
  std::vector<cudaStream_t>& streams = group.streams;
  comms.clear();
  streams.clear();
  for (const PendingP2p& op : ops)
    if (std::find(comms.begin(), comms.end(), op.comm) == comms.end()) comms.push_back(op.comm);
  std::sort(comms.begin(), comms.end(), [](alloyComm_t a, alloyComm_t b) { return a->orderKey < b->orderKey; });
  // Every plan is checked before any is launched: a group that fails enqueues nothing at all, on any of
  // its communicators, rather than some of them (the peers of those would then be out of step).
  std::vector<std::unique_ptr<P2pPlan>>& plans = group.plans;
  for (size_t c = 0; c < comms.size(); ++c) {
    const alloyComm_t comm = comms[c];
    const cudaStream_t stream =
        std::find_if(ops.begin(), ops.end(), [&](const PendingP2p& op) { return op.comm == comm; })->stream;
    if (c == plans.size()) plans.push_back(std::make_unique<P2pPlan>(comm, kOpSendRecv));
    else plans[c]->reset(comm, kOpSendRecv);
    streams.push_back(stream);
    P2pPlan& plan = *plans[c];
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
  for (size_t c = 0; c < comms.size(); ++c) ALLOY_TRY(plans[c]->launch(streams[c], "alloyGroupEnd"));
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
    group.pending.assign(1, op);  // empty outside a group
    const alloyResult_t launched = launchPending(group.pending);
    group.pending.clear();
    return launched;
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
  const alloyResult_t error = group.error;
  group.error = alloySuccess;
  const alloyResult_t launched = error != alloySuccess ? error : launchPending(group.pending);
  group.pending.clear();  // its memory stays for the next group
  if (error != alloySuccess)
    return fail(error, "alloyGroupEnd: nothing was enqueued because an operation in the group failed: %s",
                group.errorMessage.c_str());
  return launched;
}

}  // extern "C"
