// The reduction engine kernel: one launch serves a reduce-scatter, a rooted reduce, or a one-shot
// allreduce. It speaks the point-to-point engine's ring protocol on the same rings, counters and
// chunking (device_comm.h), so the two kernels follow each other on a communicator in any order.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "device_comm.h"

namespace alloy {

enum ReduceRole : int {
  // Send bytes [src, src + bytes) to peer, chunk by chunk, exactly as the point-to-point engine does.
  kReduceSend = 0,
  // Wait for `bytes` from every peer, reduce them with src (this rank's contribution) in rank order
  // into dst, release the peers' slots.
  kReduceRecv = 1,
  // Per chunk: first send src's chunk to every peer, then reduce-receive it. Because this rank's input
  // has left for every peer before dst is written, dst may equal src (in place).
  kReduceSendRecv = 2,
};

struct ReduceTask {
  int role;          // ReduceRole
  int peer;          // kReduceSend only
  const char* src;
  char* dst;         // kReduceRecv, kReduceSendRecv
  size_t bytes;
  int lowLatency;    // chunks travel as low-latency lines (ll_protocol.cuh); sender and receivers agree
};

constexpr int kMaxReduceTasks = kMaxLocalRanks;

struct ReduceLaunch {
  DeviceComm comm;
  int op;        // alloyRedOp_t
  int numTasks;  // each task gets comm.channels blocks
  ReduceTask tasks[kMaxReduceTasks];
};

static_assert(sizeof(ReduceLaunch) <= 4096, "ReduceLaunch must fit in kernel parameter space");

// Enqueues the kernel specialised for type on stream. type and op must be valid (checked by the caller).
cudaError_t launchReduce(const ReduceLaunch& launch, alloyDataType_t type, cudaStream_t stream);

// How many blocks one SM of the current device holds at once of the kernel's most demanding datatype.
cudaError_t reduceKernelBlocksPerSm(int* blocks);

}  // namespace alloy
