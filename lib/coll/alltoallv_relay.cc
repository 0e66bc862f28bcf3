#include "alltoallv_relay.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "call_env.h"
#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "log.h"
#include "p2p_plan.h"
#include "relay_board.h"
#include "relay_plan.h"
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

}  // namespace

bool alltoallvRelayApplies(alloyComm_t comm, const void* relaybuff) {
  const LocalTopology& t = comm->topology;
  return relaybuff != nullptr && t.spansHosts() && t.localSize > 1 && t.railPeers().size() > 1 &&
         callEnvInt("ALLOY_ALLTOALLV_RELAY", 1, 0, 1) == 1;
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
  const int n = comm->nranks;
  if (!comm->relayBoard) ALLOY_TRY(RelayBoard::open(comm, fn, &comm->relayBoard));
  std::vector<uint64_t> mine(n);
  std::vector<size_t> sendBytes(n), sendOffsets(n), recvBytes(n), recvOffsets(n);
  std::vector<uint64_t> hostOf(n);
  for (int r = 0; r < n; ++r) {
    mine[r] = sendBytes[r] = sendcounts[r] * es;
    sendOffsets[r] = sdispls[r] * es;
    recvBytes[r] = recvcounts[r] * es;
    recvOffsets[r] = rdispls[r] * es;
    hostOf[r] = comm->blobs[r].hostHash;
  }
  ALLOY_TRY(comm->relayBoard->exchange(mine, fn));
  const RelayBoard& board = *comm->relayBoard;
  const RelayPlan plan = planRelay(comm->topology, hostOf, comm->rank, sendBytes, sendOffsets, recvBytes, recvOffsets,
                                   [&](int j, int d) { return board.sent(j, d); });

  StreamScratch packScratch(comm, stream), relayScratch(comm, stream);
  ALLOY_TRY(packScratch.allocate(plan.packBytes, fn));
  char* relay = static_cast<char*>(relaybuff);
  if (plan.relayBytes > 0 && !allocationHolds(relaybuff, plan.relayBytes)) {
    logInfo("%s: relaybuff holds less than the %zu bytes rank %d relays in this call: using scratch memory", fn,
            plan.relayBytes, comm->rank);
    ALLOY_TRY(relayScratch.allocate(plan.relayBytes, fn));
    relay = relayScratch.get();
  }
  char* const bases[] = {const_cast<char*>(send), recv, packScratch.get(), relay};  // by RelayBuffer
  auto add = [&](P2pPlan& to, const std::vector<RelayMessage>& messages) {
    for (const RelayMessage& m : messages) {
      char* at = bases[static_cast<int>(m.buffer)] + m.offset;
      if (m.isSend)
        to.addSend(m.peer, at, m.bytes);
      else
        to.addRecv(m.peer, at, m.bytes);
    }
  };
  P2pPlan inside(comm, kOpAlltoAllv), along(comm, kOpAlltoAllv);
  add(inside, plan.inside);
  add(along, plan.along);
  ALLOY_TRY(inside.prepare(fn));
  ALLOY_TRY(along.prepare(fn));
  {
    DeviceGuard guard(comm->cudaDevice);
    for (const RelayCopy& c : plan.packs) {
      const cudaError_t err = cudaMemcpyAsync(packScratch.get() + c.packOffset, send + c.sendOffset, c.bytes,
                                              cudaMemcpyDeviceToDevice, stream);
      if (err != cudaSuccess) {
        cudaGetLastError();
        return fail(alloyCudaError, "%s: packing the blocks to relay failed: %s", fn, cudaGetErrorString(err));
      }
    }
  }
  ALLOY_TRY(inside.launch(stream, fn));
  return along.launch(stream, fn);
}

}  // namespace alloy
