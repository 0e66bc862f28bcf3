// alloyAllGather: every rank sends its buffer to every peer and receives theirs into their places of
// recvbuff, one launch of the point-to-point engine (IPC inside this host, the network channel between
// hosts); its own part is a local copy unless in place.
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "error.h"
#include "p2p_plan.h"

using namespace alloy;

extern "C" ALLOY_API alloyResult_t alloyAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                                  alloyDataType_t datatype, alloyComm_t comm,
                                                  cudaStream_t stream) {
  const char* fn = "alloyAllGather";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  size_t partBytes = 0, recvBytes = 0;
  ALLOY_TRY(checkedBytes(sendcount, dataTypeSize(datatype), fn, "sendcount", &partBytes));
  ALLOY_TRY(checkedBytes(partBytes, comm->nranks, fn, "sendcount * nranks", &recvBytes));
  ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, partBytes, fn, "sendbuff"));
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, recvBytes, fn, "recvbuff"));
  char* recv = static_cast<char*>(recvbuff);
  char* mine = recv + comm->rank * partBytes;
  // In place (NCCL): sendbuff is this rank's part of recvbuff.
  ALLOY_TRY(checkInPlaceOrDisjoint(sendbuff, partBytes, recvbuff, recvBytes, mine, fn));
  if (partBytes == 0) return alloySuccess;
  P2pPlan plan(comm, kOpAllGather);
  for (int peer = 0; peer < comm->nranks; ++peer) {
    if (peer == comm->rank) continue;
    plan.addSend(peer, sendbuff, partBytes);
    plan.addRecv(peer, recv + peer * partBytes, partBytes);
  }
  if (sendbuff != mine) {
    plan.addSend(comm->rank, sendbuff, partBytes);
    plan.addRecv(comm->rank, mine, partBytes);
  }
  return plan.launch(stream, fn);
}
