/*
 * The host reference of nccl_premulsum_test.c: random inputs and scalars of each datatype it runs, and the PreMulSum
 * of one element as Alloy defines it (docs/nccl-compat.md): each rank's element times its scalar, rounded to the
 * datatype (integers wrap; float16 and bfloat16 multiply in float), then summed in float (integers: wrapping) and
 * rounded once. float16 and bfloat16 conversions are written out here, independent of CUDA's.
 *
 * The values are chosen so that every float sum over up to 8 ranks is exact whatever the order of the ranks (inputs
 * of few bits; float16, the tightest, stays below 2^7 in steps no finer than 2^-17): results are compared exactly,
 * while the products still need rounding to the datatype (the scalars use every bit of theirs).
 */
#ifndef ALLOY_NCCL_TEST_PREMULSUM_REFERENCE_H_
#define ALLOY_NCCL_TEST_PREMULSUM_REFERENCE_H_

#include <math.h>
#include <nccl.h>
#include <stdint.h>
#include <string.h>

/* splitmix64: one stream per (seed, case, rank), the same on every rank. */
static uint64_t nextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int randomIn(uint64_t* state, int low, int high) {
  return low + (int)(nextRandom(state) % (uint64_t)(high - low + 1));
}

static float halfToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const float magnitude =
      exponent == 0 ? ldexpf((float)mantissa, -24) : ldexpf((float)(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

/* Round to nearest, ties to even; the values here stay finite. */
static uint16_t floatToHalf(float f) {
  const uint16_t sign = signbit(f) ? 0x8000 : 0;
  const double a = fabs((double)f);
  if (a < ldexp(1, -14)) return sign | (uint16_t)nearbyint(a * 16777216.0); /* subnormal: units of 2^-24 */
  int e = 0;
  frexp(a, &e); /* a = m 2^e, 0.5 <= m < 1 */
  double significand = nearbyint(ldexp(a, 11 - e)); /* 1024 .. 2048 */
  if (significand == 2048) significand = 1024, ++e;
  return sign | (uint16_t)((e + 14) << 10) | (uint16_t)(significand - 1024);
}

static float bf16ToFloat(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static uint16_t floatToBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  bits += 0x7fff + ((bits >> 16) & 1); /* round to nearest, ties to even */
  return (uint16_t)(bits >> 16);
}

typedef struct {
  ncclDataType_t type;
  const char* name;
  size_t size;
  void (*input)(uint64_t* state, void* element);
  void (*scalar)(uint64_t* state, void* element);
  /* *out = the PreMulSum over n ranks of elements[r] scaled by scalars[r], in rank order */
  void (*premulsum)(int n, const void* const* elements, const void* const* scalars, void* out);
  double (*value)(const void* element); /* for comparisons (-0 equals 0) and messages */
} TypeCase;

/* float32: integers times eighths, exact. */
static void f32Input(uint64_t* s, void* e) { *(float*)e = (float)randomIn(s, -1000, 1000); }
static void f32Scalar(uint64_t* s, void* e) { *(float*)e = (float)randomIn(s, -32, 32) / 8; }
static void f32PreMulSum(int n, const void* const* x, const void* const* s, void* out) {
  float acc = *(const float*)x[0] * *(const float*)s[0];
  for (int r = 1; r < n; ++r) acc += *(const float*)x[r] * *(const float*)s[r];
  *(float*)out = acc;
}
static double f32Value(const void* e) { return *(const float*)e; }

/* A scalar of 0.5 .. 2 with a random sign and every mantissa bit random (bits of them): products round. */
static float scaleFactor(uint64_t* s, int bits) {
  return (randomIn(s, 0, 1) ? -1.0f : 1.0f) * ldexpf((float)((1 << bits) + randomIn(s, 0, (1 << bits) - 1)),
                                                      -bits - randomIn(s, 0, 1));
}

/* The 16-bit floating-point types: each product rounded to the type, the sum in float, rounded once. */
static void narrowPreMulSum(int n, const void* const* x, const void* const* s, void* out, float (*widen)(uint16_t),
                            uint16_t (*narrow)(float)) {
  float acc = 0;
  for (int r = 0; r < n; ++r) {
    const float term = widen(narrow(widen(*(const uint16_t*)x[r]) * widen(*(const uint16_t*)s[r])));
    acc = r == 0 ? term : acc + term;
  }
  *(uint16_t*)out = narrow(acc);
}

/* float16: k / 64 with |k| <= 512. */
static void f16Input(uint64_t* s, void* e) { *(uint16_t*)e = floatToHalf((float)randomIn(s, -512, 512) / 64); }
static void f16Scalar(uint64_t* s, void* e) { *(uint16_t*)e = floatToHalf(scaleFactor(s, 10)); }
static void f16PreMulSum(int n, const void* const* x, const void* const* s, void* out) {
  narrowPreMulSum(n, x, s, out, halfToFloat, floatToHalf);
}
static double f16Value(const void* e) { return halfToFloat(*(const uint16_t*)e); }

/* bfloat16: k / 8 with |k| <= 128. */
static void bf16Input(uint64_t* s, void* e) { *(uint16_t*)e = floatToBf16((float)randomIn(s, -128, 128) / 8); }
static void bf16Scalar(uint64_t* s, void* e) { *(uint16_t*)e = floatToBf16(scaleFactor(s, 7)); }
static void bf16PreMulSum(int n, const void* const* x, const void* const* s, void* out) {
  narrowPreMulSum(n, x, s, out, bf16ToFloat, floatToBf16);
}
static double bf16Value(const void* e) { return bf16ToFloat(*(const uint16_t*)e); }

/* int32: any values; products and sums wrap (two's complement, as NCCL's). */
static void i32Random(uint64_t* s, void* e) {
  const uint32_t bits = (uint32_t)nextRandom(s);
  memcpy(e, &bits, sizeof(bits));
}
static void i32PreMulSum(int n, const void* const* x, const void* const* s, void* out) {
  uint32_t acc = 0;
  for (int r = 0; r < n; ++r) acc += *(const uint32_t*)x[r] * *(const uint32_t*)s[r];
  memcpy(out, &acc, sizeof(acc));
}
static double i32Value(const void* e) { return *(const int32_t*)e; }

static const TypeCase kTypeCases[] = {
    {ncclFloat32, "float32", 4, f32Input, f32Scalar, f32PreMulSum, f32Value},
    {ncclFloat16, "float16", 2, f16Input, f16Scalar, f16PreMulSum, f16Value},
    {ncclBfloat16, "bfloat16", 2, bf16Input, bf16Scalar, bf16PreMulSum, bf16Value},
    {ncclInt32, "int32", 4, i32Random, i32Random, i32PreMulSum, i32Value},
};

#endif
