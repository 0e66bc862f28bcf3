// Which work requests the verbs transport posts for each data call, in which order (data before its
// signal; a flush is a read after the writes), and the table that bounds a connection's operations
// (lib/net_verbs/verbs_ops.h).
#include <gtest/gtest.h>

#include <string>

#include "verbs_ops.h"

namespace {

using alloy::verbs::LocalBytes;
using alloy::verbs::OpTable;
using alloy::verbs::RemoteBytes;
using alloy::verbs::WorkItem;
using alloy::verbs::WorkOpcode;
using alloy::verbs::WorkPlan;

void expectItem(const WorkItem& item, WorkOpcode opcode, LocalBytes local, RemoteBytes remote, uint64_t offset,
                size_t bytes) {
  EXPECT_EQ(item.opcode, opcode);
  EXPECT_EQ(item.local, local);
  EXPECT_EQ(item.remote, remote);
  EXPECT_EQ(item.remoteOffset, offset);
  EXPECT_EQ(item.bytes, bytes);
}

TEST(VerbsWorkPlan, PutIsOneWriteOfTheSource) {
  const WorkPlan plan = alloy::verbs::planPut(4096, 1 << 20);
  ASSERT_EQ(plan.count, 1);
  expectItem(plan.items[0], WorkOpcode::Write, LocalBytes::Source, RemoteBytes::Key, 4096, 1 << 20);
}

TEST(VerbsWorkPlan, SignalIsOneEightByteWriteOfTheValue) {
  const WorkPlan plan = alloy::verbs::planSignal(64);
  ASSERT_EQ(plan.count, 1);
  expectItem(plan.items[0], WorkOpcode::Write, LocalBytes::Value, RemoteBytes::Key, 64, 8);
}

// The order the interface promises: the data's write is posted, and so executed at the target, before
// the signal's, on the same queue pair in one call.
TEST(VerbsWorkPlan, PutSignalWritesTheDataThenTheSignal) {
  const WorkPlan plan = alloy::verbs::planPutSignal(128, 3000, 8);
  ASSERT_EQ(plan.count, 2);
  ASSERT_LE(plan.count, alloy::verbs::kMaxWorkPerOperation);
  expectItem(plan.items[0], WorkOpcode::Write, LocalBytes::Source, RemoteBytes::Key, 128, 3000);
  expectItem(plan.items[1], WorkOpcode::Write, LocalBytes::Value, RemoteBytes::Key, 8, 8);
}

// A flush reads: a write's completion only says the peer's HCA has the bytes, a read's that every earlier
// write of the queue pair is visible in the peer's memory. It reads the peer's flush word, not the
// caller's memory, so it needs no key and lands in this side's own word.
TEST(VerbsWorkPlan, FlushIsAReadOfThePeersFlushWord) {
  const WorkPlan plan = alloy::verbs::planFlush();
  ASSERT_EQ(plan.count, 1);
  expectItem(plan.items[0], WorkOpcode::Read, LocalBytes::FlushLanding, RemoteBytes::FlushWord, 0, 8);
}

// The channel's large transfer: puts, then a flush, then (once the flush completed) the header signal.
// Reads appear only in flushes, and no plan puts a write after its own read.
TEST(VerbsWorkPlan, OnlyFlushesRead) {
  for (const WorkPlan& plan : {alloy::verbs::planPut(0, 1), alloy::verbs::planSignal(0),
                               alloy::verbs::planPutSignal(0, 1, 8)})
    for (int i = 0; i < plan.count; ++i) EXPECT_EQ(plan.items[i].opcode, WorkOpcode::Write);
}

TEST(VerbsOpTable, RefusesBeyondItsCapacityUntilASlotIsFree) {
  OpTable table(3);
  EXPECT_EQ(table.capacity(), 3);
  const int a = table.acquire("put", false, 1);
  const int b = table.acquire("put+signal", false, 2);
  const int c = table.acquire("flush", true, 1);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_GE(c, 0);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ(table.acquire("put", false, 1), -1) << "a fourth operation beyond the bound";
  EXPECT_EQ(table.inFlight(), 3);
  EXPECT_EQ(table.held(), 3);

  // An unobserved operation frees its slot when its last work request completes, not before.
  EXPECT_FALSE(table.completeWork(b, 0));
  EXPECT_EQ(table.acquire("put", false, 1), -1) << "put+signal still has its signal at the NIC";
  EXPECT_TRUE(table.completeWork(b, 0));
  EXPECT_EQ(table.inFlight(), 2);
  EXPECT_EQ(table.held(), 2);
  EXPECT_GE(table.acquire("put", false, 1), 0);
}

TEST(VerbsOpTable, AnObservedOperationHoldsItsSlotUntilTested) {
  OpTable table(1);
  const int slot = table.acquire("flush", true, 1);
  ASSERT_GE(slot, 0);
  const uint64_t ticket = table.ticket(slot);
  EXPECT_NE(ticket, 0u);
  int status = -1;
  const char* what = nullptr;
  EXPECT_EQ(table.test(ticket, &status, &what), OpTable::Tested::InFlight);
  EXPECT_TRUE(table.completeWork(slot, 0));
  EXPECT_EQ(table.inFlight(), 0) << "completed at the NIC";
  EXPECT_EQ(table.held(), 1) << "but not tested";
  EXPECT_EQ(table.acquire("put", false, 1), -1);
  EXPECT_EQ(table.test(ticket, &status, &what), OpTable::Tested::Done);
  EXPECT_EQ(status, 0);
  EXPECT_STREQ(what, "flush");
  EXPECT_EQ(table.held(), 0);
  // Spent: the same ticket is unknown now, also after the slot is reused.
  EXPECT_EQ(table.test(ticket, &status, &what), OpTable::Tested::Unknown);
  const int again = table.acquire("signal", true, 1);
  ASSERT_EQ(again, slot);
  EXPECT_NE(table.ticket(again), ticket);
  EXPECT_EQ(table.test(ticket, &status, &what), OpTable::Tested::Unknown);
  EXPECT_EQ(table.test(0, &status, &what), OpTable::Tested::Unknown);
  EXPECT_EQ(table.test(table.ticket(again) + 5, &status, &what), OpTable::Tested::Unknown) << "a slot out of range";
}

TEST(VerbsOpTable, KeepsTheFirstFailureOfAnOperation) {
  OpTable table(2);
  const int slot = table.acquire("put+signal", true, 2);
  EXPECT_FALSE(table.completeWork(slot, 12));  // the data's write failed (retry exceeded, say)
  EXPECT_TRUE(table.completeWork(slot, 5));    // the signal was flushed after it
  int status = 0;
  const char* what = nullptr;
  EXPECT_EQ(table.test(table.ticket(slot), &status, &what), OpTable::Tested::Done);
  EXPECT_EQ(status, 12);
  EXPECT_STREQ(what, "put+signal");
}

TEST(VerbsOpTable, AnAbandonedOperationFreesItsSlotAtOnce) {
  OpTable table(1);
  const int slot = table.acquire("put", true, 1);
  const uint64_t ticket = table.ticket(slot);
  table.abandon(slot);
  EXPECT_EQ(table.inFlight(), 0);
  EXPECT_EQ(table.held(), 0);
  int status = 0;
  const char* what = nullptr;
  EXPECT_EQ(table.test(ticket, &status, &what), OpTable::Tested::Unknown);
  EXPECT_GE(table.acquire("put", false, 1), 0);
}

}  // namespace
