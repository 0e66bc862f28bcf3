// A sampling profiler for the calling thread, for tools that need to know where a host path spends its
// time on machines without perf: a POSIX timer on CLOCK_MONOTONIC signals this thread at a fixed rate, the
// handler keeps the interrupted instruction's address, and write() resolves each address to its module
// (dladdr) and its offset there, which `addr2line -f -C -e MODULE` turns into a function. x86-64 Linux.
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdio>

class PcSampler {
 public:
  // Samples the calling thread every `intervalUs` microseconds from now on; false (errno set) where the
  // timer or the handler could not be set up.
  bool start(unsigned intervalUs);
  // Stops sampling; the samples stay for write().
  void stop();
  // One line per sampled address, most frequent first: "count module offset" (offset in hex, from the
  // module's load address), then a total line "# samples N". Returns the number of samples.
  size_t write(std::FILE* out) const;

  PcSampler() = default;
  ~PcSampler() { stop(); }
  PcSampler(const PcSampler&) = delete;
  PcSampler& operator=(const PcSampler&) = delete;

 private:
  bool running_ = false;
  timer_t timer_{};
};
