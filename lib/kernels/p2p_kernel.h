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

struct P2pLaunch {
  DeviceComm comm;
  int numTasks;
  P2pTask tasks[kMaxP2pTasks];
  P2pSegment segments[kMaxP2pSegments];
};

// Kernel arguments stay within the classic 4 KB limit.
static_assert(sizeof(P2pLaunch) <= 4096, "P2pLaunch must fit in kernel parameter space");

// Enqueues the kernel on stream: numTasks * comm.channels blocks.
cudaError_t launchP2p(const P2pLaunch& launch, cudaStream_t stream);

// How many of the kernel's blocks one SM of the current device holds at once.
cudaError_t p2pKernelBlocksPerSm(int* blocks);

}  // namespace alloy
