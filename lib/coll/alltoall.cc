// alloyAlltoAll and alloyAlltoAllv: every rank sends one block to every rank, through one launch of
// the point-to-point engine; small alltoalls inside a host through one step of the direct engine's lines.
#include "algorithm.h"
#include "alltoallv_relay.h"
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "direct_plan.h"
#include "error.h"
#include "p2p_plan.h"

namespace {

using namespace alloy;

// End of the furthest block (displacement + count, in bytes) of a counts/displacements pair.
alloyResult_t extentBytes(const size_t counts[], const size_t displs[], int nranks, size_t elementSize,
                          const char* function, const char* countsName, size_t* extent) {
  *extent = 0;
  for (int r = 0; r < nranks; ++r) {
    if (counts[r] == 0) continue;
    if (displs[r] > SIZE_MAX - counts[r])
      return fail(alloyInvalidArgument, "%s: %s[%d] + displacement %zu overflows", function, countsName, r, displs[r]);
    size_t end = 0;
    ALLOY_TRY(checkedBytes(counts[r] + displs[r], elementSize, function, countsName, &end));
    if (end > *extent) *extent = end;
  }
  return alloySuccess;
}

}  // namespace

extern "C" ALLOY_API alloyResult_t alloyAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                                 alloyDataType_t datatype, alloyComm_t comm,
                                                 cudaStream_t stream) {
  const char* fn = "alloyAlltoAll";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  size_t blockBytes = 0, totalBytes = 0;
  ALLOY_TRY(checkedBytes(count, dataTypeSize(datatype), fn, "count", &blockBytes));
  ALLOY_TRY(checkedBytes(blockBytes, comm->nranks, fn, "count * nranks", &totalBytes));
  ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, totalBytes, fn, "sendbuff"));
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, totalBytes, fn, "recvbuff"));
  if (rangesOverlap(sendbuff, totalBytes, recvbuff, totalBytes))
    return fail(alloyInvalidArgument, "%s: sendbuff and recvbuff overlap; alltoall is not in place", fn);
  if (totalBytes == 0) return alloySuccess;
  // Up to the size where allreduce stops being one-shot, as the all-gather's lines: one step in which every
  // block goes straight into its peer's line area, with a 656-byte argument block where the point-to-point
  // kernel's is 736 or 3448 bytes and its blocks wait on rings' counters (the type only picks an
  // instantiation).
  if (!comm->topology.spansHosts() && totalBytes <= allreduceOneShotMaxBytes(comm->nranks)) {
    DirectPlan direct(comm, alloyUint8, alloySum, kOpAlltoAll);
    if (direct.planAllToAll(sendbuff, recvbuff, blockBytes)) return direct.launch(stream, fn);
  }
  P2pPlan plan(comm, kOpAlltoAll);
  for (int peer = 0; peer < comm->nranks; ++peer) {
    plan.addSend(peer, static_cast<const char*>(sendbuff) + peer * blockBytes, blockBytes);
    plan.addRecv(peer, static_cast<char*>(recvbuff) + peer * blockBytes, blockBytes);
  }
  return plan.launch(stream, fn);
}

extern "C" ALLOY_API alloyResult_t alloyAlltoAllv(const void* sendbuff, const size_t sendcounts[],
                                                  const size_t sdispls[], void* recvbuff,
                                                  const size_t recvcounts[], const size_t rdispls[],
                                                  void* relaybuff, alloyDataType_t datatype,
                                                  alloyComm_t comm, cudaStream_t stream) {
  const char* fn = "alloyAlltoAllv";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  if (sendcounts == nullptr || sdispls == nullptr || recvcounts == nullptr || rdispls == nullptr)
    return fail(alloyInvalidArgument, "%s: %s is NULL; expected a host array of nranks size_t", fn,
                sendcounts == nullptr ? "sendcounts" : sdispls == nullptr ? "sdispls"
                : recvcounts == nullptr ? "recvcounts" : "rdispls");
  const size_t elementSize = dataTypeSize(datatype);
  size_t sendExtent = 0, recvExtent = 0;
  ALLOY_TRY(extentBytes(sendcounts, sdispls, comm->nranks, elementSize, fn, "sendcounts", &sendExtent));
  ALLOY_TRY(extentBytes(recvcounts, rdispls, comm->nranks, elementSize, fn, "recvcounts", &recvExtent));
  ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, sendExtent, fn, "sendbuff"));
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, recvExtent, fn, "recvbuff"));
  if (rangesOverlap(sendbuff, sendExtent, recvbuff, recvExtent))
    return fail(alloyInvalidArgument, "%s: sendbuff and recvbuff overlap; alltoallv is not in place", fn);
  // relaybuff is scratch for the rail relay between hosts; on one host the engine stages in its workspace.
  if (alltoallvRelayApplies(comm, relaybuff))
    return alltoallvThroughRails(static_cast<const char*>(sendbuff), sendcounts, sdispls, static_cast<char*>(recvbuff),
                                 recvcounts, rdispls, relaybuff, elementSize, comm, stream, fn);
  P2pPlan plan(comm, kOpAlltoAllv);
  for (int peer = 0; peer < comm->nranks; ++peer) {
    plan.addSend(peer, static_cast<const char*>(sendbuff) + sdispls[peer] * elementSize,
                 sendcounts[peer] * elementSize);
    plan.addRecv(peer, static_cast<char*>(recvbuff) + rdispls[peer] * elementSize,
                 recvcounts[peer] * elementSize);
  }
  return plan.launch(stream, fn);
}
