#include "reduce_reference.h"

#include <mpi.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "gpu_test_util.h"

namespace alloytest {

namespace {

// Binary layout of a floating-point type: exponent and mantissa widths, bias; e4m3 has no infinities
// and a single NaN mantissa (0x7f), e5m2 and the others follow IEEE 754.
struct FloatFormat {
  int exponentBits;
  int mantissaBits;
  int bias;
  double epsilon;        // 2^-mantissaBits
  double leastPositive;  // smallest subnormal
};

bool formatOf(alloyDataType_t type, FloatFormat* f) {
  switch (type) {
    case alloyFloat16: *f = {5, 10, 15, std::ldexp(1.0, -10), std::ldexp(1.0, -24)}; return true;
    case alloyFloat32: *f = {8, 23, 127, std::ldexp(1.0, -23), std::ldexp(1.0, -149)}; return true;
    case alloyFloat64: *f = {11, 52, 1023, std::ldexp(1.0, -52), 0.0}; return true;
    case alloyBfloat16: *f = {8, 7, 127, std::ldexp(1.0, -7), std::ldexp(1.0, -133)}; return true;
    case alloyFloat8e4m3: *f = {4, 3, 7, std::ldexp(1.0, -3), std::ldexp(1.0, -9)}; return true;
    case alloyFloat8e5m2: *f = {5, 2, 15, std::ldexp(1.0, -2), std::ldexp(1.0, -16)}; return true;
    default: return false;
  }
}

bool isSigned(alloyDataType_t type) {
  return type == alloyInt8 || type == alloyInt32 || type == alloyInt64;
}

uint64_t loadBits(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian hosts only, like the devices
  return v;
}

uint64_t widthMask(size_t size) { return size == 8 ? ~0ull : (1ull << (8 * size)) - 1; }

int64_t signExtend(uint64_t v, size_t size) {
  const int shift = 64 - 8 * static_cast<int>(size);
  return static_cast<int64_t>(v << shift) >> shift;
}

double decode(uint64_t bits, const FloatFormat& f, alloyDataType_t type) {
  const int m = f.mantissaBits, e = f.exponentBits;
  const bool negative = (bits >> (e + m)) & 1;
  const uint64_t exponent = (bits >> m) & ((1ull << e) - 1);
  const uint64_t mantissa = bits & ((1ull << m) - 1);
  const uint64_t maxExponent = (1ull << e) - 1;
  if (type == alloyFloat8e4m3 && exponent == maxExponent && mantissa == 7) return NAN;
  if (type != alloyFloat8e4m3 && exponent == maxExponent) return mantissa != 0 ? NAN : negative ? -INFINITY : INFINITY;
  const double magnitude = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - m)
                                         : std::ldexp(static_cast<double>(mantissa + (1ull << m)),
                                                      static_cast<int>(exponent) - f.bias - m);
  return negative ? -magnitude : magnitude;
}

uint64_t encode(bool negative, int exponent, uint64_t mantissa, const FloatFormat& f) {
  const int m = f.mantissaBits, e = f.exponentBits;
  return (static_cast<uint64_t>(negative) << (e + m)) | (static_cast<uint64_t>(exponent) << m) | mantissa;
}

}  // namespace

const char* opName(alloyRedOp_t op) {
  switch (op) {
    case alloySum: return "sum";
    case alloyProd: return "prod";
    case alloyMax: return "max";
    case alloyMin: return "min";
    case alloyAvg: return "avg";
    default: return "invalid";
  }
}

std::vector<uint8_t> reductionInput(alloyDataType_t type, alloyRedOp_t op, uint64_t stream, size_t count) {
  const size_t size = typeSize(type);
  std::vector<uint8_t> out = genVector(stream, count * size);
  FloatFormat f{};
  if (!formatOf(type, &f)) return out;  // integers: any bits
  Rng rng(stream ^ 0xf10a7ull);
  const uint64_t mantissaMask = (1ull << f.mantissaBits) - 1, half = 1ull << (f.mantissaBits - 1);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng.next();
    const bool negative = r & 1;
    uint64_t mantissa = (r >> 8) & mantissaMask;
    uint64_t bits;
    if (op == alloyProd) {
      // 0.75 .. 1.5: 2^-1 with the mantissa's top bit set, or 2^0 with it clear.
      const bool below = (r >> 1) & 1;
      mantissa = below ? (mantissa | half) : (mantissa & ~half);
      bits = encode(negative, f.bias - (below ? 1 : 0), mantissa, f);
    } else if (((r >> 2) & 15) == 0) {
      bits = encode(negative, 0, 0, f);  // a zero of either sign now and then
    } else {
      bits = encode(negative, f.bias - 4 + static_cast<int>((r >> 4) & 7), mantissa, f);  // 2^-4 .. 2^4
    }
    std::memcpy(out.data() + i * size, &bits, size);
  }
  return out;
}

ReferenceReduction::ReferenceReduction(alloyDataType_t type, alloyRedOp_t op, size_t count)
    : type_(type), op_(op), count_(count) {
  FloatFormat f{};
  if (formatOf(type, &f)) {
    value_.assign(count, 0.0);
    magnitude_.assign(count, 0.0);
  } else {
    bits_.assign(count, 0);
  }
}

void ReferenceReduction::add(const uint8_t* input) {
  const size_t size = typeSize(type_);
  const bool first = ranks_++ == 0;
  FloatFormat f{};
  if (formatOf(type_, &f)) {
    for (size_t i = 0; i < count_; ++i) {
      const double x = decode(loadBits(input + i * size, size), f, type_);
      double& v = value_[i];
      switch (op_) {
        case alloyProd: v = first ? x : v * x; break;
        case alloyMax: v = first ? x : std::fmax(v, x); break;
        case alloyMin: v = first ? x : std::fmin(v, x); break;
        default: v = first ? x : v + x; magnitude_[i] += std::fabs(x); break;
      }
    }
    return;
  }
  const bool sign = isSigned(type_);
  for (size_t i = 0; i < count_; ++i) {
    const uint64_t raw = loadBits(input + i * size, size);
    const uint64_t x = sign ? static_cast<uint64_t>(signExtend(raw, size)) : raw;
    uint64_t& v = bits_[i];
    if (first) {
      v = x;
      continue;
    }
    switch (op_) {
      case alloyProd: v *= x; break;  // mod 2^64, hence mod 2^width
      case alloyMax: v = sign ? (static_cast<int64_t>(x) > static_cast<int64_t>(v) ? x : v) : (x > v ? x : v); break;
      case alloyMin: v = sign ? (static_cast<int64_t>(x) < static_cast<int64_t>(v) ? x : v) : (x < v ? x : v); break;
      default: v += x; break;
    }
  }
}

::testing::AssertionResult ReferenceReduction::check(const uint8_t* got, const std::string& what) const {
  const size_t size = typeSize(type_);
  const int n = ranks_;
  size_t bad = 0, firstBad = 0;
  std::ostringstream detail;
  FloatFormat f{};
  const bool isFloat = formatOf(type_, &f);
  for (size_t i = 0; i < count_; ++i) {
    const uint64_t gotBits = loadBits(got + i * size, size);
    bool ok;
    double expected = 0, actual = 0, tolerance = 0;
    uint64_t expectedBits = 0;
    if (isFloat) {
      actual = decode(gotBits, f, type_);
      expected = value_[i];
      double scale = magnitude_[i];
      if (op_ == alloyAvg) {
        expected /= n;
        scale /= n;
      }
      if (op_ == alloyProd) scale = std::fabs(expected);
      // Max and min select an input: exact. Otherwise one rounding to the type per step at worst, plus
      // the last rounding (below the smallest subnormal everything rounds to it or to zero).
      tolerance = op_ == alloyMax || op_ == alloyMin ? 0.0 : f.epsilon * (n + 1) * scale + f.leastPositive;
      ok = std::fabs(actual - expected) <= tolerance;  // false for NaN
    } else {
      uint64_t v = bits_[i];
      if (op_ == alloyAvg) {
        v &= widthMask(size);
        v = isSigned(type_) ? static_cast<uint64_t>(signExtend(v, size) / n) : v / static_cast<uint64_t>(n);
      }
      expectedBits = v & widthMask(size);
      ok = gotBits == expectedBits;
    }
    if (ok) continue;
    if (bad++ == 0) {
      firstBad = i;
      if (isFloat)
        detail << "expected " << expected << " +- " << tolerance << ", got " << actual;
      else
        detail << "expected bits " << hex(expectedBits) << ", got " << hex(gotBits);
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << count_ << " elements wrong; first at "
                                       << firstBad << ": " << detail.str();
}

::testing::AssertionResult identicalOnAllRanks(const uint8_t* data, size_t n, const std::string& what) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 8 bytes at a time
  size_t i = 0;
  for (; i + 8 <= n; i += 8) h = (h ^ loadBits(data + i, 8)) * 0x100000001b3ull;
  for (; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  int nranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  std::vector<uint64_t> all(nranks);
  MPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 1; r < nranks; ++r)
    if (all[r] != all[0])
      return ::testing::AssertionFailure() << what << ": rank " << r << "'s result differs from rank 0's (hash "
                                           << hex(all[r]) << " vs " << hex(all[0]) << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace alloytest
