#include "run.h"

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "completion.h"
#include "device_guard.h"
#include "errors.h"
#include "gpu_launch.h"

namespace alloy_layer {
namespace {

using alloy_mpix::Context;
using alloy_mpix::Problem;
using alloy_mpix::problem;

Problem cudaProblem(const char* function, const char* what, cudaError_t err) {
  cudaGetLastError();  // the error was sticky only for this call
  return problem(MPI_ERR_OTHER, "%s: %s failed: %s", function, what, cudaGetErrorString(err));
}

// The stream a non-blocking call's operation runs on: the layer's own on this communicator, on its GPU
// engine's device, created at the first such call (collective in effect: every rank diverts the same
// calls). Non-blocking, so that the program's work on the legacy default stream stays free to overlap the
// operation. Each call first makes it wait for what the program enqueued on the legacy default stream so
// far (which waits for every blocking stream): the many programs that produce their data there need no
// synchronisation of their own before the call (docs/mpi-layer.md, "The stream contract"). The engine's
// device must be current.
Problem orderedStream(const char* function, Context* context, cudaStream_t* out) {
  cudaError_t err = cudaSuccess;
  if (context->layerStream == nullptr) err = cudaStreamCreateWithFlags(&context->layerStream, cudaStreamNonBlocking);
  if (err == cudaSuccess && context->layerOrder == nullptr)
    err = cudaEventCreateWithFlags(&context->layerOrder, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventRecord(context->layerOrder, cudaStreamLegacy);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(context->layerStream, context->layerOrder, 0);
  if (err != cudaSuccess) return cudaProblem(function, "ordering the layer's stream after the default stream", err);
  *out = context->layerStream;
  return {};
}

// After the stream passed the operation: what the GPU engine recorded (a peer that timed out or failed;
// the communicator keeps it) is the call's failure too.
Problem engineOutcome(const char* function, Context* context) {
  alloyResult_t asyncError = alloySuccess;
  if (alloyCommGetAsyncError(context->gpu, &asyncError) != alloySuccess || asyncError == alloySuccess) return {};
  return alloy_mpix::fromAlloy(asyncError, function);  // the query left the details as the last error
}

// The generalized request of a diverted non-blocking call: done when an event recorded after the
// operation has passed (CUDA's failures become the request's error). The engine's device must be current.
int startRequest(const char* function, MPI_Comm comm, cudaStream_t stream, MPI_Request* request) {
  cudaEvent_t raw = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&raw, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventRecord(raw, stream);
  if (err != cudaSuccess) {
    if (raw != nullptr) cudaEventDestroy(raw);
    return alloy_mpix::report(comm, cudaProblem(function, "recording the operation's completion event", err));
  }
  std::shared_ptr<CUevent_st> event(raw, cudaEventDestroy);
  const std::string name = function;
  const int code = startPolledRequest([event, name] {
    const cudaError_t state = cudaEventQuery(event.get());
    if (state == cudaErrorNotReady) return PollResult{};
    if (state == cudaSuccess) return PollResult{true, MPI_SUCCESS};
    return PollResult{true, alloy_mpix::codeOf(cudaProblem(name.c_str(), "the GPU operation", state))};
  }, request);
  if (code == MPI_SUCCESS) return MPI_SUCCESS;
  return alloy_mpix::report(comm, problem(MPI_ERR_OTHER, "%s: MPI_Grequest_start failed", function));
}

// A call every rank diverted, enqueued on the GPU engine and completed as MPI promises: a blocking call
// returns with its result in place, a non-blocking one completes through *request.
// A blocking call's operation goes on the device's legacy default stream itself, which orders it after
// the program's work there and on every blocking stream as the layer's own stream would after an event
// (and costs no event record and wait); the call waits for it before returning anyway, so nothing is
// left to overlap. MPI_SUCCESS, or the reported code.
int runDiverted(const char* function, MPI_Comm comm, bool nonblocking, Diversion* d, MPI_Request* request) {
  alloyComm_t gpu = nullptr;
  const alloyResult_t result = alloy_mpix::gpuCommOf(d->context, &gpu);
  if (result != alloySuccess) return alloy_mpix::report(comm, alloy_mpix::fromAlloy(result, function));
  int device = -1;
  alloyCommCuDevice(gpu, &device);
  cudaError_t err = cudaSuccess;
  {
    // One guard from the enqueue to the wait or the completion event, all of them the current device's
    // (cudaStreamLegacy, and the staging of an in-place send, too): the program's device is looked up
    // once per call.
    alloy::DeviceGuard onDevice(device);
    cudaStream_t stream = cudaStreamLegacy;
    if (nonblocking)
      if (Problem p = orderedStream(function, d->context, &stream)) return alloy_mpix::report(comm, p);
    const int code = alloy_mpix::runAgreedOnGpu(function, comm, &d->request, d->context, stream);
    if (code != MPI_SUCCESS) return code;
    if (nonblocking) return startRequest(function, comm, stream, request);
    err = cudaStreamSynchronize(stream);
  }
  // The outcome of the wait is reported with the program's device current again.
  const Problem p =
      err == cudaSuccess ? engineOutcome(function, d->context) : cudaProblem(function, "the GPU operation", err);
  return p ? alloy_mpix::report(comm, p) : MPI_SUCCESS;
}

// Routes the call, tallies it and carries it out on the route every rank took. request: a non-blocking
// call's.
int run(Call call, MPI_Comm comm, bool nonblocking, Describe describe, alloy_mpix::ViaMpi pass, MPI_Request* request) {
  const char* function = callName(call);
  Diversion d;
  int code = MPI_SUCCESS;
  const Route route = alloy_layer::route(function, comm, nonblocking, describe, &d, &code);
  if (route == Route::Failed) return code;
  tallyCall(call, route == Route::Divert);
  if (route == Route::Pass) return pass();
  return runDiverted(function, comm, nonblocking, &d, request);
}

}  // namespace

int runBlocking(Call call, MPI_Comm comm, Describe describe, alloy_mpix::ViaMpi pass) {
  return run(call, comm, false, describe, pass, nullptr);
}

int runNonblocking(Call call, MPI_Comm comm, Describe describe, alloy_mpix::ViaMpi pass, MPI_Request* request) {
  return run(call, comm, true, describe, pass, request);
}

}  // namespace alloy_layer
