// What every protocol of the direct engine (direct_kernel.h) shares: the blocks' shares of a part, where
// slots and lines sit in the staging areas, the bulk steps' flags, and the kernel around an algorithm
// (the operation count per block that picks the generation and the flags). Each protocol instantiates the
// kernel in files of its own, one per type family (direct_protocols.h), so that they compile side by side
// and no protocol carries another's registers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "block_sync.cuh"
#include "direct_kernel.h"
#include "direct_protocols.h"
#include "kernel_trace.cuh"
#include "launch_overlap.cuh"
#include "sync_primitives.cuh"
#include "type_dispatch.cuh"

namespace alloy {
namespace direct {

constexpr int kThreads = 512;
constexpr int kInputs = 0, kResults = 1;  // the two areas of a generation

struct Share {
  size_t first, bytes;
};

// Block b's share of a part of `bytes`: whole units (16-byte vectors, or the data of whole lines) except
// at the part's end, so that shares stay vectorised, and lines whole, wherever the part is.
__device__ inline Share shareOf(size_t bytes, int b, size_t unit) {
  size_t per = (bytes + gridDim.x - 1) / gridDim.x;
  per = (per + unit - 1) / unit * unit;
  const size_t first = per * b < bytes ? per * b : bytes;
  const size_t last = first + per < bytes ? first + per : bytes;
  return Share{first, last - first};
}

// The j-th peer (j = 0 .. nranks - 2) this block stores to, and the j-th it reads from: every rank takes
// its peers in turn from a start that moves with the block, so that at each moment a rank's blocks write
// to all of its peers alike and every rank receives from all of its peers alike. In rank order, every rank
// would write to rank 0 first, queueing on rank 0's links while the others' stood idle. sourceInTurn(c, j)
// is the peer whose peerInTurn(c, j) is this rank, for the same block.
__device__ inline int peerInTurn(const DeviceComm& c, int j) {
  return (c.rank + 1 + (blockIdx.x + j) % (c.nranks - 1)) % c.nranks;
}
__device__ inline int sourceInTurn(const DeviceComm& c, int j) {
  return (c.rank + c.nranks - 1 - (blockIdx.x + j) % (c.nranks - 1)) % c.nranks;
}

// Where source rank src's slot for window `window` starts in a bulk area of a generation in rank's
// workspace (windows alternate between the two halves of the area when there are several).
__device__ inline char* slotOf(const DirectLaunch& a, int rank, int generation, int area, int src, int window = 0) {
  const size_t half = a.windows > 1 ? static_cast<size_t>(window & 1) * a.comm.nranks * a.slotStride : 0;
  return a.comm.workspace[rank] + directAreaOffset(a.comm, false, generation, area) + half + src * a.slotStride;
}

// The flag of bulk step `step` (from 1) of the block's epoch-th operation: it only grows (direct_kernel.h).
__device__ inline uint64_t stepFlag(uint64_t epoch, int step) {
  return (epoch << kDirectStepBits) + static_cast<uint64_t>(step);
}

// The lines of rank's slot for src in a line area of a generation that carry bytes from `first` on.
template <typename P>
__device__ typename P::Word* linesOf(const DirectLaunch& a, int rank, int generation, int area, int src, size_t first) {
  return P::at(a.comm.workspace[rank] + directAreaOffset(a.comm, true, generation, area) + src * a.slotStride, first);
}

// After the block's stores into peers' areas: thread 0 fences them (made visible to it by the barrier)
// and raises this block's flag at every peer. One fence and relaxed stores: a release store per peer
// fences again for each (sync_primitives.cuh has the costs).
__device__ inline void arrive(const DeviceComm& c, uint64_t step) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  publishFence(c);
  for (int p = 0; p < c.nranks; ++p)
    if (p != c.rank) storeRelaxedSys(c.signals[p] + SignalLayout::directArrived(c.rank, blockIdx.x), step);
}

// Thread 0 waits until the same block of every peer has arrived at `step` (relaxed polls, then one acquire
// load of each flag, which pairs with the fence before the peer's store); the barrier tells the block.
// False when a wait was cut short (abort or timeout).
__device__ inline bool awaitPeers(const DeviceComm& c, uint64_t step) {
  bool arrived = true;
  if (threadIdx.x == 0) {
    const uint64_t* mine = c.signals[c.rank];
    for (int q = 0; q < c.nranks && arrived; ++q) {
      if (q == c.rank) continue;
      const uint64_t* flag = mine + SignalLayout::directArrived(q, blockIdx.x);
      arrived = spinUntil(c, q, [&] { return loadRelaxedSys(flag) >= step; }) && loadAcquireSys(flag) >= step;
    }
  }
  return __syncthreads_and(arrived);
}

// Runs Protocol::run<T, Op>(args, generation, epoch), the block's epoch-th operation, and counts it when
// it completed.
template <typename Protocol, typename T, int Op>
__device__ void runCounted(const DirectLaunch& a, uint64_t epoch) {
  if (!Protocol::template run<T, Op>(a, static_cast<int>(epoch & 1), epoch)) return;
  blockStoreCounter(a.comm.signals[a.comm.rank] + SignalLayout::directEpoch(blockIdx.x), epoch + 1);
  traceFinish(a, epoch);
}

// One instantiation per protocol and datatype; the operator is a switch per block, outside every loop.
// The block's operation count comes in with the abort word and the verdict (blockMayRun). One block per SM
// at least, said outright: with the thread count alone ptxas gave the 16-byte lines' kernels 64 registers
// and 1.4-1.7 KB of spills per thread (room for two blocks per SM that the engine never asks for); with it,
// 96-106 registers and no spills (nvcc 13.0, sm_90, -Xptxas -v). The 128-byte lines' and bulk kernels were
// at 128 registers already. On 4 x H200 the small reduce-scatter took 0.4-0.5 us less and the all-gather
// 0.2-0.8 less, the allreduce and alltoall the same (docs/benchmarks.md, "Session 28").
template <typename Protocol, typename T>
__global__ void __launch_bounds__(kThreads, 1) directKernel(const __grid_constant__ DirectLaunch args) {
  enterOverlapped();
  traceStart();
  __shared__ uint64_t epoch;
  if (!blockMayRun(args.comm, args.comm.signals[args.comm.rank] + SignalLayout::directEpoch(blockIdx.x), &epoch)) return;
  traceStamp(kTraceLoaded);
  switch (args.op) {
    case alloySum: runCounted<Protocol, T, alloySum>(args, epoch); break;
    case alloyProd: runCounted<Protocol, T, alloyProd>(args, epoch); break;
    case alloyMax: runCounted<Protocol, T, alloyMax>(args, epoch); break;
    case alloyMin: runCounted<Protocol, T, alloyMin>(args, epoch); break;
    default: runCounted<Protocol, T, alloyAvg>(args, epoch); break;
  }
}

template <typename Protocol, TypeFamily F>
cudaError_t launchKernel(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
  return withTypeOf<F>(type, [&](auto tag) {
    return launchOverlapping(directKernel<Protocol, decltype(tag)>, launch.comm.directBlocks, kThreads, stream, launch,
                             launch.comm.earlyLaunch != 0);
  });
}

template <typename Protocol, TypeFamily F>
cudaError_t kernelBlocksPerSm(int* blocks) {
  return fewestBlocksPerSmOf<F>(kThreads, [](auto tag) { return directKernel<Protocol, decltype(tag)>; }, blocks);
}

// The kernels of Protocol for the datatypes of family F.
template <typename Protocol, TypeFamily F>
constexpr DirectKernels kernelsOf() {
  return DirectKernels{&launchKernel<Protocol, F>, &kernelBlocksPerSm<Protocol, F>};
}

}  // namespace direct
}  // namespace alloy
