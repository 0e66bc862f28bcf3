// The driver every MPIX function goes through: checks the communicator, lets the function describe the
// call (prepare), agrees with the other ranks on the engine, and runs the call on it or reports the
// problem through the communicator's error handler.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <functional>

#include "request.h"

namespace alloy_mpix {

using Prepare = std::function<void(const CommShape& shape, Request* request)>;

// MPI_SUCCESS, or the error code that the communicator's error handler was called with.
int execute(const char* function, MPI_Comm comm, cudaStream_t stream, const Prepare& prepare);

}  // namespace alloy_mpix
