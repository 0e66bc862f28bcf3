// Calls a generic function with a value of the C++ type behind an alloyDataType_t, so that each kernel
// of the reducing engine is instantiated once per datatype and chosen at run time.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "alloy.h"

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

// The fewest blocks of `threads` threads one SM of the current device holds at once of the kernels that
// kernelOf(T{}) gives for every datatype (the engine's residency limit takes the most demanding one).
template <typename KernelOf>
cudaError_t fewestBlocksPerSm(int threads, KernelOf kernelOf, int* blocks) {
  int fewest = INT_MAX;
  for (int t = 0; t < alloyNumTypes; ++t) {
    int perSm = 0;
    const cudaError_t err = withType(static_cast<alloyDataType_t>(t), [&](auto tag) {
      return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernelOf(tag), threads, 0);
    });
    if (err != cudaSuccess) return err;
    fewest = perSm < fewest ? perSm : fewest;
  }
  *blocks = fewest;
  return cudaSuccess;
}

}  // namespace alloy
