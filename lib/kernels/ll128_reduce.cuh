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

// lines[q]: the chunk's lines in this rank's workspace from rank q (unused for q == me), all flagged
// `flag`. dst may equal src. Each result line also goes, flagged forwardFlag, to forward[0..numForward)
// (peers' lines: the direct engine's two-shot hands its reduced part on this way). Returns false (on
// every thread) when a wait was cut short.
template <typename T, int Op>
__device__ inline bool ll128ReduceChunk(const DeviceComm& c, uint64_t* const* lines, uint64_t flag, const char* src,
                                        char* dst, size_t bytes, uint64_t* const* forward, int numForward,
                                        uint64_t forwardFlag) {
  using Acc = typename Accumulate<T>::Acc;
  constexpr int E = kLlDataPerLine / sizeof(T);  // elements per 8-byte word
  const int me = c.rank, n = c.nranks;
  const Ll128Lane l(bytes);
  const bool flagLane = l.part == kLl128LanesPerLine - 1;
  bool ok = true;
  for (size_t base = l.first; ok && base < l.count; base += l.stride) {
    const size_t line = l.lineAt(base);
    const bool active = line < l.count;
    const size_t offset = l.offsetIn(line);
    const size_t take0 = wordTake(bytes, offset), take1 = flagLane ? 0 : wordTake(bytes, offset + 8);
    Acc acc0[E] = {}, acc1[E] = {};
    for (int q0 = 0; ok && q0 < n; q0 += kInputsInFlight) {
      uint64_t a[kInputsInFlight], b[kInputsInFlight];
#pragma unroll
      for (int g = 0; g < kInputsInFlight; ++g) {
        const int q = q0 + g;
        a[g] = b[g] = 0;
        if (q >= n || !active) continue;
        if (q == me) {
          a[g] = loadWord(src + offset, take0);
          b[g] = loadWord(src + offset + 8, take1);
        } else {
          ll128Load(l.wordsIn(lines[q], line), a[g], b[g]);
        }
      }
#pragma unroll
      for (int g = 0; g < kInputsInFlight; ++g) {
        const int q = q0 + g;
        if (q >= n) break;
        if (q != me) {
          uint64_t* p = l.wordsIn(lines[q], line);
          ok = ll128AwaitLine(c, q, p, active, flag, &a[g], &b[g]);
          if (!ok) break;
          if (active) ll128Store(p, 0, 0);
        }
        combineWord<T, Op>(acc0, a[g], take0, q == 0);
        combineWord<T, Op>(acc1, b[g], take1, q == 0);
      }
    }
    if (!ok || !active) continue;
    T out0[E], out1[E];
#pragma unroll
    for (int e = 0; e < E; ++e) {
      out0[e] = finish<T, Op>(acc0[e], n);
      out1[e] = finish<T, Op>(acc1[e], n);
    }
    uint64_t r0 = 0, r1 = 0;
    memcpy(&r0, out0, sizeof(out0));
    memcpy(&r1, out1, sizeof(out1));
    for (int d = 0; d < numForward; ++d) ll128Store(l.wordsIn(forward[d], line), r0, flagLane ? forwardFlag : r1);
    storeWord(dst + offset, r0, take0);
    if (!flagLane) storeWord(dst + offset + 8, r1, take1);
  }
  return __syncthreads_and(ok);
}

}  // namespace alloy
