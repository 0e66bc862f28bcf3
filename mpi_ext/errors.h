// Reporting MPIX errors the way MPI reports its own: through the communicator's error handler, with an
// error code whose class is the MPI class of the problem and whose string is the problem's message.
#pragma once

#include <mpi.h>

#include "alloy.h"
#include "problem.h"

namespace alloy_mpix {

// Calls comm's error handler (MPI_COMM_WORLD's when comm is MPI_COMM_NULL, as MPI-3.1 does) with a code
// of p's class and returns that code, for handlers that return (MPI_ERRORS_RETURN).
int report(MPI_Comm comm, const Problem& p);

// The MPI class of a failed Alloy call, and its message prefixed with the MPIX function's name.
Problem fromAlloy(alloyResult_t result, const char* function);

}  // namespace alloy_mpix
