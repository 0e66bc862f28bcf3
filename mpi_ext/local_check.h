// What one rank can tell about a described call from its own arguments, before any exchange with the
// other ranks: the problems that stop it whichever engine would serve it, and the kinds of memory it
// passes. The MPIX driver (execute.cc) and the layer of standard calls (mpi_layer/) both start here.
#pragma once

#include "context.h"
#include "request.h"

namespace alloy_mpix {

// The kinds of memory (MemoryKind) of the two buffers a call reads and writes on this rank; kNoData for
// one it moves nothing through.
struct BufferKinds {
  int send = kNoData, recv = kNoData;
  int all() const { return send | recv; }
};

// The request's own problem, overlapping buffers outside an in-place form, a NULL buffer with data to
// move, or memory of another CUDA device than the communicator's GPU engine uses; *kinds: what the
// buffers are (as far as they were classified before a problem was found).
Problem checkArguments(const char* function, const Request& request, Context* context, BufferKinds* kinds);

}  // namespace alloy_mpix
