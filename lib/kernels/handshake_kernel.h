// The operation handshake: one small kernel that every rank of a communicator enqueues before an
// operation, so that a rank which rejected its arguments can still take part and stop the operation
// everywhere, without any exchange on the host (the MPIX functions use it: docs/mpi-extension.md).
//
// Each rank writes its mark (0: go; otherwise why it rejected, an MPI error class for the MPIX functions)
// into every rank's signal area, waits for every rank's mark of the same handshake, and leaves the
// verdict in its own signal area: 0 when every mark was 0. The operation's kernels, queued behind it
// on the stream, read the verdict on entry and skip the operation when it is not 0 (blockMayRun), so
// every rank skips it or none does. The handshake count lives in device memory, so a CUDA graph that
// captured a handshake replays it with fresh counts.
#pragma once

#include <cuda_runtime.h>

#include "device_comm.h"

namespace alloy {

// Enqueues the handshake of this rank with `mark` (0 .. kMaxHandshakeMark) on stream.
cudaError_t launchHandshake(const DeviceComm& comm, int mark, cudaStream_t stream);

// Makes the current device load the handshake kernel (CUDA loads a kernel's module at its first launch
// otherwise).
cudaError_t loadHandshakeKernel();

}  // namespace alloy
