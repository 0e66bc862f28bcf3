// The messages of the unique-id bootstrap. Plain structs sent as their bytes: every rank of a communicator
// runs the same build of Alloy (the endpoint blobs assume it too). Every connection starts with a hello
// that carries the id's secret; a listener drops, and logs, one that does not.
#pragma once

#include <cstdint>
#include <cstring>

#include "alloy.h"
#include "socket_address.h"

namespace alloy {

constexpr uint32_t kWireMagic = 0xa110b007u;
constexpr uint32_t kWireVersion = 1;

// What every message that opens a connection starts with: the id's secret proves the sender holds the id.
struct WireHeader {
  uint32_t magic;
  uint32_t version;
  uint64_t secret;
};

// A listening address: family 4 or 6, port, address bytes.
struct WireAddress {
  uint8_t family;
  uint8_t unused;
  uint16_t port;
  uint8_t raw[16];
};

// A rank to the root: who it is, how many ranks it expects, and where it listens for its ring neighbour.
struct RootHello {
  WireHeader header;
  int32_t nranks;
  int32_t rank;
  WireAddress listening;
};

// The root's answer: status alloySuccess, then nranks WireAddress by rank; or a failure and why.
struct RootReply {
  uint32_t magic;
  int32_t status;
  char message[256];
};

// A rank to the next rank of the ring.
struct PeerHello {
  WireHeader header;
  int32_t rank;
  int32_t unused;
};

// A zeroed hello of type Hello (padding travels too) whose header carries secret.
template <typename Hello>
Hello helloWith(uint64_t secret) {
  Hello hello;
  std::memset(&hello, 0, sizeof(hello));
  hello.header = WireHeader{kWireMagic, kWireVersion, secret};
  return hello;
}
// Whether a received header is this format's and presents secret.
inline bool presents(const WireHeader& header, uint64_t secret) {
  return header.magic == kWireMagic && header.version == kWireVersion && header.secret == secret;
}

WireAddress toWire(const SocketAddress& address);
alloyResult_t fromWire(const WireAddress& wire, const char* what, SocketAddress* out);

}  // namespace alloy
