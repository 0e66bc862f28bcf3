// One MPIX call as the shared driver (execute.h) sees it: what the call reads and writes on this rank,
// what is wrong with its arguments, and how the GPU engine carries it out. MPI's own collective on the
// caller's arguments is the entry point's to pass (ViaMpi).
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <functional>
#include <utility>

#include "alloy.h"
#include "function_ref.h"
#include "memory.h"
#include "problem.h"

namespace alloy_mpix {

struct Request {
  // Argument problems, the first one found of each scope wins. `problem` is wrong whichever engine
  // serves the call; the other two only where that engine is the one chosen (a non-contiguous datatype
  // is fine for MPI, not for the GPU engine).
  Problem problem, gpuProblem, hostProblem;

  Region send, recv;  // recv is empty where the rank receives nothing (a non-root of MPI_Reduce)
  const char* sendName = "sendbuf";
  const char* recvName = "recvbuf";
  bool inPlace = false;  // send and recv may overlap: MPI_IN_PLACE, or one buffer for both (bcast)
  // The GPU engine cannot read and write one buffer in this operation: it reads `send` from a copy.
  bool stageSend = false;

  // Enqueues the operation on the GPU engine; `send` is send.base, or its staged copy.
  std::function<alloyResult_t(alloyComm_t gpu, const void* send, cudaStream_t stream)> viaGpu;

  void reject(Problem p) { keepFirst(&problem, std::move(p)); }
  void rejectOnGpu(Problem p) { keepFirst(&gpuProblem, std::move(p)); }
  void rejectOnHost(Problem p) { keepFirst(&hostProblem, std::move(p)); }

 private:
  static void keepFirst(Problem* slot, Problem p) {
    if (!*slot) *slot = std::move(p);
  }
};

// The communicator as the prepare step of an MPIX function needs it.
struct CommShape {
  int rank = 0;
  int size = 1;
};

// MPI's own collective on the caller's arguments, for host memory: the PMPI_* call of the entry point (an
// MPIX function's or the layer's), called only where the ranks choose the MPI library. It calls PMPI_*, as
// all of Alloy's own MPI traffic does: a profiling layer (the standard-call layer itself, or a tool) sees
// the program's calls only, and the layer never re-enters itself.
using ViaMpi = FunctionRef<int()>;

}  // namespace alloy_mpix
