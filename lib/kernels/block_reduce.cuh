// Reduction of one chunk by all threads of a block (or a team of them: thread_team.cuh): dst[i] = in[0][i] op
// in[1][i] op ... op in[n-1][i], stored to one or several destinations (the direct engine hands a reduced
// part to every peer as it stores its own), always in that order, so every rank that reduces the same inputs
// gets the same bits. Inputs are the ranks' contributions in rank order (the own one read from the user's
// buffer, the peers' from ring slots). 16-byte vectors when every pointer is 16-byte aligned (ring slots
// always are; user buffers usually), several vectors in flight per thread; element by element otherwise and
// for the tail. Loads bypass L1 (ld.cg): ring slots are rewritten by peers between chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "reduce_ops.cuh"
#include "thread_team.cuh"

namespace alloy {

template <size_t Bytes>
struct RawOf;
template <> struct RawOf<1> { using Type = unsigned char; };
template <> struct RawOf<2> { using Type = unsigned short; };
template <> struct RawOf<4> { using Type = unsigned int; };
template <> struct RawOf<8> { using Type = unsigned long long; };

template <typename T>
__device__ inline T loadElement(const char* p) {
  using Raw = typename RawOf<sizeof(T)>::Type;
  const Raw raw = __ldcg(reinterpret_cast<const Raw*>(p));
  T x;
  memcpy(&x, &raw, sizeof(T));
  return x;
}

template <typename T>
__device__ inline void storeElement(char* p, T x) {
  using Raw = typename RawOf<sizeof(T)>::Type;
  Raw raw;
  memcpy(&raw, &x, sizeof(T));
  *reinterpret_cast<Raw*>(p) = raw;
}

// Inputs whose loads a thread has in flight together. The reduction's inputs are the own buffer and the
// peers' ring slots; loading them one after the other left one input's latency exposed per step, so a
// block reduced at about 7 GB/s and a reduce-scatter of 4 ranks topped out near 200 GB/s on 4 x H100
// (docs/benchmarks.md). They are still combined in rank order.
constexpr int kInputsInFlight = 4;

// U vectors of 16 bytes per thread and step from every input, kInputsInFlight inputs' loads at a time.
template <typename T, int Op, int U>
__device__ inline void reduceVectors(char* const* dst, int numDst, const char* const* in, int n, size_t first,
                                     size_t stride) {
  using A = Accumulate<T>;
  constexpr int E = 16 / sizeof(T);
  typename A::Acc acc[U][E];
  for (int q0 = 0; q0 < n; q0 += kInputsInFlight) {
    uint4 raw[kInputsInFlight][U];
#pragma unroll
    for (int g = 0; g < kInputsInFlight; ++g) {
      if (q0 + g >= n) break;
#pragma unroll
      for (int u = 0; u < U; ++u) raw[g][u] = __ldcg(reinterpret_cast<const uint4*>(in[q0 + g]) + first + u * stride);
    }
#pragma unroll
    for (int g = 0; g < kInputsInFlight; ++g) {
      if (q0 + g >= n) break;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        T x[E];
        memcpy(x, &raw[g][u], 16);
#pragma unroll
        for (int e = 0; e < E; ++e)
          acc[u][e] = q0 + g == 0 ? A::widen(x[e]) : combine<T, Op>(acc[u][e], A::widen(x[e]));
      }
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    T out[E];
#pragma unroll
    for (int e = 0; e < E; ++e) out[e] = finish<T, Op>(acc[u][e], n);
    uint4 packed;
    memcpy(&packed, out, 16);
    for (int d = 0; d < numDst; ++d) reinterpret_cast<uint4*>(dst[d])[first + u * stride] = packed;
  }
}

// in[0..n) are the inputs in rank order, dst[0..numDst) the destinations; bytes is a whole number of
// elements. By the threads of team t (default: the whole block).
template <typename T, int Op>
__device__ void blockReduce(char* const* dst, int numDst, const char* const* in, int n, size_t bytes,
                            Team t = wholeBlock()) {
  using A = Accumulate<T>;
  const size_t tid = t.rank, nthreads = t.size;
  bool aligned = true;
  for (int d = 0; d < numDst; ++d) aligned = aligned && (reinterpret_cast<uintptr_t>(dst[d]) & 15) == 0;
  for (int q = 0; q < n; ++q) aligned = aligned && (reinterpret_cast<uintptr_t>(in[q]) & 15) == 0;
  const size_t vectors = aligned ? bytes / 16 : 0;

  // Vectors per thread and step: as many as keep about 8 accumulators per thread, so that narrow types
  // (16 accumulators per vector) do not spill.
  constexpr int kElements = 16 / sizeof(T);
  constexpr int kUnroll = kElements >= 8 ? 1 : 8 / kElements;
  size_t i = tid;
  for (; i + (kUnroll - 1) * nthreads < vectors; i += kUnroll * nthreads)
    reduceVectors<T, Op, kUnroll>(dst, numDst, in, n, i, nthreads);
  for (; i < vectors; i += nthreads) reduceVectors<T, Op, 1>(dst, numDst, in, n, i, nthreads);

  for (size_t k = vectors * 16 + tid * sizeof(T); k < bytes; k += nthreads * sizeof(T)) {
    typename A::Acc acc = A::widen(loadElement<T>(in[0] + k));
    for (int q = 1; q < n; ++q) acc = combine<T, Op>(acc, A::widen(loadElement<T>(in[q] + k)));
    const T out = finish<T, Op>(acc, n);
    for (int d = 0; d < numDst; ++d) storeElement<T>(dst[d] + k, out);
  }
}

}  // namespace alloy
