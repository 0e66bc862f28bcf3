// Reporting MPIX errors the way MPI reports its own: through the communicator's error handler, with an
// error code whose class is the MPI class of the problem and whose string is the problem's message.
#pragma once

#include <mpi.h>

#include "alloy.h"
#include "alloy_mpix.h"
#include "problem.h"

namespace alloy_mpix {

// Calls comm's error handler (MPI_COMM_WORLD's when comm is MPI_COMM_NULL, as MPI-3.1 does) with a code
// of p's class and returns that code, for handlers that return (MPI_ERRORS_RETURN).
int report(MPI_Comm comm, const Problem& p);

// The error code of p's class whose MPI_Error_string is p's message, without calling any handler: for
// errors that MPI reports later on its own (the status of a request).
int codeOf(const Problem& p);

// The MPI class of a failed Alloy call, and its message prefixed with the MPIX function's name.
Problem fromAlloy(alloyResult_t result, const char* function);

// The pending binding problem of this thread (alloy_mpix_binding_problem below), if any, cleared.
Problem takeBindingProblem();

}  // namespace alloy_mpix

// A problem a language binding (the Fortran shims, a library of their own) found in an argument before
// calling the C function on this thread. The C function takes it as its own argument problem, so that it
// is agreed with the other ranks like any other: a binding that returned early instead would leave its
// peers waiting in the agreement. The first problem recorded before the call is the one reported.
// Exported from liballoy for the bindings; not part of the public API.
extern "C" ALLOY_MPIX_API void alloy_mpix_binding_problem(int errorClass, const char* message);
