#include "slot_reduce_kernel.h"

#include "grid_stride.cuh"
#include "reduce_ops.cuh"

namespace alloy {
namespace {

template <typename T, int Op>
__device__ void reduceSlots(const SlotReduce& a) {
  using A = Accumulate<T>;
  const T* own = reinterpret_cast<const T*>(a.ownInput);
  T* dst = reinterpret_cast<T*>(a.dst);
  const auto input = [&](int r, size_t i) {
    return r == a.own ? own[i] : reinterpret_cast<const T*>(a.slots + r * a.slotStride)[i];
  };
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count; i += stride) {
    typename A::Acc acc = A::widen(input(0, i));
    for (int r = 1; r < a.ranks; ++r) acc = combine<T, Op>(acc, A::widen(input(r, i)));
    dst[i] = finish<T, Op>(acc, a.ranks);
  }
}

// One instantiation per datatype; the operator is a switch outside the loop.
template <typename T>
__global__ void __launch_bounds__(kGridStrideThreads) slotReduceKernel(const SlotReduce a) {
  switch (a.op) {
    case alloySum: reduceSlots<T, alloySum>(a); break;
    case alloyProd: reduceSlots<T, alloyProd>(a); break;
    case alloyMax: reduceSlots<T, alloyMax>(a); break;
    case alloyMin: reduceSlots<T, alloyMin>(a); break;
    default: reduceSlots<T, alloyAvg>(a); break;
  }
}

}  // namespace

cudaError_t launchSlotReduce(const SlotReduce& reduce, alloyDataType_t type, cudaStream_t stream) {
  return launchGridStride(type, reduce.count, [](auto tag) { return slotReduceKernel<decltype(tag)>; }, reduce, stream);
}

}  // namespace alloy
