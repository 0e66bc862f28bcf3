// Input data of check mode. Element i of rank r's send buffer is a pure function of (seed, r, i), so any
// rank can recompute any other rank's input on the host: the reference needs no copy of remote buffers
// and no communication beyond the final count of wrong elements.
//
// Values are chosen so that the exact answer is representable and, for sums, independent of the order of
// reduction: integers never overflow a sum, and floats are multiples of 1/4 small enough that n of them
// add up exactly in the element type (see docs/benchmarks.md). Products use +-1, +-2, +-0.5 (floats) or
// +-1..3 (integers, which wrap as NCCL's do).
#ifndef ALLOY_PERF_CHECK_DATA_H_
#define ALLOY_PERF_CHECK_DATA_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "alloy.h"
#include "collectives.h"

namespace alloyperf {

class CheckData {
 public:
  // redop matters only for reducing collectives; movement collectives use the sum value set.
  CheckData(alloyDataType_t type, Coll coll, alloyRedOp_t redop, int nranks, uint64_t seed);

  alloyDataType_t type() const { return type_; }
  // Floats hold k * kFloatScale; integers hold k itself (two's complement, truncated to the width).
  static constexpr double kFloatScale = 0.25;

  int64_t k(int rank, size_t index) const {
    const uint64_t h = mix(rankKeys_[rank] + index * 0x9e3779b97f4a7c15ull);
    // Multiply-high maps the hash onto [0, span) without a division in this, the check's inner loop.
    const uint64_t pick = static_cast<uint64_t>((static_cast<unsigned __int128>(h) * span_) >> 64);
    return choices_.empty() ? lo_ + static_cast<int64_t>(pick) : choices_[pick];
  }

  // True when every partial result of the reduction, in any order, is exactly representable in the
  // element type, so a correct library must return the exact answer: sums within the range where the
  // values were scaled to add exactly, products of powers of two within the exponent range, averages
  // over a power-of-two number of ranks. Otherwise float results get a rounding tolerance (verify.h).
  bool exact() const { return exact_; }

  // Writes elements [0, count) of `rank`'s send buffer, encoded in the element type, to dst.
  void fill(int rank, size_t count, void* dst) const;

  static uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }

 private:
  alloyDataType_t type_;
  bool exact_ = true;
  int64_t lo_ = 0;               // k drawn from [lo_, lo_ + span_) ...
  uint64_t span_ = 1;
  std::vector<int64_t> choices_;  // ... or from this list when not empty (span_ = its size)
  std::vector<uint64_t> rankKeys_;
  std::vector<uint64_t> encoded_;  // narrow floats: bits of k * kFloatScale at index k - encodedLo_
  int64_t encodedLo_ = 0;
};

// Byte written over receive buffers (and a guard past their end) before each checked call: a float NaN,
// and for integers a value the check data never produce in a sum (-128.. for signed, all ones for
// unsigned), so an element the library did not write cannot pass for a right answer.
unsigned char poisonByte(alloyDataType_t type);

}  // namespace alloyperf

#endif  // ALLOY_PERF_CHECK_DATA_H_
