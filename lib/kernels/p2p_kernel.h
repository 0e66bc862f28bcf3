// The point-to-point engine kernel: one launch moves every send, receive and local copy of an
// operation (alltoall, alltoallv, or a group of send/recv), each (peer, direction) on its own blocks,
// so that no pattern a correct program posts can deadlock inside the launch.
#pragma once

#include <cuda_runtime.h>

#include "device_comm.h"

namespace alloy {

// kP2pForward receives from `peer` like kP2pRecv and passes every chunk on to the ranks of `targets`, as
// a send to each of them would (a broadcast's scattered part, handed on by the rank that received it).
enum P2pKind : int { kP2pSend = 0, kP2pRecv = 1, kP2pCopy = 2, kP2pForward = 3 };

struct P2pSegment {
  const char* src;  // send and copy: bytes to read
  char* dst;        // recv and copy: where the bytes land
  size_t bytes;
};

struct P2pTask {
  int kind;          // P2pKind
  int peer;          // communicator rank (unused for copies)
  int firstSegment;  // segments [firstSegment, firstSegment + numSegments) in order
  int numSegments;
  int lowLatency;    // sends and receives: 1 for the low-latency protocol (both sides decide alike)
  unsigned targets;  // kP2pForward: bit q for each local rank q the chunks go on to (bulk protocol only)
};

constexpr int kMaxP2pTasks = 2 * kMaxLocalRanks + 1;
constexpr int kMaxP2pSegments = 96;

// A launch's task table, as the kernel's argument block. The driver copies the whole block into its
// command buffer at every launch, at a few GB/s (write-combined memory): the full table's 3.5 KB cost
// about 1 us of host time per launch (session 12's profile of an 8-byte broadcast), so launches whose
// tasks and segments fit the small table go with it (0.7 KB), the rest with the full one.
template <int Tasks, int Segments>
struct P2pTable {
  DeviceComm comm;
  int numTasks;
  P2pTask tasks[Tasks];
  P2pSegment segments[Segments];
};

// What the plans build: every launch fits it.
using P2pLaunch = P2pTable<kMaxP2pTasks, kMaxP2pSegments>;
// Alltoall's tasks at 4 ranks (a copy, 3 sends, 3 receives), any send/recv ring, a broadcast at 8.
constexpr int kSmallP2pTasks = 8;
constexpr int kSmallP2pSegments = 8;
using P2pLaunchSmall = P2pTable<kSmallP2pTasks, kSmallP2pSegments>;

// Kernel arguments stay within the classic 4 KB limit.
static_assert(sizeof(P2pLaunch) <= 4096, "P2pLaunch must fit in kernel parameter space");

// Enqueues the kernel on stream: numTasks * comm.channels blocks, with the small table where the tasks
// and their segments fit it.
cudaError_t launchP2p(const P2pLaunch& launch, cudaStream_t stream);

// How many of the kernel's blocks one SM of the current device holds at once (the fewest of its variants':
// the two tables, and the small one with a staging block, net_stage_kernel.h).
cudaError_t p2pKernelBlocksPerSm(int* blocks);

}  // namespace alloy
