#include "reduce_plan.h"

#include "algorithm.h"
#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "local_transport.h"
#include "launch_order.h"

namespace alloy {

ReducePlan::ReducePlan(alloyComm_t comm, alloyDataType_t type, alloyRedOp_t op, Operation operation)
    : comm_(comm), type_(type) {
  args_.comm = operationDeviceComm(comm, operation);
  args_.op = op;
  args_.numTasks = 0;
}

// The protocol of a task moving `bytes` to or from each peer: every rank's plan sees the same byte count
// for a given ring, so sender and receiver always agree.
int ReducePlan::lowLatency(size_t bytes) const { return bytes <= comm_->local->lowLatencyMaxBytes(); }

// A rank has at most nranks - 1 sends and one reduction, which kMaxReduceTasks (kMaxLocalRanks) holds.
void ReducePlan::addSend(int peer, const void* src, size_t bytes) {
  if (bytes == 0) return;
  args_.tasks[args_.numTasks++] = ReduceTask{kReduceSend, peer, static_cast<const char*>(src), nullptr, bytes,
                                             lowLatency(bytes)};
}

void ReducePlan::addReduce(const void* src, void* dst, size_t bytes, bool sendFirst) {
  if (bytes == 0) return;
  args_.tasks[args_.numTasks++] = ReduceTask{sendFirst ? kReduceSendRecv : kReduceRecv, comm_->rank,
                                             static_cast<const char*>(src), static_cast<char*>(dst), bytes,
                                             lowLatency(bytes)};
}

void ReducePlan::addReduceScatter(const char* send, char* mine, size_t count, size_t elementSize) {
  for (int peer = 0; peer < comm_->nranks; ++peer) {
    const Part p = partOf(count, elementSize, comm_->nranks, peer);
    if (peer != comm_->rank) addSend(peer, send + p.first * elementSize, p.count * elementSize);
    else addReduce(send + p.first * elementSize, mine, p.count * elementSize, false);
  }
}

alloyResult_t ReducePlan::launch(cudaStream_t stream, const char* function) {
  if (args_.numTasks == 0) return alloySuccess;
  DeviceGuard guard(comm_->cudaDevice);
  return comm_->launchOrder->enqueue(stream, function, [&](bool) {
    return kernelLaunched(launchReduce(args_, type_, stream), function);
  });
}

}  // namespace alloy
