#include "check_data.h"

#include <algorithm>
#include <cstring>

#include "datatypes.h"

namespace alloyperf {

CheckData::CheckData(alloyDataType_t type, Coll coll, alloyRedOp_t redop, int nranks, uint64_t seed)
    : type_(type) {
  const TypeInfo& t = typeInfo(type);
  const int64_t n = nranks;
  const bool prod = collReduces(coll) && redop == alloyProd;
  if (prod) {
    // Powers of two (floats) keep products exact; small factors (integers) make them wrap, as in NCCL.
    if (t.isFloat) choices_ = {4, -4, 8, -8, 2, -2};  // times 1/4: +-1, +-2, +-0.5
    else if (t.isSigned) choices_ = {1, 2, 3, -1, -2, -3};
    else choices_ = {1, 2, 3};
    span_ = choices_.size();
    // Partial products are +-2^j with |j| <= n.
    exact_ = !t.isFloat || (nranks <= t.maxExp && nranks <= -t.minExp);
  } else {
    int64_t bound;  // |sum of n values| stays within the exactly representable range
    if (t.isFloat) {
      const int64_t exactRange = int64_t{1} << std::min(t.mantissaBits + 1, 22);  // integers held exactly
      bound = exactRange / n;
      const bool reducing = collReduces(coll) && redop != alloyMax && redop != alloyMin;
      if (reducing) exact_ = bound >= 1;
      if (reducing && redop == alloyAvg) {
        // x/n and its partial sums are exact when n is a power of two whose quotient stays above the
        // smallest subnormal step (values are multiples of 2^-2, so x/n is a multiple of 2^-(2+log2 n)).
        int log2n = 0;
        while ((int64_t{1} << log2n) < n) ++log2n;
        exact_ = exact_ && (int64_t{1} << log2n) == n && 2 + log2n <= -t.minExp;
      }
    } else {
      const int bits = static_cast<int>(8 * t.size) - (t.isSigned ? 1 : 0);
      // Unsigned stops one short of all ones, which is the poison value; 2^40 keeps k in an int64.
      const int64_t max = bits >= 41 ? (int64_t{1} << 40) : (int64_t{1} << bits) - (t.isSigned ? 1 : 2);
      bound = max / n;
    }
    bound = std::max<int64_t>(bound, 1);
    // Averages of signed integers are kept non-negative: NCCL's integer average truncates, and whether
    // a negative sum rounds towards zero or down is not something this tool should decide.
    const bool negative = t.isFloat || (t.isSigned && !(collReduces(coll) && redop == alloyAvg));
    lo_ = negative ? -bound : 0;
    span_ = static_cast<uint64_t>(bound - lo_ + 1);
  }
  rankKeys_.resize(nranks);
  for (int r = 0; r < nranks; ++r) rankKeys_[r] = mix(seed * 0x2545f4914f6cdd1dull + mix(r + 1));

  if (t.isFloat && t.size <= 2) {
    // Encoding a narrow float on the host is slow; every k this set can produce is encoded once here.
    int64_t kmin = lo_, kmax = lo_ + static_cast<int64_t>(span_) - 1;
    if (!choices_.empty()) {
      kmin = *std::min_element(choices_.begin(), choices_.end());
      kmax = *std::max_element(choices_.begin(), choices_.end());
    }
    encodedLo_ = kmin;
    encoded_.resize(static_cast<size_t>(kmax - kmin + 1));
    for (int64_t k = kmin; k <= kmax; ++k) {
      uint64_t bits = 0;
      encodeFloat(type, static_cast<double>(k) * kFloatScale, &bits);
      encoded_[k - kmin] = bits;
    }
  }
}

void CheckData::fill(int rank, size_t count, void* dst) const {
  const TypeInfo& t = typeInfo(type_);
  unsigned char* out = static_cast<unsigned char*>(dst);
  for (size_t i = 0; i < count; ++i, out += t.size) {
    const int64_t k = this->k(rank, i);
    if (!t.isFloat) storeBits(static_cast<uint64_t>(k), out, t.size);
    else if (!encoded_.empty()) storeBits(encoded_[k - encodedLo_], out, t.size);
    else encodeFloat(type_, static_cast<double>(k) * kFloatScale, out);
  }
}

unsigned char poisonByte(alloyDataType_t type) {
  const TypeInfo& t = typeInfo(type);
  return !t.isFloat && t.isSigned ? 0x80 : 0xff;
}

}  // namespace alloyperf
