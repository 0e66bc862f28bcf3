#include "socket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "error.h"

namespace alloy {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left before deadline, for poll: at least 0, and at most 100 so that callers recheck often.
int pollMs(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left, 100)));
}

alloyResult_t makeNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return fail(alloySystemError, "fcntl(O_NONBLOCK) failed: %s", std::strerror(errno));
  return alloySuccess;
}

alloyResult_t newSocket(int family, Socket* out) {
  Socket s(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return fail(alloySystemError, "socket() failed: %s", std::strerror(errno));
  ALLOY_TRY(makeNonBlocking(s.fd()));
  *out = std::move(s);
  return alloySuccess;
}

}  // namespace

Deadline deadlineAfterMs(long long ms) { return Clock::now() + std::chrono::milliseconds(ms); }

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int Socket::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

alloyResult_t listenOn(const SocketAddress& address, Socket* out, SocketAddress* bound) {
  Socket s;
  ALLOY_TRY(newSocket(address.family(), &s));
  const int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0)
    return fail(alloySystemError, "bind to %s failed: %s", address.describe().c_str(), std::strerror(errno));
  if (::listen(s.fd(), SOMAXCONN) != 0) return fail(alloySystemError, "listen failed: %s", std::strerror(errno));
  *bound = address;
  if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&bound->storage), &bound->length) != 0)
    return fail(alloySystemError, "getsockname failed: %s", std::strerror(errno));
  *out = std::move(s);
  return alloySuccess;
}

alloyResult_t connectTo(const SocketAddress& address, Deadline deadline, const char* what, Socket* out) {
  std::string lastReason = "no attempt";
  do {
    Socket s;
    ALLOY_TRY(newSocket(address.family(), &s));
    int rc = ::connect(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage), address.length);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{s.fd(), POLLOUT, 0};
      while ((rc = ::poll(&p, 1, pollMs(deadline))) == 0 && Clock::now() < deadline) {}
      int error = rc > 0 ? 0 : ETIMEDOUT;
      socklen_t length = sizeof(error);
      if (rc > 0) getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc == 0) {
      const int one = 1;
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      *out = std::move(s);
      return alloySuccess;
    }
    lastReason = std::strerror(errno);
    // Nobody listens yet (the peer has not reached this step), or the network is slow: try again.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (Clock::now() < deadline);
  return fail(alloyTimeout, "could not connect to %s at %s before the bootstrap timeout (ALLOY_BOOTSTRAP_TIMEOUT_MS): %s",
              what, address.describe().c_str(), lastReason.c_str());
}

alloyResult_t acceptOne(const Socket& listener, Deadline deadline, Socket* out, SocketAddress* peer) {
  do {
    pollfd p{listener.fd(), POLLIN, 0};
    if (::poll(&p, 1, pollMs(deadline)) > 0) {
      *peer = SocketAddress();
      peer->length = sizeof(peer->storage);
      Socket s(::accept4(listener.fd(), reinterpret_cast<sockaddr*>(&peer->storage), &peer->length, SOCK_CLOEXEC));
      if (s.valid()) {
        ALLOY_TRY(makeNonBlocking(s.fd()));
        *out = std::move(s);
        return alloySuccess;
      }
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
        return fail(alloySystemError, "accept failed: %s", std::strerror(errno));
    }
  } while (Clock::now() < deadline);
  return fail(alloyTimeout, "no connection arrived before the bootstrap timeout (ALLOY_BOOTSTRAP_TIMEOUT_MS)");
}

alloyResult_t transfer(const Socket* sendTo, const void* sendData, size_t sendBytes, const Socket* recvFrom,
                       void* recvData, size_t recvBytes, Deadline deadline,
                       const std::function<void()>& progress, const char* what) {
  size_t sent = sendTo ? 0 : sendBytes, received = recvFrom ? 0 : recvBytes;
  while (sent < sendBytes || received < recvBytes) {
    pollfd fds[2];
    int n = 0, sendIndex = -1, recvIndex = -1;
    if (sent < sendBytes) { sendIndex = n; fds[n++] = pollfd{sendTo->fd(), POLLOUT, 0}; }
    if (received < recvBytes) { recvIndex = n; fds[n++] = pollfd{recvFrom->fd(), POLLIN, 0}; }
    const int ready = ::poll(fds, n, progress ? 0 : pollMs(deadline));
    if (ready < 0 && errno != EINTR) return fail(alloySystemError, "%s: poll failed: %s", what, std::strerror(errno));
    if (sendIndex >= 0 && (fds[sendIndex].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t rc = ::send(sendTo->fd(), static_cast<const char*>(sendData) + sent, sendBytes - sent, MSG_NOSIGNAL);
      if (rc < 0 && errno != EAGAIN && errno != EINTR)
        return fail(alloyRemoteError, "%s: the peer closed the connection (send: %s)", what, std::strerror(errno));
      if (rc > 0) sent += static_cast<size_t>(rc);
    }
    if (recvIndex >= 0 && (fds[recvIndex].revents & (POLLIN | POLLERR | POLLHUP))) {
      const ssize_t rc = ::recv(recvFrom->fd(), static_cast<char*>(recvData) + received, recvBytes - received, 0);
      if (rc == 0) return fail(alloyRemoteError, "%s: the peer closed the connection", what);
      if (rc < 0 && errno != EAGAIN && errno != EINTR)
        return fail(alloyRemoteError, "%s: recv failed: %s", what, std::strerror(errno));
      if (rc > 0) received += static_cast<size_t>(rc);
    }
    if (sent < sendBytes || received < recvBytes) {
      if (Clock::now() >= deadline)
        return fail(alloyTimeout, "%s: the peer did not answer before the bootstrap timeout (ALLOY_BOOTSTRAP_TIMEOUT_MS)",
                    what);
      if (progress) progress();
    }
  }
  return alloySuccess;
}

}  // namespace alloy
