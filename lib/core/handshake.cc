#include "handshake.h"

#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "handshake_kernel.h"
#include "launch_order.h"
#include "local_transport.h"

namespace alloy {
namespace {

alloyResult_t launchOnStream(alloyComm_t comm, int mark, cudaStream_t stream, const char* function) {
  return kernelLaunched(launchHandshake(comm->local->deviceComm(), mark, stream), function);
}

}  // namespace

alloyResult_t enableHandshake(alloyComm_t comm) {
  ALLOY_TRY(checkGpuComm(comm, "enableHandshake"));
  if (comm->topology.spansHosts())
    return fail(alloyNotSupported, "the operation handshake runs among the ranks of one host; this communicator "
                "spans hosts");
  // Loaded now rather than at the first enqueue-only call (CUDA loads modules lazily, ~0.2 ms).
  DeviceGuard guard(comm->cudaDevice);
  ALLOY_CUDA_TRY(loadHandshakeKernel());
  comm->handshake = true;
  return alloySuccess;
}

OperationHandshake::OperationHandshake(alloyComm_t comm, cudaStream_t stream) : comm_(comm), stream_(stream) {
  comm_->launchOrder->setPrelude([this](cudaStream_t stream, const char* function) {
    launched_ = true;
    return launchOnStream(comm_, 0, stream, function);
  });
}

OperationHandshake::~OperationHandshake() { comm_->launchOrder->clearPrelude(); }

alloyResult_t OperationHandshake::finish(int mark, const char* function) {
  comm_->launchOrder->clearPrelude();
  // Already enqueued ahead of the operation: a problem after that (a failed launch) can no longer stop the
  // peers; their kernels give alloyTimeout naming this rank, as for any rank that stops mid-operation.
  if (launched_) return alloySuccess;
  ALLOY_TRY(checkGpuComm(comm_, function));
  if (!comm_->handshake) return fail(alloyInvalidUsage, "%s: the communicator's handshake is not enabled", function);
  if (mark < 0 || mark > kMaxHandshakeMark)
    return fail(alloyInvalidArgument, "%s: handshake mark %d is outside 0..%d", function, mark, kMaxHandshakeMark);
  DeviceGuard guard(comm_->cudaDevice);
  launched_ = true;
  return comm_->launchOrder->enqueue(stream_, function, [&](bool) { return launchOnStream(comm_, mark, stream_, function); });
}

bool takeUnreportedRejection(alloyComm_t comm, Rejections* seen) {
  if (!unreportedRejection(comm, seen)) return false;
  markRejectionsTaken(comm, *seen);
  return true;
}

void markRejectionsTaken(alloyComm_t comm, const Rejections& seen) {
  if (seen.count > 0) comm->rejectionsReported = seen.through;
}

bool unreportedRejection(alloyComm_t comm, Rejections* seen) {
  *seen = Rejections();
  if (comm == nullptr || !comm->local) return false;
  const FaultRecord record = comm->local->faultRecord();
  if (record.rejections <= comm->rejectionsReported) return false;
  seen->count = record.rejections - comm->rejectionsReported;
  seen->through = record.rejections;
  if (record.rejectedBy >= 0 && record.rejectedBy < comm->topology.localSize) {
    seen->rank = comm->topology.localPeers[record.rejectedBy];
    seen->mark = record.rejectedMark;
    seen->handshake = record.rejectedHandshake;
  }
  return true;
}

}  // namespace alloy
