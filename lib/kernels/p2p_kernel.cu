#include "block_copy.cuh"
#include "block_sync.cuh"
#include "ll_protocol.cuh"
#include "p2p_kernel.h"
#include "ring_send.cuh"

namespace alloy {
namespace {

constexpr int kThreads = 512;

// The chunks channel ch carries for one task, with the task's segments resolved. Low-latency chunks
// are at most kLlChunkBytes, bulk chunks at most a slot.
template <typename Visit>
__device__ bool forEachTaskChunk(const P2pLaunch& args, const P2pTask& task, int ch, uint64_t sequence,
                                 uint64_t* end, Visit visit) {
  const P2pSegment* segments = args.segments + task.firstSegment;
  const size_t maxChunk = task.lowLatency ? kLlChunkBytes : args.comm.slotBytes;
  return forEachChunk(
      task.numSegments, [&](int s) { return segments[s].bytes; }, args.comm.channels, maxChunk, ch,
      sequence, end,
      [&](int s, size_t offset, size_t length, uint64_t seq) { return visit(segments[s], offset, length, seq); });
}

__device__ void runSend(const P2pLaunch& args, const P2pTask& task, int ch) {
  const DeviceComm& c = args.comm;
  uint64_t* counter = c.signals[c.rank] + SignalLayout::sent(task.peer, ch);
  uint64_t end = 0;
  const bool done = forEachTaskChunk(args, task, ch, *counter, &end,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t seq) {
        return ringSendChunk(c, task.peer, ch, seq, seg.src + offset, length, task.lowLatency);
      });
  if (done) blockStoreCounter(counter, end);
}

__device__ void runRecv(const P2pLaunch& args, const P2pTask& task, int ch) {
  const DeviceComm& c = args.comm;
  uint64_t* mine = c.signals[c.rank];
  uint64_t* counter = mine + SignalLayout::recvd(task.peer, ch);
  const uint64_t* posted = mine + SignalLayout::posted(task.peer, ch);
  uint64_t* consumed = c.signals[task.peer] + SignalLayout::consumed(c.rank, ch);
  char* workspace = c.workspace[c.rank];
  uint64_t end = 0;
  const bool done = forEachTaskChunk(args, task, ch, *counter, &end,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t seq) {
        const int slot = static_cast<int>(seq % c.slots);
        if (task.lowLatency) {
          auto* lines = reinterpret_cast<uint4*>(workspace + workspaceLlSlotOffset(c, task.peer, ch, slot));
          if (!llRecvChunk(c, task.peer, lines, seg.dst + offset, length, llFlag(seq))) return false;
        } else {
          if (!blockWait(c, task.peer, posted, seq + 1)) return false;
          blockCopy(seg.dst + offset, workspace + workspaceSlotOffset(c, task.peer, ch, slot), length);
        }
        blockRelease(consumed, seq + 1);
        return true;
      });
  if (done) blockStoreCounter(counter, end);
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
  if (blockSeesAbort(args.comm) || blockSeesSkip(args.comm)) return;
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

cudaError_t p2pKernelBlocksPerSm(int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, p2pKernel, kThreads, 0);
}

}  // namespace alloy
