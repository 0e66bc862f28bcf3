// Copy of a byte range by all threads of a block (or a team of them: thread_team.cuh). The stores are
// always 16-byte vectors once the destination is aligned: when source and destination share their
// alignment the loads are vectors too; when they do not (alltoallv displacements, send/recv at odd
// offsets), each thread loads the two aligned source vectors around its 16 bytes and shifts them into
// place, so a misaligned copy costs a second load that L2 serves, not a byte-by-byte copy. Several loads
// are in flight per thread (NVLink needs many outstanding requests). Loads bypass L1 (ld.cg): the data may
// have been written by another GPU since this SM last read the same address, and L1 is not coherent with
// those writes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "thread_team.cuh"

namespace alloy {

// Bytes [shift, shift + 16) of the 32 bytes lo:hi (little-endian), for shift in 0..15.
__device__ inline uint4 byteWindow(const uint4& lo, const uint4& hi, unsigned shift) {
  uint32_t w0, w1, w2, w3, w4;  // the five 32-bit words the window touches
  switch (shift >> 2) {
    case 0: w0 = lo.x; w1 = lo.y; w2 = lo.z; w3 = lo.w; w4 = hi.x; break;
    case 1: w0 = lo.y; w1 = lo.z; w2 = lo.w; w3 = hi.x; w4 = hi.y; break;
    case 2: w0 = lo.z; w1 = lo.w; w2 = hi.x; w3 = hi.y; w4 = hi.z; break;
    default: w0 = lo.w; w1 = hi.x; w2 = hi.y; w3 = hi.z; w4 = hi.w; break;
  }
  const unsigned bits = (shift & 3) * 8;
  return make_uint4(__funnelshift_r(w0, w1, bits), __funnelshift_r(w1, w2, bits), __funnelshift_r(w2, w3, bits),
                    __funnelshift_r(w3, w4, bits));
}

// vectors 16-byte stores to vd; source vector i starts `shift` bytes into the aligned vector vs[i]
// (shift 0: plain vector copy), by the threads of team t.
__device__ inline void vectorCopy(uint4* vd, const uint4* vs, unsigned shift, size_t vectors, Team t) {
  const size_t tid = t.rank, nthreads = t.size;
  constexpr int kUnroll = 4;
  size_t i = tid;
  if (shift == 0) {
    for (; i + (kUnroll - 1) * nthreads < vectors; i += kUnroll * nthreads) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(vs + i + u * nthreads);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) vd[i + u * nthreads] = v[u];
    }
    for (; i < vectors; i += nthreads) vd[i] = __ldcg(vs + i);
    return;
  }
  // vs[i + 1] holds the window's last bytes; the caller keeps it inside the source (blockCopy).
  for (; i + (kUnroll - 1) * nthreads < vectors; i += kUnroll * nthreads) {
    uint4 lo[kUnroll], hi[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      lo[u] = __ldcg(vs + i + u * nthreads);
      hi[u] = __ldcg(vs + i + u * nthreads + 1);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) vd[i + u * nthreads] = byteWindow(lo[u], hi[u], shift);
  }
  for (; i < vectors; i += nthreads) vd[i] = byteWindow(__ldcg(vs + i), __ldcg(vs + i + 1), shift);
}

// By the threads of team t (default: the whole block).
__device__ inline void blockCopy(char* dst, const char* src, size_t bytes, Team t = wholeBlock()) {
  const size_t tid = t.rank, nthreads = t.size;
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst);
  size_t head = (16 - (d & 15)) & 15;  // bytes until the destination is aligned
  if (head > bytes) head = bytes;
  size_t vectors = (bytes - head) / 16;
  for (size_t i = tid; i < head; i += nthreads) dst[i] = __ldcg(src + i);

  const uintptr_t s = reinterpret_cast<uintptr_t>(src + head);
  const uintptr_t aligned = s & ~uintptr_t{15};
  // A shifted copy loads the aligned vector after each window. The last one may reach up to 15 bytes
  // past the source's end: harmless on the hardware (it shares a 16-byte granule with a copied byte),
  // but outside the buffer, which compute-sanitizer's memcheck rightly reports and which could touch
  // memory another kernel owns. The byte tail below takes that last vector instead.
  if (vectors > 0 && (s & 15) != 0 && aligned + 16 * (vectors + 1) > reinterpret_cast<uintptr_t>(src + bytes))
    --vectors;
  vectorCopy(reinterpret_cast<uint4*>(dst + head), reinterpret_cast<const uint4*>(aligned),
             static_cast<unsigned>(s & 15), vectors, t);

  for (size_t k = head + vectors * 16 + tid; k < bytes; k += nthreads) dst[k] = __ldcg(src + k);
}

// One load, several stores: bytes at src to every dsts[0..count), by all threads of a block. src and every
// destination are 16-byte aligned (ring slots always are); the byte tail is copied element-wise. A
// forwarding rank reads a chunk from its ring once and writes it to its own buffer and to every peer's
// ring, instead of reading it once per destination.
__device__ inline void blockFanOut(char* const* dsts, int count, const char* src, size_t bytes) {
  const size_t tid = threadIdx.x, nthreads = blockDim.x;
  const size_t vectors = bytes / 16;
  const uint4* vs = reinterpret_cast<const uint4*>(src);
  constexpr int kUnroll = 4;
  size_t i = tid;
  for (; i + (kUnroll - 1) * nthreads < vectors; i += kUnroll * nthreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(vs + i + u * nthreads);
    for (int d = 0; d < count; ++d) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) reinterpret_cast<uint4*>(dsts[d])[i + u * nthreads] = v[u];
    }
  }
  for (; i < vectors; i += nthreads) {
    const uint4 v = __ldcg(vs + i);
    for (int d = 0; d < count; ++d) reinterpret_cast<uint4*>(dsts[d])[i] = v;
  }
  for (size_t k = vectors * 16 + tid; k < bytes; k += nthreads) {
    const char b = __ldcg(src + k);
    for (int d = 0; d < count; ++d) dsts[d][k] = b;
  }
}

}  // namespace alloy
