// Reduction of one chunk of wide lines (ll128_protocol.cuh) straight from the peers' lines, as
// llReduceChunk does for 16-byte lines: each lane combines its bytes of a line from every rank, in rank
// order (this rank's own from src), so every rank gets the same bits as from the other protocols. The
// loads of kInputsInFlight ranks are issued before the first wait: waiting for one peer after another
// left a load's latency exposed per peer and step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "block_reduce.cuh"
#include "device_comm.h"
#include "ll128_protocol.cuh"
#include "ll_reduce.cuh"
#include "reduce_ops.cuh"

namespace alloy {

// lines[q]: the chunk's lines in this rank's workspace from rank q (unused for q == me), all flagged `flag`;
// with SomeAbsent, nullptr where rank q contributes nothing (a reduce whose root folds: its owners leave the
// root's input out, and the root combines one owner's result with its own input). A template parameter so
// that the reductions of every rank's input keep their code: a check at run time cost the two-shot allreduce
// in these lines 1.0-1.3 us at 2-4 MB on 4 x H200 (docs/benchmarks.md, "Session 28"). dst may equal src, or
// be null where the result only travels on. Each result line also goes, flagged forwardFlag, to
// forward[0..numForward) (peers' lines: the direct engine's two-shot hands its reduced part on this way, a
// reduce's owner to the root). Returns false (on every thread) when a wait was cut short.
template <typename T, int Op, bool SomeAbsent = false>
__device__ inline bool ll128ReduceChunk(const DeviceComm& c, uint64_t* const* lines, uint64_t flag, const char* src,
                                        char* dst, size_t bytes, uint64_t* const* forward, int numForward,
                                        uint64_t forwardFlag) {
  using Acc = typename Accumulate<T>::Acc;
  constexpr int E = kLlDataPerLine / sizeof(T);  // elements per 8-byte word
  // One line group per warp step: two doubled this file's build (5.5 minutes on 2 cores, over 7 on the
  // GPU machine, for 60 instantiations) before any measurement showed what they buy.
  constexpr int U = 1;
  const int me = c.rank, n = c.nranks;
  const Ll128Lanes<U> l(bytes);
  const bool flagLane = l.part == kLl128LanesPerLine - 1;
  uint32_t present = ~0u;  // the ranks that contribute; the first in rank order starts the accumulators
  if constexpr (SomeAbsent) {
    present = 0;
    for (int q = 0; q < n; ++q)
      if (q == me || lines[q] != nullptr) present |= 1u << q;
  }
  const int first = SomeAbsent ? __ffs(static_cast<int>(present)) - 1 : 0;
  bool ok = true;
  for (size_t base = l.first; ok && base < l.count; base += l.stride) {
    bool active[U];
    size_t offset[U], take0[U], take1[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      active[u] = l.lineAt(base, u) < l.count;
      offset[u] = l.offsetIn(l.lineAt(base, u));
      take0[u] = wordTake(bytes, offset[u]);
      take1[u] = flagLane ? 0 : wordTake(bytes, offset[u] + 8);
    }
    Acc acc0[U][E] = {}, acc1[U][E] = {};
    for (int q0 = 0; ok && q0 < n; q0 += kInputsInFlight) {
      uint64_t a[kInputsInFlight][U], b[kInputsInFlight][U];
#pragma unroll
      for (int g = 0; g < kInputsInFlight; ++g) {
        const int q = q0 + g;
#pragma unroll
        for (int u = 0; u < U; ++u) {
          a[g][u] = b[g][u] = 0;
          if (q >= n || !active[u] || (SomeAbsent && !(present >> q & 1))) continue;
          if (q == me) {
            a[g][u] = loadWord(src + offset[u], take0[u]);
            b[g][u] = loadWord(src + offset[u] + 8, take1[u]);
          } else {
            ll128Load(l.wordsIn(lines[q], l.lineAt(base, u)), a[g][u], b[g][u]);
          }
        }
      }
#pragma unroll
      for (int g = 0; g < kInputsInFlight; ++g) {
        const int q = q0 + g;
        if (q >= n) break;
        if (SomeAbsent && !(present >> q & 1)) continue;
        if (q != me) {
          uint64_t* p[U];
#pragma unroll
          for (int u = 0; u < U; ++u) p[u] = l.wordsIn(lines[q], l.lineAt(base, u));
          ok = ll128AwaitLines<U>(c, q, p, active, flag, a[g], b[g]);
          if (!ok) break;
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (active[u]) ll128Store(p[u], 0, 0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          combineWord<T, Op>(acc0[u], a[g][u], take0[u], q == first);
          combineWord<T, Op>(acc1[u], b[g][u], take1[u], q == first);
        }
      }
    }
    if (!ok) continue;
    uint64_t r0[U], r1[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      T out0[E], out1[E];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        out0[e] = finish<T, Op>(acc0[u][e], n);
        out1[e] = finish<T, Op>(acc1[u][e], n);
      }
      memcpy(&r0[u], out0, sizeof(out0));
      memcpy(&r1[u], out1, sizeof(out1));
    }
    __syncwarp();  // the eight lanes of a line store together
    for (int d = 0; d < numForward; ++d) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (active[u]) ll128Store(l.wordsIn(forward[d], l.lineAt(base, u)), r0[u], flagLane ? forwardFlag : r1[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!active[u] || dst == nullptr) continue;
      storeWord(dst + offset[u], r0[u], take0[u]);
      if (!flagLane) storeWord(dst + offset[u] + 8, r1[u], take1[u]);
    }
  }
  return __syncthreads_and(ok);
}

}  // namespace alloy
