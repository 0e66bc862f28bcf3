// The operations a channel serves: the table the caller fills (addOperation), the doorbells that start
// them, and the proxy's step (progress) that starts the operation in hand, drives every peer's side of
// the protocol, watches for stalls and releases the doorbell once it is done. Apart from the protocol
// because this is the one place that decides which operation runs and when it ends; the protocol moves
// the bytes of whichever it is given.
#include "net_channel_internal.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "device_comm.h"
#include "error.h"
#include "log.h"

namespace alloy {
namespace net {

alloyResult_t NetChannel::addOperation(NetOperation operation, bool persistent, uint32_t* id) {
  if (id == nullptr) return fail(alloyInvalidArgument, "id: expected a non-NULL pointer");
  for (const auto* list : {&operation.sends, &operation.recvs}) {
    const char* name = list == &operation.sends ? "sends" : "recvs";
    std::vector<char> seen(config_.nranks, 0);
    for (size_t i = 0; i < list->size(); ++i) {
      const NetMessage& m = (*list)[i];
      if (m.peer < 0 || m.peer >= config_.nranks || peerIndex_[m.peer] < 0)
        return fail(alloyInvalidArgument, "operation.%s[%zu].peer: %d is not a rank on another host", name, i, m.peer);
      if (seen[m.peer]++)
        return fail(alloyInvalidArgument, "operation.%s[%zu].peer: rank %d appears twice; expected one entry per peer",
                    name, i, m.peer);
      if (m.bytes == 0 || m.bytes > capacity())
        return fail(alloyInvalidArgument, "operation.%s[%zu].bytes: %zu; expected 1..%zu (capacity())", name, i,
                    m.bytes, capacity());
    }
  }
  auto stored = std::make_shared<const NetOperation>(std::move(operation));
  std::lock_guard<std::mutex> lock(mutex_);
  if (freeIds_.empty()) {
    if (operations_.size() >= 0x7fffffffu) return fail(alloyInternalError, "net: operation table full");
    freeIds_.push_back(static_cast<uint32_t>(operations_.size()));
    operations_.emplace_back();
    persistent_.push_back(0);
  }
  *id = freeIds_.back();
  freeIds_.pop_back();
  operations_[*id] = std::move(stored);
  persistent_[*id] = persistent;
  return alloySuccess;
}

void NetChannel::releaseOperation(uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (id >= operations_.size() || persistent_[id] || !operations_[id]) return;
  operations_[id].reset();
  freeIds_.push_back(id);
}

// A rung doorbell whose operation is to start now: of two, the earlier round of the launch (the stream
// rings round r + 1 before it waits for round r). An id that names no operation is start()'s to report.
// The words are read twice once one was found rung: a single pass could read round r's box before the
// stream rang it and round r + 1's after, and start r + 1 first. Round r + 1 is rung after round r, so
// once it was seen, a second read of round r's box sees round r.
int NetChannel::nextBox() {
  bool rung = false;
  for (int b = 0; b < kBoxes && !rung; ++b)
    rung = __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE) != 0;
  if (!rung) return -1;
  int box = -1;
  size_t round = 0;
  for (int b = 0; b < kBoxes; ++b) {
    const uint32_t bell = __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE);
    if (bell == 0) continue;
    size_t r = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bell - 1 < operations_.size() && operations_[bell - 1]) r = operations_[bell - 1]->round;
    }
    if (box < 0 || r < round) {
      box = b;
      round = r;
    }
  }
  return box;
}

alloyResult_t NetChannel::start(uint32_t id, int box) {
  currentId_ = id;
  currentBox_ = box;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id >= operations_.size() || !operations_[id])
      return fail(alloyInternalError, "net: doorbell %d rang for operation %u, which does not exist", box, id);
    current_ = operations_[id];
  }
  if (boxOf(current_->round) != box)
    return fail(alloyInternalError, "net: doorbell %d rang for operation %u of round %zu, which is staged in box %d",
                box, id, current_->round, boxOf(current_->round));
  for (const NetMessage& m : current_->sends) {
    Peer& p = *peers_[peerIndex_[m.peer]];
    ++p.sendOps;
    p.send = SendState::AwaitReady;
    p.sendBytes = m.bytes;
    p.putBytes = 0;
  }
  // The doorbell rang after the caller emptied the inboxes of earlier operations: they are free again.
  for (const NetMessage& m : current_->recvs) {
    Peer& p = *peers_[peerIndex_[m.peer]];
    ++p.recvOps;
    p.recvBytes = m.bytes;
  }
  lastMove_ = startedAt_ = Clock::now().time_since_epoch().count();
  served_[servedCount_++ % kServedKept] = Served{id, WallClock::now().time_since_epoch().count(), 0};
  inHand_ = NetStages{id, steadyNs(), 0, 0, 0, 0};
  logTrace("rank %d: channel %p: net operation %u (%s) starts: %zu sends, %zu receives", config_.rank,
           static_cast<void*>(this), id, operationName(current_->operation), current_->sends.size(),
           current_->recvs.size());
  return alloySuccess;
}

void NetChannel::finish() {
  const uint32_t id = currentId_;
  // An operation that completed, but took a quarter of the timeout or more: a peer that came late, or a
  // transfer that crawled. Logged so that a later timeout elsewhere can be traced to it.
  const double seconds = std::chrono::duration<double>(Clock::duration(Clock::now().time_since_epoch().count() -
                                                                        startedAt_)).count();
  served_[(servedCount_ - 1) % kServedKept].finishedAt = WallClock::now().time_since_epoch().count();
  inHand_.released = steadyNs();
  {
    std::lock_guard<std::mutex> lock(stagesMutex_);
    stages_[stagesCount_++ % kNetStagesKept] = inHand_;
  }
  if (error() == alloySuccess && seconds * 4000 >= config_.timeoutMs)
    logWarn("rank %d: net operation %u (%s) took %.1f s, until %s", config_.rank, id,
            operationName(current_->operation), seconds, timeOfDay().c_str());
  logTrace("rank %d: channel %p: net operation %u %s", config_.rank, static_cast<void*>(this), id,
           error() == alloySuccess ? "done" : "released (failed)");
  current_.reset();
  releaseOperation(id);
  __atomic_store_n(const_cast<uint32_t*>(doorbell(currentBox_)), 0u, __ATOMIC_RELEASE);
}

bool NetChannel::progressInbound() { return transport_->progressInbound(); }

bool NetChannel::progress() {
  transport_->progress();
  if (abortRequested_.load(std::memory_order_acquire) && error() == alloySuccess)
    failWith(alloyRemoteError, "aborted by alloyCommAbort on this rank");
  if (!current_) {
    // Between operations nothing is in flight (an operation ends once its puts completed and its
    // signals went out); the transport was driven above, so that peers' puts land.
    const int box = nextBox();
    if (box < 0) return error() == alloySuccess && signalOwedReadies();
    const uint32_t id = __atomic_load_n(const_cast<const uint32_t*>(doorbell(box)), __ATOMIC_ACQUIRE) - 1;
    const alloyResult_t r = error() == alloySuccess ? start(id, box) : error();
    if (r != alloySuccess) {
      if (error() == alloySuccess) failWith(r, lastError());
      // A failed channel moves nothing: the stream goes on, and the error reaches the caller.
      currentId_ = id;
      currentBox_ = box;
      inHand_ = NetStages{id, steadyNs(), 0, 0, 0, 0};  // start() may have failed before its stamp
      finish();
      return false;
    }
  }
  bool moved = false;
  alloyResult_t r = alloySuccess;
  // Eager sends first: each is one small message, which the peer takes in whatever its own state, and
  // in step a peer does not wait for this rank's "ready" before its own eager send (it has the credit of
  // the eager slots). Posted after the readies, an operation's data waited one more message on this
  // thread (over tcp a send() that runs the receiver's stack), and that wait was on the critical path of
  // every small operation that both sends and receives.
  if (eagerFirst_)
    for (auto& p : peers_)
      if (r == alloySuccess && p->send != SendState::Idle && p->sendBytes <= eagerBytes_) r = advanceSend(*p, &moved);
  // Then receives: a "ready" to every sender goes out before this rank's larger puts, which over tcp and
  // shared memory keep this thread copying for as long as the wire takes. Sent after them, a peer that
  // sends to this rank waited that long before it started, and the two directions of a pair ran one
  // after the other (seen in a proxy trace of 2 virtual hosts over tcp on 2xH200) instead of side by
  // side, as they must where a NIC moves the bytes.
  for (auto& p : peers_)
    if (r == alloySuccess) r = advanceRecv(*p, &moved);
  for (auto& p : peers_)
    if (r == alloySuccess) r = advanceSend(*p, &moved);
  if (r != alloySuccess) failWith(r, lastError());
  const long long now = Clock::now().time_since_epoch().count();
  if (moved) lastMove_ = now;
  if (error() == alloySuccess && now - lastMove_ > std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::milliseconds(config_.timeoutMs)).count()) {
    logStallDetail();
    failWith(alloyTimeout, describeStall());
  }
  bool posted = true, sent = true, in = true;
  for (auto& p : peers_) {
    posted = posted && (p->send == SendState::Idle || p->send == SendState::Completing);
    sent = sent && p->send == SendState::Idle;
    in = in && p->recvBytes == 0;
  }
  stampStages(posted, sent, in);
  if ((sent && in) || error() != alloySuccess) finish();
  return true;
}

void NetChannel::stampStages(bool posted, bool sent, bool in) {
  if (posted && inHand_.posted == 0 && !current_->sends.empty()) inHand_.posted = steadyNs();
  if (sent && inHand_.sent == 0 && !current_->sends.empty()) inHand_.sent = steadyNs();
  if (in && inHand_.in == 0 && !current_->recvs.empty()) inHand_.in = steadyNs();
}

size_t NetChannel::recentStages(NetStages* out, size_t max) const {
  std::lock_guard<std::mutex> lock(stagesMutex_);
  const size_t kept = stagesCount_ < kNetStagesKept ? stagesCount_ : kNetStagesKept;
  const size_t n = max < kept ? max : kept;
  for (size_t k = 0; k < n; ++k) out[k] = stages_[(stagesCount_ - n + k) % kNetStagesKept];
  return n;
}

}  // namespace net
}  // namespace alloy
