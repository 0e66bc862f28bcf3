// Putting a described call (request.h) on the GPU engine, for the MPIX driver (execute.cc) and the
// layer of standard calls (mpi_layer/).
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include "context.h"
#include "request.h"

namespace alloy_mpix {

// Enqueues the request's operation on `stream`, its send data staged first where the engine cannot read
// and write one buffer. On a communicator whose calls carry the operation handshake (enqueue-only,
// execute.cc) the handshake goes with it, marked with `mine`, the problem this rank found, in which case
// the handshake is all that is enqueued (without a handshake, nothing is). Returns mine, or what failed
// here. The context's GPU communicator must exist.
Problem enqueueOperation(const char* function, Request* request, Context* context, cudaStream_t stream, Problem mine);

// A call every rank agreed to run on the GPU engine: creates the context's GPU communicator at the first
// such call (collective), enqueues the operation, and reports a failure through comm's error handler.
// MPI_SUCCESS, or the code the handler was called with.
int runAgreedOnGpu(const char* function, MPI_Comm comm, Request* request, Context* context, cudaStream_t stream);

}  // namespace alloy_mpix
