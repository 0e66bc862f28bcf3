#include "p2p_plan.h"

#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "ipc_transport.h"

namespace alloy {
namespace {

bool hasBytes(const std::vector<P2pSegment>& segments) {
  for (const P2pSegment& s : segments)
    if (s.bytes > 0) return true;
  return false;
}

alloyResult_t appendTask(P2pLaunch* launch, int kind, int peer, const std::vector<P2pSegment>& segments,
                         const char* function) {
  if (launch->numTasks == kMaxP2pTasks) return fail(alloyInternalError, "%s: task table full", function);
  int first = 0;
  for (int t = 0; t < launch->numTasks; ++t) first += launch->tasks[t].numSegments;
  if (first + static_cast<int>(segments.size()) > kMaxP2pSegments)
    return fail(alloyNotSupported, "%s: more than %d sends and receives in one operation or group", function,
                kMaxP2pSegments);
  for (size_t s = 0; s < segments.size(); ++s) launch->segments[first + s] = segments[s];
  launch->tasks[launch->numTasks++] = P2pTask{kind, peer, first, static_cast<int>(segments.size())};
  return alloySuccess;
}

}  // namespace

P2pPlan::P2pPlan(alloyComm_t comm) : comm_(comm), sends_(comm->nranks), recvs_(comm->nranks) {}

void P2pPlan::addSend(int peer, const void* buffer, size_t bytes) {
  sends_[peer].push_back(P2pSegment{static_cast<const char*>(buffer), nullptr, bytes});
}

void P2pPlan::addRecv(int peer, void* buffer, size_t bytes) {
  recvs_[peer].push_back(P2pSegment{nullptr, static_cast<char*>(buffer), bytes});
}

alloyResult_t P2pPlan::launch(cudaStream_t stream, const char* function) {
  const int me = comm_->rank;
  // Sends to oneself become local copies, matched in order with receives from oneself.
  const std::vector<P2pSegment>& selfSends = sends_[me];
  const std::vector<P2pSegment>& selfRecvs = recvs_[me];
  if (selfSends.size() != selfRecvs.size())
    return fail(alloyInvalidUsage, "%s: %zu send(s) to self but %zu receive(s) from self on rank %d", function,
                selfSends.size(), selfRecvs.size(), me);
  std::vector<P2pSegment> copies(selfSends.size());
  for (size_t k = 0; k < selfSends.size(); ++k) {
    if (selfSends[k].bytes != selfRecvs[k].bytes)
      return fail(alloyInvalidUsage, "%s: send %zu to self has %zu bytes but its matching receive %zu", function,
                  k, selfSends[k].bytes, selfRecvs[k].bytes);
    copies[k] = P2pSegment{selfSends[k].src, selfRecvs[k].dst, selfSends[k].bytes};
  }

  P2pLaunch args;
  args.comm = comm_->ipc->deviceComm();
  args.numTasks = 0;
  if (hasBytes(copies)) ALLOY_TRY(appendTask(&args, kP2pCopy, me, copies, function));
  for (int peer = 0; peer < comm_->nranks; ++peer) {
    if (peer == me) continue;
    if (hasBytes(recvs_[peer])) ALLOY_TRY(appendTask(&args, kP2pRecv, peer, recvs_[peer], function));
    if (hasBytes(sends_[peer])) ALLOY_TRY(appendTask(&args, kP2pSend, peer, sends_[peer], function));
  }
  DeviceGuard guard(comm_->cudaDevice);
  cudaError_t err = launchP2p(args, stream);
  if (err != cudaSuccess)
    return fail(alloyCudaError, "%s: kernel launch failed: %s", function, cudaGetErrorString(err));
  return alloySuccess;
}

}  // namespace alloy
