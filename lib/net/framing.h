// Bytes that travel between ranks (transport addresses, packed keys) are framed: a magic naming what they
// are, the payload's length and a checksum. Bytes from elsewhere (another backend, a stale or truncated
// blob, corruption) then fail with a clear message instead of reaching a library that trusts them: UCX
// reads a worker address without being told its length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alloy {
namespace net {

constexpr size_t kFrameHeaderBytes = 12;  // magic, payload length, checksum: three little-endian uint32

// Replaces *out with the framed payload.
void frame(uint32_t magic, const uint8_t* payload, size_t bytes, std::vector<uint8_t>* out);

// The payload of framed bytes; false, with the reason in *why, when they are not a frame of this magic.
bool unframe(uint32_t magic, const uint8_t* bytes, size_t n, const uint8_t** payload, size_t* payloadBytes,
             std::string* why);

}  // namespace net
}  // namespace alloy
