#include "verbs_wire.h"

#include <cstdio>

#include "framing.h"

namespace alloy {
namespace verbs {
namespace {

constexpr uint32_t kAddressMagic = 0x41425641u;    // "AVBA": a verbs transport's address
constexpr uint32_t kKeyMagic = 0x4b425641u;        // "AVBK": a verbs packed key
constexpr uint32_t kHandshakeMagic = 0x48425641u;  // "AVBH": a handshake message
constexpr size_t kKeyPayloadBytes = 20;
constexpr uint8_t kAddressFormat = 1;  // raised whenever the address layout changes
constexpr uint32_t kMax24 = (1u << 24) - 1;  // queue pair numbers and PSNs are 24-bit fields
constexpr uint8_t kMinMtu = 1, kMaxMtu = 5;

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  void put(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_->push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  void put(const std::array<uint8_t, 16>& bytes) { out_->insert(out_->end(), bytes.begin(), bytes.end()); }

 private:
  std::vector<uint8_t>* out_;
};

// Reads fields in order from a payload whose size the caller checked.
class Reader {
 public:
  explicit Reader(const uint8_t* at) : at_(at) {}
  uint64_t get(int bytes) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(at_[i]) << (8 * i);
    at_ += bytes;
    return value;
  }
  void get(std::array<uint8_t, 16>* bytes) {
    for (uint8_t& b : *bytes) b = *at_++;
  }
  const uint8_t* at() const { return at_; }

 private:
  const uint8_t* at_;
};

std::string format(const char* fmt, unsigned long long a, unsigned long long b = 0) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, a, b);
  return text;
}

void writeAddress(const VerbsAddress& a, Writer* w) {
  w->put(kAddressFormat, 1);
  w->put(a.linkLayer, 1);
  w->put(a.mtu, 1);
  w->put(a.lid, 2);
  w->put(a.udQpn, 4);
  w->put(a.gid);
  w->put(a.instance, 8);
  w->put(a.flushAddress, 8);
  w->put(a.flushRkey, 4);
}

// The address fields of a payload of kAddressPayloadBytes.
bool readAddress(Reader* r, VerbsAddress* out, std::string* why) {
  VerbsAddress a;
  const uint64_t version = r->get(1);
  a.linkLayer = static_cast<uint8_t>(r->get(1));
  a.mtu = static_cast<uint8_t>(r->get(1));
  a.lid = static_cast<uint16_t>(r->get(2));
  a.udQpn = static_cast<uint32_t>(r->get(4));
  r->get(&a.gid);
  a.instance = r->get(8);
  a.flushAddress = r->get(8);
  a.flushRkey = static_cast<uint32_t>(r->get(4));
  if (version != kAddressFormat)
    *why = format("address format %llu; expected %llu (a peer running another Alloy version)", version, kAddressFormat);
  else if (a.linkLayer > 1)
    *why = format("link layer %llu; expected 0 (InfiniBand) or 1 (Ethernet)", a.linkLayer);
  else if (a.mtu < kMinMtu || a.mtu > kMaxMtu)
    *why = format("MTU code %llu; expected 1..5 (256..4096 bytes)", a.mtu);
  else if (a.linkLayer == 0 && a.lid == 0)
    *why = "LID 0 on an InfiniBand port; expected the port's LID (is the subnet manager running?)";
  else if (a.udQpn == 0 || a.udQpn > kMax24)
    *why = format("UD queue pair number %llu; expected 1..%llu (24 bits)", a.udQpn, kMax24);
  else if (a.instance == 0)
    *why = "transport instance 0; expected a non-zero identity";
  else if (a.flushAddress % 8 != 0)
    *why = format("flush word at 0x%llx; expected an 8-byte aligned address", a.flushAddress);
  if (!why->empty()) return false;
  *out = a;
  return true;
}

// unframe, then the payload size this format has.
bool payloadOf(uint32_t magic, const uint8_t* bytes, size_t n, size_t expected, const uint8_t** payload,
               std::string* why) {
  size_t payloadBytes = 0;
  if (!net::unframe(magic, bytes, n, payload, &payloadBytes, why)) return false;
  if (payloadBytes == expected) return true;
  *why = format("payload of %llu bytes; expected %llu", payloadBytes, expected);
  return false;
}

}  // namespace

void encodeAddress(const VerbsAddress& address, std::vector<uint8_t>* out) {
  std::vector<uint8_t> payload;
  Writer w(&payload);
  writeAddress(address, &w);
  net::frame(kAddressMagic, payload.data(), payload.size(), out);
}

bool decodeAddress(const uint8_t* bytes, size_t n, VerbsAddress* out, std::string* why) {
  why->clear();
  const uint8_t* payload = nullptr;
  if (!payloadOf(kAddressMagic, bytes, n, kAddressPayloadBytes, &payload, why)) return false;
  Reader r(payload);
  return readAddress(&r, out, why);
}

void encodeKey(const VerbsKey& key, std::vector<uint8_t>* out) {
  std::vector<uint8_t> payload;
  Writer w(&payload);
  w.put(key.base, 8);
  w.put(key.bytes, 8);
  w.put(key.rkey, 4);
  net::frame(kKeyMagic, payload.data(), payload.size(), out);
}

bool decodeKey(const uint8_t* bytes, size_t n, VerbsKey* out, std::string* why) {
  why->clear();
  const uint8_t* payload = nullptr;
  if (!payloadOf(kKeyMagic, bytes, n, kKeyPayloadBytes, &payload, why)) return false;
  Reader r(payload);
  VerbsKey k;
  k.base = r.get(8);
  k.bytes = r.get(8);
  k.rkey = static_cast<uint32_t>(r.get(4));
  if (k.bytes == 0) *why = "a region of 0 bytes; expected a registered region";
  else if (k.base + k.bytes < k.base)
    *why = format("region of %llu bytes at 0x%llx wraps around the address space", k.bytes, k.base);
  if (!why->empty()) return false;
  *out = k;
  return true;
}

void encodeHandshake(const Handshake& message, std::vector<uint8_t>* out) {
  std::vector<uint8_t> payload;
  Writer w(&payload);
  w.put(static_cast<uint8_t>(message.kind), 1);
  w.put(message.to, 8);
  w.put(message.cookie, 8);
  w.put(message.qpn, 4);
  w.put(message.psn, 4);
  writeAddress(message.sender, &w);
  net::frame(kHandshakeMagic, payload.data(), payload.size(), out);
}

bool decodeHandshake(const uint8_t* bytes, size_t n, Handshake* out, std::string* why) {
  why->clear();
  const uint8_t* payload = nullptr;
  if (!payloadOf(kHandshakeMagic, bytes, n, kHandshakePayloadBytes, &payload, why)) return false;
  Reader r(payload);
  Handshake m;
  const uint64_t kind = r.get(1);
  m.to = r.get(8);
  m.cookie = r.get(8);
  m.qpn = static_cast<uint32_t>(r.get(4));
  m.psn = static_cast<uint32_t>(r.get(4));
  if (kind != static_cast<uint8_t>(Handshake::Kind::Request) && kind != static_cast<uint8_t>(Handshake::Kind::Reply))
    *why = format("message kind %llu; expected 1 (request) or 2 (reply)", kind);
  else if (m.qpn == 0 || m.qpn > kMax24)
    *why = format("queue pair number %llu; expected 1..%llu (24 bits)", m.qpn, kMax24);
  else if (m.psn > kMax24)
    *why = format("PSN %llu; expected 0..%llu (24 bits)", m.psn, kMax24);
  if (!why->empty()) return false;
  m.kind = static_cast<Handshake::Kind>(kind);
  if (!readAddress(&r, &m.sender, why)) {
    *why = "sender's address: " + *why;
    return false;
  }
  *out = m;
  return true;
}

}  // namespace verbs
}  // namespace alloy
