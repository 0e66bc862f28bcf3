// alloyAllGather: every rank sends its buffer to every peer and receives theirs into their places of
// recvbuff: small ones through the direct engine's low-latency lines inside a host, the others in one
// launch of the point-to-point engine (IPC inside this host, the network channel between
// hosts); its own part is a local copy unless in place. Between hosts that each hold L > 1 ranks, larger
// buffers go along the rails first and then inside each host (allGatherAlongRails); small buffers between
// many hosts by recursive doubling (allgather_doubling.h), along the rails where they apply.
#include <algorithm>
#include <vector>

#include "across_hosts.h"
#include "algorithm.h"
#include "allgather_doubling.h"
#include "arguments.h"
#include "comm.h"
#include "datatype.h"
#include "device_guard.h"
#include "direct_plan.h"
#include "error.h"
#include "group_reduce.h"
#include "p2p_plan.h"
#include "rail_order.h"
#include "stream_scratch.h"

using namespace alloy;

namespace {

// Two steps and, unless the ranks of each rail are consecutive, a copy: (1) along its rail (the network)
// the rank gathers the blocks of its rail's ranks, one per host, in one launch or by doubling; (2)
// inside the host (CUDA IPC)
// it sends those to every rank of the host and receives their rails' blocks. Both steps write a buffer in
// rail order (rail_order.h), which (3) the copy engine turns into rank order. A rank sends (hosts - 1)
// blocks between hosts where the flat schedule sends (nranks - L): 1/L of the bytes, where L ranks share
// each host.
alloyResult_t allGatherAlongRails(const void* sendbuff, char* recv, size_t blockBytes, bool doubling,
                                  alloyComm_t comm, cudaStream_t stream, const char* fn) {
  const LocalTopology& t = comm->topology;
  const std::vector<int>& rail = t.railPeers();
  const size_t hosts = rail.size(), railBytes = hosts * blockBytes;
  const bool direct = railOrderIsRankOrder(t);
  StreamScratch scratch(comm, stream);
  if (!direct) ALLOY_TRY(scratch.allocate(comm->nranks * blockBytes, fn));
  char* gathered = direct ? recv : scratch.get();  // rail order
  char* myRail = gathered + t.localRank * railBytes;
  P2pPlan along(comm, kOpAllGather), inside(comm, kOpAllGather);
  DoublingGather alongByDoubling(comm);
  for (size_t h = 0; h < hosts && !doubling; ++h) {
    char* place = myRail + h * blockBytes;
    if (rail[h] != comm->rank) {
      along.addSend(rail[h], sendbuff, blockBytes);
      along.addRecv(rail[h], place, blockBytes);
    } else if (sendbuff != place) {
      along.addSend(comm->rank, sendbuff, blockBytes);
      along.addRecv(comm->rank, place, blockBytes);
    }
  }
  for (int q = 0; q < t.localSize; ++q) {
    if (q == t.localRank) continue;
    inside.addSend(t.localPeers[q], myRail, railBytes);
    inside.addRecv(t.localPeers[q], gathered + q * railBytes, railBytes);
  }
  if (doubling) {
    const int railIndex = static_cast<int>(std::find(rail.begin(), rail.end(), comm->rank) - rail.begin());
    ALLOY_TRY(alongByDoubling.prepare(rail, railIndex, sendbuff, myRail, blockBytes, fn));
  } else {
    ALLOY_TRY(along.prepare(fn));
  }
  ALLOY_TRY(inside.prepare(fn));
  ALLOY_TRY(doubling ? alongByDoubling.launch(stream, fn) : along.launch(stream, fn));
  ALLOY_TRY(inside.launch(stream, fn));
  if (direct) return alloySuccess;
  DeviceGuard guard(comm->cudaDevice);
  return copyByRail(t, RailCopy::kIntoRankOrder, gathered, recv, blockBytes, stream, fn);
}

}  // namespace

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
  // Above the size where allreduce stops sending whole buffers (the dual of reduce-scatter's choice), the
  // bytes saved between hosts are worth the second launch; below it, between many hosts, doubling's
  // rounds cost less than a round of every peer.
  if (comm->topology.spansHosts()) {
    const bool small = recvBytes <= allreduceOneShotMaxBytes(comm->nranks);
    const bool doubling = small && allGatherDoublingApplies(comm);
    if (railsApply(comm) && (!small || doubling))
      return allGatherAlongRails(sendbuff, recv, partBytes, doubling, comm, stream, fn);
    if (doubling) {
      DoublingGather gather(comm);
      ALLOY_TRY(gather.prepare(allRanks(comm->nranks), comm->rank, sendbuff, recv, partBytes, fn));
      return gather.launch(stream, fn);
    }
  }
  if (!comm->topology.spansHosts()) {
    // Small all-gathers in one step of the direct engine's lines (the type only picks an instantiation).
    DirectPlan direct(comm, alloyUint8, alloySum, kOpAllGather);
    if (direct.planAllGather(sendbuff, recvbuff, partBytes)) return direct.launch(stream, fn);
  }
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
