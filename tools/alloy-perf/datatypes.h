// Alloy's (and NCCL's, which numbers them the same) data types as the host sees them: names, sizes, and
// conversion between an element's bits and a double, so that data can be generated and results checked
// on the host without any device code or CUDA's half/bfloat16/fp8 headers.
#ifndef ALLOY_PERF_DATATYPES_H_
#define ALLOY_PERF_DATATYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "alloy.h"

namespace alloyperf {

struct TypeInfo {
  alloyDataType_t type;
  const char* name;  // the name the tool prints and accepts (nccl-tests' names where it has one)
  size_t size;       // bytes per element
  bool isFloat;
  bool isSigned;     // integers only
  int mantissaBits;  // floats: explicitly stored mantissa bits (10 for half, 23 for float, ...)
  int maxExp;        // floats: largest e with 2^e finite
  int minExp;        // floats: exponent of the smallest subnormal (its value is 2^minExp)
};

const TypeInfo& typeInfo(alloyDataType_t type);

// Accepts the printed names and common aliases (fp16, fp32, bf16, e4m3, char, ...); false if unknown.
bool parseTypeName(const std::string& name, alloyDataType_t* type);

// Machine epsilon of a float type (distance from 1 to the next value), 0 for integers.
double typeEpsilon(alloyDataType_t type);

// Value of one float element (any of the six float types) as a double. NaN stays NaN.
double decodeFloat(alloyDataType_t type, const void* element);

// Rounds v to the nearest value of a float type (ties to even) and stores its bits in element.
void encodeFloat(alloyDataType_t type, double v, void* element);

// Integer element's bits, zero-extended to 64 bits (width = the type's size).
uint64_t loadBits(const void* element, size_t size);
void storeBits(uint64_t bits, void* element, size_t size);

}  // namespace alloyperf

#endif  // ALLOY_PERF_DATATYPES_H_
