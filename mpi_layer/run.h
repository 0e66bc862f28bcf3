// Carrying out an intercepted call on the route every rank took (route.h): the MPI library's collective
// with the caller's arguments, or the GPU engine's operation on the layer's stream, completed as MPI
// promises: before a blocking call returns, and through the returned request for a non-blocking one.
#pragma once

#include <mpi.h>

#include "counts.h"
#include "request.h"
#include "route.h"

namespace alloy_layer {

// pass: the PMPI_* call with the caller's arguments. Returns what that returned, or MPI_SUCCESS, or the
// code comm's error handler was called with.
int runBlocking(Call call, MPI_Comm comm, Describe describe, alloy_mpix::ViaMpi pass);

// pass fills *request itself (PMPI_I*); a diverted call gets a generalized request (completion.h).
int runNonblocking(Call call, MPI_Comm comm, Describe describe, alloy_mpix::ViaMpi pass, MPI_Request* request);

}  // namespace alloy_layer
