// TCP sockets for the unique-id bootstrap: an owning descriptor, and blocking-style calls that never
// wait past a deadline (a peer that died or never came must not hang a rank).
#pragma once

#include <chrono>
#include <functional>

#include "alloy.h"
#include "socket_address.h"

namespace alloy {

using Deadline = std::chrono::steady_clock::time_point;
Deadline deadlineAfterMs(long long ms);

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();

 private:
  int fd_ = -1;
};

// A listening socket on address (port 0: the kernel picks one); *bound gets the address with its port.
alloyResult_t listenOn(const SocketAddress& address, Socket* out, SocketAddress* bound);
// Connects to address, retrying while nobody listens there yet, until deadline (alloyTimeout). what
// names the peer in messages.
alloyResult_t connectTo(const SocketAddress& address, Deadline deadline, const char* what, Socket* out);
// Waits for one connection on listener until deadline (alloyTimeout).
alloyResult_t acceptOne(const Socket& listener, Deadline deadline, Socket* out, SocketAddress* peer);

// Sends and receives at once (either side may be absent: null socket), so that a ring of ranks that all
// send before they receive cannot block on full socket buffers. Returns when both are complete; a peer
// that closes is alloyRemoteError, the deadline alloyTimeout. progress, when set, is called between polls
// (which then do not sleep). what names the exchange in messages.
alloyResult_t transfer(const Socket* sendTo, const void* sendData, size_t sendBytes, const Socket* recvFrom,
                       void* recvData, size_t recvBytes, Deadline deadline,
                       const std::function<void()>& progress, const char* what);
inline alloyResult_t sendAll(const Socket& to, const void* data, size_t bytes, Deadline deadline, const char* what) {
  return transfer(&to, data, bytes, nullptr, nullptr, 0, deadline, nullptr, what);
}
inline alloyResult_t recvAll(const Socket& from, void* data, size_t bytes, Deadline deadline, const char* what) {
  return transfer(nullptr, nullptr, 0, &from, data, bytes, deadline, nullptr, what);
}

}  // namespace alloy
