// Phase stamps of the direct engine's launches: where a small operation's GPU time goes (host-cost --trace,
// docs/benchmarks.md "Where a small operation's GPU time goes"). Compiled in only when the build is
// configured with -DALLOY_KERNEL_TRACE=ON; otherwise the kernels stamp nothing and alloyDebugKernelTrace
// returns alloyNotSupported. One device per process: a process's launches on every communicator share one
// ring of records, on the device current at its first traced launch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloy.h"

#ifndef ALLOY_KERNEL_TRACE
#define ALLOY_KERNEL_TRACE 0
#endif

namespace alloy {

// The moments block 0's first thread stamps (%globaltimer, ns), in order.
enum KernelTraceStamp {
  kTraceEntry,     // the kernel free to begin: its first instruction after the previous grid ended (launch_overlap.cuh)
  kTraceLoaded,    // the abort word and the block's operation count read
  kTraceSent,      // this thread's stores to the peers issued (lines algorithms; 0 elsewhere)
  kTraceReceived,  // every peer's data in and used (lines algorithms; 0 elsewhere)
  kTraceEnd,       // the operation counted
  kTraceStamps
};

// Where the rounds of a reduction in windows (direct_bulk.cuh) spend their time, summed over the launch's
// rounds that have a next window (the last round runs the whole block and is left out): the storing half's
// stores and copy-out as its first thread sees them, the reducing half's reduction as its first thread sees
// it, and the whole round as the block's first thread sees it (its half's work, the barrier with the other
// half, the fence and the flags, the wait for every peer's flag). The halves' times end when their stores
// are issued, not delivered, so a round's whole beyond its longer half is the stores' drain over the links,
// the flag round trip and the wait for the slowest peer together.
enum KernelTraceRound {
  kRoundStores,
  kRoundReduce,
  kRoundWhole,
  kTraceRoundPhases
};

// One launch: written by block 0 at its end into slot (block 0's operation count) % kKernelTraceRecords.
struct KernelTraceRecord {
  uint64_t stamp[kTraceStamps];
  uint64_t roundNs[kTraceRoundPhases];  // sums over `rounds` rounds, ns
  uint64_t rounds;                      // 0: no round with a next window (every launch but bulk windows)
  uint64_t operation;  // block 0's operation count: consecutive launches of one communicator differ by one
  int32_t algorithm;   // DirectAlgorithm
  int32_t protocol;    // DirectProtocol
};

constexpr size_t kKernelTraceRecords = 4096;

#if ALLOY_KERNEL_TRACE
// The ring the direct engine's launches write, allocated and zeroed at the first call (nullptr where that
// failed: launches then go untraced).
KernelTraceRecord* kernelTraceRing();
#endif

}  // namespace alloy

// Copies the ring's records into out (up to max records, in slot order; a record never written is all
// zeros) and sets *count to how many were copied. alloyNotSupported in builds without ALLOY_KERNEL_TRACE.
// Not part of the public API (alloy.h): a tool's hook into traced builds.
extern "C" ALLOY_API alloyResult_t alloyDebugKernelTrace(alloy::KernelTraceRecord* out, size_t max, size_t* count);
