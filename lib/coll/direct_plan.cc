#include "direct_plan.h"

#include <cstring>

#include "algorithm.h"
#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "launch_order.h"
#include "local_transport.h"

namespace alloy {

DirectPlan::DirectPlan(alloyComm_t comm, alloyDataType_t type, alloyRedOp_t op, Operation operation)
    : comm_(comm), type_(type) {
  std::memset(&args_, 0, sizeof args_);
  args_.comm = operationDeviceComm(comm, operation);
  args_.op = op;
}

size_t defaultWideLinesMax(DirectAlgorithm algorithm, int nranks) {
  // On 4 x H200 (docs/benchmarks.md, "Session 23") the lines beat bulk stores at 3 and 4 ranks for the
  // allreduce at 2-4 MB and the reduce-scatter at 2 MB, and lost for the reduce-scatter at 4 MB at 4 ranks
  // (22.6 against 19.3 us). All-gathers were even at 4 ranks (2 MB 13.8 against 13.6 us) and all-to-alls
  // were not measured: they keep bulk unless the variable asks.
  // A reduce by parts has a band of its own (directWideReduceDefaultTop), which the default line areas hold.
  const size_t top = directWideLinesDefaultTop(nranks);
  if (algorithm == kDirectTwoShot) return top;
  if (algorithm == kDirectReduceScatter) return top / 2;
  if (algorithm == kDirectReduce) return directWideReduceDefaultTop(nranks);
  return 0;
}

size_t defaultLinesMax(DirectAlgorithm algorithm, int nranks) {
  // On 2 x H200 (docs/benchmarks.md, "Session 24") the bulk one-shot allreduce beat the lines at 1 MB
  // (10.2-10.5 against 12.2-12.6 us; in a CUDA graph 9.9-10.1 against 12.1-12.4) and tied at 512 KB,
  // where the lines carry twice the bytes over one link; the all-gather and the reduce-scatter kept the
  // lines ahead at 1 MB (8.5 against 10.3 us, 9.6 against 10.1). A reduce's one-shot (lines only) takes
  // the same top: beyond it the rings' reduce took 8.0 us at 1 MB against 11.8 for the lines.
  if (algorithm == kDirectOneShot && nranks == 2) return size_t{512} << 10;
  return kDirectLinesMaxBytes;
}

DirectLimits directLimits(DirectAlgorithm algorithm, int nranks) {
  return DirectLimits{directLowLatencyMaxBytes(defaultLinesMax(algorithm, nranks)), directMaxBytes(),
                      directWindowMinBytes(), reduceWindowBytes(),
                      directWideLinesMaxBytes(defaultWideLinesMax(algorithm, nranks))};
}

DirectFit fitDirect(const DeviceComm& c, const size_t* partBytes, int parts, size_t total, const DirectLimits& limits) {
  DirectFit fit{false, kDirectBulk, 0};
  size_t largest = 0;
  for (int p = 0; p < parts; ++p) {
    if (partBytes[p] == 0) return fit;
    largest = partBytes[p] > largest ? partBytes[p] : largest;
  }
  if (c.directBlocks <= 0 || c.nranks <= 0 || total > limits.directMax) return fit;
  const size_t lineSlotRoom = c.directLineAreaBytes / c.nranks;
  // A 16-byte line carries 8 data bytes; a 128-byte line 120.
  const size_t narrowSlot = (2 * ((largest + kLlDataPerLine - 1) / kLlDataPerLine * kLlDataPerLine) + 15) & ~size_t{15};
  const size_t wideSlot = (largest + kLl128DataBytes - 1) / kLl128DataBytes * kLl128Bytes;
  const size_t bulkSlot = (largest + 15) & ~size_t{15};
  if (total <= limits.linesMax && narrowSlot <= lineSlotRoom) {
    fit.protocol = kDirectLines;
    fit.slotStride = narrowSlot;
  } else if (c.directWideLines && total <= limits.wideLinesMax && wideSlot <= lineSlotRoom) {
    fit.protocol = kDirectWideLines;
    fit.slotStride = wideSlot;
  } else {
    fit.protocol = kDirectBulk;
    fit.slotStride = bulkSlot;
  }
  fit.fits = fit.slotStride <= (fit.protocol == kDirectBulk ? c.directAreaBytes : c.directLineAreaBytes) / c.nranks;
  return fit;
}

DirectWindows windowsFor(const DeviceComm& c, size_t largestPart, size_t windowMinBytes, size_t maxWindowBytes) {
  DirectWindows w{false, 0, 0};
  if (c.nranks <= 1 || largestPart == 0) return w;
  w.windowBytes = c.directAreaBytes / (2 * static_cast<size_t>(c.nranks)) & ~size_t{15};
  const size_t narrower = (maxWindowBytes + 15) & ~size_t{15};
  if (narrower > 0 && narrower < w.windowBytes) w.windowBytes = narrower;
  if (w.windowBytes == 0) return w;
  const size_t windows = (largestPart + w.windowBytes - 1) / w.windowBytes;
  w.windows = static_cast<int>(windows < kDirectMaxWindows ? windows : kDirectMaxWindows);
  w.fits = windows <= kDirectMaxWindows && (c.nranks - 1) * w.windowBytes >= windowMinBytes;
  return w;
}

bool DirectPlan::fits(size_t total) {
  const bool reduce = args_.algorithm == kDirectReduce;
  // The root's part is empty in a two-step broadcast, and in a reduce by parts unless planReduce gives it one.
  const bool rooted = reduce || args_.algorithm == kDirectBroadcastTwoShot;
  const bool byParts = rooted || args_.algorithm == kDirectTwoShot || args_.algorithm == kDirectReduceScatter;
  // The parts that carry data: every rank's, but an empty part of the root's.
  size_t carried[kMaxLocalRanks];
  int parts = 0;
  for (int p = 0; p < (byParts ? args_.comm.nranks : 1); ++p)
    if (!rooted || p != args_.root || args_.partBytes[p] != 0) carried[parts++] = args_.partBytes[p];
  DirectLimits limits = directLimits(static_cast<DirectAlgorithm>(args_.algorithm), args_.comm.nranks);
  // A reduce by parts in 16-byte lines lost to the flat form (docs/architecture.md, "Reduce by parts in
  // lines: tried and dropped"); the 128-byte lines carry nearly as much as bulk stores, and take over from
  // the 16-byte lines' top as they do for the other algorithms.
  if (reduce) {
    if (total <= limits.linesMax) limits.wideLinesMax = 0;
    limits.linesMax = 0;
  }
  const DirectFit fit = fitDirect(args_.comm, carried, parts, total, limits);
  args_.protocol = fit.protocol;
  args_.slotStride = fit.slotStride;
  size_t largest = 0;
  for (int p = 0; p < parts; ++p) largest = carried[p] > largest ? carried[p] : largest;
  args_.windowBytes = largest;
  args_.windows = 1;
  if (!byParts || fit.protocol != kDirectBulk || fit.slotStride == 0) return fit.fits;
  // A reduce's parts that fit one area may still go in windows (ALLOY_REDUCE_WINDOW_BYTES: algorithm.h
  // says why); where that needs too many windows they keep the one.
  const size_t narrower = reduce ? limits.reduceWindowBytes : 0;
  const bool narrowed = fit.fits && narrower > 0 && largest > narrower;
  if (fit.fits && !narrowed) return true;
  // Too large for one area (or narrowed): in windows through its halves.
  const DirectWindows w = narrowed ? windowsFor(args_.comm, largest, 0, narrower)
                                   : windowsFor(args_.comm, largest, limits.windowMinBytes);
  if (narrowed && !w.fits) return true;
  args_.slotStride = w.windowBytes;
  args_.windowBytes = w.windowBytes;
  args_.windows = w.windows;
  return w.fits;
}

bool DirectPlan::planOneShot(const void* src, void* dst, size_t bytes) {
  args_.algorithm = kDirectOneShot;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  args_.partBytes[0] = bytes;
  return fits(bytes);
}

bool DirectPlan::planReduceOneShot(const void* src, void* dst, size_t bytes, int root) {
  // The bulk one-shot writes every rank's result; only the lines' reduction can drop it (dst NULL).
  return planOneShot(src, args_.comm.rank == root ? dst : nullptr, bytes) && args_.protocol == kDirectLines;
}

bool DirectPlan::planTwoShot(const void* src, void* dst, size_t count, size_t elementSize) {
  args_.algorithm = kDirectTwoShot;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  for (int p = 0; p < args_.comm.nranks; ++p) {
    const Part part = partOf(count, elementSize, args_.comm.nranks, p);
    args_.partFirst[p] = part.first * elementSize;
    args_.partBytes[p] = part.count * elementSize;
  }
  return fits(count * elementSize);
}

bool DirectPlan::planReduceScatter(const void* src, void* dst, size_t partBytes) {
  args_.algorithm = kDirectReduceScatter;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  for (int p = 0; p < args_.comm.nranks; ++p) {
    args_.partFirst[p] = p * partBytes;
    args_.partBytes[p] = partBytes;
  }
  return fits(partBytes * args_.comm.nranks);
}

void DirectPlan::rootedParts(DirectAlgorithm algorithm, const void* src, void* dst, size_t count, size_t elementSize,
                             int root, bool rootTakesPart) {
  const int n = args_.comm.nranks;
  args_.algorithm = algorithm;
  args_.root = root;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  for (int p = 0; p < n; ++p) {
    // The ranks but the root take the n - 1 parts, in rank order; or every rank one of n.
    const Part part = rootTakesPart ? partOf(count, elementSize, n, p)
                      : p == root   ? Part{0, 0}
                                    : partOf(count, elementSize, n - 1, p < root ? p : p - 1);
    args_.partFirst[p] = part.first * elementSize;
    args_.partBytes[p] = part.count * elementSize;
  }
}

bool DirectPlan::planReduce(const void* src, void* dst, size_t count, size_t elementSize, int root) {
  if (args_.comm.nranks < 2) return false;
  rootedParts(kDirectReduce, src, dst, count, elementSize, root);
  const size_t bytes = count * elementSize;
  if (!fits(bytes)) return false;
  // The root folds its input into the owners' results (reduceRootFolds says why and when). Else, in bulk,
  // its part stays empty (the windows' root only stores inputs and takes results in), and in 128-byte lines,
  // up to a size (reduceRootPartMaxBytes), it reduces a part of its own: its part's inputs arrive while it
  // sends.
  if (args_.op != alloyAvg && reduceRootFolds()) {
    args_.rootFolds = 1;
    return true;
  }
  if (args_.protocol != kDirectWideLines || bytes > reduceRootPartMaxBytes(args_.comm.nranks)) return true;
  rootedParts(kDirectReduce, src, dst, count, elementSize, root, true);
  return fits(bytes);
}

bool DirectPlan::planReduceInWideLines(const void* src, void* dst, size_t count, size_t elementSize, int root) {
  return args_.comm.nranks >= 3 && planReduce(src, dst, count, elementSize, root) &&
         args_.protocol == kDirectWideLines;
}

bool DirectPlan::planAllGather(const void* src, void* dst, size_t blockBytes) {
  args_.algorithm = kDirectAllGather;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  args_.partBytes[0] = blockBytes;
  return fits(blockBytes * args_.comm.nranks) && args_.protocol != kDirectBulk;
}

bool DirectPlan::planAllToAll(const void* src, void* dst, size_t blockBytes) {
  const bool fit = planAllGather(src, dst, blockBytes);
  args_.algorithm = kDirectAllToAll;
  return fit;
}

bool DirectPlan::planBroadcast(const void* src, void* dst, size_t bytes, int root) {
  args_.algorithm = kDirectBroadcast;
  args_.root = root;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  args_.partBytes[0] = bytes;
  return fits(bytes * args_.comm.nranks) && args_.protocol == kDirectLines;  // tokens: 16-byte lines only
}

bool DirectPlan::planBroadcastTwoShot(const void* src, void* dst, size_t bytes, int root) {
  if (args_.comm.nranks < 3) return false;
  // Cut as the rings' scattered broadcast cuts the buffer.
  rootedParts(kDirectBroadcastTwoShot, src, dst, bytes, 1, root);
  return fits(bytes) && args_.protocol == kDirectLines;
}

alloyResult_t DirectPlan::launch(cudaStream_t stream, const char* function) {
  DeviceGuard guard(comm_->cudaDevice);
  return comm_->launchOrder->enqueue(stream, function, [&](bool) {
    return kernelLaunched(launchDirect(args_, type_, stream), function);
  });
}

}  // namespace alloy
