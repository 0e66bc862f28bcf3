// alloyBroadcast: the root sends its buffer to every peer through the point-to-point engine, over IPC or
// the network channel (and copies
// it into its own recvbuff unless in place). sendbuff matters on the root only, as in NCCL.
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "error.h"
#include "p2p_plan.h"

using namespace alloy;

extern "C" ALLOY_API alloyResult_t alloyBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                                  alloyDataType_t datatype, int root, alloyComm_t comm,
                                                  cudaStream_t stream) {
  const char* fn = "alloyBroadcast";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  ALLOY_TRY(checkPeer(comm, root, fn, "root"));
  size_t bytes = 0;
  ALLOY_TRY(checkedBytes(count, dataTypeSize(datatype), fn, "count", &bytes));
  const bool isRoot = comm->rank == root;
  if (isRoot) {
    ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, bytes, fn, "sendbuff"));
    ALLOY_TRY(checkInPlaceOrDisjoint(sendbuff, bytes, recvbuff, bytes, recvbuff, fn));
  }
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, bytes, fn, "recvbuff"));
  if (bytes == 0) return alloySuccess;
  P2pPlan plan(comm, kOpBroadcast);
  if (isRoot) {
    for (int peer = 0; peer < comm->nranks; ++peer)
      if (peer != root) plan.addSend(peer, sendbuff, bytes);
    if (sendbuff != recvbuff) {
      plan.addSend(root, sendbuff, bytes);
      plan.addRecv(root, recvbuff, bytes);
    }
  } else {
    plan.addRecv(root, recvbuff, bytes);
  }
  return plan.launch(stream, fn);
}
