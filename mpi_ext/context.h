// The state an MPI communicator carries for the MPIX functions, cached on it as an attribute: created
// on the first MPIX call on that communicator, released when the communicator is freed or at
// MPI_Finalize, whichever comes first. A duplicate (MPI_Comm_dup) does not inherit it.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <memory>

#include "alloy.h"
#include "problem.h"
#include "request.h"
#include "shared_vote.h"

namespace alloy_mpix {

struct Context {
  // Private duplicate of the caller's communicator: the per-call agreement of the MPIX functions never
  // matches a message of the caller's.
  MPI_Comm agreement = MPI_COMM_NULL;
  // This rank's rank and the size of the communicator, read once at creation: they never change, and a
  // context exists only for an intracommunicator, so a call that finds it asks MPI about neither.
  CommShape shape;
  // The GPU communicator, created by the first call whose data are on the GPU (never, on a machine
  // without one, or in a program that only passes host memory).
  alloyComm_t gpu = nullptr;
  // Calls go to the GPU engine without the per-call agreement, a handshake on the stream in its place
  // (execute.cc). Set on every rank at the same call: the first agreed call that chose the GPU engine,
  // unless ALLOY_MPIX_AGREE=1 or the communicator spans hosts.
  bool enqueueOnly = false;
  // The layer of standard MPI calls (mpi_layer/): whether every rank of the communicator has a CUDA
  // device, agreed at the layer's first call on it (where one has none, no call can run on the GPU
  // engine and the layer passes every call on at once), and, from its first call that runs on the GPU
  // engine, the stream its operations run on and the event that orders them after the legacy default stream.
  enum class LayerReach { Unknown, HostOnly, Gpu };
  LayerReach layerReach = LayerReach::Unknown;
  cudaStream_t layerStream = nullptr;
  cudaEvent_t layerOrder = nullptr;
  bool released = false;  // released at MPI_Finalize, still attached to a communicator MPI frees later
  // The per-call agreement through shared memory (shared_vote.h), chosen at the context's first agreement:
  // null where the ranks cannot have it, and then the agreement runs through MPI.
  std::unique_ptr<SharedVote> vote;
  bool voteChosen = false;
};

// The per-call agreement on the context's communicator: all[i] = the largest ballot[i] over its ranks, for
// i < count (at most kMaxBallot). Collective. False where MPI failed (all is then undefined).
bool agreeMax(Context* context, const int* ballot, int* all, int count);

// The context of comm, an intracommunicator, created (collectively: all ranks make the same MPIX calls) on
// first use.
Problem contextOf(MPI_Comm comm, const char* function, Context** out);

// *out: the context of comm if an MPIX call created one, else nullptr; creates nothing (not collective).
// False where MPI cannot read comm's attributes (not a communicator: MPI's error handler was called). The
// lookup of every call after a communicator's first.
bool findContext(MPI_Comm comm, Context** out);

// findContext's context, or nullptr.
Context* existingContext(MPI_Comm comm);

// The context's GPU communicator, created (collectively) on first use on the CUDA device current now.
alloyResult_t gpuCommOf(Context* context, alloyComm_t* out);

// Contexts and GPU communicators not yet released: for tests that check nothing leaks.
int liveContexts();
int liveGpuComms();

}  // namespace alloy_mpix
