// Orders every launch of one communicator after the one before it, whatever streams they are on.
//
// The engine's kernels read their starting sequence numbers from device memory and write back where
// they ended, so two launches of one communicator must never run at the same time: on two streams
// with nothing ordering them, both would start from the same counters and the rings would be
// corrupted (or wait forever). NCCL orders a communicator's work the same way. One event marks the
// latest launch; each launch first makes its stream wait for it, then records it.
//
// Under stream capture the wait and the record become external event nodes of the graph, so a replay
// also waits for the communicator's launch issued before it, and a launch issued after the replay
// waits for the replay's kernels. The wait is left out where stream order already gives it: an eager
// launch on the same stream (by cudaStreamGetId, which never repeats, unlike a destroyed stream's handle)
// as the previous eager launch, on a communicator never captured into a graph (a replay could have run
// on any stream in between). Host calls on one communicator must still come from one thread at a
// time (docs/api.md).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>

#include "alloy.h"

namespace alloy {

// The result of a kernel launch (cudaGetLastError after it) as alloyResult_t, naming function.
alloyResult_t kernelLaunched(cudaError_t err, const char* function);

class LaunchOrder {
 public:
  // On the current device.
  static alloyResult_t create(std::unique_ptr<LaunchOrder>* out);
  ~LaunchOrder();
  LaunchOrder(const LaunchOrder&) = delete;
  LaunchOrder& operator=(const LaunchOrder&) = delete;

  // Enqueues launch (the operation's work on stream: kernels, stream memory operations) after the
  // communicator's previous launch, and marks it the latest. launch learns whether stream is being
  // captured into a graph (work it refers to must then outlive the call). function names the API call in
  // messages.
  alloyResult_t enqueue(cudaStream_t stream, const char* function, const std::function<alloyResult_t(bool captured)>& launch);

  // Work the next enqueue runs first, inside the same ordering (one event wait and record for both):
  // the operation handshake of an MPIX call goes ahead of the call's first launch this way
  // (handshake.h). Taken by that enqueue; clearPrelude() drops one that no enqueue took.
  using Prelude = std::function<alloyResult_t(cudaStream_t stream, const char* function)>;
  void setPrelude(Prelude prelude) { prelude_ = std::move(prelude); }
  bool hasPrelude() const { return static_cast<bool>(prelude_); }
  void clearPrelude() { prelude_ = nullptr; }

  // Whether a launch of this communicator was ever captured into a graph (one may replay at any time).
  bool everCaptured() const { return everCaptured_; }

 private:
  LaunchOrder() = default;
  cudaEvent_t last_ = nullptr;
  unsigned long long lastStreamId_ = 0;  // the stream of the latest launch, where it was eager
  bool lastEager_ = false;               // the latest launch was not captured
  bool everCaptured_ = false;
  Prelude prelude_;
};

}  // namespace alloy
