#include "alltoallv_relay.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "comm.h"
#include "device_guard.h"
#include "env.h"
#include "error.h"
#include "log.h"
#include "p2p_plan.h"
#include "relay_board.h"
#include "stream_scratch.h"

namespace alloy {
namespace {

// Whether [p, p + bytes) lies inside one device allocation (cuMemGetAddressRange, looked up through the
// runtime so that the library needs no link to libcuda). relaybuff comes with no size: the relay uses
// it only where its allocation is large enough, and stream-ordered scratch otherwise.
bool allocationHolds(const void* p, size_t bytes) {
  static PFN_cuMemGetAddressRange_v3020 range = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", reinterpret_cast<void**>(&range), 3020,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      range = nullptr;
  });
  if (range == nullptr) return false;
  CUdeviceptr base = 0;
  size_t size = 0;
  const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(p);
  if (range(&base, &size, at) != CUDA_SUCCESS) return false;
  return at + bytes <= base + size;
}

// The relay's routes: which ranks are on other hosts, and each host's member of each rail.
struct Routes {
  const LocalTopology& t;
  const std::vector<EndpointBlob>& blobs;
  uint64_t myHost;

  bool remote(int rank) const { return blobs[rank].hostHash != myHost; }
  // The members of rail j on other hosts, in the rail's order.
  std::vector<int> remoteOn(int j) const {
    std::vector<int> ranks;
    for (int rank : t.rails[j])
      if (remote(rank)) ranks.push_back(rank);
    return ranks;
  }
  // The rank of local index j on `rank`'s host.
  int onHostOf(int rank, int j) const {
    for (int member : t.rails[j])
      if (blobs[member].hostHash == blobs[rank].hostHash) return member;
    return -1;  // not reached: every host holds every rail (railsApply)
  }
};

}  // namespace

bool alltoallvRelayApplies(alloyComm_t comm, const void* relaybuff) {
  const LocalTopology& t = comm->topology;
  return relaybuff != nullptr && t.spansHosts() && t.localSize > 1 && t.railPeers().size() > 1 &&
         envInt("ALLOY_ALLTOALLV_RELAY", 1, 0, 1) == 1;
}

// (0) The counts: every rank posts what it sends to every rank on its host's board and reads what the
// host's other ranks send. (1) Inside the host (CUDA IPC), with the blocks between ranks of the host:
// each rank sends the rank of local index j its blocks for rail j's members on other hosts, packed in
// rail order on the copy engine; the relay keeps them in scratch, source by source. (2) Along its rail
// (the network): each rank sends every rail member on another host its own block and then the relayed
// ones, in local order of their sources, and receives from each the blocks of that member's host in the
// same order, straight into recvbuff.
alloyResult_t alltoallvThroughRails(const char* send, const size_t sendcounts[], const size_t sdispls[], char* recv,
                                    const size_t recvcounts[], const size_t rdispls[], void* relaybuff,
                                    size_t es, alloyComm_t comm, cudaStream_t stream, const char* fn) {
  const LocalTopology& t = comm->topology;
  const int me = comm->rank, q = t.localRank, L = t.localSize;
  const Routes routes{t, comm->blobs, comm->blobs[me].hostHash};
  if (!comm->relayBoard) ALLOY_TRY(RelayBoard::open(comm, fn, &comm->relayBoard));
  std::vector<uint64_t> mine(comm->nranks);
  for (int d = 0; d < comm->nranks; ++d) mine[d] = sendcounts[d] * es;
  ALLOY_TRY(comm->relayBoard->exchange(mine, fn));
  const RelayBoard& board = *comm->relayBoard;

  const std::vector<int> myRail = routes.remoteOn(q);
  // What this rank packs for each local index, and what it relays from each.
  std::vector<size_t> packAt(L + 1, 0), relayAt(L + 1, 0);
  for (int j = 0; j < L; ++j) {
    size_t packed = 0, relayed = 0;
    if (j != q) {
      for (int d : routes.remoteOn(j)) packed += mine[d];
      for (int d : myRail) relayed += board.sent(j, d);
    }
    packAt[j + 1] = packAt[j] + packed;
    relayAt[j + 1] = relayAt[j] + relayed;
  }
  StreamScratch packScratch(stream), relayScratch(stream);
  ALLOY_TRY(packScratch.allocate(packAt[L], fn));
  char* relay = static_cast<char*>(relaybuff);
  if (relayAt[L] > 0 && !allocationHolds(relaybuff, relayAt[L])) {
    logInfo("%s: relaybuff holds less than the %zu bytes rank %d relays in this call: using scratch memory", fn,
            relayAt[L], me);
    ALLOY_TRY(relayScratch.allocate(relayAt[L], fn));
    relay = relayScratch.get();
  }
  char* pack = packScratch.get();

  P2pPlan inside(comm, kOpAlltoAllv), along(comm, kOpAlltoAllv);
  for (int j = 0; j < L; ++j) {
    const int peer = t.localPeers[j];
    inside.addSend(peer, send + sdispls[peer] * es, mine[peer]);
    inside.addRecv(peer, recv + rdispls[peer] * es, recvcounts[peer] * es);
    if (j == q) continue;
    inside.addSend(peer, pack + packAt[j], packAt[j + 1] - packAt[j]);
    inside.addRecv(peer, relay + relayAt[j], relayAt[j + 1] - relayAt[j]);
  }
  std::vector<size_t> relayed(relayAt.begin(), relayAt.end() - 1);  // per source: the next block's place
  for (int d : myRail) {
    along.addSend(d, send + sdispls[d] * es, mine[d]);
    along.addRecv(d, recv + rdispls[d] * es, recvcounts[d] * es);
    for (int j = 0; j < L; ++j) {
      if (j == q) continue;
      along.addSend(d, relay + relayed[j], board.sent(j, d));
      relayed[j] += board.sent(j, d);
      const int source = routes.onHostOf(d, j);
      along.addRecv(d, recv + rdispls[source] * es, recvcounts[source] * es);
    }
  }
  ALLOY_TRY(inside.prepare(fn));
  ALLOY_TRY(along.prepare(fn));
  {
    DeviceGuard guard(comm->cudaDevice);
    for (int j = 0; j < L; ++j) {
      if (j == q) continue;
      size_t at = packAt[j];
      for (int d : routes.remoteOn(j)) {
        if (mine[d] == 0) continue;
        const cudaError_t err =
            cudaMemcpyAsync(pack + at, send + sdispls[d] * es, mine[d], cudaMemcpyDeviceToDevice, stream);
        if (err != cudaSuccess) {
          cudaGetLastError();
          return fail(alloyCudaError, "%s: packing the blocks relayed through rank %d failed: %s", fn,
                      t.localPeers[j], cudaGetErrorString(err));
        }
        at += mine[d];
      }
    }
  }
  ALLOY_TRY(inside.launch(stream, fn));
  return along.launch(stream, fn);
}

}  // namespace alloy
