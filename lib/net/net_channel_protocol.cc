// The protocol with one peer, both directions (net_channel.h describes it): the send state machine that
// puts or put-signals the bytes and signals the header, and the receive side that signals "ready" and
// waits for the header. The two halves sit together because each must read what the other writes:
// the header's encoding, the eager slots' credit, the ready word.
#include "net_channel_internal.h"

#include <algorithm>
#include <cstring>

#include "device_comm.h"
#include "error.h"

namespace alloy {
namespace net {
namespace {

// The header a sender signals after its bytes: the operation's number in the pair's sequence (low 32
// bits; never the 0 of an empty header before it wraps, where the receiver compares with the value it
// expects anyway) and the byte count (capacity() is below 2^32).
uint64_t transferHeader(uint64_t sequence, size_t bytes) {
  return ((sequence & 0xffffffffull) << 32) | static_cast<uint64_t>(bytes);
}

// Tests the request a send waits for (its putSignal or its flush); once it completed, the send moves on
// to `next`.
alloyResult_t awaitRequest(Transport* transport, Request* pending, SendState* state, SendState next, bool* moved) {
  bool done = false;
  ALLOY_TRY(transport->test(pending, &done));
  if (!done) return alloySuccess;
  *state = next;
  *moved = true;
  return alloySuccess;
}

}  // namespace

// Sending to p: a transfer of up to eagerBytes_ goes as one putSignal (data and header in one message:
// no flush round trip) into p's eager slot of operation m (m modulo kNetEagerSlots) without waiting for
// p to reach m. The slot was last used by operation m - kNetEagerSlots, which p copied out before it
// started any later operation, and a "ready" for m - kNetEagerSlots + 1 or later says that it did. So
// a sender runs up to kNetEagerSlots small operations ahead of its receiver, as a broadcast's root or a
// reduce's leaves do. A larger transfer waits for p to be ready for m (its inbox is then free), is put
// in chunks of slotBytes, the connection flushed, and only then the header signalled. The completed
// flush is what orders the header after the data (Transport::signal orders nothing): UCX 1.22 stripes
// puts over several tcp lanes (lo and eth0) and sends the signal's atomic on another, and without the
// flush receivers saw the header first and read stale bytes (4 virtual hosts over tcp, one H100). The
// flush costs one round trip per operation. Puts go without requests, so that no window, however many
// chunks, fills the connection's table of observed operations: the flush's completion covers them.
alloyResult_t NetChannel::advanceSend(Peer& p, bool* moved) {
  switch (p.send) {
    case SendState::Idle:
      return alloySuccess;
    case SendState::AwaitReady: {
      // p is ready for operation `ready`: it copied out every eager slot of the operations before.
      const uint64_t ready = loadWord(staging_->base + readyOffset(p.index));
      if (p.sendBytes > eagerBytes_) {
        if (ready < p.sendOps) return alloySuccess;
        *moved = true;
        p.send = SendState::Putting;
        return advanceSend(p, moved);
      }
      // Before the first "ready", every slot is free: operations 1 .. kNetEagerSlots may go.
      if (std::max<uint64_t>(ready, 1) + kNetEagerSlots <= p.sendOps) return alloySuccess;
      *moved = true;
      p.send = SendState::PutSignalling;
    }
      [[fallthrough]];
    case SendState::PutSignalling: {
      const size_t slot = p.sendOps % kNetEagerSlots;
      const alloyResult_t r = transport_->putSignal(p.connection, outbox_->base + outboxOffset(p.index, currentBox_),
                                                    p.sendBytes, p.key, eagerOffset(p.remoteThere, p.mineThere, slot),
                                                    eagerHeaderOffset(p.mineThere, slot),
                                                    transferHeader(p.sendOps, p.sendBytes), &p.pending);
      if (r == alloyInProgress) return alloySuccess;
      ALLOY_TRY(r);
      p.send = SendState::Completing;
      *moved = true;
    }
      [[fallthrough]];
    case SendState::Completing:
      return awaitRequest(transport_.get(), &p.pending, &p.send, SendState::Idle, moved);
    case SendState::Putting:
      while (p.putBytes < p.sendBytes) {
        const size_t length = std::min(config_.geometry.slotBytes, p.sendBytes - p.putBytes);
        const alloyResult_t r = transport_->put(
            p.connection, outbox_->base + outboxOffset(p.index, currentBox_) + p.putBytes, outbox_->registration,
            p.key, inboxOffset(p.remoteThere, p.mineThere, currentBox_) + p.putBytes, length, nullptr);
        if (r == alloyInProgress) return alloySuccess;
        ALLOY_TRY(r);
        p.putBytes += length;
        *moved = true;
      }
      {
        const alloyResult_t r = transport_->flush(p.connection, &p.pending);
        if (r == alloyInProgress) return alloySuccess;
        ALLOY_TRY(r);
      }
      p.send = SendState::Flushing;
      [[fallthrough]];
    case SendState::Flushing:
      ALLOY_TRY(awaitRequest(transport_.get(), &p.pending, &p.send, SendState::Signalling, moved));
      if (p.send != SendState::Signalling) return alloySuccess;
      [[fallthrough]];
    case SendState::Signalling: {
      const alloyResult_t r = transport_->signal(p.connection, p.key, headerOffset(p.mineThere),
                                                 transferHeader(p.sendOps, p.sendBytes), nullptr);
      if (r == alloyInProgress) return alloySuccess;
      ALLOY_TRY(r);
      p.send = SendState::Idle;
      *moved = true;
      return alloySuccess;
    }
  }
  return alloySuccess;
}

// Whether this operation's header from p has come, in p's eager slot of it or after the inbox (the sender
// chooses by its byte count, and both are watched, so that counts that differ fail instead of waiting for
// the timeout).
bool NetChannel::headerArrived(const Peer& p, uint64_t* header, bool* eager) const {
  const size_t slot = p.recvOps % kNetEagerSlots;
  const uint64_t sequence = p.recvOps & 0xffffffffull;
  const uint64_t inSlot = loadWord(staging_->base + eagerHeaderOffset(p.index, slot));
  *eager = inSlot >> 32 == sequence;
  *header = *eager ? inSlot : loadWord(staging_->base + headerOffset(p.index));
  return *header >> 32 == sequence;
}

// Tells p that this rank is ready for its receive operation recvOps (the operation's inbox for p is free,
// and every eager slot of the operations before it was copied out). alloyInProgress: not now, try again.
alloyResult_t NetChannel::signalReady(Peer& p, bool* moved) {
  ALLOY_TRY(transport_->signal(p.connection, p.key, readyOffset(p.mineThere), p.recvOps, nullptr));
  p.readySignalled = p.recvOps;
  *moved = true;
  return alloySuccess;
}

// Receiving from p: tells p this rank is ready, waits for the header of this operation and checks its byte
// count. Eager bytes are copied from the slot into the inbox, where the stream takes them from.
// A small transfer often arrives before its operation starts here (a broadcast's root runs ahead; in an
// exchange the peer's data lands while this rank's own send is posted). Its sender needs no ready for it,
// only the credit of the slots, so with deferReady_ the ready waits until the doorbell is released
// (signalOwedReadies): over tcp the signal is one more send() that runs the receiver's stack, and before
// the release it delayed every such operation by that long. It goes at once where the data is not in
// (a larger sender waits for it), and where the ready before it is owed as well: the sender, which may run
// kNetEagerSlots operations ahead of the last ready, then keeps at least two of them.
alloyResult_t NetChannel::advanceRecv(Peer& p, bool* moved) {
  if (p.recvBytes == 0) return alloySuccess;
  uint64_t header = 0;
  bool eager = false;
  bool arrived = headerArrived(p, &header, &eager);
  const bool owed = p.readySignalled < p.recvOps;
  if (owed && (!arrived || !deferReady_ || p.recvOps - p.readySignalled >= 2)) {
    const alloyResult_t r = signalReady(p, moved);
    if (r == alloyInProgress) return alloySuccess;
    ALLOY_TRY(r);
    if (!arrived) arrived = headerArrived(p, &header, &eager);
  }
  if (!arrived) return alloySuccess;
  if ((header & 0xffffffffull) != p.recvBytes)
    return fail(alloyRemoteError,
                "%s: rank %d sent %llu bytes where rank %d receives %zu from it; sizes must match on both sides",
                operationName(current_->operation), p.rank, static_cast<unsigned long long>(header & 0xffffffffull),
                config_.rank, p.recvBytes);
  if (eager)
    std::memcpy(staging_->base + inboxOffset(peers_.size(), p.index, currentBox_),
                staging_->base + eagerOffset(peers_.size(), p.index, p.recvOps % kNetEagerSlots), p.recvBytes);
  p.recvBytes = 0;
  *moved = true;
  return alloySuccess;
}

// Between operations, with no doorbell rung: the readies that advanceRecv let wait. Returns whether one went.
bool NetChannel::signalOwedReadies() {
  bool moved = false;
  for (auto& p : peers_) {
    if (p->readySignalled == p->recvOps) continue;
    const alloyResult_t r = signalReady(*p, &moved);
    if (r != alloySuccess && r != alloyInProgress) failWith(r, lastError());
  }
  return moved;
}

}  // namespace net
}  // namespace alloy
