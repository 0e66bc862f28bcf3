// alloyReduce: every rank but the root sends its buffer to the root, which reduces all of them in rank
// order as they arrive (one launch). recvbuff matters on the root only, as in NCCL. Between hosts:
// across_hosts.h.
#include "across_hosts.h"
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "error.h"
#include "reduce_plan.h"

using namespace alloy;

extern "C" ALLOY_API alloyResult_t alloyReduce(const void* sendbuff, void* recvbuff, size_t count,
                                               alloyDataType_t datatype, alloyRedOp_t op, int root,
                                               alloyComm_t comm, cudaStream_t stream) {
  const char* fn = "alloyReduce";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  ALLOY_TRY(checkRedOp(op, fn));
  ALLOY_TRY(checkPeer(comm, root, fn, "root"));
  size_t bytes = 0;
  ALLOY_TRY(checkedBytes(count, dataTypeSize(datatype), fn, "count", &bytes));
  ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, bytes, fn, "sendbuff"));
  ALLOY_TRY(checkElementAligned(sendbuff, dataTypeSize(datatype), fn, "sendbuff"));
  const bool isRoot = comm->rank == root;
  if (isRoot) {
    ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, bytes, fn, "recvbuff"));
    ALLOY_TRY(checkElementAligned(recvbuff, dataTypeSize(datatype), fn, "recvbuff"));
    ALLOY_TRY(checkInPlaceOrDisjoint(sendbuff, bytes, recvbuff, bytes, recvbuff, fn));
  }
  if (bytes == 0) return alloySuccess;
  if (comm->topology.spansHosts())
    return reduceAcrossHosts(sendbuff, recvbuff, count, datatype, op, root, comm, stream, fn);
  ReducePlan plan(comm, datatype, op, kOpReduce);
  if (isRoot) plan.addReduce(sendbuff, recvbuff, bytes, false);
  else plan.addSend(root, sendbuff, bytes);
  return plan.launch(stream, fn);
}
