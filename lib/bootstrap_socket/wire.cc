#include "wire.h"

#include <netinet/in.h>

#include <cstring>

namespace alloy {

WireAddress toWire(const SocketAddress& address) {
  WireAddress wire;
  std::memset(&wire, 0, sizeof(wire));
  wire.family = address.family() == AF_INET ? 4 : 6;
  wire.port = address.port();
  address.rawBytes(wire.raw);
  return wire;
}

alloyResult_t fromWire(const WireAddress& wire, const char* what, SocketAddress* out) {
  return SocketAddress::fromRaw(wire.family == 4 ? AF_INET : wire.family == 6 ? AF_INET6 : -1, wire.raw, wire.port,
                                what, out);
}

}  // namespace alloy
