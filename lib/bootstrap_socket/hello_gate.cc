#include "hello_gate.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "error.h"
#include "log.h"

namespace alloy {
namespace {

int msUntil(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left.count(), 1 << 30)));
}

}  // namespace

HelloGate::HelloGate(const Socket& listener, size_t helloBytes, std::string where)
    : listener_(listener), helloBytes_(helloBytes), where_(std::move(where)) {}

HelloGate::~HelloGate() {
  if (strangers_ > kLoggedStrangers)
    logWarn("%s: %d connections that were not ranks of this job were dropped (the first %d are logged above)",
            where_.c_str(), strangers_, kLoggedStrangers);
}

void HelloGate::note(const SocketAddress& from, const char* why) {
  if (++strangers_ <= kLoggedStrangers)
    logWarn("%s: dropped a connection from %s: %s", where_.c_str(), from.describe().c_str(), why);
}

void HelloGate::turnedAway(const SocketAddress& from, const char* why) { note(from, why); }

void HelloGate::drop(size_t i, const char* why) {
  note(pending_[i].arrival.from, why);
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
}

void HelloGate::acceptAll(Deadline deadline) {
  for (;;) {
    Socket connection;
    SocketAddress from;
    // The listener is readable: acceptOne returns at once, or times out at once when another took it.
    if (acceptOne(listener_, std::chrono::steady_clock::now(), &connection, &from) != alloySuccess) return;
    if (pending_.size() == kMaxPending) drop(0, "more connections waited than the listener keeps (the oldest goes)");
    Pending p;
    p.arrival.socket = std::move(connection);
    p.arrival.from = from;
    p.arrival.hello.resize(helloBytes_);
    p.deadline = std::min(deadline, deadlineAfterMs(kHelloWaitMs));
    pending_.push_back(std::move(p));
  }
}

bool HelloGate::readFrom(size_t i) {
  Pending& p = pending_[i];
  const ssize_t rc = ::recv(p.arrival.socket.fd(), p.arrival.hello.data() + p.received, helloBytes_ - p.received, 0);
  if (rc == 0) {
    drop(i, "it closed before its hello was complete");
    return false;
  }
  if (rc < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) drop(i, std::strerror(errno));
    return false;
  }
  p.received += static_cast<size_t>(rc);
  return p.received == helloBytes_;
}

alloyResult_t HelloGate::next(Deadline deadline, const std::function<bool()>& stopping, Arrival* out) {
  for (;;) {
    if (stopping && stopping()) return alloyInProgress;
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = pending_.size(); i-- > 0;)
      if (pending_[i].deadline <= now) drop(i, "it sent no complete hello in time");
    if (now >= deadline)
      return fail(alloyTimeout, "%s: no rank arrived before the bootstrap timeout (ALLOY_BOOTSTRAP_TIMEOUT_MS)",
                  where_.c_str());

    std::vector<pollfd> fds;
    fds.reserve(pending_.size() + 1);
    fds.push_back(pollfd{listener_.fd(), POLLIN, 0});
    Deadline wake = std::min(deadline, now + std::chrono::milliseconds(kPollMs));
    for (const Pending& p : pending_) {
      fds.push_back(pollfd{p.arrival.socket.fd(), POLLIN, 0});
      wake = std::min(wake, p.deadline);
    }
    const int ready = ::poll(fds.data(), fds.size(), msUntil(wake));
    if (ready < 0 && errno != EINTR)
      return fail(alloySystemError, "%s: poll failed: %s", where_.c_str(), std::strerror(errno));
    if (ready <= 0) continue;
    // The pending connections first (their indices are those of this poll), newest to oldest so that a
    // drop moves none still to be read; then the new ones.
    for (size_t i = pending_.size(); i-- > 0;) {
      if ((fds[i + 1].revents & (POLLIN | POLLERR | POLLHUP)) == 0 || !readFrom(i)) continue;
      *out = std::move(pending_[i].arrival);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      return alloySuccess;
    }
    if (fds[0].revents & POLLIN) acceptAll(deadline);
  }
}

}  // namespace alloy
