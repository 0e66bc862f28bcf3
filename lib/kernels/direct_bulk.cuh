// The direct engine in bulk: each step's stores, then one fence and a flag per block towards every peer.
// Instantiated per type family by direct_bulk_integers.cu and direct_bulk_floating.cu.
#pragma once

#include "block_copy.cuh"
#include "block_reduce.cuh"
#include "direct_common.cuh"
#include "thread_team.cuh"

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

// Each function returns false when a wait was cut short.
template <typename T, int Op>
__device__ bool oneShotBulk(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const Share s = shareOf(a.partBytes[0], blockIdx.x, 16);
  storeToPeers(a, generation, a.src + s.first, s.first, s.bytes);
  arrive(c, stepFlag(epoch, 1));
  if (!awaitPeers(c, stepFlag(epoch, 1))) return false;
  const char* inputs[kMaxLocalRanks];
  for (int q = 0; q < n; ++q) inputs[q] = q == me ? a.src + s.first : slotOf(a, me, generation, kInputs, q) + s.first;
  char* dst = a.dst + s.first;
  blockReduce<T, Op>(&dst, 1, inputs, n, s.bytes);
  return true;
}

// This block's bytes of part p in window k: `inPart` from the part's start, `inSlot` from the slot's.
struct WindowShare {
  size_t inPart, inSlot, bytes;
};
__device__ inline WindowShare windowShare(const DirectLaunch& a, int p, int k) {
  const Share s = shareOf(a.windowBytes, blockIdx.x, 16);
  const size_t first = static_cast<size_t>(k) * a.windowBytes + s.first;
  const size_t end = first + s.bytes < a.partBytes[p] ? first + s.bytes : a.partBytes[p];
  return WindowShare{first, s.first, first < end ? end - first : 0};
}

// Whether this rank is the root of a reduce that folds (DirectLaunch::rootFolds): it stores no inputs, the
// owners reduce the other ranks' inputs, and it combines each owner's results with its own input.
__device__ inline bool foldingRoot(const DirectLaunch& a) {
  return a.algorithm == kDirectReduce && a.rootFolds && a.comm.rank == a.root;
}

// Window k of every peer's part, from this rank's input into its slot at that peer.
__device__ void storeWindow(const DirectLaunch& a, int generation, int k, Team t) {
  if (foldingRoot(a)) return;
  for (int j = 0; j < a.comm.nranks - 1; ++j) {
    const int p = peerInTurn(a.comm, j);
    const WindowShare s = windowShare(a, p, k);
    blockCopy(slotOf(a, p, generation, kInputs, a.comm.rank, k) + s.inSlot, a.src + a.partFirst[p] + s.inPart,
              s.bytes, t);
  }
}

// Window k of this rank's part, reduced from its own input and the peers' slots: into its output and, for
// a two-shot, into its slot in every peer's result area; for a reduce into its slot in the root's only.
template <typename T, int Op>
__device__ void reduceWindow(const DirectLaunch& a, int generation, int k, Team t) {
  const int me = a.comm.rank, n = a.comm.nranks;
  const WindowShare s = windowShare(a, me, k);
  const char* inputs[kMaxLocalRanks];
  int m = 0;  // every rank's input, but a folding root's
  for (int q = 0; q < n; ++q)
    if (!(a.rootFolds && q == a.root))
      inputs[m++] = q == me ? a.src + a.partFirst[me] + s.inPart : slotOf(a, me, generation, kInputs, q, k) + s.inSlot;
  char* dsts[kMaxLocalRanks];
  int count = 0;
  switch (a.algorithm) {
    case kDirectTwoShot:
      dsts[count++] = a.dst + a.partFirst[me] + s.inPart;
      for (int p = 0; p < n; ++p)
        if (p != me) dsts[count++] = slotOf(a, p, generation, kResults, me, k) + s.inSlot;
      break;
    case kDirectReduce: dsts[count++] = slotOf(a, a.root, generation, kResults, me, k) + s.inSlot; break;
    default: dsts[count++] = a.dst + s.inPart; break;
  }
  blockReduce<T, Op>(dsts, count, inputs, m, s.bytes, t);
}

// Window k of every peer's reduced part, from this rank's result area into its output (two-shot; reduce:
// on the root, whose result area alone the peers fill), combined with the root's own input where it folds.
template <typename T, int Op>
__device__ void copyOutWindow(const DirectLaunch& a, int generation, int k, Team t) {
  if (a.algorithm == kDirectReduce && a.comm.rank != a.root) return;
  const bool folds = foldingRoot(a);
  for (int q = 0; q < a.comm.nranks; ++q) {
    if (q == a.comm.rank) continue;
    const WindowShare r = windowShare(a, q, k);
    char* dst = a.dst + a.partFirst[q] + r.inPart;
    const char* results = slotOf(a, a.comm.rank, generation, kResults, q, k) + r.inSlot;
    if (folds) {
      const char* inputs[2] = {a.src + a.partFirst[q] + r.inPart, results};
      blockReduce<T, Op>(&dst, 1, inputs, 2, r.bytes, t);
    } else {
      blockCopy(dst, results, r.bytes, t);
    }
  }
}

// Two-shot, reduce-scatter and reduce in bulk, window after window. Step 1 follows the stores of window 0; step
// k + 2 follows round k, in which half of the threads store window k + 1 and copy out window k - 1 while
// the others reduce window k (the whole block does what is left when one half has nothing). Why no
// acknowledgement is needed: a block exchanges bytes only with the same block of its peers (every window's
// shares are cut alike), and before round k it has seen every peer finish round k - 1. So
//   - window k + 1's stores go into half (k + 1) % 2 of a peer's input area, which the peer last read for
//     window k - 1, in round k - 1;
//   - window k is reduced from this rank's own input area, filled by the peers before step k + 1;
//   - window k's results go into half k % 2 of a peer's result area, which the peer last copied out for
//     window k - 2, in round k - 1; and window k - 1's results, copied out in round k, were stored by the
//     peers in round k - 1 and are overwritten only in round k + 1, after this rank's step k + 2.
// A reduce follows the two-shot with one destination for the results (the root), whose own part is empty:
// nothing is stored to its input area, and it has no window to reduce; where it folds, it stores nothing
// at all, and its copy-out combines the results with its own input, which the owners leave out. A
// reduce-scatter needs no step after its last round. In place (dst == src) is safe: within one round the
// threads read and write different windows, and a block reads its own part's bytes before writing them,
// element by element.
template <typename T, int Op>
__device__ bool byPartsBulk(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const bool resultsTravel = a.algorithm != kDirectReduceScatter;  // on to other ranks, then copied out
  const bool storing = threadIdx.x < blockDim.x / 2;
  const Team half = splitBlock(blockDim.x / 2);
  storeWindow(a, generation, 0, wholeBlock());
  arrive(c, stepFlag(epoch, 1));
  if (!awaitPeers(c, stepFlag(epoch, 1))) return false;
  for (int k = 0; k < a.windows; ++k) {
    const bool more = k + 1 < a.windows;
    const uint64_t roundStart = traceClock();  // traced builds: where a round's time goes (kernel_trace.h)
    // The copy-out goes with the stores: both are copies, and the reduction has the most loads.
    const bool copying = resultsTravel && k > 0;
    if (more && storing) {
      storeWindow(a, generation, k + 1, half);
      if (copying) copyOutWindow<T, Op>(a, generation, k - 1, half);
      traceRoundAdd(kRoundStores, roundStart, half.rank == 0);
    } else if (more) {
      reduceWindow<T, Op>(a, generation, k, half);
      traceRoundAdd(kRoundReduce, roundStart, half.rank == 0);
    } else {
      reduceWindow<T, Op>(a, generation, k, wholeBlock());
      if (copying) copyOutWindow<T, Op>(a, generation, k - 1, wholeBlock());
    }
    if (!more && !resultsTravel) return true;
    arrive(c, stepFlag(epoch, k + 2));
    if (!awaitPeers(c, stepFlag(epoch, k + 2))) return false;
    if (more) {
      traceRoundAdd(kRoundWhole, roundStart, threadIdx.x == 0);
      traceRoundCounted();
    }
  }
  copyOutWindow<T, Op>(a, generation, a.windows - 1, wholeBlock());
  return true;
}

struct BulkProtocol {
  template <typename T, int Op>
  __device__ static bool run(const DirectLaunch& a, int generation, uint64_t epoch) {
    // All-gathers and alltoalls take lines only (DirectPlan::planAllGather, planAllToAll).
    return a.algorithm == kDirectOneShot ? oneShotBulk<T, Op>(a, generation, epoch)
                                         : byPartsBulk<T, Op>(a, generation, epoch);
  }
};

}  // namespace
}  // namespace direct
}  // namespace alloy
