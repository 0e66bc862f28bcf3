// The bytes the verbs transport sends to peers, with no ibverbs header so that their checks are tested
// without a NIC: the address a transport publishes (one per transport, before any connection exists),
// the packed key of a registered region, and the handshake over the unreliable-datagram (UD) queue pair
// that pairs two reliable-connected (RC) queue pairs. All three are framed (framing.h: magic, length,
// checksum) and little-endian; decoding checks every field and says which one is wrong, so bytes of
// another backend, another Alloy version or a corrupted message fail before any verbs call uses them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alloy {
namespace verbs {

// What a peer needs to reach this transport: the port's address (LID on InfiniBand, GID on both; RoCE
// routes by GID), the UD queue pair that answers handshakes, and the word its flushes read. The same
// for every peer, so its size does not grow with the job (kAddressPayloadBytes).
struct VerbsAddress {
  uint8_t linkLayer = 0;  // 0: InfiniBand, 1: Ethernet (RoCE)
  uint8_t mtu = 0;        // active MTU in ibverbs' encoding, 1 (256 bytes) .. 5 (4096 bytes)
  uint16_t lid = 0;       // InfiniBand: the port's LID (non-zero); RoCE: unused, 0
  std::array<uint8_t, 16> gid{};
  uint32_t udQpn = 0;     // 24 bits
  uint64_t instance = 0;  // random, non-zero: tells this transport from an earlier one that had the same QPN
  uint64_t flushAddress = 0;  // an 8-byte word peers' flushes read (RDMA READ)
  uint32_t flushRkey = 0;
};

constexpr size_t kAddressPayloadBytes = 45;

void encodeAddress(const VerbsAddress& address, std::vector<uint8_t>* out);
// False, with the reason in *why, when bytes are not an address encodeAddress produced.
bool decodeAddress(const uint8_t* bytes, size_t n, VerbsAddress* out, std::string* why);

// A registered region as peers address it.
struct VerbsKey {
  uint64_t base = 0;
  uint64_t bytes = 0;
  uint32_t rkey = 0;
};

void encodeKey(const VerbsKey& key, std::vector<uint8_t>* out);
bool decodeKey(const uint8_t* bytes, size_t n, VerbsKey* out, std::string* why);

// One handshake message. The requester created an RC queue pair for the peer and sends its number and
// starting PSN; the responder creates its own for the requester, moves it to ready-to-send, and replies
// with its number and PSN, echoing the cookie. The sender's address rides along, so a responder that never
// saw the requester's blob can answer it (create an address handle) and set up the path.
struct Handshake {
  enum class Kind : uint8_t { Request = 1, Reply = 2 };
  Kind kind = Kind::Request;
  uint64_t to = 0;      // the addressed transport's instance: a message for an earlier transport is dropped
  uint64_t cookie = 0;  // the requester's name for the connection, echoed in the reply
  uint32_t qpn = 0;     // the sender's RC queue pair (24 bits)
  uint32_t psn = 0;     // its first packet sequence number (24 bits)
  VerbsAddress sender;
};

constexpr size_t kHandshakePayloadBytes = 25 + kAddressPayloadBytes;

void encodeHandshake(const Handshake& message, std::vector<uint8_t>* out);
bool decodeHandshake(const uint8_t* bytes, size_t n, Handshake* out, std::string* why);

}  // namespace verbs
}  // namespace alloy
