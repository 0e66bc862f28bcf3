// One MPIX call as the shared driver (execute.h) sees it: what the call reads and writes on this rank,
// what is wrong with its arguments, and the two ways to carry it out.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <functional>
#include <utility>

#include "alloy.h"
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

  // MPI's own collective on the caller's arguments, for host memory.
  std::function<int()> viaMpi;
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

}  // namespace alloy_mpix
