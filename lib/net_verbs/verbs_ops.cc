#include "verbs_ops.h"

namespace alloy {
namespace verbs {

WorkPlan planPut(uint64_t dstOffset, size_t bytes) {
  WorkPlan plan;
  plan.items[plan.count++] = {WorkOpcode::Write, LocalBytes::Source, RemoteBytes::Key, dstOffset, bytes};
  return plan;
}

WorkPlan planSignal(uint64_t dstOffset) {
  WorkPlan plan;
  plan.items[plan.count++] = {WorkOpcode::Write, LocalBytes::Value, RemoteBytes::Key, dstOffset, kSignalBytes};
  return plan;
}

WorkPlan planPutSignal(uint64_t dstOffset, size_t bytes, uint64_t signalOffset) {
  WorkPlan plan = planPut(dstOffset, bytes);
  plan.items[plan.count++] = planSignal(signalOffset).items[0];
  return plan;
}

WorkPlan planFlush() {
  WorkPlan plan;
  plan.items[plan.count++] = {WorkOpcode::Read, LocalBytes::FlushLanding, RemoteBytes::FlushWord, 0, kSignalBytes};
  return plan;
}

OpTable::OpTable(int capacity) : ops_(capacity) {
  for (int slot = capacity - 1; slot >= 0; --slot) free_.push_back(slot);
}

int OpTable::acquire(const char* what, bool observed, int workRequests) {
  if (free_.empty()) return -1;
  const int slot = free_.back();
  free_.pop_back();
  Op& op = ops_[slot];
  op.taken = true;
  op.observed = observed;
  op.pendingWork = workRequests;
  op.status = 0;
  op.what = what;
  ++op.generation;
  ++inFlight_;
  return slot;
}

void OpTable::release(int slot) {
  ops_[slot].taken = false;
  free_.push_back(slot);
}

void OpTable::abandon(int slot) {
  --inFlight_;
  release(slot);
}

bool OpTable::completeWork(int slot, int status) {
  Op& op = ops_[slot];
  if (op.status == 0) op.status = status;
  if (--op.pendingWork > 0) return false;
  --inFlight_;
  if (!op.observed) release(slot);
  return true;
}

uint64_t OpTable::ticket(int slot) const {
  return (static_cast<uint64_t>(ops_[slot].generation) << 32) | static_cast<uint32_t>(slot + 1);
}

OpTable::Tested OpTable::test(uint64_t ticket, int* status, const char** what) {
  const int64_t slot = static_cast<int64_t>(ticket & 0xffffffffu) - 1;
  if (slot < 0 || slot >= capacity()) return Tested::Unknown;
  Op& op = ops_[slot];
  if (!op.taken || !op.observed || op.generation != static_cast<uint32_t>(ticket >> 32)) return Tested::Unknown;
  if (op.pendingWork > 0) return Tested::InFlight;
  *status = op.status;
  *what = op.what;
  release(static_cast<int>(slot));
  return Tested::Done;
}

}  // namespace verbs
}  // namespace alloy
