// The direct engine in bulk: each step's stores, then one fence and a flag per block towards every peer.
#include "block_copy.cuh"
#include "block_reduce.cuh"
#include "direct_common.cuh"
#include "direct_protocols.h"

namespace alloy {
namespace direct {
namespace {

// This rank's `bytes` from src to its slot at every peer, in the bulk input area of a generation from
// `first` on: one read of src for every destination where src is aligned (the slots always are).
__device__ void storeToPeers(const DirectLaunch& a, int generation, const char* src, size_t first, size_t bytes) {
  const int me = a.comm.rank, n = a.comm.nranks;
  char* dsts[kMaxLocalRanks];
  int count = 0;
  for (int j = 0; j < n - 1; ++j) dsts[count++] = slotOf(a, peerInTurn(a.comm, j), generation, kInputs, me) + first;
  if ((reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    blockFanOut(dsts, count, src, bytes);
    return;
  }
  for (int d = 0; d < count; ++d) blockCopy(dsts[d], src, bytes);
}

// Bulk steps end with flags numbered 2 * epoch + 1 and 2 * epoch + 2 within the block's epoch-th
// operation, so that the flags only grow. Each function returns false when a wait was cut short.
template <typename T, int Op>
__device__ bool oneShotBulk(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const Share s = shareOf(a.partBytes[0], blockIdx.x, 16);
  storeToPeers(a, generation, a.src + s.first, s.first, s.bytes);
  arrive(c, 2 * epoch + 1);
  if (!awaitPeers(c, 2 * epoch + 1)) return false;
  const char* inputs[kMaxLocalRanks];
  for (int q = 0; q < n; ++q) inputs[q] = q == me ? a.src + s.first : slotOf(a, me, generation, kInputs, q) + s.first;
  char* dst = a.dst + s.first;
  blockReduce<T, Op>(&dst, 1, inputs, n, s.bytes);
  return true;
}

// Two-shot and reduce-scatter in bulk. In place (dst == src) is safe: a block reads and writes only its
// own share of each part, and its own part's share is read before it is written, element by element.
template <typename T, int Op>
__device__ bool byPartsBulk(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const bool twoShot = a.algorithm == kDirectTwoShot;
  for (int j = 0; j < n - 1; ++j) {
    const int p = peerInTurn(c, j);
    const Share s = shareOf(a.partBytes[p], blockIdx.x, 16);
    blockCopy(slotOf(a, p, generation, kInputs, me) + s.first, a.src + a.partFirst[p] + s.first, s.bytes);
  }
  arrive(c, 2 * epoch + 1);
  if (!awaitPeers(c, 2 * epoch + 1)) return false;

  const Share s = shareOf(a.partBytes[me], blockIdx.x, 16);
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
    const Share r = shareOf(a.partBytes[q], blockIdx.x, 16);
    blockCopy(a.dst + a.partFirst[q] + r.first, slotOf(a, me, generation, kResults, q) + r.first, r.bytes);
  }
  return true;
}

struct BulkProtocol {
  template <typename T, int Op>
  __device__ static bool run(const DirectLaunch& a, int generation, uint64_t epoch) {
    // All-gathers take lines only (DirectPlan::planAllGather): bulk all-gathers stay on the rings.
    return a.algorithm == kDirectOneShot ? oneShotBulk<T, Op>(a, generation, epoch)
                                         : byPartsBulk<T, Op>(a, generation, epoch);
  }
};

}  // namespace

cudaError_t launchBulk(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
  return launchKernel<BulkProtocol>(launch, type, stream);
}

cudaError_t bulkBlocksPerSm(int* blocks) { return kernelBlocksPerSm<BulkProtocol>(blocks); }

}  // namespace direct
}  // namespace alloy
