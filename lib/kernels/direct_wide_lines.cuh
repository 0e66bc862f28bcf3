// The direct engine over 128-byte lines of 120 data bytes (ll128_protocol.cuh), whose flags are never zero.
// Instantiated per type family by direct_wide_lines_integers.cu and direct_wide_lines_floating.cu.
#pragma once

#include "direct_lines.cuh"
#include "ll128_protocol.cuh"
#include "ll128_reduce.cuh"

namespace alloy {
namespace direct {
namespace {

struct WideLines {
  using Word = uint64_t;
  static constexpr size_t kUnit = kLl128DataBytes;
  static constexpr bool kCarriesBroadcasts = false;  // no tokens, no forwarding
  static constexpr bool kFolds = true;               // reduce can leave inputs out (SomeAbsent)
  __device__ static Word* at(char* slot, size_t first) {
    return reinterpret_cast<Word*>(slot) + first / kLl128DataBytes * kLl128WordsPerLine;
  }
  __device__ static void send(Word* lines, const char* src, size_t bytes, uint64_t step) {
    ll128SendChunk(lines, src, bytes, step + 1);
  }
  __device__ static bool recv(const DeviceComm& c, int peer, Word* lines, char* dst, size_t bytes, uint64_t step) {
    return ll128RecvChunk(c, peer, lines, dst, bytes, step + 1);
  }
  template <typename T, int Op, bool SomeAbsent = false>
  __device__ static bool reduce(const DeviceComm& c, Word* const* lines, uint64_t step, const char* src, char* dst,
                                size_t bytes, Word* const* forward, int numForward, uint64_t forwardStep) {
    return ll128ReduceChunk<T, Op, SomeAbsent>(c, lines, step + 1, src, dst, bytes, forward, numForward,
                                               forwardStep + 1);
  }
};

}  // namespace
}  // namespace direct
}  // namespace alloy
