#include "verify.h"

#include <cmath>
#include <vector>

#include "datatypes.h"

namespace alloyperf {

namespace {

// A run of the receive buffer: recv[dst + j] must equal send element src + j of rank srcRank, or,
// for srcRank == kAllRanks, the reduction over all ranks of that element.
constexpr int kAllRanks = -1;
struct Segment {
  size_t dst;
  size_t len;
  int srcRank;
  size_t src;
};

std::vector<Segment> expectedSegments(const CollCall& c) {
  const Layout& l = *c.layout;
  const size_t n = l.count;
  std::vector<Segment> segs;
  switch (c.coll) {
    case Coll::allreduce: segs.push_back({0, n, kAllRanks, 0}); break;
    case Coll::reduce:
      if (c.rank == c.root) segs.push_back({0, n, kAllRanks, 0});
      break;
    case Coll::reducescatter: segs.push_back({0, n, kAllRanks, c.rank * n}); break;
    case Coll::broadcast: segs.push_back({0, n, c.root, 0}); break;
    case Coll::sendrecv: segs.push_back({0, n, (c.rank + c.nranks - 1) % c.nranks, 0}); break;
    case Coll::allgather:
      for (int s = 0; s < c.nranks; ++s) segs.push_back({s * n, n, s, 0});
      break;
    case Coll::alltoall:
      for (int s = 0; s < c.nranks; ++s) segs.push_back({s * n, n, s, c.rank * n});
      break;
    case Coll::alltoallv:
      for (int s = 0; s < c.nranks; ++s) {
        // Rank s places its chunk for us after its chunks for ranks 0..rank-1.
        size_t src = 0;
        for (int d = 0; d < c.rank; ++d) src += alltoallvCount(n, s, d, c.nranks, l.uniformCounts);
        segs.push_back({l.recvDispls[s], l.recvCounts[s], s, src});
      }
      break;
  }
  return segs;
}

// Reduction of element `index` over all ranks, for integers: sums and products wrap modulo 2^64 (and
// so modulo the element width once truncated), as the device's integer arithmetic does.
uint64_t reduceInt(const CheckData& d, alloyRedOp_t op, int nranks, size_t index) {
  int64_t acc = d.k(0, index);
  for (int r = 1; r < nranks; ++r) {
    const int64_t k = d.k(r, index);
    switch (op) {
      case alloySum:
      case alloyAvg: acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(k)); break;
      case alloyProd: acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(k)); break;
      case alloyMax: acc = k > acc ? k : acc; break;
      case alloyMin: acc = k < acc ? k : acc; break;
      default: break;
    }
  }
  if (op == alloyAvg) acc /= nranks;  // never negative: see CheckData
  return static_cast<uint64_t>(acc);
}

// Reduction of element `index` over all ranks, for floats, with the tolerance the device result is held
// to. The answer comes from doubles (exact for the check data). Where the data guarantee an exact
// result (CheckData::exact) the tolerance is 0. Elsewhere a device may round after every step, in the
// element type (NCCL reduces half and fp8 that way, and computes a float average as a sum of inputs
// pre-multiplied by 1/n), so each of up to n+1 roundings may cost one epsilon of the magnitude of what
// was reduced; max and min are always exact.
void reduceFloat(const CheckData& d, alloyRedOp_t op, int nranks, size_t index, double eps, double* expected,
                 double* tolerance) {
  double acc = d.k(0, index) * CheckData::kFloatScale;
  double magnitude = std::fabs(acc);
  for (int r = 1; r < nranks; ++r) {
    const double x = d.k(r, index) * CheckData::kFloatScale;
    switch (op) {
      case alloySum:
      case alloyAvg: acc += x; magnitude += std::fabs(x); break;
      case alloyProd: acc *= x; magnitude = std::fabs(acc); break;
      case alloyMax: acc = std::fmax(acc, x); break;
      case alloyMin: acc = std::fmin(acc, x); break;
      default: break;
    }
  }
  if (op == alloyAvg) {
    acc /= nranks;
    magnitude /= nranks;
  }
  *expected = acc;
  *tolerance = (d.exact() || op == alloyMax || op == alloyMin) ? 0.0 : eps * (nranks + 1) * magnitude;
}

}  // namespace

size_t countWrong(const CheckData& data, const CollCall& c, const unsigned char* received) {
  const TypeInfo& t = typeInfo(c.type);
  const size_t elt = t.size;
  const uint64_t mask = elt == 8 ? ~0ull : (1ull << (8 * elt)) - 1;
  const double eps = typeEpsilon(c.type);
  if (c.coll == Coll::reduce && c.rank != c.root) return 0;  // NCCL semantics: recvbuff unused off root

  size_t wrong = 0;
  for (const Segment& s : expectedSegments(c)) {
    const unsigned char* got = received + s.dst * elt;
    for (size_t j = 0; j < s.len; ++j, got += elt) {
      const size_t index = s.src + j;
      bool ok;
      if (!t.isFloat) {
        const uint64_t expected = s.srcRank == kAllRanks ? reduceInt(data, c.redop, c.nranks, index)
                                                         : static_cast<uint64_t>(data.k(s.srcRank, index));
        ok = ((expected ^ loadBits(got, elt)) & mask) == 0;
      } else {
        double expected, tolerance = 0;
        if (s.srcRank == kAllRanks) reduceFloat(data, c.redop, c.nranks, index, eps, &expected, &tolerance);
        else expected = data.k(s.srcRank, index) * CheckData::kFloatScale;
        ok = std::fabs(decodeFloat(c.type, got) - expected) <= tolerance;  // false for NaN (poison)
      }
      wrong += ok ? 0 : 1;
    }
  }

  // The guard past the written extent must still hold the poison: one wrong element per element-sized
  // piece of it that changed.
  const unsigned char poison = poisonByte(c.type);
  const unsigned char* guard = received + c.layout->recvElems * elt;
  for (size_t piece = 0; piece < kGuardBytes; piece += elt) {
    for (size_t b = piece; b < piece + elt && b < kGuardBytes; ++b) {
      if (guard[b] != poison) {
        ++wrong;
        break;
      }
    }
  }
  return wrong;
}

}  // namespace alloyperf
