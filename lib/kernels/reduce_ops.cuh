// Element arithmetic of the reduction kernels: how each alloyDataType_t is widened into the type it is
// accumulated in, how the five operators combine two accumulators, and how the result is narrowed back.
//
// Integers accumulate in their own type and wrap (computed on the unsigned type, so that signed
// overflow is the two's-complement wrap NCCL gives and not undefined behaviour); averages are the
// wrapped sum divided by the rank count, truncated toward zero. float and double accumulate in
// themselves. float16, bfloat16 and both fp8 formats accumulate in float and are rounded once, at the
// end, to the nearest value of the type (fp8: saturating to the largest finite value), so that a sum
// over many ranks does not round at every step.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "alloy.h"

namespace alloy {

template <typename T, typename Enable = void>
struct Accumulate;

template <typename T>
struct Accumulate<T, typename std::enable_if<std::is_integral<T>::value>::type> {
  using Acc = T;
  using Unsigned = typename std::make_unsigned<T>::type;
  __device__ static Acc widen(T x) { return x; }
  __device__ static T narrow(Acc a) { return a; }
  __device__ static Acc sum(Acc a, Acc b) { return static_cast<T>(static_cast<Unsigned>(a) + static_cast<Unsigned>(b)); }
  __device__ static Acc prod(Acc a, Acc b) {
    // uint8_t operands promote to int; their product (at most 255 * 255) cannot overflow it.
    return static_cast<T>(static_cast<Unsigned>(a) * static_cast<Unsigned>(b));
  }
  __device__ static Acc divide(Acc a, int n) { return static_cast<T>(a / static_cast<T>(n)); }
};

template <typename T>
struct Accumulate<T, typename std::enable_if<std::is_floating_point<T>::value>::type> {
  using Acc = T;
  __device__ static Acc widen(T x) { return x; }
  __device__ static T narrow(Acc a) { return a; }
  __device__ static Acc sum(Acc a, Acc b) { return a + b; }
  __device__ static Acc prod(Acc a, Acc b) { return a * b; }
  __device__ static Acc divide(Acc a, int n) { return a / static_cast<T>(n); }
};

// The narrow floating-point types: accumulate in float, round once.
template <typename T>
struct FloatAccumulate {
  using Acc = float;
  __device__ static Acc sum(Acc a, Acc b) { return a + b; }
  __device__ static Acc prod(Acc a, Acc b) { return a * b; }
  __device__ static Acc divide(Acc a, int n) { return a / static_cast<float>(n); }
};

template <>
struct Accumulate<__half> : FloatAccumulate<__half> {
  __device__ static float widen(__half x) { return __half2float(x); }
  __device__ static __half narrow(float a) { return __float2half_rn(a); }
};

template <>
struct Accumulate<__nv_bfloat16> : FloatAccumulate<__nv_bfloat16> {
  __device__ static float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 narrow(float a) { return __float2bfloat16_rn(a); }
};

template <>
struct Accumulate<__nv_fp8_e4m3> : FloatAccumulate<__nv_fp8_e4m3> {
  __device__ static float widen(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
  __device__ static __nv_fp8_e4m3 narrow(float a) { return __nv_fp8_e4m3(a); }  // round to nearest, saturate
};

template <>
struct Accumulate<__nv_fp8_e5m2> : FloatAccumulate<__nv_fp8_e5m2> {
  __device__ static float widen(__nv_fp8_e5m2 x) { return static_cast<float>(x); }
  __device__ static __nv_fp8_e5m2 narrow(float a) { return __nv_fp8_e5m2(a); }
};

// Combines two accumulators with operator Op. Avg sums here and divides in finish().
template <typename T, int Op>
__device__ inline typename Accumulate<T>::Acc combine(typename Accumulate<T>::Acc a, typename Accumulate<T>::Acc b) {
  using A = Accumulate<T>;
  if (Op == alloyProd) return A::prod(a, b);
  if (Op == alloyMax) return b > a ? b : a;
  if (Op == alloyMin) return b < a ? b : a;
  return A::sum(a, b);
}

template <typename T, int Op>
__device__ inline T finish(typename Accumulate<T>::Acc a, int nranks) {
  using A = Accumulate<T>;
  return A::narrow(Op == alloyAvg ? A::divide(a, nranks) : a);
}

}  // namespace alloy
