#include "block_copy.cuh"
#include "block_sync.cuh"
#include "launch_overlap.cuh"
#include "ll_protocol.cuh"
#include "net_stage_block.cuh"
#include "p2p_kernel.h"
#include "ring_send.cuh"

namespace alloy {
namespace {

constexpr int kThreads = 512;

// A task as the kernel sees it: the communicator, the task, and the launch's segments (in its argument block,
// whichever table size it came in).
struct TaskView {
  const DeviceComm& comm;
  const P2pTask& task;
  const P2pSegment* segments;
};

// The chunks channel ch carries for one task, with the task's segments resolved. Low-latency chunks
// are at most kLlChunkBytes, bulk chunks at most a slot.
template <typename Visit>
__device__ bool forEachTaskChunk(const TaskView& v, int ch, uint64_t sequence, uint64_t* end, Visit visit) {
  const P2pTask& task = v.task;
  const P2pSegment* segments = v.segments + task.firstSegment;
  const size_t maxChunk = task.lowLatency ? kLlChunkBytes : v.comm.slotBytes;
  return forEachChunk(
      task.numSegments, [&](int s) { return segments[s].bytes; }, v.comm.channels, maxChunk, ch,
      sequence, end,
      [&](int s, size_t offset, size_t length, uint64_t seq) { return visit(segments[s], offset, length, seq); });
}

__device__ void runSend(const TaskView& v, int ch) {
  const P2pTask& task = v.task;
  const DeviceComm& c = v.comm;
  uint64_t* counter = c.signals[c.rank] + SignalLayout::sent(task.peer, ch);
  uint64_t end = 0;
  const bool done = forEachTaskChunk(v, ch, *counter, &end,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t seq) {
        return ringSendChunk(c, task.peer, ch, seq, seg.src + offset, length, task.lowLatency);
      });
  if (done) blockStoreCounter(counter, end);
}

__device__ void runRecv(const TaskView& v, int ch) {
  const P2pTask& task = v.task;
  const DeviceComm& c = v.comm;
  uint64_t* mine = c.signals[c.rank];
  uint64_t* counter = mine + SignalLayout::recvd(task.peer, ch);
  const uint64_t* posted = mine + SignalLayout::posted(task.peer, ch);
  uint64_t* consumed = c.signals[task.peer] + SignalLayout::consumed(c.rank, ch);
  char* workspace = c.workspace[c.rank];
  uint64_t end = 0;
  const bool done = forEachTaskChunk(v, ch, *counter, &end,
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

// Per chunk: the source's chunk is posted and every target's slot is free; the block reads the chunk once
// and writes it to dst and into every target's ring; then it publishes the chunk to every target and
// hands the source's slot back. Only the bulk protocol (the plan forwards nothing smaller).
__device__ void runForward(const TaskView& v, int ch) {
  const P2pTask& task = v.task;
  const DeviceComm& c = v.comm;
  uint64_t* mine = c.signals[c.rank];
  __shared__ uint64_t sendStart[kMaxLocalRanks];
  __shared__ uint64_t recvStart;
  if (threadIdx.x < c.nranks && (task.targets >> threadIdx.x & 1u))
    sendStart[threadIdx.x] = mine[SignalLayout::sent(threadIdx.x, ch)];
  if (threadIdx.x == 0) recvStart = mine[SignalLayout::recvd(task.peer, ch)];
  __syncthreads();
  const uint64_t* posted = mine + SignalLayout::posted(task.peer, ch);
  uint64_t* consumed = c.signals[task.peer] + SignalLayout::consumed(c.rank, ch);
  uint64_t end = 0;
  const bool done = forEachTaskChunk(v, ch, recvStart, &end,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t seq) {
        const uint64_t k = seq - recvStart;
        // Thread 0 waits for the chunk and for every target's slot; the barrier tells the block.
        bool ready = true;
        if (threadIdx.x == 0) {
          ready = waitAtLeast(c, task.peer, posted, seq + 1);
          for (int q = 0; q < c.nranks && ready; ++q) {
            const uint64_t out = sendStart[q] + k;
            if ((task.targets >> q & 1u) && out >= static_cast<uint64_t>(c.slots))
              ready = waitAtLeast(c, q, mine + SignalLayout::consumed(q, ch), out - c.slots + 1);
          }
        }
        if (!__syncthreads_and(ready)) return false;
        const char* slot = c.workspace[c.rank] + workspaceSlotOffset(c, task.peer, ch, static_cast<int>(seq % c.slots));
        char* dsts[kMaxLocalRanks];
        int count = 0;
        char* dst = seg.dst + offset;
        const bool dstAligned = (reinterpret_cast<uintptr_t>(dst) & 15) == 0;
        if (dstAligned) dsts[count++] = dst;
        for (int q = 0; q < c.nranks; ++q)
          if (task.targets >> q & 1u)
            dsts[count++] = c.workspace[q] + workspaceSlotOffset(c, c.rank, ch, static_cast<int>((sendStart[q] + k) % c.slots));
        blockFanOut(dsts, count, slot, length);
        if (!dstAligned) blockCopy(dst, slot, length);
        __syncthreads();
        if (threadIdx.x == 0) {
          publishFence(c);  // every thread's stores (ordered by the barrier) before the flags
          for (int q = 0; q < c.nranks; ++q)
            if (task.targets >> q & 1u) publishFlag(c, c.signals[q] + SignalLayout::posted(c.rank, ch), sendStart[q] + k + 1);
          publishFlag(c, consumed, seq + 1);
        }
        return true;
      });
  if (!done) return;
  __syncthreads();
  if (threadIdx.x < c.nranks && (task.targets >> threadIdx.x & 1u))
    mine[SignalLayout::sent(threadIdx.x, ch)] = sendStart[threadIdx.x] + (end - recvStart);
  if (threadIdx.x == 0) mine[SignalLayout::recvd(task.peer, ch)] = end;
}

__device__ void runCopy(const TaskView& v, int ch) {
  uint64_t unused = 0;
  forEachTaskChunk(v, ch, 0, &unused,
      [&](const P2pSegment& seg, size_t offset, size_t length, uint64_t) {
        blockCopy(seg.dst + offset, seg.src + offset, length);
        return true;
      });
}

// Block blockIdx.x's task and channel of the launch's table (blocks beyond numTasks * channels have none).
template <typename Table>
__device__ void runTaskBlock(const Table& args) {
  if (!blockMayRun(args.comm)) return;
  const int ch = blockIdx.x % args.comm.channels;
  const TaskView v{args.comm, args.tasks[blockIdx.x / args.comm.channels], args.segments};
  switch (v.task.kind) {
    case kP2pSend: runSend(v, ch); break;
    case kP2pRecv: runRecv(v, ch); break;
    case kP2pForward: runForward(v, ch); break;
    default: runCopy(v, ch); break;
  }
}

// One instantiation per table size (two): __grid_constant__ keeps the block in parameter space, which the
// views point into.
template <typename Table>
__global__ void __launch_bounds__(kThreads) p2pKernel(const __grid_constant__ Table args) {
  enterOverlapped();
  runTaskBlock(args);
}

// The small table and a small operation's staging between hosts, run by the launch's last block
// (launchP2pWithNetStage). The staging block neither reads the abort word nor the handshake's verdict, as
// the staging kernel does not: its wait ends on the proxy's release or the abort flag, and a launch that
// uses it has no handshake (p2p_plan.cc).
struct P2pWithNetStage {
  P2pLaunchSmall table;
  NetStageLaunch stage;
};
static_assert(sizeof(P2pWithNetStage) <= 4096, "P2pWithNetStage must fit in kernel parameter space");
static_assert(kNetStageThreads == kThreads, "the staging block runs with the point-to-point kernel's threads");

__global__ void __launch_bounds__(kThreads) p2pNetStageKernel(const __grid_constant__ P2pWithNetStage args) {
  enterOverlapped();
  if (blockIdx.x == gridDim.x - 1) netstage::runStage(args.stage);
  else runTaskBlock(args.table);
}

// The launch in the small table where its tasks and segments fit (segments are numbered in task order,
// so the last task's end is their count).
bool fitsSmall(const P2pLaunch& launch) {
  if (launch.numTasks > kSmallP2pTasks) return false;
  const P2pTask& last = launch.tasks[launch.numTasks - 1];
  return last.firstSegment + last.numSegments <= kSmallP2pSegments;
}

P2pLaunchSmall smallTableOf(const P2pLaunch& launch) {
  P2pLaunchSmall small;
  small.comm = launch.comm;
  small.numTasks = launch.numTasks;
  for (int t = 0; t < launch.numTasks; ++t) small.tasks[t] = launch.tasks[t];
  const P2pTask& last = launch.tasks[launch.numTasks - 1];
  for (int s = 0; s < last.firstSegment + last.numSegments; ++s) small.segments[s] = launch.segments[s];
  return small;
}

}  // namespace

cudaError_t launchP2p(const P2pLaunch& launch, cudaStream_t stream) {
  if (launch.numTasks == 0) return cudaSuccess;
  const unsigned blocks = launch.numTasks * launch.comm.channels;
  const bool overlap = launch.comm.earlyLaunch != 0;
  if (fitsSmall(launch))
    return launchOverlapping(p2pKernel<P2pLaunchSmall>, blocks, kThreads, stream, smallTableOf(launch), overlap);
  return launchOverlapping(p2pKernel<P2pLaunch>, blocks, kThreads, stream, launch, overlap);
}

bool p2pFitsWithNetStage(const P2pLaunch& launch) { return launch.numTasks > 0 && fitsSmall(launch); }

cudaError_t launchP2pWithNetStage(const P2pLaunch& launch, const NetStageLaunch& stage, cudaStream_t stream) {
  const P2pWithNetStage args{smallTableOf(launch), stage};
  return launchOverlapping(p2pNetStageKernel, launch.numTasks * launch.comm.channels + 1, kThreads, stream, args,
                           launch.comm.earlyLaunch != 0);
}

cudaError_t p2pKernelBlocksPerSm(int* blocks) {
  int full = 0, small = 0, staged = 0;
  cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&full, p2pKernel<P2pLaunch>, kThreads, 0);
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&small, p2pKernel<P2pLaunchSmall>, kThreads, 0);
  if (err == cudaSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&staged, p2pNetStageKernel, kThreads, 0);
  *blocks = full < small ? full : small;
  *blocks = staged < *blocks ? staged : *blocks;
  return err;
}

}  // namespace alloy
