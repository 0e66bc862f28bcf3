// Requests for the non-blocking calls that the layer runs on the GPU engine: MPI generalized requests
// (MPI_Grequest_start) that MPI's own progress engine completes, through a callback the layer registers
// with it, once the work has passed on the GPU. So every way a program can wait for a request (MPI_Wait,
// MPI_Test, MPI_Waitall, MPI_Testany, ..., from C or Fortran, through MPI_* or PMPI_*) completes them,
// and the layer intercepts none of those functions.
//
// The hook is Open MPI's opal_progress_register (libopen-pal exports it; looked up at run time). MPI
// itself offers no progress hook for generalized requests, so where the library lacks this one
// completionAvailable() is false and the layer passes non-blocking calls to the MPI library.
#pragma once

#include <mpi.h>

#include <functional>

namespace alloy_layer {

struct PollResult {
  bool done = false;
  int error = MPI_SUCCESS;  // the request's error (status.MPI_ERROR, and what MPI_Wait returns)
};
// Called from MPI's progress on whichever thread is inside MPI, until it reports done; must not call MPI.
using Poller = std::function<PollResult()>;

bool completionAvailable();

// *request: a generalized request that completes once poll reports done. poll is destroyed once the
// request is both complete and freed by MPI (also where the program freed it first with MPI_Request_free).
// MPI_SUCCESS, or the error of MPI_Grequest_start.
int startPolledRequest(Poller poll, MPI_Request* request);

// Requests started and not yet complete: for tests.
int pendingRequests();

}  // namespace alloy_layer
