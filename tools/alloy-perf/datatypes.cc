#include "datatypes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "fatal.h"

namespace alloyperf {

namespace {

const TypeInfo kTypes[alloyNumTypes] = {
    {alloyInt8, "int8", 1, false, true, 0, 0, 0},
    {alloyUint8, "uint8", 1, false, false, 0, 0, 0},
    {alloyInt32, "int32", 4, false, true, 0, 0, 0},
    {alloyUint32, "uint32", 4, false, false, 0, 0, 0},
    {alloyInt64, "int64", 8, false, true, 0, 0, 0},
    {alloyUint64, "uint64", 8, false, false, 0, 0, 0},
    {alloyFloat16, "half", 2, true, true, 10, 15, -24},
    {alloyFloat32, "float", 4, true, true, 23, 127, -149},
    {alloyFloat64, "double", 8, true, true, 52, 1023, -1074},
    {alloyBfloat16, "bfloat16", 2, true, true, 7, 127, -133},
    {alloyFloat8e4m3, "fp8e4m3", 1, true, true, 3, 8, -9},
    {alloyFloat8e5m2, "fp8e5m2", 1, true, true, 2, 15, -16},
};

struct Alias {
  const char* name;
  alloyDataType_t type;
};
const Alias kAliases[] = {
    {"char", alloyInt8},       {"float16", alloyFloat16},  {"fp16", alloyFloat16},
    {"float32", alloyFloat32}, {"fp32", alloyFloat32},     {"float64", alloyFloat64},
    {"fp64", alloyFloat64},    {"bf16", alloyBfloat16},    {"e4m3", alloyFloat8e4m3},
    {"e5m2", alloyFloat8e5m2}, {"int", alloyInt32},
};

// The four narrow float formats differ only in field widths and in how the all-ones exponent is used,
// so one encoder and one decoder serve them all instead of four hand-written conversions.
struct SmallFloat {
  int expBits;
  int manBits;
  bool ieeeSpecials;  // all-ones exponent means inf/NaN (half, bfloat16, e5m2); e4m3 ("fn") has no
                      // infinity and only S.1111.111 is NaN, so its top exponent holds normal numbers
};

SmallFloat smallFloat(alloyDataType_t type) {
  switch (type) {
    case alloyFloat16: return {5, 10, true};
    case alloyBfloat16: return {8, 7, true};
    case alloyFloat8e4m3: return {4, 3, false};
    case alloyFloat8e5m2: return {5, 2, true};
    default: fatal("internal: %s is not a narrow float type", typeInfo(type).name);
  }
}

double decodeSmall(const SmallFloat& f, uint32_t bits) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const bool negative = (bits >> (f.expBits + f.manBits)) & 1;
  const uint32_t e = (bits >> f.manBits) & expMax;
  const uint32_t m = bits & manMask;
  double v;
  if (f.ieeeSpecials && e == expMax) {
    v = m ? NAN : INFINITY;
  } else if (!f.ieeeSpecials && e == expMax && m == manMask) {
    v = NAN;
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - f.manBits);  // subnormal
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << f.manBits)), static_cast<int>(e) - bias - f.manBits);
  }
  return negative ? -v : v;
}

uint32_t encodeSmall(const SmallFloat& f, double v) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const uint32_t signBit = static_cast<uint32_t>(std::signbit(v)) << (f.expBits + f.manBits);
  const uint32_t nanBits = signBit | (expMax << f.manBits) | ((1u << f.manBits) - 1);
  if (std::isnan(v)) return nanBits;
  const double a = std::fabs(v);
  // Largest finite value: ieee formats reserve the top exponent; e4m3 reserves only mantissa all-ones.
  const uint32_t maxFinite = f.ieeeSpecials ? ((expMax - 1) << f.manBits) | ((1u << f.manBits) - 1)
                                            : (expMax << f.manBits) | ((1u << f.manBits) - 2);
  if (a == 0) return signBit;
  int exp2;
  std::frexp(a, &exp2);  // a = fr * 2^exp2 with fr in [0.5, 1), so a = 1.x * 2^(exp2 - 1)
  int e = std::max(exp2 - 1, 1 - bias);  // below the normal range the quantum stays that of subnormals
  // Quantised to manBits fractional bits at exponent e; nearbyint rounds ties to even in the default
  // rounding mode. A result of 2^(manBits+1) carries into the next exponent, which the bit layout below
  // absorbs on its own (the mantissa overflow lands in the exponent field).
  const double q = std::nearbyint(std::ldexp(a, f.manBits - e));
  uint64_t bits;
  if (exp2 - 1 < 1 - bias) {
    bits = static_cast<uint64_t>(q);  // subnormal, or the smallest normal after rounding up
  } else {
    bits = (static_cast<uint64_t>(e + bias) << f.manBits) + (static_cast<uint64_t>(q) - (1u << f.manBits));
  }
  if (bits > maxFinite) return f.ieeeSpecials ? signBit | (expMax << f.manBits) : nanBits;
  return signBit | static_cast<uint32_t>(bits);
}

// Decoding device results is the inner loop of check mode, so the narrow types decode through a table
// built once per type (256 or 65536 doubles).
const std::vector<double>& decodeTable(alloyDataType_t type) {
  static std::vector<double> tables[alloyNumTypes];
  std::vector<double>& t = tables[type];
  if (t.empty()) {
    const SmallFloat f = smallFloat(type);
    t.resize(size_t{1} << (8 * typeInfo(type).size));
    for (size_t i = 0; i < t.size(); ++i) t[i] = decodeSmall(f, static_cast<uint32_t>(i));
  }
  return t;
}

}  // namespace

const TypeInfo& typeInfo(alloyDataType_t type) {
  if (type < 0 || type >= alloyNumTypes) fatal("internal: data type %d out of range", static_cast<int>(type));
  return kTypes[type];
}

bool parseTypeName(const std::string& name, alloyDataType_t* type) {
  for (const TypeInfo& t : kTypes) {
    if (name == t.name) {
      *type = t.type;
      return true;
    }
  }
  for (const Alias& a : kAliases) {
    if (name == a.name) {
      *type = a.type;
      return true;
    }
  }
  return false;
}

double typeEpsilon(alloyDataType_t type) {
  const TypeInfo& t = typeInfo(type);
  return t.isFloat ? std::ldexp(1.0, -t.mantissaBits) : 0.0;
}

uint64_t loadBits(const void* element, size_t size) {
  uint64_t bits = 0;
  memcpy(&bits, element, size);  // little-endian host: the low bytes are the element
  return bits;
}

void storeBits(uint64_t bits, void* element, size_t size) { memcpy(element, &bits, size); }

double decodeFloat(alloyDataType_t type, const void* element) {
  switch (type) {
    case alloyFloat32: {
      float f;
      memcpy(&f, element, sizeof f);
      return f;
    }
    case alloyFloat64: {
      double d;
      memcpy(&d, element, sizeof d);
      return d;
    }
    default:
      return decodeTable(type)[loadBits(element, typeInfo(type).size)];
  }
}

void encodeFloat(alloyDataType_t type, double v, void* element) {
  switch (type) {
    case alloyFloat32: {
      const float f = static_cast<float>(v);
      memcpy(element, &f, sizeof f);
      return;
    }
    case alloyFloat64:
      memcpy(element, &v, sizeof v);
      return;
    default:
      storeBits(encodeSmall(smallFloat(type), v), element, typeInfo(type).size);
  }
}

}  // namespace alloyperf
