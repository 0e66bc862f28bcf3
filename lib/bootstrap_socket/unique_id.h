// The 128 bytes of a unique id (NCCL's ncclUniqueId): where the root that gathers the ranks listens, and
// the secret every connection of the bootstrap must present. Written byte by byte in a fixed order
// (big-endian numbers), so that it means the same on every machine it is copied to:
//
//   offset  bytes  field
//   0       4      magic "ALYU"
//   4       2      format version (1)
//   6       2      address family: 4 (IPv4) or 6 (IPv6)
//   8       2      root's TCP port
//   10      16     root's address (IPv4: first 4 bytes, the rest zero)
//   26      8      secret
//   34      4      FNV-1a 32 of bytes 0..33
//   38      90     zero
//
// Anything else (another magic or version, a checksum that does not match, non-zero padding, a family
// or port that cannot be) is rejected with alloyInvalidArgument: a damaged or foreign id never reaches
// the network.
#pragma once

#include <cstdint>

#include "alloy.h"
#include "socket_address.h"

namespace alloy {

constexpr int kUniqueIdBytes = 128;

struct UniqueIdContents {
  SocketAddress root;
  uint64_t secret = 0;
};

void encodeUniqueId(const UniqueIdContents& contents, uint8_t out[kUniqueIdBytes]);
// argument names the id in messages ("commId").
alloyResult_t decodeUniqueId(const uint8_t in[kUniqueIdBytes], const char* argument, UniqueIdContents* out);

// 64 random bits from the kernel (getrandom), for secrets.
alloyResult_t randomSecret(uint64_t* out);

}  // namespace alloy
