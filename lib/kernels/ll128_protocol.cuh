// Wide low-latency lines for medium messages: a line is 128 bytes, 120 of data and a 64-bit flag in the
// last 8. Eight consecutive lanes of one warp write a line with one 16-byte store each, in one
// instruction. Over NVLink (and inside one GPU) such a 128-byte aligned store lands whole, but a reader's
// load of the line can still see its flag before its first half: so a reader waits until the flag is
// there and then loads the line again (ll128AwaitLines), which sees all of it. No fence is on the path
// and 94% of the bytes are data, against 50% for the 16-byte lines of ll_protocol.cuh. PCIe makes no such
// promise: the direct engine uses these lines only where every pair of GPUs is reached over links with
// native atomics (NVLink), agreed at creation (device_comm.h).
//
// Lane k of a line (k = lane % 8) holds data bytes [16k, 16k + 16) of the line's 120; lane 7 holds bytes
// [112, 120) and the flag. Line i of a chunk carries the chunk's bytes [120 i, 120 i + 120). Readers zero
// every line they read, as in ll_protocol.cuh, so that a line holds zero or the data now in flight.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_comm.h"
#include "ll_protocol.cuh"
#include "sync_primitives.cuh"

namespace alloy {

constexpr size_t kLl128WordsPerLine = kLl128Bytes / 8;
constexpr int kLl128LanesPerLine = 8;
constexpr int kLl128LinesPerWarp = 32 / kLl128LanesPerLine;
constexpr unsigned kFullWarp = 0xffffffffu;

__device__ inline void ll128Store(uint64_t* p, uint64_t a, uint64_t b) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

__device__ inline void ll128Load(const uint64_t* p, uint64_t& a, uint64_t& b) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

// What one lane touches of the lines of a chunk of `bytes`: each warp takes U groups of four consecutive
// lines per step (U lines per lane, their loads in flight together), all 32 lanes of a warp step
// together (a line's store must be one instruction of its eight lanes), and a lane whose line lies
// beyond the chunk stays idle in that step.
template <int U>
struct Ll128Lanes {
  int part;       // lane % 8: which 16 bytes of its lines
  size_t count;   // lines of the chunk
  size_t first;   // the warp's first line
  size_t stride;  // lines between two steps of a warp

  __device__ explicit Ll128Lanes(size_t bytes)
      : part(static_cast<int>(threadIdx.x & 7)),
        count((bytes + kLl128DataBytes - 1) / kLl128DataBytes),
        first(threadIdx.x / 32 * kLl128LinesPerWarp * U),
        stride(blockDim.x / 32 * kLl128LinesPerWarp * U) {}
  // The lane's u-th line in the step that starts at the warp's line `base`.
  __device__ size_t lineAt(size_t base, int u) const {
    return base + u * kLl128LinesPerWarp + (threadIdx.x & 31) / kLl128LanesPerLine;
  }
  // The lane's first data byte of `line` within the chunk.
  __device__ size_t offsetIn(size_t line) const { return line * kLl128DataBytes + 16 * part; }
  // The lane's 16 bytes of `line` in a slot's lines.
  __device__ uint64_t* wordsIn(uint64_t* lines, size_t line) const {
    return lines + line * kLl128WordsPerLine + 2 * part;
  }
};

// Line groups per warp step for sending and receiving (a reduction, which holds accumulators too, takes
// fewer). One group per step left a load's latency exposed for every 480 bytes.
constexpr int kLl128GroupsInFlight = 4;

// Bytes of a word of at most 8 at byte `offset` of a chunk of `bytes` (0 past its end).
__device__ inline size_t wordTake(size_t bytes, size_t offset) {
  return offset >= bytes ? 0 : bytes - offset < 8 ? bytes - offset : 8;
}

// The lane's two words of a line: its data, or (lane 7) its data and the flag.
template <int U>
__device__ inline void ll128Pack(const Ll128Lanes<U>& l, const char* src, size_t bytes, size_t offset, uint64_t flag,
                                 uint64_t* a, uint64_t* b) {
  *a = loadWord(src + offset, wordTake(bytes, offset));
  *b = l.part == kLl128LanesPerLine - 1 ? flag : loadWord(src + offset + 8, wordTake(bytes, offset + 8));
}

// Waits until each of this lane's U lines at p[u] (active[u]) carries `flag` in its last word; a[u], b[u]
// hold the lane's words as last loaded, and every lane of the warp calls this together. A line not ready
// is loaded again by its eight lanes at once. Once every flag is there, every line is loaded once more:
// a load can see the flag's half of a line before its other half (on 2 x H100 a receiver saw a line's
// flag with its first 64 bytes still zero), and a load issued after the flag was seen sees the whole
// line, as NCCL's LL128 receiver also relies on. False on every lane when the wait was cut short.
template <int U>
__device__ inline bool ll128AwaitLines(const DeviceComm& c, int peer, uint64_t* const (&p)[U], const bool (&active)[U],
                                       uint64_t flag, uint64_t (&a)[U], uint64_t (&b)[U]) {
  const int leader = (threadIdx.x & 31) | (kLl128LanesPerLine - 1);
  const bool arrived = warpSpinUntil(c, peer, [&] {
    bool all = true;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool ready = __shfl_sync(kFullWarp, !active[u] || b[u] == flag, leader);
      if (!ready) ll128Load(p[u], a[u], b[u]);
      all = all && ready;
    }
    return __all_sync(kFullWarp, all);
  });
  if (!arrived) return false;
  __syncwarp();
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (active[u]) ll128Load(p[u], a[u], b[u]);
  return true;
}

// The sending block writes `bytes` bytes of src into a chunk's lines in a peer's workspace.
__device__ inline void ll128SendChunk(uint64_t* lines, const char* src, size_t bytes, uint64_t flag) {
  constexpr int U = kLl128GroupsInFlight;
  const Ll128Lanes<U> l(bytes);
  for (size_t base = l.first; base < l.count; base += l.stride) {
    uint64_t a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t line = l.lineAt(base, u);
      if (line < l.count) ll128Pack(l, src, bytes, l.offsetIn(line), flag, &a[u], &b[u]);
    }
    __syncwarp();  // the eight lanes of a line store together
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t line = l.lineAt(base, u);
      if (line < l.count) ll128Store(l.wordsIn(lines, line), a[u], b[u]);
    }
  }
}

// The lane's data words of a line into dst (lane 7 has one).
template <int U>
__device__ inline void ll128Unpack(const Ll128Lanes<U>& l, char* dst, size_t bytes, size_t offset, uint64_t a,
                                   uint64_t b) {
  storeWord(dst + offset, a, wordTake(bytes, offset));
  if (l.part != kLl128LanesPerLine - 1) storeWord(dst + offset + 8, b, wordTake(bytes, offset + 8));
}

// The receiving block waits for every line of the chunk `peer` sends, writes its data to dst and clears
// the line. False (on every thread) when a wait was cut short.
__device__ inline bool ll128RecvChunk(const DeviceComm& c, int peer, uint64_t* lines, char* dst, size_t bytes,
                                      uint64_t flag) {
  constexpr int U = kLl128GroupsInFlight;
  const Ll128Lanes<U> l(bytes);
  bool ok = true;
  for (size_t base = l.first; ok && base < l.count; base += l.stride) {
    uint64_t* p[U];
    bool active[U];
    uint64_t a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t line = l.lineAt(base, u);
      active[u] = line < l.count;
      p[u] = l.wordsIn(lines, line);
      a[u] = b[u] = 0;
      if (active[u]) ll128Load(p[u], a[u], b[u]);
    }
    ok = ll128AwaitLines<U>(c, peer, p, active, flag, a, b);
    if (!ok) break;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!active[u]) continue;
      ll128Store(p[u], 0, 0);
      ll128Unpack(l, dst, bytes, l.offsetIn(l.lineAt(base, u)), a[u], b[u]);
    }
  }
  return __syncthreads_and(ok);
}

}  // namespace alloy
