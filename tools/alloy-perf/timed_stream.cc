#include "timed_stream.h"

#include "fatal.h"

namespace alloyperf {

TimedStream::TimedStream() {
  // Non-blocking: the legacy default stream must not serialise against the measured work.
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
}

TimedStream::~TimedStream() {
  cudaEventDestroy(start_);  // teardown errors cannot change results any more; not checked on purpose
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

void TimedStream::markStart() { CUDA_CHECK(cudaEventRecord(start_, stream_)); }

void TimedStream::markStop() { CUDA_CHECK(cudaEventRecord(stop_, stream_)); }

void TimedStream::synchronize() { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

double TimedStream::elapsedMs() const { return msToStopOf(*this); }

double TimedStream::msToStopOf(const TimedStream& other) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_, other.stop_));
  return ms;
}

}  // namespace alloyperf
