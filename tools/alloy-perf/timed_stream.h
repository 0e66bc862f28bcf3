// A non-blocking CUDA stream with two events that time a span of the work enqueued on it. The tool's
// measured work runs on such streams: the collective's (measure.h) and overlap mode's compute load's.
#ifndef ALLOY_PERF_TIMED_STREAM_H_
#define ALLOY_PERF_TIMED_STREAM_H_

#include <cuda_runtime.h>

namespace alloyperf {

class TimedStream {
 public:
  TimedStream();  // on the current device; fatal on failure
  ~TimedStream();
  TimedStream(const TimedStream&) = delete;
  TimedStream& operator=(const TimedStream&) = delete;

  cudaStream_t get() const { return stream_; }
  void markStart();  // the span starts after the work enqueued so far
  void markStop();   // and ends after the work enqueued so far
  void synchronize();
  // The span between the last marks, in ms; the stop mark must have completed (synchronize first).
  double elapsedMs() const;
  // From this stream's last start mark to another stream's last stop mark (both completed), in ms: how
  // long after this span began the other ended.
  double msToStopOf(const TimedStream& other) const;

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_TIMED_STREAM_H_
