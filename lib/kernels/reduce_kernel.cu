#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "block_copy.cuh"
#include "block_reduce.cuh"
#include "block_sync.cuh"
#include "launch_overlap.cuh"
#include "ll_protocol.cuh"
#include "ll_reduce.cuh"
#include "reduce_kernel.h"
#include "ring_send.cuh"
#include "type_dispatch.cuh"

namespace alloy {
namespace {

constexpr int kThreads = 512;

// A contiguous range cut into channel ch's chunks exactly as the point-to-point engine cuts a task of
// one segment, numbered k = 0, 1, ... within this launch; each ring adds its own starting sequence.
template <typename Visit>
__device__ bool forEachRangeChunk(const DeviceComm& c, size_t bytes, size_t maxChunk, int ch, uint64_t* chunks,
                                  Visit visit) {
  return forEachChunk(
      1, [&](int) { return bytes; }, c.channels, maxChunk, ch, 0, chunks,
      [&](int, size_t offset, size_t length, uint64_t k) { return visit(offset, length, k); });
}

// Largest chunk of a task: a low-latency slot's data, or a bulk slot.
__device__ size_t maxChunkBytes(const DeviceComm& c, const ReduceTask& task) {
  return task.lowLatency ? kLlChunkBytes : c.slotBytes;
}

__device__ void runSend(const DeviceComm& c, const ReduceTask& task, int ch) {
  uint64_t* counter = c.signals[c.rank] + SignalLayout::sent(task.peer, ch);
  const uint64_t start = *counter;
  uint64_t chunks = 0;
  const bool done = forEachRangeChunk(c, task.bytes, maxChunkBytes(c, task), ch, &chunks, [&](size_t offset, size_t length, uint64_t k) {
    return ringSendChunk(c, task.peer, ch, start + k, task.src + offset, length, task.lowLatency);
  });
  if (done) blockStoreCounter(counter, start + chunks);
}

// Reduce-receive (and, for kReduceSendRecv, send first) on channel ch. Per chunk: every peer's slot
// must be posted (bulk), or its lines carry the chunk's flag (low-latency); the block reduces this rank's
// input and the peers' slots or lines in rank order into dst; then every peer learns its slot is free.
template <typename T, int Op>
__device__ void runRecv(const DeviceComm& c, const ReduceTask& task, int ch) {
  const int me = c.rank, n = c.nranks;
  const bool sendFirst = task.role == kReduceSendRecv;
  uint64_t* mine = c.signals[me];
  // Starting sequences of every peer's rings on this channel, read once before anything moves.
  __shared__ uint64_t recvStart[kMaxLocalRanks], sendStart[kMaxLocalRanks];
  __shared__ const char* inputs[kMaxLocalRanks];
  __shared__ uint4* llLines[kMaxLocalRanks];
  __shared__ uint32_t llFlags[kMaxLocalRanks];
  if (threadIdx.x < n && threadIdx.x != me) {
    recvStart[threadIdx.x] = mine[SignalLayout::recvd(threadIdx.x, ch)];
    if (sendFirst) sendStart[threadIdx.x] = mine[SignalLayout::sent(threadIdx.x, ch)];
  }
  __syncthreads();

  const bool lowLatency = task.lowLatency;
  uint64_t chunks = 0;
  const bool done = forEachRangeChunk(c, task.bytes, maxChunkBytes(c, task), ch, &chunks, [&](size_t offset, size_t length, uint64_t k) {
    if (sendFirst) {
      for (int q = 0; q < n; ++q)
        if (q != me && !ringSendChunk(c, q, ch, sendStart[q] + k, task.src + offset, length, lowLatency)) return false;
    }
    if (lowLatency) {
      // Straight from the peers' lines (ll_reduce.cuh); thread q publishes peer q's lines and flag.
      if (threadIdx.x < n && threadIdx.x != me) {
        const int q = threadIdx.x;
        const uint64_t seq = recvStart[q] + k;
        llLines[q] = reinterpret_cast<uint4*>(c.workspace[me] + workspaceLlSlotOffset(c, q, ch, static_cast<int>(seq % c.slots)));
        llFlags[q] = llFlag(seq);
      }
      __syncthreads();
      if (!llReduceChunk<T, Op>(c, llLines, llFlags, task.src + offset, task.dst + offset, length)) return false;
    } else {
      if (threadIdx.x < n) {
        const int q = threadIdx.x;
        inputs[q] = q == me ? task.src + offset
                            : c.workspace[me] + workspaceSlotOffset(c, q, ch, static_cast<int>((recvStart[q] + k) % c.slots));
      }
      // Thread 0 waits for every peer's bulk chunk; the barrier publishes inputs[] and the outcome.
      bool posted = true;
      if (threadIdx.x == 0) {
        for (int q = 0; q < n && posted; ++q)
          if (q != me) posted = waitAtLeast(c, q, mine + SignalLayout::posted(q, ch), recvStart[q] + k + 1);
      }
      if (!__syncthreads_and(posted)) return false;
      char* const dst = task.dst + offset;
      blockReduce<T, Op>(&dst, 1, inputs, n, length);
    }
    // Every thread's loads of the slots have returned before any peer may overwrite them (the release
    // of blockRelease: no fence, this block's own stores went to local memory).
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int q = 0; q < n; ++q)
        if (q != me) storeReleaseSys(c.signals[q] + SignalLayout::consumed(me, ch), recvStart[q] + k + 1);
    }
    return true;
  });
  if (done && threadIdx.x < n && threadIdx.x != me) {
    mine[SignalLayout::recvd(threadIdx.x, ch)] = recvStart[threadIdx.x] + chunks;
    if (sendFirst) mine[SignalLayout::sent(threadIdx.x, ch)] = sendStart[threadIdx.x] + chunks;
  }
}

// One instantiation per datatype; the operator is a switch per block, outside every loop.
template <typename T>
__global__ void __launch_bounds__(kThreads) reduceKernel(const __grid_constant__ ReduceLaunch args) {
  enterOverlapped();
  if (!blockMayRun(args.comm)) return;
  const int ch = blockIdx.x % args.comm.channels;
  const ReduceTask& task = args.tasks[blockIdx.x / args.comm.channels];
  if (task.role == kReduceSend) {
    runSend(args.comm, task, ch);
    return;
  }
  switch (args.op) {
    case alloySum: runRecv<T, alloySum>(args.comm, task, ch); break;
    case alloyProd: runRecv<T, alloyProd>(args.comm, task, ch); break;
    case alloyMax: runRecv<T, alloyMax>(args.comm, task, ch); break;
    case alloyMin: runRecv<T, alloyMin>(args.comm, task, ch); break;
    default: runRecv<T, alloyAvg>(args.comm, task, ch); break;
  }
}

}  // namespace

cudaError_t launchReduce(const ReduceLaunch& launch, alloyDataType_t type, cudaStream_t stream) {
  if (launch.numTasks == 0) return cudaSuccess;
  return withType(type, [&](auto tag) {
    return launchOverlapping(reduceKernel<decltype(tag)>, launch.numTasks * launch.comm.channels, kThreads, stream,
                             launch, launch.comm.earlyLaunch != 0);
  });
}

cudaError_t reduceKernelBlocksPerSm(int* blocks) {
  return fewestBlocksPerSm(kThreads, [](auto tag) { return reduceKernel<decltype(tag)>; }, blocks);
}

}  // namespace alloy
