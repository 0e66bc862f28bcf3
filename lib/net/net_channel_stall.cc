// What a channel reports when an operation stalls: which peers it waits for, in the error that fails
// it, and each peer's protocol state with the transport's tally, in the log. Apart from the proxy's
// step because it only reads the state, and runs once per failure rather than once per step.
#include "net_channel_internal.h"

#include <cstdio>
#include <ctime>
#include <string>

#include "device_comm.h"
#include "log.h"

namespace alloy {
namespace net {

std::string timeOfDay(WallClock::time_point at) {
  const std::time_t seconds = WallClock::to_time_t(at);
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::snprintf(text, sizeof(text), "%02d:%02d:%02d.%03lld", local.tm_hour, local.tm_min, local.tm_sec, ms);
  return text;
}

// Which peers the operation in hand waits for, and for what.
std::string NetChannel::describeStall() const {
  std::string waiting;
  for (const auto& p : peers_) {
    const char* send = p->send == SendState::Idle ? nullptr
                       : p->send == SendState::AwaitReady ? "its inbox" : "delivery of the data sent to it";
    const bool forData = p->recvBytes != 0;
    if (send == nullptr && !forData) continue;
    waiting += (waiting.empty() ? "" : ", ") + std::to_string(p->rank) + " (" +
               (forData ? (send != nullptr ? std::string("its data, and ") + send : "its data") : send) + ")";
  }
  char text[512];
  std::snprintf(text, sizeof(text), "%s timed out on rank %d of %d after %lld ms without progress, waiting for rank(s) "
                "%s between hosts (the communicator's timeout: alloyConfig_t.timeoutMs or ALLOY_TIMEOUT_MS)",
                operationName(current_ ? current_->operation : 0), config_.rank, config_.nranks, config_.timeoutMs,
                waiting.empty() ? "?" : waiting.c_str());
  return text;
}

// Every peer's side of the protocol and the transport's tally, one line each: with every rank's report of
// one stall, whether a message was lost before the transport completed it (the sender's tally shows it
// in flight), after (completed there, never seen here), or never sent (the protocol's state) can be told.
void NetChannel::logStallDetail() const {
  std::string recent;
  for (size_t k = servedCount_ > kServedKept ? servedCount_ - kServedKept : 0; k < servedCount_; ++k) {
    const Served& s = served_[k % kServedKept];
    const auto at = [](long long ticks) { return timeOfDay(WallClock::time_point(WallClock::duration(ticks))); };
    recent += " #" + std::to_string(s.id) + " " + at(s.startedAt) + "-" + (s.finishedAt != 0 ? at(s.finishedAt) : "");
  }
  std::string bells;
  for (int b = 0; b < kBoxes; ++b) {
    const uint32_t bell = __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE);
    bells += " " + (bell != 0 ? "#" + std::to_string(bell - 1) : std::string("-"));
  }
  logWarn("rank %d: stall detail: doorbells%s; the last operations served (id, found rung, finished):%s",
          config_.rank, bells.c_str(), recent.c_str());
  static const char* const kSendStates[] = {"idle", "awaiting ready or an eager slot", "put+signalling",
                                            "completing", "putting", "flushing", "signalling"};
  static_assert(sizeof(kSendStates) / sizeof(kSendStates[0]) == static_cast<size_t>(SendState::Signalling) + 1,
                "a name for every SendState, in its order");
  for (const auto& p : peers_) {
    const uint64_t ready = loadWord(staging_->base + readyOffset(p->index));
    const uint64_t header = loadWord(staging_->base + headerOffset(p->index));
    const size_t slot = p->recvOps % kNetEagerSlots;
    const uint64_t eager = loadWord(staging_->base + eagerHeaderOffset(p->index, slot));
    logWarn("rank %d: stall detail at %s, peer %d: send #%llu %s (ready word %llu); receive #%llu %s (header #%llu, "
            "%llu bytes; eager slot %zu: #%llu, %llu bytes); transport: %s", config_.rank, timeOfDay().c_str(), p->rank,
            static_cast<unsigned long long>(p->sendOps), kSendStates[static_cast<int>(p->send)],
            static_cast<unsigned long long>(ready), static_cast<unsigned long long>(p->recvOps),
            p->recvBytes != 0 ? "waiting" : "done", static_cast<unsigned long long>(header >> 32),
            static_cast<unsigned long long>(header & 0xffffffffull), slot, static_cast<unsigned long long>(eager >> 32),
            static_cast<unsigned long long>(eager & 0xffffffffull), transport_->describeTraffic(p->connection).c_str());
  }
}

}  // namespace net
}  // namespace alloy
