// The scaling pass of a PreMulSum reduction (lib/coll/scaled_input.h): every element of a rank's input
// multiplied by that rank's scalar, before the ordinary sum runs on the result. A kernel of its own, so
// that no reduction kernel gains a sixth operator (each would be instantiated again for every datatype);
// this one is instantiated once per datatype.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "alloy.h"

namespace alloy {

// A rank's scalar: read from device memory by the kernel when it runs, or a value fixed beforehand.
struct PreMulScalar {
  const void* device;  // an element of the datatype in device-accessible memory; NULL: immediate holds it
  uint64_t immediate;  // the element's bytes from the lowest address (the first dataTypeSize bytes count)
};

struct ScaleLaunch {
  const char* src;
  char* dst;     // may equal src: each element is read before it is written
  size_t count;  // elements
  PreMulScalar scalar;
};

// Enqueues dst[i] = src[i] * scalar for i < count on stream; nothing when count is 0. The product is the
// reduction engine's (reduce_ops.cuh): integers wrap, float16, bfloat16 and fp8 multiply in float and are
// rounded once to the type. type must be valid and the pointers element-aligned (checked by the caller).
cudaError_t launchScale(const ScaleLaunch& launch, alloyDataType_t type, cudaStream_t stream);

}  // namespace alloy
