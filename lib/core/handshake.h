// The operation handshake on the host side (the kernel: lib/kernels/handshake_kernel.h), for the MPIX
// functions, which must let a rank that rejected its arguments stop an operation on every rank without a
// host collective per call (docs/mpi-extension.md). Not part of the public API.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "device_comm.h"

namespace alloy {

// Makes every later operation of comm consult the verdict of the handshake enqueued before it. One
// host only: the kernels reach every rank's signal area through CUDA IPC; alloyNotSupported on a
// communicator that spans hosts. Collective in effect: every rank must enable it at the same call.
alloyResult_t enableHandshake(alloyComm_t comm);

// Enqueues this rank's handshake with `mark` (0: go; 1 .. kMaxHandshakeMark: this rank rejected the operation) on
// stream, ordered after the communicator's previous launch. Every rank enqueues exactly one before each
// operation (or instead of it, with a mark).
alloyResult_t enqueueHandshake(alloyComm_t comm, int mark, cudaStream_t stream, const char* function);

// The operations other ranks rejected, as this rank's kernels saw them so far.
struct Rejections {
  int count = 0;                    // handshakes with another rank's mark
  int rank = -1;                    // of the latest one: the lowest rejecting rank (communicator rank)
  int mark = 0;                     // its mark
  unsigned long long handshake = 0; // its number on this communicator (1, 2, ...)
};
Rejections rejectionsSeen(alloyComm_t comm);

// While one lives on a thread, the operations that thread calls check their arguments and plan, but
// enqueue nothing (LaunchOrder::enqueue returns at once): the MPIX functions learn whether the engine
// would take a call before they enqueue its handshake.
class CheckOnly {
 public:
  CheckOnly();
  ~CheckOnly();
  CheckOnly(const CheckOnly&) = delete;
  CheckOnly& operator=(const CheckOnly&) = delete;
  static bool active();
};

}  // namespace alloy
