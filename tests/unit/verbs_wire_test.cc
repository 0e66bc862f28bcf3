// The bytes the verbs transport sends to peers (lib/net_verbs/verbs_wire.h): the address in the endpoint
// blob, packed keys and handshake datagrams survive a round trip field by field, and bytes that are not
// theirs fail with the reason naming the field.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "framing.h"
#include "verbs_wire.h"

namespace {

using alloy::verbs::Handshake;
using alloy::verbs::VerbsAddress;
using alloy::verbs::VerbsKey;

VerbsAddress sampleAddress() {
  VerbsAddress a;
  a.linkLayer = 1;
  a.mtu = 5;
  a.lid = 0;
  for (int i = 0; i < 16; ++i) a.gid[i] = static_cast<uint8_t>(0xa0 + i);
  a.udQpn = 0xabcdef;
  a.instance = 0x0123456789abcdefull;
  a.flushAddress = 0x7ffd12345678ull;
  a.flushRkey = 0xfeedbeef;
  return a;
}

void expectSame(const VerbsAddress& a, const VerbsAddress& b) {
  EXPECT_EQ(a.linkLayer, b.linkLayer);
  EXPECT_EQ(a.mtu, b.mtu);
  EXPECT_EQ(a.lid, b.lid);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.udQpn, b.udQpn);
  EXPECT_EQ(a.instance, b.instance);
  EXPECT_EQ(a.flushAddress, b.flushAddress);
  EXPECT_EQ(a.flushRkey, b.flushRkey);
}

// The reason decodeAddress gives for `a` encoded (it must fail).
std::string addressRefusal(const VerbsAddress& a) {
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeAddress(a, &bytes);
  VerbsAddress out;
  std::string why;
  EXPECT_FALSE(alloy::verbs::decodeAddress(bytes.data(), bytes.size(), &out, &why));
  return why;
}

// Re-frames a modified payload, so that the checksum passes and only the field check can refuse it.
std::vector<uint8_t> reframed(const std::vector<uint8_t>& framed, size_t at, uint8_t value) {
  std::vector<uint8_t> payload(framed.begin() + alloy::net::kFrameHeaderBytes, framed.end());
  payload[at] = value;
  uint32_t magic = 0;
  for (int i = 0; i < 4; ++i) magic |= static_cast<uint32_t>(framed[i]) << (8 * i);
  std::vector<uint8_t> out;
  alloy::net::frame(magic, payload.data(), payload.size(), &out);
  return out;
}

TEST(VerbsWire, AddressRoundTripsAndFitsTheBlob) {
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeAddress(sampleAddress(), &bytes);
  EXPECT_EQ(bytes.size(), alloy::net::kFrameHeaderBytes + alloy::verbs::kAddressPayloadBytes);
  EXPECT_LE(bytes.size(), 1024u) << "the endpoint blob's address field";
  VerbsAddress out;
  std::string why;
  ASSERT_TRUE(alloy::verbs::decodeAddress(bytes.data(), bytes.size(), &out, &why)) << why;
  EXPECT_EQ(why, "");
  expectSame(out, sampleAddress());

  VerbsAddress ib = sampleAddress();
  ib.linkLayer = 0;
  ib.lid = 0x1234;
  alloy::verbs::encodeAddress(ib, &bytes);
  ASSERT_TRUE(alloy::verbs::decodeAddress(bytes.data(), bytes.size(), &out, &why)) << why;
  expectSame(out, ib);
}

TEST(VerbsWire, AddressFieldsAreLittleEndianAtFixedPlaces) {
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeAddress(sampleAddress(), &bytes);
  const uint8_t* p = bytes.data() + alloy::net::kFrameHeaderBytes;
  EXPECT_EQ(p[0], 1) << "format version";
  EXPECT_EQ(p[1], 1) << "link layer";
  EXPECT_EQ(p[2], 5) << "MTU code";
  EXPECT_EQ(p[5], 0xef) << "UD QPN, low byte first";
  EXPECT_EQ(p[7], 0xab);
  EXPECT_EQ(p[9], 0xa0) << "GID, network order as stored";
  EXPECT_EQ(p[25], 0xef) << "instance, low byte first";
}

TEST(VerbsWire, BadAddressBytesSayWhichFieldIsWrong) {
  VerbsAddress a = sampleAddress();
  a.linkLayer = 2;
  EXPECT_EQ(addressRefusal(a), "link layer 2; expected 0 (InfiniBand) or 1 (Ethernet)");
  a = sampleAddress();
  a.mtu = 0;
  EXPECT_EQ(addressRefusal(a), "MTU code 0; expected 1..5 (256..4096 bytes)");
  a.mtu = 6;
  EXPECT_EQ(addressRefusal(a), "MTU code 6; expected 1..5 (256..4096 bytes)");
  a = sampleAddress();
  a.linkLayer = 0;
  a.lid = 0;
  EXPECT_EQ(addressRefusal(a), "LID 0 on an InfiniBand port; expected the port's LID (is the subnet manager running?)");
  a = sampleAddress();
  a.udQpn = 1u << 24;
  EXPECT_EQ(addressRefusal(a), "UD queue pair number 16777216; expected 1..16777215 (24 bits)");
  a.udQpn = 0;
  EXPECT_EQ(addressRefusal(a), "UD queue pair number 0; expected 1..16777215 (24 bits)");
  a = sampleAddress();
  a.instance = 0;
  EXPECT_EQ(addressRefusal(a), "transport instance 0; expected a non-zero identity");
  a = sampleAddress();
  a.flushAddress = 0x1004;
  EXPECT_EQ(addressRefusal(a), "flush word at 0x1004; expected an 8-byte aligned address");

  std::vector<uint8_t> bytes;
  alloy::verbs::encodeAddress(sampleAddress(), &bytes);
  const std::vector<uint8_t> otherVersion = reframed(bytes, 0, 2);
  VerbsAddress out = sampleAddress();
  out.udQpn = 77;
  std::string why;
  EXPECT_FALSE(alloy::verbs::decodeAddress(otherVersion.data(), otherVersion.size(), &out, &why));
  EXPECT_EQ(why, "address format 2; expected 1 (a peer running another Alloy version)");
  EXPECT_EQ(out.udQpn, 77u) << "a refused address left its output untouched";
}

TEST(VerbsWire, ForeignTruncatedAndCorruptBytesAreRefused) {
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeAddress(sampleAddress(), &bytes);
  VerbsAddress out;
  std::string why;
  EXPECT_FALSE(alloy::verbs::decodeAddress(bytes.data(), bytes.size() - 1, &out, &why));
  EXPECT_EQ(why, "the header says 45 payload bytes, 44 were given (truncated or padded)");
  std::vector<uint8_t> corrupt = bytes;
  corrupt.back() ^= 0x40;
  EXPECT_FALSE(alloy::verbs::decodeAddress(corrupt.data(), corrupt.size(), &out, &why));
  EXPECT_EQ(why, "checksum mismatch (corrupted)");
  EXPECT_FALSE(alloy::verbs::decodeAddress(nullptr, 0, &out, &why));
  EXPECT_EQ(why, "0 bytes, fewer than a frame header (12)");

  // A key, or a handshake, is not an address, although all three are framed.
  std::vector<uint8_t> key;
  alloy::verbs::encodeKey(VerbsKey{0x1000, 64, 7}, &key);
  EXPECT_FALSE(alloy::verbs::decodeAddress(key.data(), key.size(), &out, &why));
  EXPECT_EQ(why, "wrong magic (not bytes of this kind from this transport)");

  // The right magic with a payload of another size (another version's layout).
  const std::vector<uint8_t> shortPayload(bytes.begin() + alloy::net::kFrameHeaderBytes, bytes.end() - 1);
  uint32_t magic = 0;
  for (int i = 0; i < 4; ++i) magic |= static_cast<uint32_t>(bytes[i]) << (8 * i);
  std::vector<uint8_t> shorter;
  alloy::net::frame(magic, shortPayload.data(), shortPayload.size(), &shorter);
  EXPECT_FALSE(alloy::verbs::decodeAddress(shorter.data(), shorter.size(), &out, &why));
  EXPECT_EQ(why, "payload of 44 bytes; expected 45");
}

TEST(VerbsWire, KeyRoundTripsAndRefusesEmptyOrWrappingRegions) {
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeKey(VerbsKey{0x7f0000001000ull, 1 << 20, 0x1234abcd}, &bytes);
  VerbsKey out;
  std::string why;
  ASSERT_TRUE(alloy::verbs::decodeKey(bytes.data(), bytes.size(), &out, &why)) << why;
  EXPECT_EQ(out.base, 0x7f0000001000ull);
  EXPECT_EQ(out.bytes, 1u << 20);
  EXPECT_EQ(out.rkey, 0x1234abcdu);

  alloy::verbs::encodeKey(VerbsKey{0x1000, 0, 1}, &bytes);
  EXPECT_FALSE(alloy::verbs::decodeKey(bytes.data(), bytes.size(), &out, &why));
  EXPECT_EQ(why, "a region of 0 bytes; expected a registered region");
  alloy::verbs::encodeKey(VerbsKey{UINT64_MAX - 15, 32, 1}, &bytes);
  EXPECT_FALSE(alloy::verbs::decodeKey(bytes.data(), bytes.size(), &out, &why));
  EXPECT_EQ(why, "region of 32 bytes at 0xfffffffffffffff0 wraps around the address space");

  std::vector<uint8_t> address;
  alloy::verbs::encodeAddress(sampleAddress(), &address);
  EXPECT_FALSE(alloy::verbs::decodeKey(address.data(), address.size(), &out, &why));
  EXPECT_EQ(why, "wrong magic (not bytes of this kind from this transport)");
}

Handshake sampleRequest() {
  Handshake m;
  m.kind = Handshake::Kind::Request;
  m.to = 0x1111222233334444ull;
  m.cookie = 42;
  m.qpn = 0x00beef;
  m.psn = 0xffffff;
  m.sender = sampleAddress();
  return m;
}

std::string handshakeRefusal(const Handshake& m) {
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeHandshake(m, &bytes);
  Handshake out;
  std::string why;
  EXPECT_FALSE(alloy::verbs::decodeHandshake(bytes.data(), bytes.size(), &out, &why));
  return why;
}

TEST(VerbsWire, HandshakeRoundTripsAndFitsADatagramBuffer) {
  for (Handshake::Kind kind : {Handshake::Kind::Request, Handshake::Kind::Reply}) {
    Handshake m = sampleRequest();
    m.kind = kind;
    std::vector<uint8_t> bytes;
    alloy::verbs::encodeHandshake(m, &bytes);
    EXPECT_EQ(bytes.size(), alloy::net::kFrameHeaderBytes + alloy::verbs::kHandshakePayloadBytes);
    EXPECT_LE(bytes.size(), 128u) << "Datagrams::kMessageBytes";
    Handshake out;
    std::string why;
    ASSERT_TRUE(alloy::verbs::decodeHandshake(bytes.data(), bytes.size(), &out, &why)) << why;
    EXPECT_EQ(out.kind, kind);
    EXPECT_EQ(out.to, m.to);
    EXPECT_EQ(out.cookie, m.cookie);
    EXPECT_EQ(out.qpn, m.qpn);
    EXPECT_EQ(out.psn, m.psn);
    expectSame(out.sender, m.sender);
  }
}

TEST(VerbsWire, MalformedHandshakesAreRefusedNamingTheField) {
  Handshake m = sampleRequest();
  m.kind = static_cast<Handshake::Kind>(3);
  EXPECT_EQ(handshakeRefusal(m), "message kind 3; expected 1 (request) or 2 (reply)");
  m = sampleRequest();
  m.qpn = 0;
  EXPECT_EQ(handshakeRefusal(m), "queue pair number 0; expected 1..16777215 (24 bits)");
  m.qpn = 1u << 24;
  EXPECT_EQ(handshakeRefusal(m), "queue pair number 16777216; expected 1..16777215 (24 bits)");
  m = sampleRequest();
  m.psn = 1u << 24;
  EXPECT_EQ(handshakeRefusal(m), "PSN 16777216; expected 0..16777215 (24 bits)");
  m = sampleRequest();
  m.sender.mtu = 9;
  EXPECT_EQ(handshakeRefusal(m), "sender's address: MTU code 9; expected 1..5 (256..4096 bytes)");

  // A datagram of another kind of bytes, or cut short, never reaches the fields.
  std::vector<uint8_t> address;
  alloy::verbs::encodeAddress(sampleAddress(), &address);
  Handshake out;
  std::string why;
  EXPECT_FALSE(alloy::verbs::decodeHandshake(address.data(), address.size(), &out, &why));
  EXPECT_EQ(why, "wrong magic (not bytes of this kind from this transport)");
  std::vector<uint8_t> bytes;
  alloy::verbs::encodeHandshake(sampleRequest(), &bytes);
  EXPECT_FALSE(alloy::verbs::decodeHandshake(bytes.data(), 30, &out, &why));
  EXPECT_EQ(why, "the header says 70 payload bytes, 18 were given (truncated or padded)");
}

}  // namespace
