#include "handshake.h"

#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "handshake_kernel.h"
#include "launch_order.h"
#include "local_transport.h"

namespace alloy {
namespace {

thread_local int checkOnlyDepth = 0;

}  // namespace

CheckOnly::CheckOnly() { ++checkOnlyDepth; }
CheckOnly::~CheckOnly() { --checkOnlyDepth; }
bool CheckOnly::active() { return checkOnlyDepth > 0; }

alloyResult_t enableHandshake(alloyComm_t comm) {
  ALLOY_TRY(checkGpuComm(comm, "enableHandshake"));
  if (comm->topology.spansHosts())
    return fail(alloyNotSupported, "the operation handshake runs among the ranks of one host; this communicator "
                "spans hosts");
  comm->handshake = true;
  return alloySuccess;
}

alloyResult_t enqueueHandshake(alloyComm_t comm, int mark, cudaStream_t stream, const char* function) {
  ALLOY_TRY(checkGpuComm(comm, function));
  if (!comm->handshake) return fail(alloyInvalidUsage, "%s: the communicator's handshake is not enabled", function);
  if (mark < 0 || mark > kMaxHandshakeMark)
    return fail(alloyInvalidArgument, "%s: handshake mark %d is outside 0..%d", function, mark, kMaxHandshakeMark);
  DeviceGuard guard(comm->cudaDevice);
  return comm->launchOrder->enqueue(stream, function, [&](bool) {
    return kernelLaunched(launchHandshake(comm->local->deviceComm(), mark, stream), function);
  });
}

Rejections rejectionsSeen(alloyComm_t comm) {
  Rejections seen;
  if (comm == nullptr || !comm->local) return seen;
  const FaultRecord record = comm->local->faultRecord();
  seen.count = record.rejections;
  if (seen.count > 0 && record.rejectedBy >= 0 && record.rejectedBy < comm->topology.localSize) {
    seen.rank = comm->topology.localPeers[record.rejectedBy];
    seen.mark = record.rejectedMark;
    seen.handshake = record.rejectedHandshake;
  }
  return seen;
}

}  // namespace alloy
