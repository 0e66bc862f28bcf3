#include "gpu_launch.h"

#include <optional>

#include "errors.h"
#include "handshake.h"

namespace alloy_mpix {
namespace {

// The send data the GPU engine reads: the caller's, or a stream-ordered copy where the engine cannot
// read and write one buffer (*staged, to be freed on the stream after the operation).
Problem stageSend(const char* function, const Request* request, cudaStream_t stream, const void** send, void** staged) {
  *send = request->send.base;
  *staged = nullptr;
  if (!request->stageSend || request->send.bytes == 0) return {};
  // Stream-ordered allocation and copy: nothing blocks.
  cudaError_t err = cudaMallocAsync(staged, request->send.bytes, stream);
  if (err == cudaSuccess) err = cudaMemcpyAsync(*staged, request->send.base, request->send.bytes, cudaMemcpyDefault, stream);
  if (err != cudaSuccess) {
    cudaGetLastError();
    if (*staged != nullptr) cudaFreeAsync(*staged, stream);
    *staged = nullptr;
    return problem(MPI_ERR_OTHER, "%s: staging the in-place send data (%zu bytes) failed: %s", function,
                   request->send.bytes, cudaGetErrorString(err));
  }
  *send = *staged;
  return {};
}

// The handshake's mark of a problem: its MPI error class, which the peers report.
int markOf(const Problem& p) {
  return p.errorClass > 0 && p.errorClass <= alloy::kMaxHandshakeMark ? p.errorClass : MPI_ERR_OTHER;
}

}  // namespace

Problem enqueueOperation(const char* function, Request* request, Context* context, cudaStream_t stream, Problem mine) {
  const void* send = nullptr;
  void* staged = nullptr;
  if (!mine) mine = stageSend(function, request, stream, &send, &staged);
  // Constructed before the operation is called: its launch then takes the handshake in its own ordering.
  std::optional<alloy::OperationHandshake> handshake;
  if (context->enqueueOnly) handshake.emplace(context->gpu, stream);
  if (!mine) {
    const alloyResult_t result = request->viaGpu(context->gpu, send, stream);
    if (result != alloySuccess) mine = fromAlloy(result, function);
  }
  if (handshake) {
    const alloyResult_t result = handshake->finish(mine ? markOf(mine) : 0, function);
    if (!mine && result != alloySuccess) mine = fromAlloy(result, function);
  }
  if (staged != nullptr) cudaFreeAsync(staged, stream);
  return mine;
}

int runAgreedOnGpu(const char* function, MPI_Comm comm, Request* request, Context* context, cudaStream_t stream) {
  alloyComm_t gpu = nullptr;
  const alloyResult_t result = gpuCommOf(context, &gpu);
  if (result != alloySuccess) return report(comm, fromAlloy(result, function));
  const Problem p = enqueueOperation(function, request, context, stream, {});
  return p ? report(comm, p) : MPI_SUCCESS;
}

}  // namespace alloy_mpix
