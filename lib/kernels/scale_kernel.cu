#include "scale_kernel.h"

#include "grid_stride.cuh"
#include "reduce_ops.cuh"

namespace alloy {
namespace {

template <typename T>
__device__ T scalarOf(const PreMulScalar& s) {
  if (s.device != nullptr) return *static_cast<const T*>(s.device);  // as it is when the kernel runs
  T value;
  memcpy(&value, &s.immediate, sizeof(T));
  return value;
}

template <typename T>
__global__ void __launch_bounds__(kGridStrideThreads) scaleKernel(const ScaleLaunch a) {
  using A = Accumulate<T>;
  const typename A::Acc scalar = A::widen(scalarOf<T>(a.scalar));
  const T* src = reinterpret_cast<const T*>(a.src);
  T* dst = reinterpret_cast<T*>(a.dst);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count; i += stride)
    dst[i] = A::narrow(A::prod(A::widen(src[i]), scalar));
}

}  // namespace

cudaError_t launchScale(const ScaleLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
  return launchGridStride(type, launch.count, [](auto tag) { return scaleKernel<decltype(tag)>; }, launch, stream);
}

}  // namespace alloy
