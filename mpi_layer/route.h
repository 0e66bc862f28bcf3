// Which engine serves a standard collective call: Alloy's GPU engine or the MPI library (PMPI_*). Every
// rank of the communicator takes the same route, by the agreement of docs/mpi-layer.md ("Which calls
// are diverted"): the GPU engine only where no rank has anything it cannot take and some rank passes GPU
// memory.
#pragma once

#include <mpi.h>

#include "context.h"
#include "function_ref.h"
#include "request.h"

namespace alloy_layer {

// Fills in the description of the call (mpi_ext/describe.h); `function` names it in messages.
using Describe = alloy_mpix::FunctionRef<void(const char* function, const alloy_mpix::CommShape& shape,
                                              alloy_mpix::Request* request)>;

enum class Route {
  Pass,    // to PMPI_* with the caller's arguments, on every rank
  Divert,  // to the GPU engine, on every rank: the context and the described request are filled in
  Failed,  // the layer itself failed (comm's error handler was called; *code is what it returned)
};

struct Diversion {
  alloy_mpix::Context* context = nullptr;
  alloy_mpix::Request request;
};

// nonblocking: the call completes through a request, which the layer can only complete where the MPI
// library lets it (completion.h).
Route route(const char* function, MPI_Comm comm, bool nonblocking, Describe describe, Diversion* out, int* code);

}  // namespace alloy_layer
