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

bool DirectPlan::fits(size_t total) {
  const bool byParts = args_.algorithm == kDirectTwoShot || args_.algorithm == kDirectReduceScatter;
  size_t largest = 0;
  for (int p = 0; p < (byParts ? args_.comm.nranks : 1); ++p) {
    // Every rank exchanges something with every peer (direct_kernel.h says why).
    if (args_.partBytes[p] == 0) return false;
    largest = args_.partBytes[p] > largest ? args_.partBytes[p] : largest;
  }
  const DeviceComm& c = args_.comm;
  // A low-latency line carries 8 data bytes in 16. Lines where they are asked for and fit their areas,
  // else bulk.
  const size_t lineSlot = (2 * ((largest + kLlDataPerLine - 1) / kLlDataPerLine * kLlDataPerLine) + 15) & ~size_t{15};
  const size_t bulkSlot = (largest + 15) & ~size_t{15};
  args_.lowLatency = total <= directLowLatencyMaxBytes() && lineSlot <= c.directLineAreaBytes / c.nranks ? 1 : 0;
  args_.slotStride = args_.lowLatency ? lineSlot : bulkSlot;
  return c.directBlocks > 0 && total <= directMaxBytes() && (args_.lowLatency || bulkSlot <= c.directAreaBytes / c.nranks);
}

bool DirectPlan::planOneShot(const void* src, void* dst, size_t bytes) {
  args_.algorithm = kDirectOneShot;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  args_.partBytes[0] = bytes;
  return fits(bytes);
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

bool DirectPlan::planAllGather(const void* src, void* dst, size_t blockBytes) {
  args_.algorithm = kDirectAllGather;
  args_.src = static_cast<const char*>(src);
  args_.dst = static_cast<char*>(dst);
  args_.partBytes[0] = blockBytes;
  return fits(blockBytes * args_.comm.nranks) && args_.lowLatency;
}

alloyResult_t DirectPlan::launch(cudaStream_t stream, const char* function) {
  DeviceGuard guard(comm_->cudaDevice);
  return comm_->launchOrder->enqueue(stream, function, [&](bool) {
    return kernelLaunched(launchDirect(args_, type_, stream), function);
  });
}

}  // namespace alloy
