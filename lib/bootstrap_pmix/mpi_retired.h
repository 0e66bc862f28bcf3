// Duplicates of MPI communicators that a finished bootstrap could not free yet, because a barrier on them
// still pends (it timed out, or an abort entered it without waiting). Freeing such a communicator early
// would let its context id be reused while the barrier's messages are still on their way, and MPI would
// deliver them to the new communicator. The list is swept whenever an MPI bootstrap is created or
// destroyed; what is left at MPI_Finalize is MPI's to clean up.
#pragma once

#include <mpi.h>

namespace alloy {

// Frees comm now if pending is MPI_REQUEST_NULL or complete, else keeps both until it completes.
void retire(MPI_Comm comm, MPI_Request pending);

// Frees every retired communicator whose barrier has completed.
void freeRetiredThatCompleted();

}  // namespace alloy
