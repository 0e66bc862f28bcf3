#include "block_copy.cuh"
#include "block_reduce.cuh"
#include "block_sync.cuh"
#include "direct_kernel.h"
#include "ll_protocol.cuh"
#include "ll_reduce.cuh"
#include "sync_primitives.cuh"
#include "type_dispatch.cuh"

namespace alloy {
namespace {

constexpr int kThreads = 512;
constexpr int kInputs = 0, kResults = 1;  // the two areas of a generation

struct Share {
  size_t first, bytes;
};

// Block b's share of a part of `bytes`: whole 16-byte vectors except at the part's end, so that shares
// stay vectorised wherever the part is.
__device__ Share shareOf(size_t bytes, int b) {
  size_t per = (bytes + gridDim.x - 1) / gridDim.x;
  per = (per + 15) & ~static_cast<size_t>(15);
  const size_t first = per * b < bytes ? per * b : bytes;
  const size_t last = first + per < bytes ? first + per : bytes;
  return Share{first, last - first};
}

// Where source rank src's slot starts in a bulk area of a generation in rank's workspace.
__device__ char* slotOf(const DirectLaunch& a, int rank, int generation, int area, int src) {
  return a.comm.workspace[rank] + directAreaOffset(a.comm, false, generation, area) + src * a.slotStride;
}

// After the block's stores into peers' areas: thread 0 fences them (made visible to it by the barrier)
// and raises this block's flag at every peer. One fence and relaxed stores: a release store per peer
// fences again for each (sync_primitives.cuh has the costs).
__device__ void arrive(const DeviceComm& c, uint64_t step) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence_system();
  for (int p = 0; p < c.nranks; ++p)
    if (p != c.rank) storeRelaxedSys(c.signals[p] + SignalLayout::directArrived(c.rank, blockIdx.x), step);
}

// Thread 0 waits until the same block of every peer has arrived at `step` (relaxed polls, then one acquire
// load of each flag, which pairs with the fence before the peer's store); the barrier tells the block.
// False when a wait was cut short (abort or timeout).
__device__ bool awaitPeers(const DeviceComm& c, uint64_t step) {
  bool arrived = true;
  if (threadIdx.x == 0) {
    const uint64_t* mine = c.signals[c.rank];
    for (int q = 0; q < c.nranks && arrived; ++q) {
      if (q == c.rank) continue;
      const uint64_t* flag = mine + SignalLayout::directArrived(q, blockIdx.x);
      arrived = spinUntil(c, q, [&] { return loadRelaxedSys(flag) >= step; }) && loadAcquireSys(flag) >= step;
    }
  }
  return __syncthreads_and(arrived);
}

// One read of src for every destination where src is aligned (the destinations, slots, always are).
__device__ void copyToAll(char* const* dsts, int count, const char* src, size_t bytes) {
  if ((reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    blockFanOut(dsts, count, src, bytes);
    return;
  }
  for (int d = 0; d < count; ++d) blockCopy(dsts[d], src, bytes);
}

// The lines of rank's slot for src in a line area of a generation that carry bytes from `first` on
// (16-byte lines of 8 data bytes, ll_protocol.cuh).
__device__ uint4* linesOf(const DirectLaunch& a, int rank, int generation, int area, int src, size_t first) {
  char* slot = a.comm.workspace[rank] + directAreaOffset(a.comm, true, generation, area) + src * a.slotStride;
  return reinterpret_cast<uint4*>(slot) + first / kLlDataPerLine;
}

// This rank's `bytes` from src to its slot at every peer, in the input area of a generation from `first`
// on: as lines flagged `flag` (lowLatency) or as bulk stores (copyToAll).
__device__ void shareWithPeers(const DirectLaunch& a, int generation, const char* src, size_t first, size_t bytes,
                               uint32_t flag) {
  const int me = a.comm.rank, n = a.comm.nranks;
  if (a.lowLatency) {
    for (int p = 0; p < n; ++p)
      if (p != me) llSendChunk(linesOf(a, p, generation, kInputs, me, first), src, bytes, flag);
    return;
  }
  char* dsts[kMaxLocalRanks];
  int count = 0;
  for (int p = 0; p < n; ++p)
    if (p != me) dsts[count++] = slotOf(a, p, generation, kInputs, me) + first;
  copyToAll(dsts, count, src, bytes);
}

// Bulk steps end with flags numbered 2 * epoch + 1 and 2 * epoch + 2 within the block's epoch-th
// operation, so that the flags only grow; low-latency lines carry llFlag(2 * epoch) and
// llFlag(2 * epoch + 1). Each function returns false when a wait was cut short.
template <typename T, int Op>
__device__ bool oneShot(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const Share s = shareOf(a.partBytes[0], blockIdx.x);
  // Lines need no flags of their own: a block without a share has nothing to wait for.
  if (a.lowLatency && s.bytes == 0) return true;
  const uint32_t flag = llFlag(2 * epoch);
  shareWithPeers(a, generation, a.src + s.first, s.first, s.bytes, flag);
  if (a.lowLatency) {
    uint4* lines[kMaxLocalRanks];
    uint32_t flags[kMaxLocalRanks];
    for (int q = 0; q < n; ++q) {
      lines[q] = linesOf(a, me, generation, kInputs, q, s.first);
      flags[q] = flag;
    }
    return llReduceChunk<T, Op>(c, lines, flags, a.src + s.first, a.dst + s.first, s.bytes);
  }
  arrive(c, 2 * epoch + 1);
  if (!awaitPeers(c, 2 * epoch + 1)) return false;
  const char* inputs[kMaxLocalRanks];
  char* dsts[1];
  for (int q = 0; q < n; ++q) inputs[q] = q == me ? a.src + s.first : slotOf(a, me, generation, kInputs, q) + s.first;
  dsts[0] = a.dst + s.first;
  blockReduce<T, Op>(dsts, 1, inputs, n, s.bytes);
  return true;
}

// Two-shot and reduce-scatter, low-latency: step 1's lines are reduced straight from the peers' lines,
// and (two-shot) each result word goes on to every peer as a line at once; step 2 receives the peers'.
template <typename T, int Op>
__device__ bool byPartsLowLatency(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const bool twoShot = a.algorithm == kDirectTwoShot;
  const uint32_t sent = llFlag(2 * epoch), reduced = llFlag(2 * epoch + 1);
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    const Share s = shareOf(a.partBytes[p], blockIdx.x);
    llSendChunk(linesOf(a, p, generation, kInputs, me, s.first), a.src + a.partFirst[p] + s.first, s.bytes, sent);
  }
  const Share s = shareOf(a.partBytes[me], blockIdx.x);
  uint4* lines[kMaxLocalRanks];
  uint32_t flags[kMaxLocalRanks];
  uint4* forward[kMaxLocalRanks];
  int count = 0;
  for (int q = 0; q < n; ++q) {
    lines[q] = linesOf(a, me, generation, kInputs, q, s.first);
    flags[q] = sent;
    if (twoShot && q != me) forward[count++] = linesOf(a, q, generation, kResults, me, s.first);
  }
  char* mine = (twoShot ? a.dst + a.partFirst[me] : a.dst) + s.first;
  if (!llReduceChunk<T, Op>(c, lines, flags, a.src + a.partFirst[me] + s.first, mine, s.bytes, forward, count, reduced))
    return false;
  if (!twoShot) return true;
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    const Share r = shareOf(a.partBytes[q], blockIdx.x);
    if (!llRecvChunk(c, q, linesOf(a, me, generation, kResults, q, r.first), a.dst + a.partFirst[q] + r.first, r.bytes,
                     reduced))
      return false;
  }
  return true;
}

// Two-shot and reduce-scatter. In place (dst == src) is safe: a block reads and writes only its own
// share of each part, and its own part's share is read before it is written, element by element.
template <typename T, int Op>
__device__ bool byParts(const DirectLaunch& a, int generation, uint64_t epoch) {
  if (a.lowLatency) return byPartsLowLatency<T, Op>(a, generation, epoch);
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const bool twoShot = a.algorithm == kDirectTwoShot;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    const Share s = shareOf(a.partBytes[p], blockIdx.x);
    blockCopy(slotOf(a, p, generation, kInputs, me) + s.first, a.src + a.partFirst[p] + s.first, s.bytes);
  }
  arrive(c, 2 * epoch + 1);
  if (!awaitPeers(c, 2 * epoch + 1)) return false;

  const Share s = shareOf(a.partBytes[me], blockIdx.x);
  const char* inputs[kMaxLocalRanks];
  for (int q = 0; q < n; ++q)
    inputs[q] = q == me ? a.src + a.partFirst[me] + s.first : slotOf(a, me, generation, kInputs, q) + s.first;
  char* dsts[kMaxLocalRanks];
  int count = 0;
  dsts[count++] = (twoShot ? a.dst + a.partFirst[me] : a.dst) + s.first;
  if (twoShot) {
    for (int p = 0; p < n; ++p)
      if (p != me) dsts[count++] = slotOf(a, p, generation, kResults, me) + s.first;
  }
  blockReduce<T, Op>(dsts, count, inputs, n, s.bytes);
  if (!twoShot) return true;

  arrive(c, 2 * epoch + 2);
  if (!awaitPeers(c, 2 * epoch + 2)) return false;
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    const Share r = shareOf(a.partBytes[q], blockIdx.x);
    blockCopy(a.dst + a.partFirst[q] + r.first, slotOf(a, me, generation, kResults, q) + r.first, r.bytes);
  }
  return true;
}

// Every rank's block to every peer, then each block copied into its place of dst (in place: this rank's
// own block is already there).
__device__ bool allGather(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const size_t block = a.partBytes[0];
  const Share s = shareOf(block, blockIdx.x);
  const char* src = a.src + s.first;
  char* own = a.dst + me * block + s.first;
  if (a.lowLatency && s.bytes == 0) return true;
  const uint32_t flag = llFlag(2 * epoch);
  shareWithPeers(a, generation, src, s.first, s.bytes, flag);
  if (own != src) blockCopy(own, src, s.bytes);
  if (a.lowLatency) {
    for (int q = 0; q < n; ++q) {
      if (q != me && !llRecvChunk(c, q, linesOf(a, me, generation, kInputs, q, s.first), a.dst + q * block + s.first,
                                  s.bytes, flag))
        return false;
    }
    return true;
  }
  arrive(c, 2 * epoch + 1);
  if (!awaitPeers(c, 2 * epoch + 1)) return false;
  for (int q = 0; q < n; ++q)
    if (q != me) blockCopy(a.dst + q * block + s.first, slotOf(a, me, generation, kInputs, q) + s.first, s.bytes);
  return true;
}

template <typename T, int Op>
__device__ void runDirect(const DirectLaunch& a) {
  uint64_t* epochWord = a.comm.signals[a.comm.rank] + SignalLayout::directEpoch(blockIdx.x);
  __shared__ uint64_t start;
  if (threadIdx.x == 0) start = *epochWord;
  __syncthreads();
  const uint64_t epoch = start;
  const int generation = static_cast<int>(epoch & 1);
  const bool done = a.algorithm == kDirectOneShot     ? oneShot<T, Op>(a, generation, epoch)
                    : a.algorithm == kDirectAllGather ? allGather(a, generation, epoch)
                                                      : byParts<T, Op>(a, generation, epoch);
  if (done) blockStoreCounter(epochWord, epoch + 1);
}

// One instantiation per datatype; the operator is a switch per block, outside every loop.
template <typename T>
__global__ void __launch_bounds__(kThreads) directKernel(const __grid_constant__ DirectLaunch args) {
  if (blockSeesAbort(args.comm) || blockSeesSkip(args.comm)) return;
  switch (args.op) {
    case alloySum: runDirect<T, alloySum>(args); break;
    case alloyProd: runDirect<T, alloyProd>(args); break;
    case alloyMax: runDirect<T, alloyMax>(args); break;
    case alloyMin: runDirect<T, alloyMin>(args); break;
    default: runDirect<T, alloyAvg>(args); break;
  }
}

}  // namespace

cudaError_t launchDirect(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
  return withType(type, [&](auto tag) {
    directKernel<decltype(tag)><<<launch.comm.directBlocks, kThreads, 0, stream>>>(launch);
    return cudaGetLastError();
  });
}

cudaError_t directKernelBlocksPerSm(int* blocks) {
  return fewestBlocksPerSm(kThreads, [](auto tag) { return directKernel<decltype(tag)>; }, blocks);
}

}  // namespace alloy
