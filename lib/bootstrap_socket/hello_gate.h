// Where a bootstrap listener takes connections (the root, a rank waiting for its ring neighbour): every
// connection that has not yet said who it is is read side by side with the others, as its bytes come,
// until it has sent a fixed-size hello. A connection that says nothing, trickles, closes or floods the
// listener holds up nobody: each has a deadline of its own, at most kMaxPending wait at once (the oldest
// gives way to a new one), and the caller's own deadline is checked on every turn, whatever arrives.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "alloy.h"
#include "socket.h"

namespace alloy {

class HelloGate {
 public:
  // A connection and the hello it sent.
  struct Arrival {
    Socket socket;
    SocketAddress from;
    std::vector<unsigned char> hello;
  };

  static constexpr size_t kMaxPending = 256;
  // How long one connection may take to send its hello (less where the caller's deadline comes first).
  static constexpr long long kHelloWaitMs = 5000;

  // listener stays the caller's and must outlive the gate; where names the listener in log lines.
  HelloGate(const Socket& listener, size_t helloBytes, std::string where);
  ~HelloGate();
  HelloGate(const HelloGate&) = delete;
  HelloGate& operator=(const HelloGate&) = delete;

  // The next connection whose hello is complete, waiting until deadline (alloyTimeout, with the
  // variable's name in the message); stopping, when set, is asked at least every kPollMs and makes next
  // return alloyInProgress.
  alloyResult_t next(Deadline deadline, const std::function<bool()>& stopping, Arrival* out);

  // A connection the caller turned away (the hello was not what it waits for): logged, within the cap.
  void turnedAway(const SocketAddress& from, const char* why);

 private:
  struct Pending {
    Arrival arrival;
    size_t received = 0;
    Deadline deadline;
  };
  static constexpr int kPollMs = 100;
  static constexpr int kLoggedStrangers = 8;

  void acceptAll(Deadline deadline);
  // Reads what pending connection i has sent; true once its hello is complete. Drops it on close or error.
  bool readFrom(size_t i);
  void drop(size_t i, const char* why);
  void note(const SocketAddress& from, const char* why);

  const Socket& listener_;
  size_t helloBytes_;
  std::string where_;
  std::vector<Pending> pending_;
  int strangers_ = 0;  // connections dropped or turned away, for the log's cap
};

}  // namespace alloy
