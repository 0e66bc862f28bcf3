// Copy of a byte range by all threads of a block: 16-byte vectors when source and destination share
// their alignment, several loads in flight per thread (NVLink needs many outstanding requests), bytes at
// the unaligned edges. Loads bypass L1 (ld.cg): the data may have been written by another GPU since this
// SM last read the same address, and L1 is not coherent with those writes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alloy {

__device__ inline void blockCopy(char* dst, const char* src, size_t bytes) {
  const size_t tid = threadIdx.x, nthreads = blockDim.x;
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  size_t head = bytes, vectors = 0;
  if (((d ^ s) & 15) == 0) {
    head = (16 - (d & 15)) & 15;
    if (head > bytes) head = bytes;
    vectors = (bytes - head) / 16;
  }
  for (size_t i = tid; i < head; i += nthreads) dst[i] = __ldcg(src + i);

  const uint4* vs = reinterpret_cast<const uint4*>(src + head);
  uint4* vd = reinterpret_cast<uint4*>(dst + head);
  constexpr int kUnroll = 4;
  size_t i = tid;
  for (; i + (kUnroll - 1) * nthreads < vectors; i += kUnroll * nthreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(vs + i + u * nthreads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) vd[i + u * nthreads] = v[u];
  }
  for (; i < vectors; i += nthreads) vd[i] = __ldcg(vs + i);

  for (size_t k = head + vectors * 16 + tid; k < bytes; k += nthreads) dst[k] = __ldcg(src + k);
}

}  // namespace alloy
