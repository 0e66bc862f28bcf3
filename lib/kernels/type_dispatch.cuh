// Calls a generic function with a value of the C++ type behind an alloyDataType_t, so that each kernel
// of the reducing engine is instantiated once per datatype and chosen at run time.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "alloy.h"
#include "type_family.h"

namespace alloy {

// f(T{}) for the type of `type`; cudaErrorInvalidValue for a value that names no type.
template <typename F>
cudaError_t withType(alloyDataType_t type, F f) {
  switch (type) {
    case alloyInt8: return f(int8_t{});
    case alloyUint8: return f(uint8_t{});
    case alloyInt32: return f(int32_t{});
    case alloyUint32: return f(uint32_t{});
    case alloyInt64: return f(int64_t{});
    case alloyUint64: return f(uint64_t{});
    case alloyFloat16: return f(__half{});
    case alloyFloat32: return f(float{});
    case alloyFloat64: return f(double{});
    case alloyBfloat16: return f(__nv_bfloat16{});
    case alloyFloat8e4m3: return f(__nv_fp8_e4m3{});
    case alloyFloat8e5m2: return f(__nv_fp8_e5m2{});
    default: return cudaErrorInvalidValue;
  }
}

// The family of the C++ type T (familyOf in type_family.h for the datatype behind it).
template <typename T>
constexpr TypeFamily kFamilyOf = std::is_integral<T>::value ? TypeFamily::Integer : TypeFamily::Floating;

// withType for the datatypes of family F only: f is instantiated for those alone, and any other type
// gives cudaErrorInvalidValue.
template <TypeFamily F, typename Fn>
cudaError_t withTypeOf(alloyDataType_t type, Fn f) {
  return withType(type, [&](auto tag) -> cudaError_t {
    if constexpr (kFamilyOf<decltype(tag)> == F) return f(tag);
    else return cudaErrorInvalidValue;
  });
}

// The fewest blocks of `threads` threads one SM of the current device holds at once of the kernels that
// kernelOf(T{}) gives for every datatype of family F (the engine's residency limit takes the most
// demanding one).
template <TypeFamily F, typename KernelOf>
cudaError_t fewestBlocksPerSmOf(int threads, KernelOf kernelOf, int* blocks) {
  int fewest = INT_MAX;
  for (int t = 0; t < alloyNumTypes; ++t) {
    const auto type = static_cast<alloyDataType_t>(t);
    if (familyOf(type) != F) continue;
    int perSm = 0;
    const cudaError_t err = withTypeOf<F>(type, [&](auto tag) {
      return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernelOf(tag), threads, 0);
    });
    if (err != cudaSuccess) return err;
    fewest = perSm < fewest ? perSm : fewest;
  }
  *blocks = fewest;
  return cudaSuccess;
}

// The same over every datatype.
template <typename KernelOf>
cudaError_t fewestBlocksPerSm(int threads, KernelOf kernelOf, int* blocks) {
  int integers = 0, floating = 0;
  cudaError_t err = fewestBlocksPerSmOf<TypeFamily::Integer>(threads, kernelOf, &integers);
  if (err == cudaSuccess) err = fewestBlocksPerSmOf<TypeFamily::Floating>(threads, kernelOf, &floating);
  if (err == cudaSuccess) *blocks = integers < floating ? integers : floating;
  return err;
}

}  // namespace alloy
