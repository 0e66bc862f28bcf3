#include "unique_id.h"

#include <netinet/in.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "error.h"

namespace alloy {
namespace {

constexpr uint32_t kMagic = 0x414c5955;  // "ALYU"
constexpr uint16_t kFormatVersion = 1;
constexpr int kChecksumOffset = 34;
constexpr int kUsedBytes = 38;

void putBig(uint8_t* at, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, value >>= 8) at[i] = static_cast<uint8_t>(value);
}

uint64_t getBig(const uint8_t* at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | at[i];
  return value;
}

uint32_t fnv1a32(const uint8_t* data, size_t bytes) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ data[i]) * 16777619u;
  return hash;
}

}  // namespace

void encodeUniqueId(const UniqueIdContents& contents, uint8_t out[kUniqueIdBytes]) {
  std::memset(out, 0, kUniqueIdBytes);
  putBig(out, kMagic, 4);
  putBig(out + 4, kFormatVersion, 2);
  putBig(out + 6, contents.root.family() == AF_INET ? 4 : 6, 2);
  putBig(out + 8, contents.root.port(), 2);
  contents.root.rawBytes(out + 10);
  putBig(out + 26, contents.secret, 8);
  putBig(out + kChecksumOffset, fnv1a32(out, kChecksumOffset), 4);
}

alloyResult_t decodeUniqueId(const uint8_t in[kUniqueIdBytes], const char* argument, UniqueIdContents* out) {
  if (getBig(in, 4) != kMagic)
    return fail(alloyInvalidArgument,
                "%s: not a unique id made by this library's ncclGetUniqueId (magic 0x%08llx, expected 0x%08x); the id "
                "must come from ncclGetUniqueId of Alloy's libnccl.so.2, unchanged",
                argument, static_cast<unsigned long long>(getBig(in, 4)), kMagic);
  if (getBig(in + 4, 2) != kFormatVersion)
    return fail(alloyInvalidArgument, "%s: unique id format version %llu, this library reads version %u", argument,
                static_cast<unsigned long long>(getBig(in + 4, 2)), kFormatVersion);
  if (getBig(in + kChecksumOffset, 4) != fnv1a32(in, kChecksumOffset))
    return fail(alloyInvalidArgument, "%s: the unique id is damaged (its checksum does not match its contents)",
                argument);
  for (int i = kUsedBytes; i < kUniqueIdBytes; ++i)
    if (in[i] != 0)
      return fail(alloyInvalidArgument, "%s: the unique id is damaged (byte %d, expected zero, is 0x%02x)", argument,
                  i, in[i]);
  const uint64_t family = getBig(in + 6, 2);
  if (family != 4 && family != 6)
    return fail(alloyInvalidArgument, "%s: address family %llu in the unique id; expected 4 or 6", argument,
                static_cast<unsigned long long>(family));
  ALLOY_TRY(SocketAddress::fromRaw(family == 4 ? AF_INET : AF_INET6, in + 10, static_cast<uint16_t>(getBig(in + 8, 2)),
                                   argument, &out->root));
  out->secret = getBig(in + 26, 8);
  return alloySuccess;
}

alloyResult_t randomSecret(uint64_t* out) {
  ssize_t got = 0;
  do {
    got = getrandom(out, sizeof(*out), 0);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof(*out)))
    return fail(alloySystemError, "getrandom failed: %s", got < 0 ? std::strerror(errno) : "short read");
  return alloySuccess;
}

}  // namespace alloy
