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

// The handshake of one operation: every rank enqueues exactly one before each operation, or instead
// of it with a mark (1 .. kMaxHandshakeMark) where this rank rejected the operation. Constructed before
// the operation is called, it puts a go handshake (mark 0) ahead of the operation's first launch on the
// communicator, inside that launch's ordering, so that it costs one kernel launch and nothing else;
// finish() then enqueues the handshake where no launch took it (the operation moved no data on this
// rank, or this rank rejected it: `mark`). Host calls on one communicator come from one thread at a time
// (docs/api.md), so one handshake is pending at most.
class OperationHandshake {
 public:
  OperationHandshake(alloyComm_t comm, cudaStream_t stream);
  ~OperationHandshake();
  OperationHandshake(const OperationHandshake&) = delete;
  OperationHandshake& operator=(const OperationHandshake&) = delete;

  // Enqueues the handshake with `mark` on the stream, unless the operation's launch already enqueued
  // it (then mark must be 0 and nothing is enqueued). function names the call in messages.
  alloyResult_t finish(int mark, const char* function);

 private:
  alloyComm_t comm_;
  cudaStream_t stream_;
  bool launched_ = false;
};

// Operations other ranks rejected, as this rank's kernels recorded them.
struct Rejections {
  int count = 0;                    // handshakes with another rank's mark
  int rank = -1;                    // of the latest one: the lowest rejecting rank (communicator rank)
  int mark = 0;                     // its mark
  unsigned long long handshake = 0; // its number on this communicator (1, 2, ...)
  int through = 0;                  // the rejections recorded on this rank so far, these included
};
// The rejections recorded since the last call that took them (*seen: the latest, and how many), now
// taken; false when there are none. Each is taken once: the MPIX functions report it to the program,
// and alloyCommDestroy warns about any that nobody took, so that no skipped operation goes unsaid.
bool takeUnreportedRejection(alloyComm_t comm, Rejections* seen);
// The same without taking them: what takeUnreportedRejection would return now.
bool unreportedRejection(alloyComm_t comm, Rejections* seen);
// Takes the rejections that unreportedRejection returned in seen (none recorded after them).
void markRejectionsTaken(alloyComm_t comm, const Rejections& seen);

}  // namespace alloy
