// alloyAllReduce. Small buffers run one-shot: every rank sends its whole buffer to every peer and
// reduces all of them in rank order, one launch. Larger ones run reduce-scatter (rank r reduces part r,
// once) then all-gather of the reduced parts: in one launch of the direct engine (two-shot), in windows
// where the parts exceed its staging (direct_plan.h), else as a launch of each over the rings. Either way every rank ends with the same
// bits: one-shot ranks all compute the same reduction in the same order, and in reduce-scatter +
// all-gather each part is computed by one rank only. Between hosts: across_hosts.h. A PreMulSum scales
// this rank's input into recvbuff first (scaled_input.h) and runs in place from there.
#include "across_hosts.h"
#include "algorithm.h"
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "direct_plan.h"
#include "error.h"
#include "p2p_plan.h"
#include "reduce_plan.h"
#include "reductions.h"
#include "scaled_input.h"

namespace {

using namespace alloy;

alloyResult_t reduceScatterAllGather(const char* send, char* recv, size_t count, alloyDataType_t type,
                                     alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* fn) {
  const size_t es = dataTypeSize(type);
  const int me = comm->rank;
  const Part mine = partOf(count, es, comm->nranks, me);
  ReducePlan reduce(comm, type, op, kOpAllReduce);
  reduce.addReduceScatter(send, recv + mine.first * es, count, es);

  P2pPlan gather(comm, kOpAllReduce);
  for (int peer = 0; peer < comm->nranks; ++peer) {
    if (peer == me) continue;
    const Part theirs = partOf(count, es, comm->nranks, peer);
    gather.addSend(peer, recv + mine.first * es, mine.count * es);
    gather.addRecv(peer, recv + theirs.first * es, theirs.count * es);
  }
  // Both halves are checked before either is enqueued: never half an allreduce.
  ALLOY_TRY(gather.prepare(fn));
  ALLOY_TRY(reduce.launch(stream, fn));
  return gather.launch(stream, fn);
}

}  // namespace

namespace alloy {

alloyResult_t allReduce(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t datatype, alloyRedOp_t op,
                        const PreMulScalar* scalar, alloyComm_t comm, cudaStream_t stream) {
  const char* fn = "alloyAllReduce";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  ALLOY_TRY(checkRedOp(op, fn));
  size_t bytes = 0;
  ALLOY_TRY(checkedBytes(count, dataTypeSize(datatype), fn, "count", &bytes));
  ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, bytes, fn, "sendbuff"));
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, bytes, fn, "recvbuff"));
  ALLOY_TRY(checkElementAligned(sendbuff, dataTypeSize(datatype), fn, "sendbuff"));
  ALLOY_TRY(checkElementAligned(recvbuff, dataTypeSize(datatype), fn, "recvbuff"));
  ALLOY_TRY(checkInPlaceOrDisjoint(sendbuff, bytes, recvbuff, bytes, recvbuff, fn));
  if (bytes == 0) return alloySuccess;
  ScaledInput input(comm, stream);
  ALLOY_TRY(input.prepare(scalar, datatype, sendbuff, count, recvbuff, fn));
  sendbuff = input.get();
  if (comm->topology.spansHosts()) return allReduceAcrossHosts(sendbuff, recvbuff, count, datatype, op, comm, stream, fn);
  DirectPlan direct(comm, datatype, op, kOpAllReduce);
  const bool oneShot = bytes <= directOneShotMaxBytes(comm->nranks);
  if (oneShot ? direct.planOneShot(sendbuff, recvbuff, bytes)
              : direct.planTwoShot(sendbuff, recvbuff, count, dataTypeSize(datatype)))
    return direct.launch(stream, fn);
  // Where the direct engine's areas do not hold it (or ALLOY_DIRECT_MAX_BYTES keeps it out): the rings.
  if (bytes > allreduceOneShotMaxBytes(comm->nranks))
    return reduceScatterAllGather(static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), count, datatype,
                                  op, comm, stream, fn);
  ReducePlan plan(comm, datatype, op, kOpAllReduce);
  plan.addReduce(sendbuff, recvbuff, bytes, true);
  return plan.launch(stream, fn);
}

}  // namespace alloy

extern "C" ALLOY_API alloyResult_t alloyAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                                  alloyDataType_t datatype, alloyRedOp_t op, alloyComm_t comm,
                                                  cudaStream_t stream) {
  return alloy::allReduce(sendbuff, recvbuff, count, datatype, op, nullptr, comm, stream);
}
