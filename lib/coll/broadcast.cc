// alloyBroadcast: the root sends its buffer to every peer through the point-to-point engine, over IPC or
// the network channel (and copies it into its own recvbuff unless in place). sendbuff matters on the
// root only, as in NCCL. Between hosts that each hold L > 1 ranks, larger buffers go along the root's
// rail first and then inside each host (broadcastAlongRails).
#include "across_hosts.h"
#include "algorithm.h"
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "error.h"
#include "p2p_plan.h"

using namespace alloy;

namespace {

// Two launches: (1) the root sends its buffer to the ranks of its local index on the other hosts (its
// rail); (2) on every host the rank of that local index (the root on its own host) sends it to the other
// ranks of the host, over CUDA IPC. The root's bytes between hosts are (hosts - 1) copies instead of one
// per rank on another host: 1/L of the flat schedule's, where L ranks share each host.
alloyResult_t broadcastAlongRails(const void* sendbuff, void* recvbuff, size_t bytes, int root, alloyComm_t comm,
                                  cudaStream_t stream, const char* fn) {
  const LocalTopology& t = comm->topology;
  int rootIndex = 0;  // the root's local index on its host: its rail is rails[rootIndex]
  for (int q = 0; q < t.localSize; ++q)
    for (int rank : t.rails[q])
      if (rank == root) rootIndex = q;
  const int me = comm->rank;
  const int hostSource = t.localPeers[rootIndex];  // the rank of this host on the root's rail
  P2pPlan rail(comm, kOpBroadcast), host(comm, kOpBroadcast);
  if (me == root) {
    for (int peer : t.rails[rootIndex])
      if (peer != root) rail.addSend(peer, sendbuff, bytes);
    if (sendbuff != recvbuff) {
      rail.addSend(root, sendbuff, bytes);
      rail.addRecv(root, recvbuff, bytes);
    }
  } else if (me == hostSource) {
    rail.addRecv(root, recvbuff, bytes);
  }
  if (me == hostSource) {
    const void* source = me == root ? sendbuff : recvbuff;
    for (int peer : t.localPeers)
      if (peer != me) host.addSend(peer, source, bytes);
  } else {
    host.addRecv(hostSource, recvbuff, bytes);
  }
  ALLOY_TRY(rail.prepare(fn));
  ALLOY_TRY(host.prepare(fn));
  ALLOY_TRY(rail.launch(stream, fn));
  return host.launch(stream, fn);
}

}  // namespace

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
  // Above the size where allreduce stops sending whole buffers, the bytes saved between hosts are worth
  // the second launch.
  if (comm->topology.spansHosts() && railsApply(comm) && bytes > allreduceOneShotMaxBytes(comm->nranks))
    return broadcastAlongRails(sendbuff, recvbuff, bytes, root, comm, stream, fn);
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
