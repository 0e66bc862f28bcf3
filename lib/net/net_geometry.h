// The staging geometry of a communicator's network channel (net_channel.h): how many bytes one round
// moves per rank on another host and direction, in chunks of what size. It bounds the channel's pinned
// memory, which grows with the ranks on other hosts: docs/architecture.md, "Memory per rank", has the
// formulas and docs/environment.md the variables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace alloy {
namespace net {

// Eager slots per rank on another host: a sender may run this many small transfers ahead of its
// receiver (net_channel.h).
constexpr int kNetEagerSlots = 4;
// ALLOY_NET_EAGER_BYTES's default.
constexpr size_t kNetDefaultEagerBytes = 64 << 10;

// Per rank on another host and direction, `slots` chunks of `slotBytes`, and kNetEagerSlots eager slots
// of eagerSlotBytes(). Sender and receiver cut a transfer into rounds of capacity() bytes and a sender
// addresses the receiver's inboxes and eager slots by them, so they must be the same on every rank of a
// communicator.
struct NetGeometry {
  int slots;
  size_t slotBytes;
  size_t eagerBytes = kNetDefaultEagerBytes;  // ALLOY_NET_EAGER_BYTES: the most an eager slot holds
  size_t capacity() const { return static_cast<size_t>(slots) * slotBytes; }
  // eagerBytes, but at most a quarter of the capacity, so that the slots never take more memory than
  // the inboxes; whole cache lines. 0: no eager slots.
  size_t eagerSlotBytes() const {
    const size_t quarter = capacity() / kNetEagerSlots;
    return (eagerBytes < quarter ? eagerBytes : quarter) / 64 * 64;
  }
};

// Granularity of slotBytes.
constexpr size_t kNetPageBytes = 4096;
// The least capacity the staging budget shrinks a round to: below it, a round's fixed costs (doorbell,
// "ready", header: tens of microseconds, docs/benchmarks.md) outweigh the time its bytes take on the wire,
// so a job with more ranks on other hosts exceeds the budget instead.
constexpr size_t kNetFloorBytes = 64 << 10;
// ALLOY_NET_STAGING_BYTES's default: today's 4 x 1 MiB per peer for up to 16 ranks on other hosts.
constexpr size_t kNetDefaultStagingBytes = size_t{256} << 20;

// The most per peer: ALLOY_NET_SLOTS x ALLOY_NET_SLOT_BYTES (rounded down to whole pages). Every rank of a
// job must set them alike; creation compares them.
NetGeometry netGeometry();
// ALLOY_NET_STAGING_BYTES: the budget for the boxes (inboxes and outboxes) of one rank's channel.
size_t netStagingBudget();

// The most ranks on other hosts that any rank has, with hostOf[r] the host of rank r.
size_t mostRemoteRanks(const std::vector<uint64_t>& hostOf);
// Bytes of the boxes of a rank with `remote` ranks on other hosts: an inbox and an outbox per peer in
// each of NetChannel::kBoxes boxes, capacity() bytes each.
size_t netBoxBytes(size_t remote, NetGeometry geometry);
// The geometry of a communicator whose ranks lie on hosts hostOf: `most` where the boxes of the rank with
// the most ranks on other hosts fit in budgetBytes; otherwise the largest capacity that fits, in whole
// pages, cut into as few chunks of at most most.slotBytes as it takes, but never below kNetFloorBytes
// or most.capacity(), whichever is less. It depends only on what every rank holds alike, never on the
// rank asking, so that every rank derives the same. `most`: 1+ slots of a positive multiple of
// kNetPageBytes.
NetGeometry fitNetGeometry(const std::vector<uint64_t>& hostOf, NetGeometry most, size_t budgetBytes);
// fitNetGeometry with the environment's values, as communicator creation takes it. With log set (one rank
// of the communicator), says at INFO where the budget shrank the capacity and warns where the floor
// exceeds it.
NetGeometry netGeometry(const std::vector<uint64_t>& hostOf, bool log);

}  // namespace net
}  // namespace alloy
