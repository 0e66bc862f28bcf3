// Operations that another rank rejected on an enqueue-only communicator (execute.cc): every rank's
// kernels skipped them, and this rank learns of each once, from the first of the query function
// MPIX_Cuda_rejection or an MPIX call on that communicator that comes after its stream passed them.
#pragma once

#include <mpi.h>

#include "context.h"
#include "handshake.h"

namespace alloy_mpix {

// The rejections of earlier calls, looked at before a call enqueues its own work: once the call's
// handshake is enqueued it may run at once (one GPU per rank runs it within microseconds), and its
// rejection is the call's own, which the next call reports.
alloy::Rejections earlierRejections(Context* context);

// After a call's own work was enqueued: takes the rejections that earlierRejections saw and reports,
// through comm's error handler, the latest of them (with how many there were). MPI_SUCCESS when there
// were none.
int reportRejections(const char* function, MPI_Comm comm, Context* context, const alloy::Rejections& seen);

}  // namespace alloy_mpix
