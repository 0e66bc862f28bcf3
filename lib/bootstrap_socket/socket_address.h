// IPv4 and IPv6 socket addresses as the unique-id bootstrap passes them around, and the choice of the
// interface its sockets listen on (ALLOY_BOOTSTRAP_IFNAME).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "alloy.h"

namespace alloy {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  // "192.0.2.2:4242" or "[fd00::2]:4242", for messages.
  std::string describe() const;
  // The raw address bytes (4 for IPv4, 16 for IPv6) and back, for the wire formats.
  size_t rawBytes(uint8_t out[16]) const;
  static alloyResult_t fromRaw(int family, const uint8_t* raw, uint16_t port, const char* what, SocketAddress* out);
};

// The address this process's bootstrap sockets listen on: the first up interface whose name starts with
// ALLOY_BOOTSTRAP_IFNAME when set (an interface without an IPv4 or IPv6 address fails, naming it), else the
// first up interface that is not loopback (IPv4 before IPv6 on it), else loopback. Port 0.
alloyResult_t chooseBootstrapAddress(SocketAddress* out);

}  // namespace alloy
