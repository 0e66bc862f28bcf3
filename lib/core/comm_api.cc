// Communicator queries, destruction and abort.
#include <cstdio>
#include <string>

#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "handshake.h"
#include "local_transport.h"
#include "launch_order.h"
#include "log.h"
#include "remote_channel.h"

alloyComm::alloyComm() = default;

alloyComm::~alloyComm() {
  {
    alloy::DeviceGuard guard(cudaDevice);
    if (net) net->serveInBackground(false);
    net.reset();
    launchOrder.reset();
    local.reset();
  }
}

namespace alloy {

namespace {
alloyResult_t checkComm(alloyComm_t comm, const char* name) {
  if (comm == nullptr) return fail(alloyInvalidArgument, "%s: comm is NULL; expected a communicator", name);
  return alloySuccess;
}

// A barrier that keeps driving the communicator's network channel: UCX emulates RMA with active
// messages over tcp and shared memory, so a peer's last puts and flushes complete only while this rank
// progresses.
alloyResult_t progressingBarrier(alloyComm_t comm) {
  RemoteChannel* channel = comm->net.get();
  return comm->bootstrap->barrier(
      [channel] {
        channel->progress();
        channel->progressInbound();
      },
      comm->timeoutMs);
}
}  // namespace

alloyResult_t checkGpuComm(alloyComm_t comm, const char* name) {
  ALLOY_TRY(checkComm(comm, name));
  if (comm->cudaDevice < 0)
    return fail(alloyInvalidUsage, "%s: the communicator is host-only (no CUDA device on rank %d)", name,
                comm->rank);
  if (!comm->local)
    return fail(alloyNotSupported, "%s: GPU operations are unavailable on this communicator: %s", name,
                comm->gpuUnavailableReason.c_str());
  alloyResult_t asyncError = commAsyncError(comm);
  if (asyncError != alloySuccess)
    return fail(asyncError, "%s: the communicator has failed earlier (%s); destroy or abort it", name,
                describeAsyncError(comm, asyncError).c_str());
  return alloySuccess;
}

alloyResult_t checkGpuCollective(alloyComm_t comm, const char* name) {
  ALLOY_TRY(checkGpuComm(comm, name));
  if (comm->topology.spansHosts() && !comm->net)
    return fail(alloyNotSupported, "%s: this communicator spans hosts and has no transport between hosts: %s", name,
                comm->netUnavailableReason.c_str());
  return alloySuccess;
}

DeviceComm operationDeviceComm(alloyComm_t comm, Operation operation) {
  DeviceComm device = comm->local->deviceComm();
  device.operation = operation;
  device.handshake = comm->handshake ? 1 : 0;
  return device;
}

alloyResult_t commAsyncError(alloyComm_t comm) {
  if (!comm->local) return alloySuccess;
  const alloyResult_t kernels = comm->local->asyncError();
  if (kernels != alloySuccess || !comm->net) return kernels;
  return comm->net->error();
}

std::string describeAsyncError(alloyComm_t comm, alloyResult_t asyncError) {
  // The kernels' record comes first: the network channel's error, when it is the only one, carries its
  // own description (operation, peers, what was waited for).
  if (comm->local->asyncError() == alloySuccess && comm->net && comm->net->error() != alloySuccess)
    return comm->net->errorMessage();
  const FaultRecord record = comm->local->faultRecord();
  std::string peers;
  // The kernels know the ranks of this host by their position among them.
  for (int i = 0; i < comm->topology.localSize; ++i) {
    if (record.peerMask & (1u << i)) peers += (peers.empty() ? "" : ", ") + std::to_string(comm->topology.localPeers[i]);
  }
  char text[512];
  if (asyncError == alloyTimeout) {
    std::snprintf(text, sizeof(text),
                  "%s timed out on rank %d of %d after waiting %.0f ms for rank(s) %s (the communicator's timeout "
                  "is %lld ms: alloyConfig_t.timeoutMs or ALLOY_TIMEOUT_MS)",
                  operationName(record.operation), comm->rank, comm->nranks, record.waitedNs / 1e6,
                  peers.empty() ? "?" : peers.c_str(), comm->timeoutMs);
  } else {
    std::snprintf(text, sizeof(text), "%s on rank %d of %d: %s", operationName(record.operation), comm->rank,
                  comm->nranks, alloyGetErrorString(asyncError));
  }
  return text;
}

alloyResult_t commFinalize(alloyComm_t comm) {
  if (!comm->local) return alloySuccess;
  alloyResult_t result = alloySuccess;
  // Peers' kernels write into this rank's workspace: every rank drains its own device first, then
  // waits for all others, so no kernel anywhere still touches memory about to be unmapped.
  DeviceGuard guard(comm->cudaDevice);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    result = fail(alloyCudaError, "alloyCommDestroy: cudaDeviceSynchronize failed: %s", cudaGetErrorString(err));
  Rejections seen;
  if (comm->handshake && takeUnreportedRejection(comm, &seen))
    logWarn("alloyCommDestroy: rank %d: %d operation(s) on this communicator were skipped on every rank "
            "because another rank rejected its arguments (the latest: rank %d, mark %d, the MPI error "
            "class for MPIX calls), and no call or query reported it here", comm->rank, seen.count,
            seen.rank, seen.mark);
  alloyResult_t barrier = alloySuccess;
  if (comm->net) {
    // The same between hosts: the proxy serves what the streams rang (a small operation that only sends
    // ends its launch at the ring: p2p_plan.cc), this rank's puts and credits complete at their targets
    // (drain), and the barrier keeps progressing the transport, whose peers may need this rank to land theirs.
    const alloyResult_t served = comm->net->awaitServed(comm->timeoutMs);
    if (served != alloySuccess && result == alloySuccess) result = served;
    comm->net->serveInBackground(false);
    const alloyResult_t drained = comm->net->drain();
    if (drained != alloySuccess && result == alloySuccess) result = drained;
    barrier = progressingBarrier(comm);
  } else {
    barrier = comm->bootstrap->barrier(nullptr, comm->timeoutMs);
  }
  if (barrier != alloySuccess && result == alloySuccess) result = barrier;
  return result;
}

const EndpointBlob& commPeerBlob(alloyComm_t comm, int peer) { return comm->blobs.at(peer); }

BootstrapPath commBootstrapPath(alloyComm_t comm) { return comm->bootstrapPath; }

}  // namespace alloy

using alloy::fail;

extern "C" {

ALLOY_API alloyResult_t alloyCommDestroy(alloyComm_t comm) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommDestroy"));
  const alloyResult_t result = alloy::commFinalize(comm);
  delete comm;
  return result;
}

ALLOY_API alloyResult_t alloyCommAbort(alloyComm_t comm) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommAbort"));
  if (comm->local) {
    alloy::DeviceGuard guard(comm->cudaDevice);
    comm->local->abort();
    // The proxy fails the network channel and releases its doorbell, so no stream waits on it.
    if (comm->net) comm->net->abort();
    cudaDeviceSynchronize();  // kernels see the abort flag and return; the error is already recorded
    // Nothing of this rank touches peers' memory any more: ranks that destroy instead need not wait for it.
    comm->bootstrap->enterBarrierAndLeave();
  }
  delete comm;
  return alloySuccess;
}

ALLOY_API alloyResult_t alloyCommGetAsyncError(alloyComm_t comm, alloyResult_t* asyncError) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommGetAsyncError"));
  if (asyncError == nullptr) return fail(alloyInvalidArgument, "asyncError: expected a non-NULL pointer");
  *asyncError = alloy::commAsyncError(comm);
  // The details go where users look for them: alloyGetLastError.
  if (*asyncError != alloySuccess) fail(*asyncError, "%s", alloy::describeAsyncError(comm, *asyncError).c_str());
  return alloySuccess;
}

ALLOY_API alloyResult_t alloyCommCount(const alloyComm_t comm, int* count) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommCount"));
  if (count == nullptr) return fail(alloyInvalidArgument, "count: expected a non-NULL pointer");
  *count = comm->nranks;
  return alloySuccess;
}

ALLOY_API alloyResult_t alloyCommUserRank(const alloyComm_t comm, int* rank) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommUserRank"));
  if (rank == nullptr) return fail(alloyInvalidArgument, "rank: expected a non-NULL pointer");
  *rank = comm->rank;
  return alloySuccess;
}

ALLOY_API alloyResult_t alloyCommCuDevice(const alloyComm_t comm, int* device) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommCuDevice"));
  if (device == nullptr) return fail(alloyInvalidArgument, "device: expected a non-NULL pointer");
  *device = comm->cudaDevice;
  return alloySuccess;
}

}  // extern "C"
