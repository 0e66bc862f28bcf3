// Which algorithm a collective of a given size runs. The thresholds are read from the environment on
// every call (documented in docs/environment.md), so they must be equal on every rank.
#pragma once

#include <cstddef>

namespace alloy {

// Largest allreduce (bytes of the buffer) that runs one-shot; larger ones run reduce-scatter then
// all-gather. ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES overrides the default for nranks.
size_t allreduceOneShotMaxBytes(int nranks);

// Largest buffer (bytes of the whole input) that a reduction hands to the direct engine, which takes it
// where its staging areas hold it (ALLOY_DIRECT_BYTES, set at creation), or, for two-shot allreduces and
// reduce-scatters, in windows through the areas' halves: ALLOY_DIRECT_MAX_BYTES, read on every call; by
// default the areas alone decide. 0 keeps every reduction on the rings.
size_t directMaxBytes();

// The least that one window of the direct engine must move out of each rank ((nranks - 1) x the window's
// bytes per part) for reductions to run in windows rather than over the rings: each window costs a fence
// and a wait for every peer, which small windows do not hide. ALLOY_DIRECT_WINDOW_MIN_BYTES, read on every
// call; by default 6 MiB, the smallest measured to beat the rings (docs/benchmarks.md, session 9).
size_t directWindowMinBytes();

// The most bytes of each part that one window of the direct engine's reduce by parts carries, where the
// parts would fit one area: larger parts then go in windows, so that the root takes in one window's
// results while it stores the next window's input (in one window it does the one and then the other).
// Two-shot allreduces and reduce-scatters keep one window: each round costs about 5 us (a fence and a
// wait for every peer), which they, sending as much in both steps, do not win back (docs/benchmarks.md,
// "Session 18"). ALLOY_REDUCE_WINDOW_BYTES, read on every call; 2 MiB by default, 0: one window.
size_t reduceWindowBytes();

// Largest allreduce (bytes of the buffer) that the direct engine runs one-shot inside a host, where its
// areas hold it (else allreduceOneShotMaxBytes picks the rings' form): ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES
// where set; by default 8 MiB on 2 ranks, allreduceOneShotMaxBytes's default on more.
size_t directOneShotMaxBytes(int nranks);

// The direct engine's top for 16-byte lines where ALLOY_DIRECT_LL_MAX_BYTES is not set and the operation
// has no default of its own (defaultLinesMax in direct_plan.h).
constexpr size_t kDirectLinesMaxBytes = size_t{1} << 20;

// Largest buffer (bytes of the whole input) that the direct engine moves as low-latency lines rather
// than bulk stores: ALLOY_DIRECT_LL_MAX_BYTES, read on every call; `fallback` where it is not set.
size_t directLowLatencyMaxBytes(size_t fallback = kDirectLinesMaxBytes);

// Largest buffer (as above) that the direct engine moves as 128-byte lines rather than bulk stores, where
// the links allow them: ALLOY_DIRECT_LL128_MAX_BYTES, read on every call; `fallback` where it is not set
// (the operation's default band: defaultWideLinesMax in direct_plan.h).
size_t directWideLinesMaxBytes(size_t fallback);

// Largest reduce by parts in 128-byte lines (bytes of the buffer) in which a root that does not fold (avg,
// or reduceRootFolds off) reduces a part of its own, one of nranks, rather than leaving the nranks - 1
// parts to the other ranks. The root then sends
// (nranks - 1) / nranks of its buffer instead of all of it, but takes in 2 (nranks - 1) / nranks of it
// (its part's inputs and the others' results) instead of one: the overlap wins while latency rules and the
// root's ingress loses once bandwidth does. On 4 x H200 (docs/benchmarks.md, "Session 28") the root's part
// took 7-10 % less at 2 MB at 4 ranks and 7-19 % less at 2-8 MB at 3, but 6 % more at 8 MB at 4 ranks: by
// default 4 MiB at 4 ranks, 8 MiB at 3, none elsewhere (not measured). ALLOY_REDUCE_ROOT_PART_MAX_BYTES,
// read on every call.
size_t reduceRootPartMaxBytes(int nranks);

// Whether a reduce by parts in the direct engine (128-byte lines and bulk windows; every operator but avg)
// leaves the root's input out of the owners' reductions, the root folding it into each owner's result as
// it arrives: the root then sends nothing and takes in one buffer, while in the other forms it sends its
// buffer (or most of it) before it takes the results in, or in bulk window after window. On 4 x H200
// (docs/benchmarks.md, "Session 28") it took 4 MB from 29.2 to 24.7 us at 4 ranks (NCCL 25.8), 16 MB from
// 89.3 to 80.6, at 3 ranks 16 MB from 94.0 to 80.1. Avg keeps the other forms: its owners would round a
// partial sum to the type before the root divides the whole. ALLOY_REDUCE_ROOT_FOLDS, read on every call;
// 1 by default, 0: the root sends its input to the owners.
bool reduceRootFolds();

// Part p of a count-element buffer split over n ranks: its first element and length. Parts are whole
// 16-byte vectors where the buffer is large enough, so that the reduction stays vectorised; the last
// parts may be shorter or empty.
struct Part {
  size_t first;
  size_t count;
};
Part partOf(size_t count, size_t elementSize, int n, int p);

}  // namespace alloy
