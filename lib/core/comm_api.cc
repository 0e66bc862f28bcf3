// Communicator queries, destruction and abort.
#include <cstdio>
#include <string>

#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "ipc_transport.h"
#include "launch_order.h"

alloyComm::alloyComm() = default;

alloyComm::~alloyComm() {
  {
    alloy::DeviceGuard guard(cudaDevice);
    launchOrder.reset();
    ipc.reset();
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (mpiComm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&mpiComm);
}

namespace alloy {

namespace {
alloyResult_t checkComm(alloyComm_t comm, const char* name) {
  if (comm == nullptr) return fail(alloyInvalidArgument, "%s: comm is NULL; expected a communicator", name);
  return alloySuccess;
}
}  // namespace

alloyResult_t checkGpuComm(alloyComm_t comm, const char* name) {
  ALLOY_TRY(checkComm(comm, name));
  if (comm->cudaDevice < 0)
    return fail(alloyInvalidUsage, "%s: the communicator is host-only (no CUDA device on rank %d)", name,
                comm->rank);
  if (!comm->ipc)
    return fail(alloyNotSupported, "%s: GPU operations are unavailable on this communicator: %s", name,
                comm->gpuUnavailableReason.c_str());
  alloyResult_t asyncError = comm->ipc->asyncError();
  if (asyncError != alloySuccess)
    return fail(asyncError, "%s: the communicator has failed earlier (%s); destroy or abort it", name,
                describeAsyncError(comm, asyncError).c_str());
  return alloySuccess;
}

std::string describeAsyncError(alloyComm_t comm, alloyResult_t asyncError) {
  const FaultRecord record = comm->ipc->faultRecord();
  std::string peers;
  for (int r = 0; r < comm->nranks; ++r) {
    if (record.peerMask & (1u << r)) peers += (peers.empty() ? "" : ", ") + std::to_string(r);
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

const EndpointBlob& commPeerBlob(alloyComm_t comm, int peer) { return comm->blobs.at(peer); }

BootstrapPath commBootstrapPath(alloyComm_t comm) { return comm->bootstrapPath; }

}  // namespace alloy

using alloy::fail;

extern "C" {

ALLOY_API alloyResult_t alloyCommDestroy(alloyComm_t comm) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommDestroy"));
  alloyResult_t result = alloySuccess;
  if (comm->ipc) {
    // Peers' kernels write into this rank's workspace: every rank drains its own device first, then
    // waits for all others, so no kernel anywhere still touches memory about to be unmapped.
    alloy::DeviceGuard guard(comm->cudaDevice);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess)
      result = fail(alloyCudaError, "alloyCommDestroy: cudaDeviceSynchronize failed: %s", cudaGetErrorString(err));
    MPI_Barrier(comm->mpiComm);
  }
  delete comm;
  return result;
}

ALLOY_API alloyResult_t alloyCommAbort(alloyComm_t comm) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommAbort"));
  if (comm->ipc) {
    alloy::DeviceGuard guard(comm->cudaDevice);
    comm->ipc->abort();
    cudaDeviceSynchronize();  // kernels see the abort flag and return; the error is already recorded
  }
  delete comm;
  return alloySuccess;
}

ALLOY_API alloyResult_t alloyCommGetAsyncError(alloyComm_t comm, alloyResult_t* asyncError) {
  ALLOY_TRY(alloy::checkComm(comm, "alloyCommGetAsyncError"));
  if (asyncError == nullptr) return fail(alloyInvalidArgument, "asyncError: expected a non-NULL pointer");
  *asyncError = comm->ipc ? comm->ipc->asyncError() : alloySuccess;
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
