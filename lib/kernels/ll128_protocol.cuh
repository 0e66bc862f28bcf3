// Wide low-latency lines for medium messages: a line is 128 bytes, 120 of data and a 64-bit flag in the
// last 8. Eight consecutive lanes of one warp write a line with one 16-byte store each, in one
// instruction, and read it the same way; over NVLink (and inside one GPU) such a 128-byte aligned store
// arrives whole, so a reader that sees the flag in its load sees the line's data in the same load. No
// fence is on the path and 94% of the bytes are data, against 50% for the 16-byte lines of
// ll_protocol.cuh. PCIe gives no such promise: the direct engine uses these lines only where every pair
// of GPUs is reached over links with native atomics (NVLink), agreed at creation (device_comm.h).
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

// What one lane touches of the lines of a chunk of `bytes`: the warps of the block take the lines four
// at a time, all 32 lanes of a warp step together (a line's store must be one instruction of its eight
// lanes), and a lane whose line lies beyond the chunk stays idle in that step.
struct Ll128Lane {
  int part;       // lane % 8: which 16 bytes of its line
  size_t count;   // lines of the chunk
  size_t first;   // the warp's first line
  size_t stride;  // lines between two steps of a warp

  __device__ explicit Ll128Lane(size_t bytes)
      : part(static_cast<int>(threadIdx.x & 7)),
        count((bytes + kLl128DataBytes - 1) / kLl128DataBytes),
        first(threadIdx.x / 32 * kLl128LinesPerWarp),
        stride(blockDim.x / 32 * kLl128LinesPerWarp) {}
  // The lane's line in the step that starts at the warp's line `base`.
  __device__ size_t lineAt(size_t base) const { return base + (threadIdx.x & 31) / kLl128LanesPerLine; }
  // The lane's first data byte of `line` within the chunk.
  __device__ size_t offsetIn(size_t line) const { return line * kLl128DataBytes + 16 * part; }
  // The lane's 16 bytes of `line` in a slot's lines.
  __device__ uint64_t* wordsIn(uint64_t* lines, size_t line) const {
    return lines + line * kLl128WordsPerLine + 2 * part;
  }
};

// Bytes of a word of at most 8 at byte `offset` of a chunk of `bytes` (0 past its end).
__device__ inline size_t wordTake(size_t bytes, size_t offset) {
  return offset >= bytes ? 0 : bytes - offset < 8 ? bytes - offset : 8;
}

// The lane's two words of a line: its data, or (lane 7) its data and the flag.
__device__ inline void ll128Pack(const Ll128Lane& l, const char* src, size_t bytes, size_t offset, uint64_t flag,
                                 uint64_t* a, uint64_t* b) {
  *a = loadWord(src + offset, wordTake(bytes, offset));
  *b = l.part == kLl128LanesPerLine - 1 ? flag : loadWord(src + offset + 8, wordTake(bytes, offset + 8));
}

// Waits until this lane's line at p carries `flag` in its last word (a, b: the lane's words as last
// loaded; every lane of the warp calls this together). A line not ready is loaded again by its eight
// lanes at once. False on every lane when the wait was cut short.
__device__ inline bool ll128AwaitLine(const DeviceComm& c, int peer, const uint64_t* p, bool active, uint64_t flag,
                                      uint64_t* a, uint64_t* b) {
  const int leader = (threadIdx.x & 31) | (kLl128LanesPerLine - 1);
  return warpSpinUntil(c, peer, [&] {
    const bool lineReady = __shfl_sync(kFullWarp, !active || *b == flag, leader);
    if (!lineReady) ll128Load(p, *a, *b);
    return __all_sync(kFullWarp, lineReady);
  });
}

// The sending block writes `bytes` bytes of src into a chunk's lines in a peer's workspace.
__device__ inline void ll128SendChunk(uint64_t* lines, const char* src, size_t bytes, uint64_t flag) {
  const Ll128Lane l(bytes);
  for (size_t base = l.first; base < l.count; base += l.stride) {
    const size_t line = l.lineAt(base);
    if (line >= l.count) continue;
    uint64_t a, b;
    ll128Pack(l, src, bytes, l.offsetIn(line), flag, &a, &b);
    ll128Store(l.wordsIn(lines, line), a, b);
  }
}

// The lane's data words of a line into dst (lane 7 has one).
__device__ inline void ll128Unpack(const Ll128Lane& l, char* dst, size_t bytes, size_t offset, uint64_t a,
                                   uint64_t b) {
  storeWord(dst + offset, a, wordTake(bytes, offset));
  if (l.part != kLl128LanesPerLine - 1) storeWord(dst + offset + 8, b, wordTake(bytes, offset + 8));
}

// The receiving block waits for every line of the chunk `peer` sends, writes its data to dst and clears
// the line. False (on every thread) when a wait was cut short.
__device__ inline bool ll128RecvChunk(const DeviceComm& c, int peer, uint64_t* lines, char* dst, size_t bytes,
                                      uint64_t flag) {
  const Ll128Lane l(bytes);
  bool ok = true;
  for (size_t base = l.first; ok && base < l.count; base += l.stride) {
    const size_t line = l.lineAt(base);
    const bool active = line < l.count;
    uint64_t* p = l.wordsIn(lines, line);
    uint64_t a = 0, b = 0;
    if (active) ll128Load(p, a, b);
    ok = ll128AwaitLine(c, peer, p, active, flag, &a, &b);
    if (!ok || !active) continue;
    ll128Store(p, 0, 0);
    ll128Unpack(l, dst, bytes, l.offsetIn(line), a, b);
  }
  return __syncthreads_and(ok);
}

}  // namespace alloy
