// Turns a reduction of one rank into one launch of the direct engine (direct_kernel.h), when the engine's
// staging areas hold what every rank sends into them. Every rank builds its plan from the same sizes
// and settings, so all ranks take the direct engine or none does.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "direct_kernel.h"

namespace alloy {

// The sizes up to which the direct engine uses each protocol for `algorithm` on a host of nranks ranks
// (bytes of the whole input, or of an all-gather's whole output), and the least a window must move, read
// from the environment on every call:
// ALLOY_DIRECT_LL_MAX_BYTES, ALLOY_DIRECT_LL128_MAX_BYTES, ALLOY_DIRECT_MAX_BYTES,
// ALLOY_DIRECT_WINDOW_MIN_BYTES and ALLOY_REDUCE_WINDOW_BYTES.
struct DirectLimits {
  size_t linesMax;        // 16-byte lines up to here
  size_t directMax;       // nothing larger goes to the direct engine
  size_t windowMinBytes;  // windows move at least this out of each rank (directWindowMinBytes)
  size_t reduceWindowBytes;  // a reduce's parts that fit one area still go in windows of this size
  size_t wideLinesMax;       // 128-byte lines up to here, where the links allow them (DeviceComm::directWideLines)
};
DirectLimits directLimits(DirectAlgorithm algorithm, int nranks);

// The 16-byte lines' top where ALLOY_DIRECT_LL_MAX_BYTES is not set: 512 KiB for the one-shot on 2 ranks,
// where bulk stores overtake the lines sooner, kDirectLinesMaxBytes (algorithm.h) for everything else.
size_t defaultLinesMax(DirectAlgorithm algorithm, int nranks);

// The 128-byte lines' band where ALLOY_DIRECT_LL128_MAX_BYTES is not set: the two-shot allreduce up to
// directWideLinesDefaultTop(nranks) (device_comm.h), the reduce-scatter up to half of it, the reduce by parts
// up to directWideReduceDefaultTop(nranks), nothing else.
size_t defaultWideLinesMax(DirectAlgorithm algorithm, int nranks);

// How a launch of the direct engine moves its parts: 16-byte lines where total <= linesMax and such a slot
// fits the line areas, else 128-byte lines where allowed, total <= wideLinesMax and such a slot fits the
// line areas, else bulk stores where a slot fits the bulk areas; `fits` false when none does, when
// total exceeds directMax, when the engine has no blocks, or when a part is empty (every rank must
// exchange something with every peer: direct_kernel.h). partBytes[0..parts).
struct DirectFit {
  bool fits;
  int protocol;       // DirectProtocol
  size_t slotStride;  // 0 where refused before a slot was sized: an empty part, directMax, no blocks
};
DirectFit fitDirect(const DeviceComm& c, const size_t* partBytes, int parts, size_t total, const DirectLimits& limits);

// Windows for a two-shot, reduce-scatter or reduce whose parts (the largest of largestPart bytes) do not fit
// one bulk area, or for a reduce's parts larger than maxWindowBytes (direct_kernel.h): each window carries
// windowBytes of every part through half an area, or maxWindowBytes (rounded up to 16) where that is not 0
// and smaller; `fits` false when the areas are too small for a window, when a window would move less than
// windowMinBytes out of each rank, or when more than kDirectMaxWindows would be needed.
struct DirectWindows {
  bool fits;
  size_t windowBytes;
  int windows;
};
DirectWindows windowsFor(const DeviceComm& c, size_t largestPart, size_t windowMinBytes, size_t maxWindowBytes = 0);

class DirectPlan {
 public:
  // operation: what the launch serves, for fault reports.
  DirectPlan(alloyComm_t comm, alloyDataType_t type, alloyRedOp_t op, Operation operation);
  // Each returns false, planning nothing, when a slot of the size it needs per rank does not fit (two-shot,
  // reduce-scatter and reduce: when not even windows of half an area do), or ALLOY_DIRECT_MAX_BYTES is
  // exceeded.
  // One-shot allreduce of `bytes`.
  bool planOneShot(const void* src, void* dst, size_t bytes);
  // Small reduce of `bytes` to root as a one-shot over lines whose result only the root keeps: every rank
  // sends to every peer and waits for every peer's lines, as an allreduce does (that wait is what keeps a
  // rank from reusing an area a peer still reads, with no acknowledgement); the others drop what they
  // reduce. False where the lines do not carry it (the flat form is then the rings').
  bool planReduceOneShot(const void* src, void* dst, size_t bytes, int root);
  // Two-shot allreduce of `count` elements of elementSize bytes, cut into parts by partOf (algorithm.h).
  bool planTwoShot(const void* src, void* dst, size_t count, size_t elementSize);
  // Reduce-scatter of nranks parts of partBytes each; dst receives this rank's part.
  bool planReduceScatter(const void* src, void* dst, size_t partBytes);
  // Reduce of `count` elements to root (dst matters there only), cut into nranks - 1 parts by partOf, one
  // for each rank but the root; in 128-byte lines within their band where the parts fit the line areas,
  // else in bulk, in windows where the parts exceed an area.
  bool planReduce(const void* src, void* dst, size_t count, size_t elementSize, int root);
  // The same from 3 ranks on, and only where it goes in 128-byte lines: below ALLOY_REDUCE_SCATTER_MIN_BYTES
  // the bulk form lost to the flat one (docs/benchmarks.md, "Session 18"), the lines won from 2 MB ("Session
  // 25").
  bool planReduceInWideLines(const void* src, void* dst, size_t count, size_t elementSize, int root);
  // All-gather of blocks of blockBytes into dst; only as lines (the rings' all-gather is faster than the
  // bulk protocol: docs/benchmarks.md).
  bool planAllGather(const void* src, void* dst, size_t blockBytes);
  // Alltoall of blocks of blockBytes (block p of src to rank p, rank q's block for this rank to block q of
  // dst); only as lines, as the all-gather.
  bool planAllToAll(const void* src, void* dst, size_t blockBytes);
  // Broadcast of `bytes` from root (src matters there only) into dst; only as lines, each peer's slot
  // holding the whole buffer.
  bool planBroadcast(const void* src, void* dst, size_t bytes, int root);
  // Broadcast of `bytes` from root in two steps (3 ranks or more): the buffer cut into nranks - 1 parts,
  // part p to rank p, which passes it on to the others; only as lines, a slot holding one part.
  bool planBroadcastTwoShot(const void* src, void* dst, size_t bytes, int root);
  // Enqueues the plan on stream, after the communicator's previous launch.
  alloyResult_t launch(cudaStream_t stream, const char* function);

 private:
  // Sets the algorithm, root and buffers, and cuts count elements into nranks - 1 parts (partOf), one for each
  // rank but the root, in rank order, the root's part empty; or, rootTakesPart, into nranks parts, one each.
  void rootedParts(DirectAlgorithm algorithm, const void* src, void* dst, size_t count, size_t elementSize, int root,
                   bool rootTakesPart = false);
  // Sets the protocol and the slot stride from the largest part and the whole input (`total` bytes, or
  // all of the output for an all-gather); false when nranks slots exceed an area.
  bool fits(size_t total);

  alloyComm_t comm_;
  alloyDataType_t type_;
  DirectLaunch args_;
};

}  // namespace alloy
