// The low-latency protocol for small messages. Every 16-byte line carries 8 data bytes and, twice, a
// 32-bit flag derived from the chunk's sequence number (llFlag). Each (data word, flag) pair is one
// aligned 8-byte half of a 16-byte store, which the GPU delivers whole, so a reader that sees both
// flags of a line also sees its data: no fence and no separate "posted" flag on the critical path, at
// the price of half the link's bandwidth. Lines live in their own region of the workspace that the bulk
// protocol never writes.
//
// Why a stale line can never pass for a new one: the region starts zeroed, flags are never zero, and
// the receiver zeroes every line it has read before it hands the slot back (the release that frees the
// slot orders those stores before the sender's next ones). So a line holds either zero or the chunk now
// in flight in its slot, whatever the flag values of older chunks were. Flags that merely counted
// sequence numbers modulo 2^32 broke after 2^32 chunks on one channel: the flag 0 matched a zeroed line,
// and a line left from exactly 2^32 chunks before matched the new chunk's flag.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_comm.h"
#include "sync_primitives.cuh"

namespace alloy {

__device__ inline void llStoreLine(uint4* line, uint64_t data, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line), "r"(static_cast<uint32_t>(data)),
               "r"(flag), "r"(static_cast<uint32_t>(data >> 32)), "r"(flag)
               : "memory");
}

__device__ inline uint4 llLoadLine(const uint4* line) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(line)
               : "memory");
  return v;
}

// Up to 8 bytes at any alignment, as a little-endian word.
__device__ inline uint64_t loadWord(const char* src, size_t bytes) {
  if (bytes == kLlDataPerLine && (reinterpret_cast<uintptr_t>(src) & 7) == 0)
    return *reinterpret_cast<const uint64_t*>(src);
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(src[i])) << (8 * i);
  return v;
}

__device__ inline void storeWord(char* dst, uint64_t v, size_t bytes) {
  if (bytes == kLlDataPerLine && (reinterpret_cast<uintptr_t>(dst) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(dst) = v;
    return;
  }
  for (size_t i = 0; i < bytes; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}

// The sending block writes `bytes` bytes of src into the chunk's lines in the peer's workspace.
__device__ inline void llSendChunk(uint4* lines, const char* src, size_t bytes, uint32_t flag) {
  const size_t count = (bytes + kLlDataPerLine - 1) / kLlDataPerLine;
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
    const size_t offset = i * kLlDataPerLine;
    const size_t take = bytes - offset < kLlDataPerLine ? bytes - offset : kLlDataPerLine;
    llStoreLine(lines + i, loadWord(src + offset, take), flag);
  }
}

// The receiving block waits for every line of the chunk `peer` sends, passes it on unchanged to the same
// line of each of the numForward chunks in `forward` (peers' slots of the same step, before its own use
// of it: the next hop waits longest), writes its data to dst and clears the line (see the top of this
// file). Returns false (on every thread) when a wait was cut short by an abort or the timeout. The caller
// hands the slot back with a release after this returns.
__device__ inline bool llRecvChunk(const DeviceComm& c, int peer, uint4* lines, char* dst, size_t bytes,
                                   uint32_t flag, uint4* const* forward = nullptr, int numForward = 0) {
  const size_t count = (bytes + kLlDataPerLine - 1) / kLlDataPerLine;
  bool ok = true;
  for (size_t i = threadIdx.x; ok && i < count; i += blockDim.x) {
    uint4 v;
    ok = spinUntil(c, peer, [&] {
      v = llLoadLine(lines + i);
      return v.y == flag && v.w == flag;
    });
    if (!ok) break;
    const uint64_t data = static_cast<uint64_t>(v.x) | static_cast<uint64_t>(v.z) << 32;
    for (int f = 0; f < numForward; ++f) llStoreLine(forward[f] + i, data, flag);
    llStoreLine(lines + i, 0, 0);
    const size_t offset = i * kLlDataPerLine;
    const size_t take = bytes - offset < kLlDataPerLine ? bytes - offset : kLlDataPerLine;
    storeWord(dst + offset, data, take);
  }
  return __syncthreads_and(ok);
}

// A token: one line without data, from thread 0, that tells a peer the sender has reached this chunk.
__device__ inline void llSendToken(uint4* line, uint32_t flag) {
  if (threadIdx.x == 0) llStoreLine(line, 0, flag);
}

// Thread 0 waits for `peer`'s token and clears the line (see the top of this file); the others return
// true at once. The caller tells the block with a barrier. False when the wait was cut short.
__device__ inline bool llAwaitToken(const DeviceComm& c, int peer, uint4* line, uint32_t flag) {
  if (threadIdx.x != 0) return true;
  const bool ok = spinUntil(c, peer, [&] {
    const uint4 v = llLoadLine(line);
    return v.y == flag && v.w == flag;
  });
  if (ok) llStoreLine(line, 0, 0);
  return ok;
}

}  // namespace alloy
