#include "launch_order.h"

#include "error.h"
#include "log.h"

namespace alloy {
namespace {

// Whether work enqueued on stream now goes into a graph being captured.
alloyResult_t capturing(cudaStream_t stream, const char* function, bool* yes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(stream, &status);
  if (err != cudaSuccess)
    return fail(alloyCudaError, "%s: cudaStreamIsCapturing(stream) failed: %s", function, cudaGetErrorString(err));
  *yes = status == cudaStreamCaptureStatusActive;
  return alloySuccess;
}

}  // namespace

alloyResult_t kernelLaunched(cudaError_t err, const char* function) {
  if (err == cudaSuccess) return alloySuccess;
  return fail(alloyCudaError, "%s: kernel launch failed: %s", function, cudaGetErrorString(err));
}

alloyResult_t LaunchOrder::create(std::unique_ptr<LaunchOrder>* out) {
  std::unique_ptr<LaunchOrder> order(new LaunchOrder());
  ALLOY_CUDA_TRY(cudaEventCreateWithFlags(&order->last_, cudaEventDisableTiming));
  *out = std::move(order);
  return alloySuccess;
}

LaunchOrder::~LaunchOrder() {
  if (last_ != nullptr && cudaEventDestroy(last_) != cudaSuccess) logWarn("cudaEventDestroy failed");
}

alloyResult_t LaunchOrder::enqueue(cudaStream_t stream, const char* function,
                                   const std::function<alloyResult_t(bool captured)>& launch) {
  bool captured = false;
  ALLOY_TRY(capturing(stream, function, &captured));
  everCaptured_ = everCaptured_ || captured;
  // cudaStreamGetId is refused on a capturing stream, and a captured launch always waits. Where the id
  // cannot be had, the launch waits (0 is no stream's id).
  unsigned long long streamId = 0;
  if (!captured && cudaStreamGetId(stream, &streamId) != cudaSuccess) {
    cudaGetLastError();
    streamId = 0;
  }
  const bool ordered = !captured && !everCaptured_ && lastEager_ && streamId != 0 && streamId == lastStreamId_;
  cudaError_t err = cudaSuccess;
  if (!ordered) err = cudaStreamWaitEvent(stream, last_, captured ? cudaEventWaitExternal : cudaEventWaitDefault);
  if (err != cudaSuccess)
    return fail(alloyCudaError, "%s: cannot order the launch after the communicator's previous one "
                "(cudaStreamWaitEvent: %s)", function, cudaGetErrorString(err));
  if (prelude_) {
    const Prelude first = std::move(prelude_);
    prelude_ = nullptr;
    ALLOY_TRY(first(stream, function));
  }
  ALLOY_TRY(launch(captured));
  err = cudaEventRecordWithFlags(last_, stream, captured ? cudaEventRecordExternal : cudaEventRecordDefault);
  if (err != cudaSuccess)
    return fail(alloyCudaError, "%s: cannot mark the communicator's latest launch (cudaEventRecord: %s)", function,
                cudaGetErrorString(err));
  lastEager_ = !captured;
  lastStreamId_ = streamId;
  return alloySuccess;
}

}  // namespace alloy
