// The direct engine over 16-byte lines of 8 data bytes (ll_protocol.cuh). Instantiated per type family by
// direct_narrow_lines_integers.cu and direct_narrow_lines_floating.cu.
#pragma once

#include "direct_lines.cuh"
#include "ll_protocol.cuh"
#include "ll_reduce.cuh"

namespace alloy {
namespace direct {
namespace {

struct NarrowLines {
  using Word = uint4;
  static constexpr size_t kUnit = 16;
  static constexpr bool kCarriesBroadcasts = true;
  static constexpr bool kFolds = false;  // no reduce by parts in these lines (DirectPlan::fits)
  __device__ static Word* at(char* slot, size_t first) { return reinterpret_cast<Word*>(slot) + first / kLlDataPerLine; }
  __device__ static void send(Word* lines, const char* src, size_t bytes, uint64_t step) {
    llSendChunk(lines, src, bytes, llFlag(step));
  }
  // forward: numForward peers' lines of the same step that each received line goes on to as well.
  __device__ static bool recv(const DeviceComm& c, int peer, Word* lines, char* dst, size_t bytes, uint64_t step,
                              Word* const* forward = nullptr, int numForward = 0) {
    return llRecvChunk(c, peer, lines, dst, bytes, llFlag(step), forward, numForward);
  }
  // A line without data from thread 0: a sign to the peer that this rank is in the operation.
  __device__ static void token(Word* line, uint64_t step) { llSendToken(line, llFlag(step)); }
  __device__ static bool awaitToken(const DeviceComm& c, int peer, Word* line, uint64_t step) {
    return llAwaitToken(c, peer, line, llFlag(step));
  }
  template <typename T, int Op>
  __device__ static bool reduce(const DeviceComm& c, Word* const* lines, uint64_t step, const char* src, char* dst,
                                size_t bytes, Word* const* forward, int numForward, uint64_t forwardStep) {
    uint32_t flags[kMaxLocalRanks];
    for (int q = 0; q < c.nranks; ++q) flags[q] = llFlag(step);
    return llReduceChunk<T, Op>(c, lines, flags, src, dst, bytes, forward, numForward, llFlag(forwardStep));
  }
};

}  // namespace
}  // namespace direct
}  // namespace alloy
