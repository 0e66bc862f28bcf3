// host-cost --trace: the GPU time of back-to-back direct-engine launches split into phases, from the
// records of a build configured with -DALLOY_KERNEL_TRACE=ON (lib/kernels/kernel_trace.h).
#pragma once

#include <cstddef>
#include <vector>

#include "kernel_trace.h"

// Medians in microseconds over the latest run of consecutive launches (operation numbers one apart) among
// records; a phase whose stamps a launch lacks (bulk steps stamp no "sent" or "received") is left out of
// that phase's median, and a phase no launch has is negative.
struct TracePhases {
  size_t launches = 0;    // in the run; 0: no record, and every phase negative
  double gap = -1;        // the previous launch's end -> this one's entry (kernels and the stream between)
  double loaded = -1;     // entry -> the abort word and the operation count read
  double sent = -1;       // -> block 0's stores to the peers issued
  double received = -1;   // -> every peer's data in and used
  double end = -1;        // -> the operation counted
  double total = -1;      // entry -> end
  // Launches with rounds of windows (kernel_trace.h, KernelTraceRound): the median over those launches of
  // their rounds and of each phase's mean per round, us; negative where no launch had a round.
  double rounds = -1;
  double roundStores = -1, roundReduce = -1, roundWhole = -1;
};

// `latest`: at most this many launches, the newest, from the newest run of consecutive ones.
TracePhases tracePhases(const std::vector<alloy::KernelTraceRecord>& records, size_t latest);
