// The unique id's bytes (lib/bootstrap_socket/unique_id.h), against a layout written out here by hand, and
// the rejection of every damaged or foreign id before anything touches the network.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "error.h"
#include "unique_id.h"

namespace {

using alloy::kUniqueIdBytes;

alloy::SocketAddress ipv4(const char* text, uint16_t port) {
  uint8_t raw[4];
  EXPECT_EQ(inet_pton(AF_INET, text, raw), 1);
  alloy::SocketAddress address;
  EXPECT_EQ(alloy::SocketAddress::fromRaw(AF_INET, raw, port, "test", &address), alloySuccess);
  return address;
}

// FNV-1a 32, written again from its definition: the reference the id's checksum is compared with.
uint32_t referenceChecksum(const uint8_t* bytes, size_t n) {
  uint32_t h = 0x811c9dc5u;
  for (size_t i = 0; i < n; ++i) {
    h ^= bytes[i];
    h *= 0x01000193u;
  }
  return h;
}

void writeChecksum(uint8_t* id) {
  const uint32_t sum = referenceChecksum(id, 34);
  for (int i = 0; i < 4; ++i) id[34 + i] = static_cast<uint8_t>(sum >> (24 - 8 * i));
}

bool lastErrorHas(const char* text) { return std::string(alloy::lastError()).find(text) != std::string::npos; }

TEST(UniqueId, Ipv4LayoutByteForByte) {
  alloy::UniqueIdContents contents;
  contents.root = ipv4("192.0.2.7", 0x1234);
  contents.secret = 0x0102030405060708ull;
  uint8_t id[kUniqueIdBytes];
  std::memset(id, 0x5a, sizeof(id));  // poisoned: every byte must be written
  alloy::encodeUniqueId(contents, id);
  uint8_t expected[kUniqueIdBytes] = {'A', 'L', 'Y', 'U', 0, 1, 0, 4, 0x12, 0x34, 192, 0, 2, 7};
  for (int i = 0; i < 8; ++i) expected[26 + i] = static_cast<uint8_t>(i + 1);
  writeChecksum(expected);
  EXPECT_EQ(0, std::memcmp(id, expected, sizeof(id)));

  alloy::UniqueIdContents decoded;
  ASSERT_EQ(alloy::decodeUniqueId(id, "commId", &decoded), alloySuccess) << alloy::lastError();
  EXPECT_EQ(decoded.root.describe(), "192.0.2.7:4660");
  EXPECT_EQ(decoded.secret, contents.secret);
}

TEST(UniqueId, Ipv6RoundTrip) {
  uint8_t raw[16];
  ASSERT_EQ(inet_pton(AF_INET6, "fd00::2", raw), 1);
  alloy::UniqueIdContents contents;
  ASSERT_EQ(alloy::SocketAddress::fromRaw(AF_INET6, raw, 65535, "test", &contents.root), alloySuccess);
  contents.secret = ~0ull;
  uint8_t id[kUniqueIdBytes];
  alloy::encodeUniqueId(contents, id);
  EXPECT_EQ(id[7], 6);
  EXPECT_EQ(0, std::memcmp(id + 10, raw, 16));
  alloy::UniqueIdContents decoded;
  ASSERT_EQ(alloy::decodeUniqueId(id, "commId", &decoded), alloySuccess) << alloy::lastError();
  EXPECT_EQ(decoded.root.describe(), "[fd00::2]:65535");
  EXPECT_EQ(decoded.secret, ~0ull);
}

// Every single-bit change anywhere in the id is caught (magic, version, checksum or padding), and the message
// names the argument.
TEST(UniqueId, EveryFlippedBitIsRejected) {
  alloy::UniqueIdContents contents;
  contents.root = ipv4("10.1.2.3", 5000);
  contents.secret = 0xfeedfacecafebeefull;
  uint8_t id[kUniqueIdBytes];
  alloy::encodeUniqueId(contents, id);
  for (int byte = 0; byte < kUniqueIdBytes; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      uint8_t damaged[kUniqueIdBytes];
      std::memcpy(damaged, id, sizeof(id));
      damaged[byte] ^= static_cast<uint8_t>(1u << bit);
      alloy::UniqueIdContents out;
      ASSERT_EQ(alloy::decodeUniqueId(damaged, "commId", &out), alloyInvalidArgument) << "byte " << byte << " bit " << bit;
      ASSERT_TRUE(lastErrorHas("commId: ")) << alloy::lastError();
    }
  }
}

TEST(UniqueId, ForeignAndImpossibleIdsAreRejectedSayingWhy) {
  uint8_t id[kUniqueIdBytes];
  alloy::UniqueIdContents out;
  std::mt19937 random(7);
  for (uint8_t& b : id) b = static_cast<uint8_t>(random());
  EXPECT_EQ(alloy::decodeUniqueId(id, "commId", &out), alloyInvalidArgument);
  EXPECT_TRUE(lastErrorHas("not a unique id made by this library")) << alloy::lastError();

  // Well formed and checksummed, but impossible: version 2, family 5, port 0.
  struct Case {
    int offset;
    uint8_t value;
    const char* says;
  };
  for (const Case& c : {Case{5, 2, "format version 2"}, Case{7, 5, "address family 5"}, Case{9, 0, "port 0"}}) {
    alloy::UniqueIdContents contents;
    contents.root = ipv4("10.1.2.3", 5000);
    alloy::encodeUniqueId(contents, id);
    id[8] = c.offset == 9 ? 0 : id[8];
    id[c.offset] = c.value;
    writeChecksum(id);
    EXPECT_EQ(alloy::decodeUniqueId(id, "commId", &out), alloyInvalidArgument) << c.says;
    EXPECT_TRUE(lastErrorHas(c.says)) << alloy::lastError();
  }
}

TEST(UniqueId, SecretsDiffer) {
  uint64_t a = 0, b = 0;
  ASSERT_EQ(alloy::randomSecret(&a), alloySuccess);
  ASSERT_EQ(alloy::randomSecret(&b), alloySuccess);
  EXPECT_NE(a, b);
}

}  // namespace
