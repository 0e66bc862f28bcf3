// alloyReduceScatter: rank r sends part p of its buffer to rank p and reduces part r of every rank's
// buffer, in rank order (one launch): through the direct engine's staging, in windows where the parts
// exceed it (direct_plan.h), else over the rings as the parts arrive. Between hosts: across_hosts.h. A PreMulSum scales this rank's
// whole input into scratch first (scaled_input.h): recvbuff holds only one part of it.
#include "across_hosts.h"
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "direct_plan.h"
#include "error.h"
#include "reduce_plan.h"
#include "reductions.h"
#include "scaled_input.h"

using namespace alloy;

namespace alloy {

alloyResult_t reduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, alloyDataType_t datatype,
                            alloyRedOp_t op, const PreMulScalar* scalar, alloyComm_t comm, cudaStream_t stream) {
  const char* fn = "alloyReduceScatter";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  ALLOY_TRY(checkRedOp(op, fn));
  size_t partBytes = 0, sendBytes = 0;
  ALLOY_TRY(checkedBytes(recvcount, dataTypeSize(datatype), fn, "recvcount", &partBytes));
  ALLOY_TRY(checkedBytes(partBytes, comm->nranks, fn, "recvcount * nranks", &sendBytes));
  ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, sendBytes, fn, "sendbuff"));
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, partBytes, fn, "recvbuff"));
  ALLOY_TRY(checkElementAligned(sendbuff, dataTypeSize(datatype), fn, "sendbuff"));
  ALLOY_TRY(checkElementAligned(recvbuff, dataTypeSize(datatype), fn, "recvbuff"));
  const char* send = static_cast<const char*>(sendbuff);
  // In place (NCCL): recvbuff is this rank's part of sendbuff.
  ALLOY_TRY(checkInPlaceOrDisjoint(send, sendBytes, recvbuff, partBytes,
                                   static_cast<const char*>(recvbuff) - comm->rank * partBytes, fn));
  if (partBytes == 0) return alloySuccess;
  ScaledInput input(comm, stream);
  ALLOY_TRY(input.prepare(scalar, datatype, sendbuff, recvcount * comm->nranks, nullptr, fn));
  sendbuff = input.get();
  send = static_cast<const char*>(sendbuff);
  if (comm->topology.spansHosts())
    return reduceScatterAcrossHosts(sendbuff, recvbuff, recvcount, datatype, op, comm, stream, fn);
  DirectPlan direct(comm, datatype, op, kOpReduceScatter);
  if (direct.planReduceScatter(sendbuff, recvbuff, partBytes)) return direct.launch(stream, fn);
  ReducePlan plan(comm, datatype, op, kOpReduceScatter);
  for (int peer = 0; peer < comm->nranks; ++peer)
    if (peer != comm->rank) plan.addSend(peer, send + peer * partBytes, partBytes);
  plan.addReduce(send + comm->rank * partBytes, recvbuff, partBytes, false);
  return plan.launch(stream, fn);
}

}  // namespace alloy

extern "C" ALLOY_API alloyResult_t alloyReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                                      alloyDataType_t datatype, alloyRedOp_t op,
                                                      alloyComm_t comm, cudaStream_t stream) {
  return alloy::reduceScatter(sendbuff, recvbuff, recvcount, datatype, op, nullptr, comm, stream);
}
