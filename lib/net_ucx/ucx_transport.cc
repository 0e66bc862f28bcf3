// The UCX backend: one ucp context and one worker, or two with UcxOptions::inboundWorker (outbound: this
// rank's endpoints and operations, driven by the proxy thread; inbound: the address peers connect to, so
// that their traffic into this rank's memory is served by the inbound thread; transport.h says why), an
// endpoint per peer created from the address it offers, puts with ucp_put_nbx, the signal as a 64-bit atomic swap (see ucx_context.h for why an atomic; no
// ucp_worker_fence, which blocks in UCX 1.22: callers that need order flush first), flush with
// ucp_ep_flush_nbx, putSignal as one eager active message that the target's handler writes into its
// registered memory, data first. Endpoints use UCP_ERR_HANDLING_MODE_PEER where UCX offers it
// together with atomics (before UCX 1.16; not over shared memory in 1.13), so that a peer that died fails
// the connection's operations (alloyRemoteError naming the peer) instead of hanging them.
#include "ucx_transport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "error.h"
#include "framing.h"
#include "owned.h"
#include "log.h"
#include "ucx_connection.h"
#include "ucx_context.h"
#include "ucx_describe.h"

namespace alloy {
namespace net {
namespace {

constexpr uint32_t kAddressMagic = 0x41554341u;  // "ACUA": a UCX worker address
constexpr uint32_t kKeyMagic = 0x4155434bu;      // "KCUA": base, length and a packed UCX rkey
constexpr unsigned kPutSignalAmId = 0x41;        // the active message of putSignal
// putSignal's limit: eager messages are copied through UCX's bounce buffers on both sides, which only
// pays for itself while the flush round trip it saves dominates.
constexpr size_t kMaxPutSignalBytes = 256 << 10;

// putSignal's active-message header: addresses in the target's memory (from its packed key).
struct PutSignalHeader {
  uint64_t dataAddress;
  uint64_t signalAddress;
  uint64_t value;
  uint64_t bytes;
};
static_assert(sizeof(PutSignalHeader) == sizeof(UcxOp::header), "UcxOp::header holds a PutSignalHeader");
constexpr size_t kKeyPrefixBytes = 16;           // the key's base and length, uint64 each
// How long the destructor waits for operations in flight before it releases what they use anyway.
constexpr auto kDrainTimeout = std::chrono::seconds(5);

struct UcxRegistration : Registration {
  ucp_mem_h memh = nullptr;
  const uint8_t* base = nullptr;
  size_t bytes = 0;
};

struct UcxKey : RemoteKey {
  UcxConnection* connection = nullptr;
  ucp_rkey_h rkey = nullptr;
  uint64_t base = 0;
  uint64_t bytes = 0;
};

class UcxTransport : public Transport {
 public:
  UcxTransport(const UcxOptions& options, ucp_context_h context, ucp_worker_h worker, ucp_worker_h inbound)
      : options_(options), context_(context), worker_(worker), inbound_(inbound) {}
  ~UcxTransport() override;

  const char* name() const override { return "ucx"; }
  Caps caps() const override { return Caps{false, false, false}; }
  alloyResult_t localAddress(std::vector<uint8_t>* bytes) override;
  alloyResult_t connect(int peer, const uint8_t* address, size_t bytes, Connection** out) override;
  std::string describe(const Connection* c) const override {
    const auto* conn = static_cast<const UcxConnection*>(c);
    return describeEndpoint(conn->ep) + (conn->detectsFailure ? "" : ", no peer failure detection");
  }
  std::string describeTraffic(const Connection* c) const override {
    return static_cast<const UcxConnection*>(c)->tally();
  }
  alloyResult_t registerMemory(void* base, size_t bytes, Registration** out, std::vector<uint8_t>* packedKey) override;
  alloyResult_t deregister(Registration* r) override;
  alloyResult_t importKey(Connection* c, const uint8_t* key, size_t bytes, RemoteKey** out) override;
  alloyResult_t releaseKey(RemoteKey* k) override;
  alloyResult_t put(Connection* c, const void* src, const Registration* srcReg, const RemoteKey* dst,
                    size_t dstOffset, size_t bytes, Request* req) override;
  alloyResult_t signal(Connection* c, const RemoteKey* dst, size_t dstOffset, uint64_t value, Request* req) override;
  alloyResult_t putSignal(Connection* c, const void* src, size_t bytes, const RemoteKey* dst, size_t dstOffset,
                          size_t signalOffset, uint64_t value, Request* req) override;
  size_t maxPutSignalBytes() const override { return kMaxPutSignalBytes; }
  alloyResult_t flush(Connection* c, Request* req) override;
  alloyResult_t test(Request* req, bool* done) override;
  void progress() override { ucp_worker_progress(worker_); }
  // With one worker progress() serves peers too, and only the proxy thread may progress it.
  bool progressInbound() override { return inbound_ != worker_ && ucp_worker_progress(inbound_) != 0; }
  bool separateInbound() const override { return inbound_ != worker_; }
  // Installs the handler that serves peers' putSignal messages.
  alloyResult_t listen();

 private:
  static ucs_status_t onPutSignal(void* arg, const void* header, size_t headerBytes, void* data, size_t bytes,
                                  const ucp_am_recv_param_t* param);
  // Whether [address, address + bytes) lies inside one registration.
  bool registered(uint64_t address, size_t bytes) const;
  static void onEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);
  // Checks shared by the data calls, after their own argument checks: the connection is alive and has a
  // free slot (*op) for the operation.
  alloyResult_t begin(UcxConnection* conn, const char* what, Request* req, UcxOp** op);
  alloyResult_t checkKey(const UcxConnection* conn, const RemoteKey* dst, size_t dstOffset, size_t bytes,
                         const UcxKey** key);
  bool anyInFlight() const;
  void drain();
  void closeEndpoints();
  void flushWorker(ucp_worker_h worker);

  UcxOptions options_;
  ucp_context_h context_;
  ucp_worker_h worker_;   // outbound: endpoints to peers, this rank's operations
  ucp_worker_h inbound_;  // its address is the one peers connect to (worker_ itself without a second worker)
  std::vector<std::unique_ptr<UcxConnection>> connections_;
  std::vector<std::unique_ptr<UcxKey>> keys_;
  // The putSignal handler reads it on the inbound thread.
  mutable std::mutex registrationsMutex_;
  std::vector<std::unique_ptr<UcxRegistration>> registrations_;
};

// The inbound worker's address, framed; the network-only address (no shared memory) where the full one is too
// large for the endpoint blob.
alloyResult_t UcxTransport::localAddress(std::vector<uint8_t>* bytes) {
  if (bytes == nullptr) return fail(alloyInvalidArgument, "bytes: expected a non-NULL pointer");
  size_t sizes[2] = {0, 0};
  for (int netOnly = 0; netOnly < 2; ++netOnly) {
    ucp_worker_attr_t attr = {};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
    attr.address_flags = netOnly ? UCP_WORKER_ADDRESS_FLAG_NET_ONLY : 0;
    const ucs_status_t status = ucp_worker_query(inbound_, &attr);
    if (status != UCS_OK) return fail(alloySystemError, "ucp_worker_query failed: %s", ucs_status_string(status));
    sizes[netOnly] = kFrameHeaderBytes + attr.address_length;
    if (sizes[netOnly] <= options_.maxAddressBytes)
      frame(kAddressMagic, reinterpret_cast<const uint8_t*>(attr.address), attr.address_length, bytes);
    ucp_worker_release_address(inbound_, attr.address);
    if (sizes[netOnly] <= options_.maxAddressBytes) {
      if (netOnly)
        logInfo("net: UCX worker address of %zu bytes exceeds the endpoint blob's %zu: peers get the network-only "
                "address (%zu bytes), without shared memory", sizes[0], options_.maxAddressBytes, sizes[1]);
      return alloySuccess;
    }
  }
  return fail(alloyNotSupported,
              "UCX worker address of %zu bytes (network devices only: %zu) exceeds the endpoint blob's %zu: "
              "restrict UCX_NET_DEVICES or UCX_TLS", sizes[0], sizes[1], options_.maxAddressBytes);
}

void UcxTransport::onEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  UcxConnection* conn = static_cast<UcxConnection*>(arg);
  if (conn->failure == UCS_OK) conn->failure = status;
  logInfo("net: connection to peer %d failed: %s", conn->peer(), ucs_status_string(status));
}

// Whether this UCX serves the signal's atomic on endpoints with peer error handling. UCX 1.22 does not
// over tcp ("cannot find remote protocol for: amo_fetch", also in its own ucx_perftest -t ucp_swap -e)
// while 1.13 does; 1.16 made the new protocol selection the default, which is where we place the change
// (not bisected). Without error handling a dead peer shows as the operation's timeout instead.
static bool atomicsWithPeerErrorHandling() {
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  return major == 1 && minor < 16;
}

alloyResult_t UcxTransport::connect(int peer, const uint8_t* address, size_t bytes, Connection** out) {
  if (out == nullptr) return fail(alloyInvalidArgument, "out: expected a non-NULL pointer");
  *out = nullptr;
  const uint8_t* payload = nullptr;
  size_t payloadBytes = 0;
  std::string why;
  if (!unframe(kAddressMagic, address, bytes, &payload, &payloadBytes, &why))
    return fail(alloyInvalidArgument, "address (peer %d): not a UCX address from Alloy: %s", peer, why.c_str());
  auto conn = std::make_unique<UcxConnection>(peer, options_.maxOutstanding);
  ucp_ep_params_t params = {};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(payload);
  params.err_mode = atomicsWithPeerErrorHandling() ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = &UcxTransport::onEndpointError;
  params.err_handler.arg = conn.get();
  conn->detectsFailure = params.err_mode == UCP_ERR_HANDLING_MODE_PEER;
  ucs_status_t status = ucp_ep_create(worker_, &params, &conn->ep);
  if (status == UCS_ERR_UNREACHABLE && conn->detectsFailure) {
    // UCX 1.13's shared-memory transports cannot detect a dead peer, and refuse the peer error mode
    // (UCX logs "no peer failure handler"); without it, operations to a dead peer hang.
    params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    status = ucp_ep_create(worker_, &params, &conn->ep);
    conn->detectsFailure = false;
    if (status == UCS_OK)
      logInfo("net: peer %d: UCX reaches it only without peer failure detection (shared memory)", peer);
  }
  if (status != UCS_OK)
    return fail(alloyRemoteError, "peer %d: ucp_ep_create failed: %s", peer, ucs_status_string(status));
  // UCX connects lazily from the address alone, so the connection is usable at once.
  *out = conn.get();
  connections_.push_back(std::move(conn));
  return alloySuccess;
}

alloyResult_t UcxTransport::registerMemory(void* base, size_t bytes, Registration** out,
                                           std::vector<uint8_t>* packedKey) {
  if (base == nullptr || bytes == 0) return fail(alloyInvalidArgument, "base, bytes: expected a non-empty region");
  if (out == nullptr || packedKey == nullptr)
    return fail(alloyInvalidArgument, "out, packedKey: expected non-NULL pointers");
  auto reg = std::make_unique<UcxRegistration>();
  reg->base = static_cast<const uint8_t*>(base);
  reg->bytes = bytes;
  ucp_mem_map_params_t params = {};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = base;
  params.length = bytes;
  ucs_status_t status = ucp_mem_map(context_, &params, &reg->memh);
  if (status != UCS_OK) return fail(alloySystemError, "ucp_mem_map of %zu bytes failed: %s", bytes, ucs_status_string(status));
  void* rkey = nullptr;
  size_t rkeyBytes = 0;
  status = ucp_rkey_pack(context_, reg->memh, &rkey, &rkeyBytes);
  if (status != UCS_OK) {
    ucp_mem_unmap(context_, reg->memh);
    return fail(alloySystemError, "ucp_rkey_pack failed: %s", ucs_status_string(status));
  }
  std::vector<uint8_t> payload(kKeyPrefixBytes + rkeyBytes);
  const uint64_t prefix[2] = {reinterpret_cast<uintptr_t>(base), bytes};
  std::memcpy(payload.data(), prefix, kKeyPrefixBytes);
  std::memcpy(payload.data() + kKeyPrefixBytes, rkey, rkeyBytes);
  ucp_rkey_buffer_release(rkey);
  frame(kKeyMagic, payload.data(), payload.size(), packedKey);
  *out = reg.get();
  std::lock_guard<std::mutex> lock(registrationsMutex_);
  registrations_.push_back(std::move(reg));
  return alloySuccess;
}

bool UcxTransport::anyInFlight() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const std::unique_ptr<UcxConnection>& c) { return c->inFlight() > 0; });
}

alloyResult_t UcxTransport::deregister(Registration* r) {
  auto* reg = static_cast<UcxRegistration*>(r);
  if (anyInFlight()) return fail(alloyInvalidUsage, "deregister: operations are in flight (test them done first)");
  ucp_mem_h memh = reg != nullptr ? reg->memh : nullptr;
  {
    std::lock_guard<std::mutex> lock(registrationsMutex_);
    if (!eraseOwned(&registrations_, reg))
      return fail(alloyInvalidArgument, "r: not a registration of this transport");
  }
  ucp_mem_unmap(context_, memh);
  return alloySuccess;
}

alloyResult_t UcxTransport::importKey(Connection* c, const uint8_t* key, size_t bytes, RemoteKey** out) {
  auto* conn = static_cast<UcxConnection*>(c);
  if (conn == nullptr || out == nullptr) return fail(alloyInvalidArgument, "c, out: expected non-NULL pointers");
  *out = nullptr;
  const uint8_t* payload = nullptr;
  size_t payloadBytes = 0;
  std::string why;
  if (!unframe(kKeyMagic, key, bytes, &payload, &payloadBytes, &why) || payloadBytes <= kKeyPrefixBytes) {
    if (why.empty()) why = "no UCX rkey after the base and length";
    return fail(alloyInvalidArgument, "key (peer %d): not a packed key from Alloy's UCX transport: %s", conn->peer(),
                why.c_str());
  }
  if (conn->failure != UCS_OK)
    return fail(alloyRemoteError, "peer %d: connection failed: %s", conn->peer(), ucs_status_string(conn->failure));
  auto imported = std::make_unique<UcxKey>();
  imported->connection = conn;
  uint64_t prefix[2];
  std::memcpy(prefix, payload, kKeyPrefixBytes);
  imported->base = prefix[0];
  imported->bytes = prefix[1];
  const ucs_status_t status = ucp_ep_rkey_unpack(conn->ep, payload + kKeyPrefixBytes, &imported->rkey);
  if (status != UCS_OK)
    return fail(alloyInvalidArgument, "key (peer %d): ucp_ep_rkey_unpack failed: %s", conn->peer(),
                ucs_status_string(status));
  *out = imported.get();
  keys_.push_back(std::move(imported));
  return alloySuccess;
}

alloyResult_t UcxTransport::releaseKey(RemoteKey* k) {
  auto* key = static_cast<UcxKey*>(k);
  if (key == nullptr) return fail(alloyInvalidArgument, "k: expected a non-NULL key");
  if (key->connection->inFlight() > 0)
    return fail(alloyInvalidUsage, "releaseKey: operations to peer %d are in flight (test them done first)",
                key->connection->peer());
  ucp_rkey_h rkey = key->rkey;
  if (!eraseOwned(&keys_, key)) return fail(alloyInvalidArgument, "k: not a key of this transport");
  ucp_rkey_destroy(rkey);
  return alloySuccess;
}

alloyResult_t UcxTransport::begin(UcxConnection* conn, const char* what, Request* req, UcxOp** op) {
  if (conn->failure != UCS_OK)
    return fail(alloyRemoteError, "peer %d: connection failed: %s", conn->peer(), ucs_status_string(conn->failure));
  *op = conn->acquire(what, req != nullptr);
  if (*op == nullptr)
    return fail(alloyInProgress, "peer %d: %d operations in flight: progress, test and retry", conn->peer(),
                options_.maxOutstanding);
  return alloySuccess;
}

alloyResult_t UcxTransport::checkKey(const UcxConnection* conn, const RemoteKey* dst, size_t dstOffset, size_t bytes,
                                     const UcxKey** key) {
  *key = static_cast<const UcxKey*>(dst);
  if (*key == nullptr) return fail(alloyInvalidArgument, "dst: expected a remote key");
  return checkKeyRange(conn->peer(), (*key)->connection->peer(), (*key)->connection == conn, dstOffset, bytes,
                       (*key)->bytes);
}

alloyResult_t UcxTransport::put(Connection* c, const void* src, const Registration* srcReg, const RemoteKey* dst,
                                size_t dstOffset, size_t bytes, Request* req) {
  auto* conn = static_cast<UcxConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (put)");
  const UcxKey* key = nullptr;
  ALLOY_TRY(checkKey(conn, dst, dstOffset, bytes, &key));
  if (src == nullptr && bytes > 0) return fail(alloyInvalidArgument, "src: NULL with %zu bytes", bytes);
  const auto* reg = static_cast<const UcxRegistration*>(srcReg);
  const auto* from = static_cast<const uint8_t*>(src);
  if (reg != nullptr && (from < reg->base || bytes > reg->bytes || from - reg->base > static_cast<ptrdiff_t>(reg->bytes - bytes)))
    return fail(alloyInvalidArgument, "src: %zu bytes at %p are outside srcReg", bytes, src);
  if (bytes == 0) {
    if (req != nullptr) *req = Request{};
    return alloySuccess;
  }
  UcxOp* op = nullptr;
  ALLOY_TRY(begin(conn, "put", req, &op));
  ucp_request_param_t params = UcxConnection::paramsFor(op);
  if (reg != nullptr) {
    params.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    params.memh = reg->memh;
  }
  return conn->posted(op, ucp_put_nbx(conn->ep, src, bytes, key->base + dstOffset, key->rkey, &params), req);
}

alloyResult_t UcxTransport::signal(Connection* c, const RemoteKey* dst, size_t dstOffset, uint64_t value, Request* req) {
  auto* conn = static_cast<UcxConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (signal)");
  const UcxKey* key = nullptr;
  ALLOY_TRY(checkKey(conn, dst, dstOffset, sizeof(uint64_t), &key));
  if ((key->base + dstOffset) % sizeof(uint64_t) != 0)
    return fail(alloyInvalidArgument, "dstOffset: %zu does not give an 8-byte aligned address at peer %d", dstOffset,
                conn->peer());
  UcxOp* op = nullptr;
  ALLOY_TRY(begin(conn, "signal", req, &op));
  op->operand = value;
  op->target = key->base + dstOffset;
  ucp_request_param_t params = UcxConnection::paramsFor(op);
  params.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  params.datatype = ucp_dt_make_contig(sizeof(uint64_t));
  params.reply_buffer = &op->reply;
  return conn->posted(op, ucp_atomic_op_nbx(conn->ep, UCP_ATOMIC_OP_SWAP, &op->operand, 1, key->base + dstOffset,
                                            key->rkey, &params), req);
}

alloyResult_t UcxTransport::putSignal(Connection* c, const void* src, size_t bytes, const RemoteKey* dst,
                                     size_t dstOffset, size_t signalOffset, uint64_t value, Request* req) {
  auto* conn = static_cast<UcxConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (putSignal)");
  if (bytes == 0 || bytes > kMaxPutSignalBytes)
    return fail(alloyInvalidArgument, "bytes: %zu; expected 1..%zu (maxPutSignalBytes())", bytes, kMaxPutSignalBytes);
  if (src == nullptr) return fail(alloyInvalidArgument, "src: NULL with %zu bytes", bytes);
  const UcxKey* key = nullptr;
  ALLOY_TRY(checkKey(conn, dst, dstOffset, bytes, &key));
  ALLOY_TRY(checkKey(conn, dst, signalOffset, sizeof(uint64_t), &key));
  if ((key->base + signalOffset) % sizeof(uint64_t) != 0)
    return fail(alloyInvalidArgument, "signalOffset: %zu does not give an 8-byte aligned address at peer %d",
                signalOffset, conn->peer());
  UcxOp* op = nullptr;
  ALLOY_TRY(begin(conn, "put+signal", req, &op));
  const PutSignalHeader header{key->base + dstOffset, key->base + signalOffset, value, bytes};
  std::memcpy(op->header, &header, sizeof header);
  ucp_request_param_t params = UcxConnection::paramsFor(op);
  params.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
  params.flags = UCP_AM_SEND_FLAG_EAGER;  // the handler needs the data in hand, not a rendezvous
  return conn->posted(op, ucp_am_send_nbx(conn->ep, kPutSignalAmId, op->header, sizeof header, src, bytes, &params),
                      req);
}

bool UcxTransport::registered(uint64_t address, size_t bytes) const {
  std::lock_guard<std::mutex> lock(registrationsMutex_);
  return std::any_of(registrations_.begin(), registrations_.end(), [&](const std::unique_ptr<UcxRegistration>& r) {
    const uint64_t base = reinterpret_cast<uintptr_t>(r->base);
    return address >= base && bytes <= r->bytes && address - base <= r->bytes - bytes;
  });
}

// Runs in progressInbound() on the target: the data, then the signal, so that a reader of the signal word that
// sees the value also sees the data. A message for memory this transport did not register (a foreign or
// damaged message) is dropped with a warning; the waiting side then times out naming the sender.
ucs_status_t UcxTransport::onPutSignal(void* arg, const void* header, size_t headerBytes, void* data, size_t bytes,
                                       const ucp_am_recv_param_t* param) {
  const auto* self = static_cast<const UcxTransport*>(arg);
  PutSignalHeader h{};
  const bool whole = headerBytes == sizeof h && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0;
  if (whole) std::memcpy(&h, header, sizeof h);
  if (!whole || h.bytes != bytes || h.signalAddress % sizeof(uint64_t) != 0 || !self->registered(h.dataAddress, bytes) ||
      !self->registered(h.signalAddress, sizeof(uint64_t))) {
    logWarn("net: dropped a put+signal message of %zu bytes that does not address this transport's memory", bytes);
    return UCS_OK;
  }
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(h.dataAddress)), data, bytes);
  __atomic_store_n(reinterpret_cast<uint64_t*>(static_cast<uintptr_t>(h.signalAddress)), h.value, __ATOMIC_RELEASE);
  return UCS_OK;
}

alloyResult_t UcxTransport::listen() {
  ucp_am_handler_param_t params = {};
  params.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                      UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  params.id = kPutSignalAmId;
  params.flags = UCP_AM_FLAG_WHOLE_MSG;
  params.cb = &UcxTransport::onPutSignal;
  params.arg = this;
  const ucs_status_t status = ucp_worker_set_am_recv_handler(inbound_, &params);
  if (status != UCS_OK)
    return fail(alloySystemError, "ucp_worker_set_am_recv_handler failed: %s", ucs_status_string(status));
  return alloySuccess;
}

alloyResult_t UcxTransport::flush(Connection* c, Request* req) {
  auto* conn = static_cast<UcxConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (flush)");
  UcxOp* op = nullptr;
  ALLOY_TRY(begin(conn, "flush", req, &op));
  ucp_request_param_t params = UcxConnection::paramsFor(op);
  return conn->posted(op, ucp_ep_flush_nbx(conn->ep, &params), req);
}

alloyResult_t UcxTransport::test(Request* req, bool* done) {
  if (req == nullptr || done == nullptr) return fail(alloyInvalidArgument, "req, done: expected non-NULL pointers");
  if (req->ticket == 0) {
    *done = true;
    return alloySuccess;
  }
  return static_cast<UcxConnection*>(req->connection)->test(req, done);
}

// Lets operations in flight finish (they point into connections and use keys), within a bound: a peer
// that stopped progressing must not hang the destructor.
void UcxTransport::drain() {
  const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
  while (anyInFlight() && std::chrono::steady_clock::now() < deadline) progressAll();
  if (anyInFlight()) logWarn("net: UCX operations still in flight after %lld s; releasing them anyway",
                             static_cast<long long>(kDrainTimeout.count()));
}

// Force-closes every endpoint: no goodbye to the peer (which may be gone), and whatever is still in
// flight completes as cancelled.
void UcxTransport::closeEndpoints() {
  std::vector<void*> closing;
  for (const auto& conn : connections_) {
    ucp_request_param_t params = {};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    params.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucp_ep_close_nbx(conn->ep, &params);
    if (UCS_PTR_IS_PTR(request)) closing.push_back(request);
  }
  for (void* request : closing) {
    while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(request);
  }
}

// Lets the messages a worker still has queued on its endpoints go out, within the drain's bound. Besides
// this rank's endpoints (closed by now) a worker holds the ones UCX made for peers that connected to it,
// and UCX 1.13 aborts the process in ucp_worker_destroy when one of those still has its wireup reply
// queued ("Assertion ... got REP message" in ucp_request_send_state_ff): a peer that connected just before
// the teardown. CI hit it in net_channel_inbound_tcp_np2 with the CPUs busy; the same run with 3 spinning
// processes beside it did it in 2 of 40 runs before this flush.
void UcxTransport::flushWorker(ucp_worker_h worker) {
  ucp_request_param_t params = {};
  const ucs_status_ptr_t request = ucp_worker_flush_nbx(worker, &params);
  if (!UCS_PTR_IS_PTR(request)) return;  // done at once, or failed: nothing queued to wait for
  const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
  while (ucp_request_check_status(request) == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline)
    progressAll();
  if (ucp_request_check_status(request) == UCS_INPROGRESS)
    logWarn("net: a UCX worker still had messages queued after %lld s; destroying it anyway",
            static_cast<long long>(kDrainTimeout.count()));
  ucp_request_free(request);
}

UcxTransport::~UcxTransport() {
  drain();
  // UCX's order: keys before the endpoints they were unpacked on; memory before the context.
  for (const auto& key : keys_) ucp_rkey_destroy(key->rkey);
  closeEndpoints();
  flushWorker(worker_);
  if (inbound_ != worker_) flushWorker(inbound_);
  for (const auto& reg : registrations_) ucp_mem_unmap(context_, reg->memh);
  ucp_worker_destroy(worker_);
  if (inbound_ != worker_) ucp_worker_destroy(inbound_);
  ucp_cleanup(context_);
}

}  // namespace

alloyResult_t createUcxTransport(const UcxOptions& options, std::unique_ptr<Transport>* out) {
  if (out == nullptr) return fail(alloyInvalidArgument, "out: expected a non-NULL pointer");
  if (options.maxOutstanding < 1 || options.maxOutstanding > (1 << 20))
    return fail(alloyInvalidArgument, "options.maxOutstanding: %d is outside 1..%d", options.maxOutstanding, 1 << 20);
  ucp_context_h context = nullptr;
  adviseOnUcxMemoryHooks();
  const std::string failure = initUcpContext(&context);
  if (!failure.empty()) return fail(alloyNotSupported, "UCX transport: %s", failure.c_str());
  // Each worker has one user at a time (the proxy thread, the inbound thread; the caller's thread
  // before and after them); the context they share is thread-safe (initUcpContext).
  ucp_worker_params_t params = {};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h workers[2] = {nullptr, nullptr};
  for (int w = 0; w < (options.inboundWorker ? 2 : 1); ++w) {
    const ucs_status_t status = ucp_worker_create(context, &params, &workers[w]);
    if (status == UCS_OK) continue;
    if (workers[0] != nullptr) ucp_worker_destroy(workers[0]);
    ucp_cleanup(context);
    return fail(alloySystemError, "ucp_worker_create failed: %s", ucs_status_string(status));
  }
  if (workers[1] == nullptr) workers[1] = workers[0];
  logInfo("net: UCX inbound thread: %s", options.inboundWorker ? "on (a second worker serves peers' traffic)"
                                                              : "off (one worker)");
  auto transport = std::make_unique<UcxTransport>(options, context, workers[0], workers[1]);
  ALLOY_TRY(transport->listen());
  *out = std::move(transport);
  return alloySuccess;
}

}  // namespace net
}  // namespace alloy
