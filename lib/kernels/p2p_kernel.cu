#include "block_copy.cuh"
#include "p2p_kernel.h"
#include "sync_primitives.cuh"

namespace alloy {
namespace {

constexpr int kThreads = 512;

// The chunks channel ch carries for one task, with the task's segments resolved.
template <typename Visit>
__device__ bool forEachTaskChunk(const P2pLaunch& args, const P2pTask& task, int ch, uint64_t sequence,
                                 uint64_t* end, Visit visit) {
  const P2pSegment* segments = args.segments + task.firstSegment;
  return forEachChunk(
      task.numSegments, [&](int s) { return segments[s].bytes; }, args.comm.channels, args.comm.slotBytes, ch,
      sequence, end,
      [&](int s, size_t offset, size_t length, uint64_t seq) { return visit(segments[s], offset, length, seq); });
}

// Thread 0 waits; the block learns the outcome through shared memory.
__device__ bool blockWait(const DeviceComm& c, const uint64_t* address, uint64_t target) {
  __shared__ int ok;
  if (threadIdx.x == 0) ok = waitAtLeast(c, address, target);
  __syncthreads();
  return ok;
}

// After the whole block's stores, thread 0 publishes them: the fence orders every thread's stores
// (made visible to it by the barrier) before the flag at system scope.
__device__ void blockPublish(uint64_t* flag, uint64_t value) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    storeReleaseSys(flag, value);
  }
}

__device__ void runSend(const P2pLaunch& args, const P2pTask& task, int ch) {
  const DeviceComm& c = args.comm;
  uint64_t* mine = c.signals[c.rank];
  uint64_t* counter = mine + SignalLayout::sent(task.peer, ch);
  const uint64_t* consumed = mine + SignalLayout::consumed(task.peer, ch);
  uint64_t* posted = c.signals[task.peer] + SignalLayout::posted(c.rank, ch);
  char* ring = c.workspace[task.peer] + workspaceSlotOffset(c, c.rank, ch, 0);
  uint64_t end = 0;
  const bool done = forEachTaskChunk(args, task, ch, *counter, &end,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t seq) {
        // Slot seq % slots is free once the receiver consumed chunk seq - slots.
        if (seq >= static_cast<uint64_t>(c.slots) && !blockWait(c, consumed, seq - c.slots + 1)) return false;
        blockCopy(ring + (seq % c.slots) * c.slotBytes, seg.src + offset, length);
        blockPublish(posted, seq + 1);
        return true;
      });
  if (done && threadIdx.x == 0) *counter = end;
}

__device__ void runRecv(const P2pLaunch& args, const P2pTask& task, int ch) {
  const DeviceComm& c = args.comm;
  uint64_t* mine = c.signals[c.rank];
  uint64_t* counter = mine + SignalLayout::recvd(task.peer, ch);
  const uint64_t* posted = mine + SignalLayout::posted(task.peer, ch);
  uint64_t* consumed = c.signals[task.peer] + SignalLayout::consumed(c.rank, ch);
  const char* ring = c.workspace[c.rank] + workspaceSlotOffset(c, task.peer, ch, 0);
  uint64_t end = 0;
  const bool done = forEachTaskChunk(args, task, ch, *counter, &end,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t seq) {
        if (!blockWait(c, posted, seq + 1)) return false;
        blockCopy(seg.dst + offset, ring + (seq % c.slots) * c.slotBytes, length);
        blockPublish(consumed, seq + 1);
        return true;
      });
  if (done && threadIdx.x == 0) *counter = end;
}

__device__ void runCopy(const P2pLaunch& args, const P2pTask& task, int ch) {
  uint64_t unused = 0;
  forEachTaskChunk(args, task, ch, 0, &unused,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t) {
        blockCopy(seg.dst + offset, seg.src + offset, length);
        return true;
      });
}

__global__ void __launch_bounds__(kThreads) p2pKernel(const __grid_constant__ P2pLaunch args) {
  const int ch = blockIdx.x % args.comm.channels;
  const P2pTask& task = args.tasks[blockIdx.x / args.comm.channels];
  switch (task.kind) {
    case kP2pSend: runSend(args, task, ch); break;
    case kP2pRecv: runRecv(args, task, ch); break;
    default: runCopy(args, task, ch); break;
  }
}

}  // namespace

cudaError_t launchP2p(const P2pLaunch& launch, cudaStream_t stream) {
  if (launch.numTasks == 0) return cudaSuccess;
  p2pKernel<<<launch.numTasks * launch.comm.channels, kThreads, 0, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace alloy
