// Operations that another rank rejected on an enqueue-only communicator (execute.cc): every rank's
// kernels skipped them, and this rank learns of each once, from the first of the query function
// MPIX_Cuda_rejection or an MPIX call on that communicator that comes after its stream passed them.
#pragma once

#include <mpi.h>

#include "context.h"
#include "handshake.h"

namespace alloy_mpix {

// After a call's own work was enqueued: reports, through comm's error handler, the latest rejection not
// reported before (with how many there were). MPI_SUCCESS when there is none.
int reportRejections(const char* function, MPI_Comm comm, Context* context);

}  // namespace alloy_mpix
