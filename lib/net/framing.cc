#include "framing.h"

#include <cstring>

namespace alloy {
namespace net {
namespace {

// FNV-1a: catches truncation and stray bytes, which is all it is for (not an authentication).
uint32_t checksum(const uint8_t* bytes, size_t n) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < n; ++i) hash = (hash ^ bytes[i]) * 16777619u;
  return hash;
}

void putWord(uint8_t* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t getWord(const uint8_t* at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(at[i]) << (8 * i);
  return v;
}

}  // namespace

void frame(uint32_t magic, const uint8_t* payload, size_t bytes, std::vector<uint8_t>* out) {
  out->resize(kFrameHeaderBytes + bytes);
  putWord(out->data(), magic);
  putWord(out->data() + 4, static_cast<uint32_t>(bytes));
  putWord(out->data() + 8, checksum(payload, bytes));
  if (bytes > 0) std::memcpy(out->data() + kFrameHeaderBytes, payload, bytes);
}

bool unframe(uint32_t magic, const uint8_t* bytes, size_t n, const uint8_t** payload, size_t* payloadBytes,
             std::string* why) {
  if (bytes == nullptr || n < kFrameHeaderBytes) {
    *why = std::to_string(n) + " bytes, fewer than a frame header (" + std::to_string(kFrameHeaderBytes) + ")";
    return false;
  }
  if (getWord(bytes) != magic) {
    *why = "wrong magic (not bytes of this kind from this transport)";
    return false;
  }
  const size_t length = getWord(bytes + 4);
  if (length != n - kFrameHeaderBytes) {
    *why = "the header says " + std::to_string(length) + " payload bytes, " + std::to_string(n - kFrameHeaderBytes) +
           " were given (truncated or padded)";
    return false;
  }
  if (getWord(bytes + 8) != checksum(bytes + kFrameHeaderBytes, length)) {
    *why = "checksum mismatch (corrupted)";
    return false;
  }
  *payload = bytes + kFrameHeaderBytes;
  *payloadBytes = length;
  return true;
}

}  // namespace net
}  // namespace alloy
