// alloyReduce: small buffers (up to allreduce's one-shot size, as lines) as the direct engine's one-shot
// allreduce whose result only the root keeps (direct_plan.h); then, at 3 ranks or more, by parts in the
// direct engine's 128-byte lines where they carry it (the ranks but the root each reduce a part and pass
// it on to the root line by line, one launch); others: every rank but the root sends its
// buffer to the root, which reduces all of them in rank order as they arrive (one launch); from
// ALLOY_REDUCE_SCATTER_MIN_BYTES at 3 ranks or more, by parts:
// in the direct engine (the ranks but the root each reduce a part and store it at the root, one launch,
// in windows beyond its areas: direct_kernel.h), else reduce-scatter then a gather of the reduced parts at
// the root over the rings (two launches). recvbuff matters on the
// root only, as in NCCL. Between hosts: across_hosts.h. A PreMulSum scales this rank's input first
// (scaled_input.h): on the root into recvbuff, which it then reduces in place; elsewhere into scratch.
#include "across_hosts.h"
#include "algorithm.h"
#include "arguments.h"
#include "call_env.h"
#include "comm.h"
#include "datatype.h"
#include "direct_plan.h"
#include "error.h"
#include "p2p_plan.h"
#include "reduce_plan.h"
#include "reductions.h"
#include "scaled_input.h"
#include "stream_scratch.h"

using namespace alloy;

namespace {

// Whether a reduce of `bytes` inside one host goes by parts: the flat form brings every rank's whole
// buffer into the root, (nranks - 1) x bytes through its link (123 GB/s at 128 MB on 4 x H100, a third
// of NCCL's); by parts the root takes in bytes (direct engine) or 2 (nranks - 1) / nranks x bytes (rings,
// where each rank also reduces a part). Two launches and the reduced
// part's wait in between cost more than that saves below a few MB (flat: 21 us at 2 MB, NCCL's time).
bool byPartsApplies(alloyComm_t comm, size_t bytes) {
  const long long from = callEnvInt("ALLOY_REDUCE_SCATTER_MIN_BYTES", 8ll << 20, 0);
  return comm->nranks >= 3 && bytes >= static_cast<size_t>(from);
}

// Reduce-scatter (rank p reduces part p of every buffer, into recvbuff on the root and into scratch
// memory elsewhere), then every rank sends its reduced part to the root. Each element is reduced by one
// rank in rank order, as the flat form does.
alloyResult_t reduceByParts(const char* send, char* recv, size_t count, alloyDataType_t type, alloyRedOp_t op, int root,
                            alloyComm_t comm, cudaStream_t stream, const char* fn) {
  const size_t es = dataTypeSize(type);
  const bool isRoot = comm->rank == root;
  const Part mine = partOf(count, es, comm->nranks, comm->rank);
  StreamScratch partial(comm, stream);
  if (!isRoot) ALLOY_TRY(partial.allocate(mine.count * es, fn));
  char* reduced = isRoot ? recv + mine.first * es : partial.get();
  ReducePlan scatter(comm, type, op, kOpReduce);
  scatter.addReduceScatter(send, reduced, count, es);
  P2pPlan gather(comm, kOpReduce);
  for (int peer = 0; peer < comm->nranks && isRoot; ++peer) {
    const Part theirs = partOf(count, es, comm->nranks, peer);
    if (peer != root) gather.addRecv(peer, recv + theirs.first * es, theirs.count * es);
  }
  if (!isRoot) gather.addSend(root, reduced, mine.count * es);
  ALLOY_TRY(gather.prepare(fn));  // both steps checked before either is enqueued
  ALLOY_TRY(scatter.launch(stream, fn));
  return gather.launch(stream, fn);
}

}  // namespace

namespace alloy {

alloyResult_t reduce(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t datatype, alloyRedOp_t op,
                     const PreMulScalar* scalar, int root, alloyComm_t comm, cudaStream_t stream) {
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
  ScaledInput input(comm, stream);
  ALLOY_TRY(input.prepare(scalar, datatype, sendbuff, count, isRoot ? recvbuff : nullptr, fn));
  sendbuff = input.get();
  if (comm->topology.spansHosts())
    return reduceAcrossHosts(sendbuff, recvbuff, count, datatype, op, root, comm, stream, fn);
  if (byPartsApplies(comm, bytes)) {
    DirectPlan direct(comm, datatype, op, kOpReduce);
    if (direct.planReduce(sendbuff, recvbuff, count, dataTypeSize(datatype), root)) return direct.launch(stream, fn);
    return reduceByParts(static_cast<const char*>(sendbuff), static_cast<char*>(recvbuff), count, datatype, op, root,
                         comm, stream, fn);
  }
  if (bytes <= allreduceOneShotMaxBytes(comm->nranks)) {
    DirectPlan direct(comm, datatype, op, kOpReduce);
    if (direct.planReduceOneShot(sendbuff, recvbuff, bytes, root)) return direct.launch(stream, fn);
  }
  DirectPlan inLines(comm, datatype, op, kOpReduce);
  if (inLines.planReduceInWideLines(sendbuff, recvbuff, count, dataTypeSize(datatype), root))
    return inLines.launch(stream, fn);
  ReducePlan plan(comm, datatype, op, kOpReduce);
  if (isRoot) plan.addReduce(sendbuff, recvbuff, bytes, false);
  else plan.addSend(root, sendbuff, bytes);
  return plan.launch(stream, fn);
}

}  // namespace alloy

extern "C" ALLOY_API alloyResult_t alloyReduce(const void* sendbuff, void* recvbuff, size_t count,
                                               alloyDataType_t datatype, alloyRedOp_t op, int root,
                                               alloyComm_t comm, cudaStream_t stream) {
  return alloy::reduce(sendbuff, recvbuff, count, datatype, op, nullptr, root, comm, stream);
}
