// The driver every MPIX function goes through: checks the communicator, lets the function describe the
// call (prepare), agrees with the other ranks on the engine, and runs the call on it (viaMpi: the
// function's PMPI_* call) or reports the problem through the communicator's error handler.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include "function_ref.h"
#include "request.h"

namespace alloy_mpix {

using Prepare = FunctionRef<void(const CommShape& shape, Request* request)>;

// MPI_SUCCESS, or the error code that the communicator's error handler was called with.
int execute(const char* function, MPI_Comm comm, cudaStream_t stream, Prepare prepare, ViaMpi viaMpi);

}  // namespace alloy_mpix
