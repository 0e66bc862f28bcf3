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

// Enqueues a diverted call; *device: the GPU engine's, *stream: where the operation went. A blocking call's
// goes on the device's legacy default stream itself, which orders it after the program's work there and on
// every blocking stream as the layer's own stream would after an event (and costs no event record and
// wait); the call waits for it before returning anyway, so nothing is left to overlap. MPI_SUCCESS, or the
// reported code.
int enqueue(const char* function, MPI_Comm comm, bool nonblocking, Diversion* d, int* device, cudaStream_t* stream) {
  alloyComm_t gpu = nullptr;
  const alloyResult_t result = alloy_mpix::gpuCommOf(d->context, &gpu);
  if (result != alloySuccess) return alloy_mpix::report(comm, alloy_mpix::fromAlloy(result, function));
  alloyCommCuDevice(gpu, device);
  // Current for all of it: cudaStreamLegacy, and the staging of an in-place send, mean the current device's.
  alloy::DeviceGuard onDevice(*device);
  *stream = cudaStreamLegacy;
  if (nonblocking)
    if (Problem p = orderedStream(function, d->context, stream)) return alloy_mpix::report(comm, p);
  return alloy_mpix::runAgreedOnGpu(function, comm, &d->request, d->context, *stream);
}

// After the stream passed the operation: what the GPU engine recorded (a peer that timed out or failed;
// the communicator keeps it) is the call's failure too.
Problem engineOutcome(const char* function, Context* context) {
  alloyResult_t asyncError = alloySuccess;
  if (alloyCommGetAsyncError(context->gpu, &asyncError) != alloySuccess || asyncError == alloySuccess) return {};
  return alloy_mpix::fromAlloy(asyncError, function);  // the query left the details as the last error
}

// The generalized request of a diverted non-blocking call: done when an event recorded after the
// operation has passed (CUDA's failures become the request's error).
int startRequest(const char* function, MPI_Comm comm, Context* context, cudaStream_t stream, MPI_Request* request) {
  int device = -1;
  alloyCommCuDevice(context->gpu, &device);
  alloy::DeviceGuard onDevice(device);
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

// Routes the call and tallies it. True where every rank diverted it and it is enqueued on *stream, on the
// GPU engine's *device; otherwise *code is the call's result: pass()'s, or the layer's failure as reported.
bool divertAndEnqueue(Call call, MPI_Comm comm, bool nonblocking, const Describe& describe,
                      const std::function<int()>& pass, Diversion* d, int* device, cudaStream_t* stream, int* code) {
  const char* function = callName(call);
  *code = MPI_SUCCESS;
  const Route route = alloy_layer::route(function, comm, nonblocking, describe, d, code);
  if (route == Route::Failed) return false;
  tallyCall(call, route == Route::Divert);
  if (route == Route::Pass) {
    *code = pass();
    return false;
  }
  *code = enqueue(function, comm, nonblocking, d, device, stream);
  return *code == MPI_SUCCESS;
}

}  // namespace

int runBlocking(Call call, MPI_Comm comm, const Describe& describe, const std::function<int()>& pass) {
  Diversion d;
  int device = -1;
  cudaStream_t stream = nullptr;
  int code = MPI_SUCCESS;
  if (!divertAndEnqueue(call, comm, false, describe, pass, &d, &device, &stream, &code)) return code;
  // A blocking call returns with its result in place, as MPI promises. The legacy stream is the current
  // device's: the engine's is made current for the wait.
  const char* function = callName(call);
  cudaError_t err = cudaSuccess;
  {
    alloy::DeviceGuard onDevice(device);
    err = cudaStreamSynchronize(stream);
  }
  const Problem p = err == cudaSuccess ? engineOutcome(function, d.context) : cudaProblem(function, "the GPU operation", err);
  return p ? alloy_mpix::report(comm, p) : MPI_SUCCESS;
}

int runNonblocking(Call call, MPI_Comm comm, const Describe& describe, const std::function<int()>& pass,
                   MPI_Request* request) {
  Diversion d;
  int device = -1;
  cudaStream_t stream = nullptr;
  int code = MPI_SUCCESS;
  if (!divertAndEnqueue(call, comm, true, describe, pass, &d, &device, &stream, &code)) return code;
  return startRequest(callName(call), comm, d.context, stream, request);
}

}  // namespace alloy_layer
