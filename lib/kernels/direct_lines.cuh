// The direct engine's algorithms over lines, written against a Lines type (Word, kUnit, at, send, recv with
// an optional forward, reduce, token, awaitToken; kFolds where its reduce can leave inputs out) so that the
// line format stays apart from the algorithms: direct_narrow_lines.cuh's 16-byte lines and
// direct_wide_lines.cuh's 128-byte lines. Steps are numbered 2 * epoch and 2 * epoch + 1 within the block's
// epoch-th operation; the Lines type turns a step into its flag. Lines carry their own flags: a block without
// a share has nothing to wait for.
#pragma once

#include "block_copy.cuh"
#include "direct_common.cuh"

namespace alloy {
namespace direct {

// This rank's `bytes` from src to its slot at every peer, as lines of step `step` in the line input area
// of a generation from `first` on.
template <typename P>
__device__ void sendLinesToPeers(const DirectLaunch& a, int generation, const char* src, size_t first, size_t bytes,
                                 uint64_t step) {
  for (int j = 0; j < a.comm.nranks - 1; ++j)
    P::send(linesOf<P>(a, peerInTurn(a.comm, j), generation, kInputs, a.comm.rank, first), src, bytes, step);
}

template <typename P, typename T, int Op>
__device__ bool oneShotLines(const DirectLaunch& a, int generation, uint64_t epoch) {
  const int me = a.comm.rank;
  const Share s = shareOf(a.partBytes[0], blockIdx.x, P::kUnit);
  if (s.bytes == 0) return true;
  sendLinesToPeers<P>(a, generation, a.src + s.first, s.first, s.bytes, 2 * epoch);
  traceStamp(kTraceSent);
  // In place, the reduction overwrites src: every warp must have sent its lines first (a Lines type may
  // split a share among warps differently for sending and reducing; the 128-byte lines did, and on
  // 2 x H100 an in-place one-shot sent peers some already reduced bytes).
  __syncthreads();
  typename P::Word* lines[kMaxLocalRanks];
  for (int q = 0; q < a.comm.nranks; ++q) lines[q] = linesOf<P>(a, me, generation, kInputs, q, s.first);
  // No dst: a small reduce's rank other than the root, which reduces only to wait for every peer.
  char* dst = a.dst != nullptr ? a.dst + s.first : nullptr;
  const bool done = P::template reduce<T, Op>(a.comm, lines, 2 * epoch, a.src + s.first, dst, s.bytes, nullptr, 0, 0);
  traceStamp(kTraceReceived);
  return done;
}

// Two-shot, reduce-scatter and reduce over lines: step 1's lines are reduced straight from the peers' lines,
// and each result line goes on at once, to every peer (two-shot) or to the root only (a reduce's other owners
// keep nothing; the root keeps the result of its own part where planReduce gives it one, up to
// ALLOY_REDUCE_ROOT_PART_MAX_BYTES); step 2 receives the peers' (two-shot) or the other owners' (the reduce's
// root). Every pair of ranks exchanges lines in every operation, as the generation rule asks
// (direct_kernel.h): in a reduce every owner hears from every rank in step 1, and the root from every other
// owner in step 2 as well. A reduce whose root folds (DirectLaunch::rootFolds) runs foldingReduceLines.
template <typename P, typename T, int Op>
__device__ bool byPartsLines(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const bool twoShot = a.algorithm == kDirectTwoShot, reduce = a.algorithm == kDirectReduce;
  const bool receivesResults = twoShot || (reduce && me == a.root);
  const uint64_t sent = 2 * epoch, reduced = 2 * epoch + 1;
  for (int j = 0; j < n - 1; ++j) {
    const int p = peerInTurn(c, j);
    const Share s = shareOf(a.partBytes[p], blockIdx.x, P::kUnit);
    P::send(linesOf<P>(a, p, generation, kInputs, me, s.first), a.src + a.partFirst[p] + s.first, s.bytes, sent);
  }
  traceStamp(kTraceSent);
  const Share s = shareOf(a.partBytes[me], blockIdx.x, P::kUnit);
  typename P::Word* lines[kMaxLocalRanks];
  typename P::Word* forward[kMaxLocalRanks];
  int count = 0;
  for (int q = 0; q < n; ++q) {
    lines[q] = linesOf<P>(a, me, generation, kInputs, q, s.first);
    if (twoShot && q != me) forward[count++] = linesOf<P>(a, q, generation, kResults, me, s.first);
  }
  if (reduce && me != a.root) forward[count++] = linesOf<P>(a, a.root, generation, kResults, me, s.first);
  char* mine = reduce ? (me == a.root ? a.dst + a.partFirst[me] + s.first : nullptr)
                      : (twoShot ? a.dst + a.partFirst[me] : a.dst) + s.first;
  if (!P::template reduce<T, Op>(c, lines, sent, a.src + a.partFirst[me] + s.first, mine, s.bytes, forward, count,
                                 reduced))
    return false;
  traceStamp(kTraceReceived);
  if (!receivesResults) return true;
  for (int j = 0; j < n - 1; ++j) {
    const int q = sourceInTurn(c, j);
    const Share r = shareOf(a.partBytes[q], blockIdx.x, P::kUnit);
    if (!P::recv(c, q, linesOf<P>(a, me, generation, kResults, q, r.first), a.dst + a.partFirst[q] + r.first, r.bytes,
                 reduced))
      return false;
  }
  traceStamp(kTraceReceived);  // the peers' results in as well
  return true;
}

// A folding reduce root's token to each owner: one word of its input, sent and received as data (one line).
constexpr size_t kTokenBytes = 8;

// A reduce whose root folds (DirectLaunch::rootFolds), over lines whose reduction can leave inputs out
// (P::kFolds): every rank but the root sends each owner its part of the input and reduces its own part from
// every rank's input but the root's, each result line going on to the root at once; the root sends no
// input, and combines each owner's result lines with its own input as they arrive. The root's links then
// take in one buffer and send nothing, where byPartsLines's root sends its buffer (or most of it) before it
// takes the results in. For the generation rule (direct_kernel.h) the root's block 0 sends each owner a
// token line, which the owner's block 0 awaits; the root hears from every owner through its results.
template <typename P, typename T, int Op>
__device__ bool foldingReduceLines(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks, root = a.root;
  const uint64_t sent = 2 * epoch, reduced = 2 * epoch + 1;
  typename P::Word* lines[kMaxLocalRanks] = {};  // the contributing ranks' lines; nullptr: none from that rank
  if (me == root) {
    if (blockIdx.x == 0)
      for (int j = 0; j < n - 1; ++j)
        P::send(linesOf<P>(a, peerInTurn(c, j), generation, kInputs, me, 0), a.src, kTokenBytes, sent);
    traceStamp(kTraceSent);
    for (int j = 0; j < n - 1; ++j) {
      const int q = sourceInTurn(c, j);
      const Share r = shareOf(a.partBytes[q], blockIdx.x, P::kUnit);
      const size_t at = a.partFirst[q] + r.first;
      lines[q] = linesOf<P>(a, me, generation, kResults, q, r.first);  // with this rank's input, from src
      if (!P::template reduce<T, Op, true>(c, lines, reduced, a.src + at, a.dst + at, r.bytes, nullptr, 0, 0))
        return false;
      lines[q] = nullptr;
    }
    traceStamp(kTraceReceived);
    return true;
  }
  for (int j = 0; j < n - 1; ++j) {
    const int p = peerInTurn(c, j);
    const Share s = shareOf(a.partBytes[p], blockIdx.x, P::kUnit);  // none for the root: its part is empty
    P::send(linesOf<P>(a, p, generation, kInputs, me, s.first), a.src + a.partFirst[p] + s.first, s.bytes, sent);
  }
  traceStamp(kTraceSent);
  const Share s = shareOf(a.partBytes[me], blockIdx.x, P::kUnit);
  for (int q = 0; q < n; ++q)
    if (q != root) lines[q] = linesOf<P>(a, me, generation, kInputs, q, s.first);
  typename P::Word* const toRoot = linesOf<P>(a, root, generation, kResults, me, s.first);
  if (!P::template reduce<T, Op, true>(c, lines, sent, a.src + a.partFirst[me] + s.first, nullptr, s.bytes, &toRoot, 1,
                                       reduced))
    return false;
  traceStamp(kTraceReceived);
  if (blockIdx.x != 0) return true;
  __shared__ alignas(16) char token[kTokenBytes];
  return P::recv(c, root, linesOf<P>(a, me, generation, kInputs, root, 0), token, kTokenBytes, sent);
}

// All-gather: this rank's block to every peer; alltoall: block p of the source to peer p. Then each peer's
// block copied into its place of dst, and this rank's own (all-gather in place: already there).
template <typename P>
__device__ bool blockExchangeLines(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks;
  const size_t block = a.partBytes[0];
  const size_t sourceStride = a.algorithm == kDirectAllToAll ? block : 0;  // between the blocks for each peer
  const Share s = shareOf(block, blockIdx.x, P::kUnit);
  if (s.bytes == 0) return true;
  for (int j = 0; j < n - 1; ++j) {
    const int p = peerInTurn(c, j);
    P::send(linesOf<P>(a, p, generation, kInputs, me, s.first), a.src + p * sourceStride + s.first, s.bytes,
            2 * epoch);
  }
  traceStamp(kTraceSent);
  const char* src = a.src + me * sourceStride + s.first;
  char* own = a.dst + me * block + s.first;
  if (own != src) blockCopy(own, src, s.bytes);
  for (int j = 0; j < n - 1; ++j) {
    const int q = sourceInTurn(c, j);
    if (!P::recv(c, q, linesOf<P>(a, me, generation, kInputs, q, s.first), a.dst + q * block + s.first, s.bytes,
                 2 * epoch))
      return false;
  }
  traceStamp(kTraceReceived);
  return true;
}

// Broadcast: the root's share of the buffer to every peer, which receives it into dst (the root copies it
// there itself unless in place). Block 0 of every other rank also sends each peer a token line and waits
// for the token of every rank but the root, whose data is its token: then every rank has heard from every
// peer in this operation, as the generation rule asks (direct_kernel.h), though only the root sends data.
template <typename P>
__device__ bool broadcastLines(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks, root = a.root;
  const uint64_t step = 2 * epoch;
  const Share s = shareOf(a.partBytes[0], blockIdx.x, P::kUnit);
  if (me == root && s.bytes > 0) sendLinesToPeers<P>(a, generation, a.src + s.first, s.first, s.bytes, step);
  if (me != root && blockIdx.x == 0)
    for (int j = 0; j < n - 1; ++j) P::token(linesOf<P>(a, peerInTurn(c, j), generation, kInputs, me, 0), step);
  traceStamp(kTraceSent);
  if (me == root && a.dst != a.src && s.bytes > 0) blockCopy(a.dst + s.first, a.src + s.first, s.bytes);
  if (me != root && s.bytes > 0 &&
      !P::recv(c, root, linesOf<P>(a, me, generation, kInputs, root, s.first), a.dst + s.first, s.bytes, step))
    return false;
  bool heard = true;
  if (blockIdx.x == 0)
    for (int j = 0; j < n - 1 && heard; ++j) {
      const int q = sourceInTurn(c, j);
      if (q != root) heard = P::awaitToken(c, q, linesOf<P>(a, me, generation, kInputs, q, 0), step);
    }
  if (!__syncthreads_and(heard)) return false;
  traceStamp(kTraceReceived);
  return true;
}

// Broadcast in two steps (3 ranks and more, sizes past the one-shot's): the root sends part p of the buffer
// to rank p alone, which passes every line on to the ranks that are neither the root nor itself as it
// arrives, and keeps it. The root's links carry the buffer once instead of once per peer; every other rank
// sends its part on to nranks - 2 peers. Every rank but the root hears from the root (its part) and from every
// other such rank (their parts); block 0 of each sends the root a token line, which the root's block 0
// waits for: every pair exchanges lines in every operation (direct_kernel.h). Tokens sit at line 0 of
// the sender's slot in the root's area, which carries no data in this algorithm.
template <typename P>
__device__ bool broadcastTwoShotLines(const DirectLaunch& a, int generation, uint64_t epoch) {
  const DeviceComm& c = a.comm;
  const int me = c.rank, n = c.nranks, root = a.root;
  const uint64_t step = 2 * epoch;
  if (me == root) {
    for (int j = 0; j < n - 1; ++j) {
      const int p = peerInTurn(c, j);
      const Share s = shareOf(a.partBytes[p], blockIdx.x, P::kUnit);
      const char* src = a.src + a.partFirst[p] + s.first;
      P::send(linesOf<P>(a, p, generation, kInputs, root, s.first), src, s.bytes, step);
      if (a.dst != a.src) blockCopy(a.dst + a.partFirst[p] + s.first, src, s.bytes);
    }
    traceStamp(kTraceSent);
    bool heard = true;
    if (blockIdx.x == 0)
      for (int j = 0; j < n - 1 && heard; ++j) {
        const int q = sourceInTurn(c, j);
        heard = P::awaitToken(c, q, linesOf<P>(a, me, generation, kInputs, q, 0), step);
      }
    if (!__syncthreads_and(heard)) return false;
    traceStamp(kTraceReceived);
    return true;
  }
  if (blockIdx.x == 0) P::token(linesOf<P>(a, root, generation, kInputs, me, 0), step);
  const Share s = shareOf(a.partBytes[me], blockIdx.x, P::kUnit);
  typename P::Word* onward[kMaxLocalRanks];
  int count = 0;
  for (int j = 0; j < n - 1; ++j) {
    const int q = peerInTurn(c, j);
    if (q != root) onward[count++] = linesOf<P>(a, q, generation, kInputs, me, s.first);
  }
  if (!P::recv(c, root, linesOf<P>(a, me, generation, kInputs, root, s.first), a.dst + a.partFirst[me] + s.first,
               s.bytes, step, onward, count))
    return false;
  traceStamp(kTraceSent);
  for (int j = 0; j < n - 1; ++j) {
    const int q = sourceInTurn(c, j);
    if (q == root) continue;
    const Share r = shareOf(a.partBytes[q], blockIdx.x, P::kUnit);
    if (!P::recv(c, q, linesOf<P>(a, me, generation, kInputs, q, r.first), a.dst + a.partFirst[q] + r.first, r.bytes,
                 step))
      return false;
  }
  traceStamp(kTraceReceived);
  return true;
}

template <typename P>
struct LinesProtocol {
  template <typename T, int Op>
  __device__ static bool run(const DirectLaunch& a, int generation, uint64_t epoch) {
    switch (a.algorithm) {
      case kDirectOneShot: return oneShotLines<P, T, Op>(a, generation, epoch);
      case kDirectAllGather:
      case kDirectAllToAll: return blockExchangeLines<P>(a, generation, epoch);
      case kDirectBroadcast:
      case kDirectBroadcastTwoShot:
        // A line format without tokens and forwarding (the wide lines) is never planned for broadcasts.
        if constexpr (P::kCarriesBroadcasts) {
          return a.algorithm == kDirectBroadcast ? broadcastLines<P>(a, generation, epoch)
                                                 : broadcastTwoShotLines<P>(a, generation, epoch);
        } else {
          return false;
        }
      default:
        // Avg never folds (DirectPlan::planReduce): its owners would round a partial sum.
        if constexpr (P::kFolds && Op != alloyAvg) {
          if (a.rootFolds) return foldingReduceLines<P, T, Op>(a, generation, epoch);
        }
        return byPartsLines<P, T, Op>(a, generation, epoch);
    }
  }
};

}  // namespace direct
}  // namespace alloy
