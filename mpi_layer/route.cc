#include "route.h"

#include "completion.h"
#include "errors.h"
#include "local_check.h"

namespace alloy_layer {
namespace {

using alloy_mpix::Context;
using alloy_mpix::Problem;

// Whether every rank of the communicator has a CUDA device, agreed at the layer's first call on it (the
// ranks make their collective calls on it in one order, so they all take this step at the same call).
// Where one has none, nothing can run on the GPU engine, and every later call passes at once, with no
// exchange: the case of every communicator on a machine without GPUs.
Problem agreeOnReach(Context* context, const char* function) {
  if (context->layerReach != Context::LayerReach::Unknown) return {};
  const int mine = alloy_mpix::processHasCudaDevice() ? 1 : 0;
  int all = 0;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, context->agreement) != MPI_SUCCESS)
    return alloy_mpix::problem(MPI_ERR_OTHER, "%s: the ranks could not agree on whether each has a CUDA device "
                                              "(MPI_Allreduce failed)", function);
  context->layerReach = all ? Context::LayerReach::Gpu : Context::LayerReach::HostOnly;
  return {};
}

// This rank's side of the vote: {passes GPU memory, has something the GPU engine cannot take}. What the
// engine cannot take goes to the MPI library unchanged, argument errors included: MPI judges them as it
// would without the layer (MPI_BOTTOM with absolute displacements, for one, is no error there).
void ballotOf(const char* function, const Diversion& d, bool nonblocking, int ballot[2]) {
  alloy_mpix::BufferKinds kinds;
  const bool problem = static_cast<bool>(alloy_mpix::checkArguments(function, d.request, d.context, &kinds));
  const bool gpu = !problem && (kinds.all() & alloy_mpix::kGpuMemory);
  const bool host = kinds.all() & alloy_mpix::kHostMemory;
  ballot[0] = gpu ? 1 : 0;
  ballot[1] = problem || host || (gpu && d.request.gpuProblem) || (nonblocking && !completionAvailable()) ? 1 : 0;
}

}  // namespace

Route route(const char* function, MPI_Comm comm, bool nonblocking, Describe describe, Diversion* out, int* code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  // Outside MPI's lifetime, on MPI_COMM_NULL, on an invalid handle or an intercommunicator the MPI
  // library answers alone (the GPU engine serves intracommunicators).
  if (!initialized || finalized || comm == MPI_COMM_NULL) return Route::Pass;
  // A communicator with a context is an intracommunicator, whose shape the context holds: only a call
  // that finds none (the first on comm, and every one on an intercommunicator) asks MPI about it.
  if (!alloy_mpix::findContext(comm, &out->context)) return Route::Pass;
  Problem p;
  if (out->context == nullptr) {
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return Route::Pass;
    p = alloy_mpix::contextOf(comm, function, &out->context);
  }
  if (!p) p = agreeOnReach(out->context, function);
  if (p) {
    *code = alloy_mpix::report(comm, p);
    return Route::Failed;
  }
  if (out->context->layerReach == Context::LayerReach::HostOnly) return Route::Pass;

  describe(function, out->context->shape, &out->request);
  // The vote, on the communicator's private duplicate. A rank that moves no data (zero counts) cannot
  // tell the engine from its own arguments, and one rank's host memory must send every rank to the MPI
  // library: mixed memory is decided alike on every rank.
  int ballot[2], all[2] = {0, 0};
  ballotOf(function, *out, nonblocking, ballot);
  if (!alloy_mpix::agreeMax(out->context, ballot, all, 2)) {
    *code = alloy_mpix::report(comm, alloy_mpix::problem(MPI_ERR_OTHER, "%s: the ranks could not agree on the "
                                                                        "call (MPI_Allreduce failed)", function));
    return Route::Failed;
  }
  return all[0] == 1 && all[1] == 0 ? Route::Divert : Route::Pass;
}

}  // namespace alloy_layer
