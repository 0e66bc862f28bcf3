// The verbs backend: one port, one protection domain, one completion queue for every data queue pair,
// one UD queue pair for handshakes, and an RC queue pair per peer transport (docs/architecture.md, "The
// verbs transport"). Data calls become RDMA work requests (verbs_ops.h says which, in which order);
// progress() polls both completion queues and serves handshakes. Peers' writes and reads land without
// this side's CPU, so there is no inbound side (separateInbound() is false).
#include "verbs_transport.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>

#include "error.h"
#include "log.h"
#include "owned.h"
#include "verbs_connection.h"
#include "verbs_datagram.h"
#include "verbs_port.h"
#include "verbs_queue_pair.h"

namespace alloy {
namespace net {
namespace {

using verbs::Handshake;
using verbs::OpTable;
using verbs::PairState;
using verbs::VerbsAddress;
using verbs::VerbsConnection;
using verbs::VerbsPtr;
using verbs::own;
using Clock = std::chrono::steady_clock;

// How often connect() repeats an unanswered request (datagrams may be lost).
constexpr auto kRequestInterval = std::chrono::milliseconds(100);
// How long the destructor waits for operations in flight before it releases what they use anyway.
constexpr auto kDrainTimeout = std::chrono::seconds(5);
constexpr int kPollBatch = 32;
// Work requests in flight over all connections: the data completion queue's depth (every work request
// is signalled, so each takes one entry until polled), within what the device allows.
constexpr int kCompletionQueueDepth = 16384;
constexpr uint32_t kPsnMask = (1u << 24) - 1;
constexpr int kMemoryAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct VerbsRegistration : Registration {
  VerbsPtr<ibv_mr> mr;
  const uint8_t* base = nullptr;
  size_t bytes = 0;
  bool covers(const void* p, size_t n) const {
    const auto* at = static_cast<const uint8_t*>(p);
    return at >= base && n <= bytes && static_cast<size_t>(at - base) <= bytes - n;
  }
};

struct VerbsRemoteKey : RemoteKey {
  VerbsConnection* connection = nullptr;
  verbs::VerbsKey key;
};

class VerbsTransport : public Transport {
 public:
  VerbsTransport(const VerbsOptions& options, std::unique_ptr<verbs::VerbsLibrary> lib)
      : options_(options), lib_(std::move(lib)) {}
  ~VerbsTransport() override;
  // Everything that can fail: the port, its resources, the handshake queue pair.
  alloyResult_t open();

  const char* name() const override { return "verbs"; }
  // Host memory only; peers' writes land in order on each queue pair and memory is registered without
  // relaxed ordering, so a signal after data needs no flush to be seen after it (verbs_ops.h).
  Caps caps() const override { return Caps{false, false, false}; }
  alloyResult_t localAddress(std::vector<uint8_t>* bytes) override;
  alloyResult_t connect(int peer, const uint8_t* address, size_t bytes, Connection** out) override;
  std::string describe(const Connection* c) const override;
  std::string describeTraffic(const Connection* c) const override;
  alloyResult_t registerMemory(void* base, size_t bytes, Registration** out, std::vector<uint8_t>* packedKey) override;
  alloyResult_t deregister(Registration* r) override;
  alloyResult_t importKey(Connection* c, const uint8_t* key, size_t bytes, RemoteKey** out) override;
  alloyResult_t releaseKey(RemoteKey* k) override;
  alloyResult_t put(Connection* c, const void* src, const Registration* srcReg, const RemoteKey* dst,
                    size_t dstOffset, size_t bytes, Request* req) override;
  alloyResult_t signal(Connection* c, const RemoteKey* dst, size_t dstOffset, uint64_t value, Request* req) override;
  alloyResult_t putSignal(Connection* c, const void* src, size_t bytes, const RemoteKey* dst, size_t dstOffset,
                          size_t signalOffset, uint64_t value, Request* req) override;
  size_t maxPutSignalBytes() const override { return port_.maxMessageBytes; }
  alloyResult_t flush(Connection* c, Request* req) override;
  alloyResult_t test(Request* req, bool* done) override;
  void progress() override;
  bool progressInbound() override { return false; }
  bool separateInbound() const override { return false; }

 private:
  // Where a work plan's bytes are: the source and its lkey, the signal's value, the remote key.
  struct Operands {
    const void* src = nullptr;
    uint32_t lkey = 0;
    uint64_t value = 0;
    const verbs::VerbsKey* key = nullptr;
  };

  VerbsConnection* findByInstance(uint64_t instance) const;
  VerbsConnection* newConnection(const VerbsAddress& remote, std::string* why);
  void sendRequest(VerbsConnection* conn);
  void onHandshake(const uint8_t* bytes, size_t n);
  void onRequest(const Handshake& m);
  void onReply(const Handshake& m);
  void pollCompletions();
  void failConnection(VerbsConnection* conn, const std::string& why);

  alloyResult_t checkKey(const VerbsConnection* conn, const RemoteKey* dst, size_t dstOffset, size_t bytes,
                         const VerbsRemoteKey** key) const;
  alloyResult_t checkSize(size_t bytes) const;
  // The lkey of [src, src + bytes): srcReg's, a registration's that covers it, or a registration made for
  // this one operation (*temporary).
  alloyResult_t sourceKey(const VerbsConnection* conn, const void* src, size_t bytes, const Registration* srcReg,
                          uint32_t* lkey, VerbsPtr<ibv_mr>* temporary);
  // The connection is alive and has room for an operation of plan.count work requests: posts them.
  alloyResult_t post(VerbsConnection* conn, const char* what, const verbs::WorkPlan& plan, const Operands& operands,
                     VerbsPtr<ibv_mr> temporary, Request* req);
  bool anyInFlight() const;

  VerbsOptions options_;
  uint64_t instance_ = 0;
  std::mt19937_64 random_{std::random_device{}()};
  uint64_t nextCookie_ = 1;
  int workInFlight_ = 0;  // posted work requests whose completions have not been polled
  int completionDepth_ = 0;
  VerbsAddress address_;
  // Declared in the order they are created; destroyed in reverse, the library last.
  std::unique_ptr<verbs::VerbsLibrary> lib_;
  verbs::VerbsPort port_;
  VerbsPtr<ibv_pd> pd_;
  VerbsPtr<ibv_cq> cq_;
  alignas(8) uint64_t flushWords_[2] = {0, 0};  // [0]: what peers' flushes read; [1]: where this side's land
  VerbsPtr<ibv_mr> flushMr_;
  std::unique_ptr<verbs::QueuePairs> pairs_;
  std::unique_ptr<verbs::Datagrams> datagrams_;
  std::vector<std::unique_ptr<VerbsRegistration>> registrations_;
  std::vector<std::unique_ptr<VerbsConnection>> connections_;
  std::unordered_map<uint64_t, VerbsConnection*> byInstance_;
  std::vector<std::unique_ptr<VerbsRemoteKey>> keys_;
};

alloyResult_t VerbsTransport::open() {
  ALLOY_TRY(verbs::openPort(*lib_, &port_));
  pd_ = own(lib_->allocPd(port_.context.get()), lib_->deallocPd);
  if (!pd_) return fail(alloySystemError, "verbs: ibv_alloc_pd on %s failed: %s", port_.device.c_str(), std::strerror(errno));
  completionDepth_ = std::min(kCompletionQueueDepth, port_.deviceAttr.max_cqe);
  cq_ = own(lib_->createCq(port_.context.get(), completionDepth_, nullptr, nullptr, 0), lib_->destroyCq);
  if (!cq_)
    return fail(alloySystemError, "verbs: ibv_create_cq of %d entries on %s failed: %s", completionDepth_,
                port_.device.c_str(), std::strerror(errno));
  flushMr_ = own(lib_->regMr(pd_.get(), flushWords_, sizeof flushWords_, kMemoryAccess), lib_->deregMr);
  if (!flushMr_) return fail(alloySystemError, "verbs: ibv_reg_mr of the flush word failed: %s", std::strerror(errno));
  verbs::QpSettings settings;
  ALLOY_TRY(verbs::readQpSettings(&settings));
  pairs_ = std::make_unique<verbs::QueuePairs>(*lib_, port_, pd_.get(), settings);
  ALLOY_TRY(verbs::Datagrams::create(*lib_, *pairs_, port_.context.get(), pd_.get(), &datagrams_));
  while (instance_ == 0) instance_ = random_();
  address_.linkLayer = port_.link == verbs::LinkLayer::Ethernet ? 1 : 0;
  address_.mtu = static_cast<uint8_t>(port_.activeMtu);
  address_.lid = port_.lid;
  address_.gid = port_.gid;
  address_.udQpn = datagrams_->qpn();
  address_.instance = instance_;
  address_.flushAddress = reinterpret_cast<uintptr_t>(&flushWords_[0]);
  address_.flushRkey = flushMr_->rkey;
  logInfo("net: verbs transport on %s port %d (%s, GID index %d, MTU code %d)", port_.device.c_str(), port_.port,
          port_.link == verbs::LinkLayer::Ethernet ? "RoCE" : "InfiniBand", port_.gidIndex, port_.activeMtu);
  return alloySuccess;
}

alloyResult_t VerbsTransport::localAddress(std::vector<uint8_t>* bytes) {
  if (bytes == nullptr) return fail(alloyInvalidArgument, "bytes: expected a non-NULL pointer");
  verbs::encodeAddress(address_, bytes);
  if (bytes->size() > options_.maxAddressBytes)
    return fail(alloyNotSupported, "verbs address of %zu bytes exceeds the endpoint blob's %zu", bytes->size(),
                options_.maxAddressBytes);
  return alloySuccess;
}

VerbsConnection* VerbsTransport::findByInstance(uint64_t instance) const {
  const auto it = byInstance_.find(instance);
  return it == byInstance_.end() ? nullptr : it->second;
}

// A connection with its queue pair in INIT and the address handle of the peer's handshake queue pair.
VerbsConnection* VerbsTransport::newConnection(const VerbsAddress& remote, std::string* why) {
  auto conn = std::make_unique<VerbsConnection>(static_cast<uint32_t>(connections_.size()), remote,
                                                options_.maxOutstanding);
  conn->qp = pairs_->createRc(cq_.get(), options_.maxOutstanding * verbs::kMaxWorkPerOperation, why);
  if (!conn->qp) return nullptr;
  conn->ah = pairs_->createAh(remote, why);
  if (!conn->ah) return nullptr;
  conn->psn = static_cast<uint32_t>(random_()) & kPsnMask;
  connections_.push_back(std::move(conn));
  byInstance_[remote.instance] = connections_.back().get();
  return connections_.back().get();
}

void VerbsTransport::sendRequest(VerbsConnection* conn) {
  Handshake m;
  m.kind = Handshake::Kind::Request;
  m.to = conn->remote.instance;
  m.cookie = conn->requestCookie;
  m.qpn = conn->qp->qp_num;
  m.psn = conn->psn;
  m.sender = address_;
  std::vector<uint8_t> bytes;
  verbs::encodeHandshake(m, &bytes);
  datagrams_->send(conn->ah.get(), conn->remote.udQpn, bytes);  // a dropped request is repeated
  conn->lastRequest = Clock::now();
}

alloyResult_t VerbsTransport::connect(int peer, const uint8_t* address, size_t bytes, Connection** out) {
  if (out == nullptr) return fail(alloyInvalidArgument, "out: expected a non-NULL pointer");
  *out = nullptr;
  VerbsAddress remote;
  std::string why;
  if (!verbs::decodeAddress(address, bytes, &remote, &why))
    return fail(alloyInvalidArgument, "address (peer %d): not a verbs address from Alloy: %s", peer, why.c_str());
  if (remote.instance == instance_)
    return fail(alloyInvalidArgument, "address (peer %d): this transport's own address; expected another transport's",
                peer);
  if (remote.linkLayer != address_.linkLayer)
    return fail(alloyInvalidArgument, "address (peer %d): a port on %s, this one is on %s; they cannot reach each other",
                peer, remote.linkLayer ? "Ethernet" : "InfiniBand", address_.linkLayer ? "Ethernet" : "InfiniBand");
  VerbsConnection* conn = findByInstance(remote.instance);
  if (conn == nullptr) {
    conn = newConnection(remote, &why);
    if (conn == nullptr) return fail(alloySystemError, "peer %d: %s", peer, why.c_str());
  }
  if (conn->peer == -1) conn->peer = peer;
  if (conn->peer != peer)
    return fail(alloyInvalidArgument, "address (peer %d): the address of peer %d, connected already", peer, conn->peer);
  switch (conn->state) {
    case PairState::Ready:
      *out = conn;
      return alloySuccess;
    case PairState::Failed:
      return fail(alloyRemoteError, "peer %d: connecting failed: %s", peer, conn->failure.c_str());
    case PairState::None:
      conn->requestCookie = nextCookie_++;
      conn->state = PairState::Requesting;
      sendRequest(conn);
      return alloySuccess;
    case PairState::Requesting:
      if (Clock::now() - conn->lastRequest >= kRequestInterval) sendRequest(conn);
      return alloySuccess;
  }
  return alloySuccess;
}

void VerbsTransport::onHandshake(const uint8_t* bytes, size_t n) {
  Handshake m;
  std::string why;
  if (!verbs::decodeHandshake(bytes, n, &m, &why)) {
    logWarn("verbs: dropped a handshake datagram of %zu bytes: %s", n, why.c_str());
    return;
  }
  if (m.to != instance_ || m.sender.instance == instance_) return;  // for an earlier transport on this QPN
  if (m.kind == Handshake::Kind::Request) onRequest(m);
  else onReply(m);
}

void VerbsTransport::onRequest(const Handshake& m) {
  VerbsConnection* conn = findByInstance(m.sender.instance);
  const PairState state = conn != nullptr ? conn->state : PairState::None;
  const uint64_t accepted = conn != nullptr ? conn->acceptedCookie : 0;
  switch (verbs::onRequest(state, instance_, m.sender.instance, accepted, m.cookie)) {
    case verbs::RequestAction::Ignore:
      return;
    case verbs::RequestAction::ResendReply:
      datagrams_->send(conn->ah.get(), conn->remote.udQpn, conn->reply);
      return;
    case verbs::RequestAction::Accept:
      break;
  }
  std::string why;
  if (conn == nullptr && (conn = newConnection(m.sender, &why)) == nullptr) {
    logWarn("verbs: cannot answer a connection request (UD queue pair %u): %s", m.sender.udQpn, why.c_str());
    return;
  }
  if (!pairs_->connectRc(conn->qp.get(), m.sender, m.qpn, m.psn, conn->psn, &why)) {
    failConnection(conn, why);
    return;
  }
  conn->state = PairState::Ready;
  conn->acceptedCookie = m.cookie;
  Handshake reply;
  reply.kind = Handshake::Kind::Reply;
  reply.to = m.sender.instance;
  reply.cookie = m.cookie;
  reply.qpn = conn->qp->qp_num;
  reply.psn = conn->psn;
  reply.sender = address_;
  verbs::encodeHandshake(reply, &conn->reply);
  datagrams_->send(conn->ah.get(), conn->remote.udQpn, conn->reply);  // a lost reply is sent again on a repeat
}

void VerbsTransport::onReply(const Handshake& m) {
  VerbsConnection* conn = findByInstance(m.sender.instance);
  if (conn == nullptr || !verbs::replyCompletes(conn->state, conn->requestCookie, m.cookie)) return;
  std::string why;
  if (!pairs_->connectRc(conn->qp.get(), conn->remote, m.qpn, m.psn, conn->psn, &why)) {
    failConnection(conn, why);
    return;
  }
  conn->state = PairState::Ready;
}

void VerbsTransport::failConnection(VerbsConnection* conn, const std::string& why) {
  if (!conn->failure.empty()) return;
  conn->failure = why;
  if (conn->state != PairState::Ready) conn->state = PairState::Failed;
  logInfo("net: verbs connection to peer %d failed: %s", conn->peer, why.c_str());
}

void VerbsTransport::progress() {
  datagrams_->poll([this](const uint8_t* bytes, size_t n) { onHandshake(bytes, n); });
  pollCompletions();
}

// Every work request is signalled; its wr_id names the connection (high half) and the operation's slot.
void VerbsTransport::pollCompletions() {
  ibv_wc wc[kPollBatch];
  int n = 0;
  while ((n = ibv_poll_cq(cq_.get(), kPollBatch, wc)) > 0) {
    workInFlight_ -= n;
    for (int i = 0; i < n; ++i) {
      VerbsConnection* conn = connections_[wc[i].wr_id >> 32].get();
      const int slot = static_cast<int>(wc[i].wr_id & 0xffffffffu);
      if (wc[i].status != IBV_WC_SUCCESS) failConnection(conn, lib_->wcStatusStr(wc[i].status));
      if (conn->ops.completeWork(slot, wc[i].status)) conn->sourceMrs[slot].reset();
    }
  }
}

std::string VerbsTransport::describe(const Connection* c) const {
  const auto* conn = static_cast<const VerbsConnection*>(c);
  return "verbs/" + port_.device + ":" + std::to_string(port_.port) +
         (port_.link == verbs::LinkLayer::Ethernet ? " (RoCE)" : " (InfiniBand)") +
         " qp=" + std::to_string(conn->qp->qp_num);
}

std::string VerbsTransport::describeTraffic(const Connection* c) const {
  const auto* conn = static_cast<const VerbsConnection*>(c);
  return "in flight " + std::to_string(conn->ops.inFlight()) +
         (conn->failure.empty() ? std::string() : ", failed: " + conn->failure);
}

alloyResult_t VerbsTransport::registerMemory(void* base, size_t bytes, Registration** out,
                                             std::vector<uint8_t>* packedKey) {
  if (base == nullptr || bytes == 0) return fail(alloyInvalidArgument, "base, bytes: expected a non-empty region");
  if (out == nullptr || packedKey == nullptr)
    return fail(alloyInvalidArgument, "out, packedKey: expected non-NULL pointers");
  auto reg = std::make_unique<VerbsRegistration>();
  reg->mr = own(lib_->regMr(pd_.get(), base, bytes, kMemoryAccess), lib_->deregMr);
  if (!reg->mr)
    return fail(alloySystemError, "verbs: ibv_reg_mr of %zu bytes at %p failed: %s (host memory only: device memory "
                "needs GPUDirect RDMA, which this transport does not use)", bytes, base, std::strerror(errno));
  reg->base = static_cast<const uint8_t*>(base);
  reg->bytes = bytes;
  verbs::encodeKey(verbs::VerbsKey{reinterpret_cast<uintptr_t>(base), bytes, reg->mr->rkey}, packedKey);
  *out = reg.get();
  registrations_.push_back(std::move(reg));
  return alloySuccess;
}

bool VerbsTransport::anyInFlight() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const std::unique_ptr<VerbsConnection>& c) { return c->ops.inFlight() > 0; });
}

alloyResult_t VerbsTransport::deregister(Registration* r) {
  if (anyInFlight()) return fail(alloyInvalidUsage, "deregister: operations are in flight (test them done first)");
  if (!eraseOwned(&registrations_, static_cast<VerbsRegistration*>(r)))
    return fail(alloyInvalidArgument, "r: not a registration of this transport");
  return alloySuccess;
}

alloyResult_t VerbsTransport::importKey(Connection* c, const uint8_t* key, size_t bytes, RemoteKey** out) {
  auto* conn = static_cast<VerbsConnection*>(c);
  if (conn == nullptr || out == nullptr) return fail(alloyInvalidArgument, "c, out: expected non-NULL pointers");
  *out = nullptr;
  auto imported = std::make_unique<VerbsRemoteKey>();
  std::string why;
  if (!verbs::decodeKey(key, bytes, &imported->key, &why))
    return fail(alloyInvalidArgument, "key (peer %d): not a packed key from Alloy's verbs transport: %s", conn->peer,
                why.c_str());
  if (!conn->failure.empty())
    return fail(alloyRemoteError, "peer %d: connection failed: %s", conn->peer, conn->failure.c_str());
  imported->connection = conn;
  *out = imported.get();
  keys_.push_back(std::move(imported));
  return alloySuccess;
}

alloyResult_t VerbsTransport::releaseKey(RemoteKey* k) {
  auto* key = static_cast<VerbsRemoteKey*>(k);
  if (key == nullptr) return fail(alloyInvalidArgument, "k: expected a non-NULL key");
  if (key->connection->ops.inFlight() > 0)
    return fail(alloyInvalidUsage, "releaseKey: operations to peer %d are in flight (test them done first)",
                key->connection->peer);
  if (!eraseOwned(&keys_, key)) return fail(alloyInvalidArgument, "k: not a key of this transport");
  return alloySuccess;
}

alloyResult_t VerbsTransport::checkKey(const VerbsConnection* conn, const RemoteKey* dst, size_t dstOffset,
                                       size_t bytes, const VerbsRemoteKey** key) const {
  *key = static_cast<const VerbsRemoteKey*>(dst);
  if (*key == nullptr) return fail(alloyInvalidArgument, "dst: expected a remote key");
  return checkKeyRange(conn->peer, (*key)->connection->peer, (*key)->connection == conn, dstOffset, bytes,
                       (*key)->key.bytes);
}

alloyResult_t VerbsTransport::checkSize(size_t bytes) const {
  if (bytes > port_.maxMessageBytes)
    return fail(alloyInvalidArgument, "bytes: %zu exceeds the largest RDMA message of %s port %d (%u bytes)", bytes,
                port_.device.c_str(), port_.port, port_.maxMessageBytes);
  return alloySuccess;
}

alloyResult_t VerbsTransport::sourceKey(const VerbsConnection* conn, const void* src, size_t bytes,
                                        const Registration* srcReg, uint32_t* lkey, VerbsPtr<ibv_mr>* temporary) {
  if (srcReg != nullptr) {
    const auto* reg = static_cast<const VerbsRegistration*>(srcReg);
    if (!reg->covers(src, bytes)) return fail(alloyInvalidArgument, "src: %zu bytes at %p are outside srcReg", bytes, src);
    *lkey = reg->mr->lkey;
    return alloySuccess;
  }
  for (const auto& reg : registrations_) {
    if (!reg->covers(src, bytes)) continue;
    *lkey = reg->mr->lkey;
    return alloySuccess;
  }
  // Local reads need no access flag. Costly (a registration per operation), but correct for callers that
  // put from memory they did not register; the channel always passes its registered staging.
  *temporary = own(lib_->regMr(pd_.get(), const_cast<void*>(src), bytes, 0), lib_->deregMr);
  if (!*temporary)
    return fail(alloySystemError, "peer %d: ibv_reg_mr of the %zu-byte source at %p failed: %s", conn->peer, bytes, src,
                std::strerror(errno));
  *lkey = (*temporary)->lkey;
  return alloySuccess;
}

alloyResult_t VerbsTransport::post(VerbsConnection* conn, const char* what, const verbs::WorkPlan& plan,
                                   const Operands& operands, VerbsPtr<ibv_mr> temporary, Request* req) {
  if (!conn->failure.empty())
    return fail(alloyRemoteError, "peer %d: connection failed: %s", conn->peer, conn->failure.c_str());
  if (workInFlight_ + plan.count > completionDepth_)
    return fail(alloyInProgress, "verbs: %d work requests in flight fill the completion queue: progress, test and retry",
                workInFlight_);
  const int slot = conn->ops.acquire(what, req != nullptr, plan.count);
  if (slot < 0)
    return fail(alloyInProgress, "peer %d: %d operations in flight: progress, test and retry", conn->peer,
                options_.maxOutstanding);
  ibv_sge sge[verbs::kMaxWorkPerOperation]{};
  ibv_send_wr wr[verbs::kMaxWorkPerOperation]{};
  for (int i = 0; i < plan.count; ++i) {
    const verbs::WorkItem& item = plan.items[i];
    wr[i].wr_id = (static_cast<uint64_t>(conn->index) << 32) | static_cast<uint32_t>(slot);
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].send_flags = IBV_SEND_SIGNALED;
    wr[i].next = i + 1 < plan.count ? &wr[i + 1] : nullptr;
    wr[i].opcode = item.opcode == verbs::WorkOpcode::Write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    sge[i].length = static_cast<uint32_t>(item.bytes);
    switch (item.local) {
      case verbs::LocalBytes::Source:
        sge[i].addr = reinterpret_cast<uintptr_t>(operands.src);
        sge[i].lkey = operands.lkey;
        break;
      case verbs::LocalBytes::Value:  // copied into the work request when posted: nothing to keep alive
        sge[i].addr = reinterpret_cast<uintptr_t>(&operands.value);
        wr[i].send_flags |= IBV_SEND_INLINE;
        break;
      case verbs::LocalBytes::FlushLanding:
        sge[i].addr = reinterpret_cast<uintptr_t>(&flushWords_[1]);
        sge[i].lkey = flushMr_->lkey;
        break;
    }
    if (item.remote == verbs::RemoteBytes::Key) {
      wr[i].wr.rdma.remote_addr = operands.key->base + item.remoteOffset;
      wr[i].wr.rdma.rkey = operands.key->rkey;
    } else {
      wr[i].wr.rdma.remote_addr = conn->remote.flushAddress;
      wr[i].wr.rdma.rkey = conn->remote.flushRkey;
    }
  }
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(conn->qp.get(), wr, &bad);
  if (rc != 0) {
    // Requests before `bad` were posted and complete as usual; the rest complete here, as failed.
    const int posted = static_cast<int>(bad - wr);
    workInFlight_ += posted;
    failConnection(conn, std::string("ibv_post_send failed: ") + std::strerror(rc));
    if (posted == 0) conn->ops.abandon(slot);
    else for (int i = posted; i < plan.count; ++i) conn->ops.completeWork(slot, IBV_WC_GENERAL_ERR);
    if (posted > 0) conn->sourceMrs[slot] = std::move(temporary);
    return fail(alloyRemoteError, "peer %d: %s failed: %s", conn->peer, what, conn->failure.c_str());
  }
  workInFlight_ += plan.count;
  conn->sourceMrs[slot] = std::move(temporary);
  if (req != nullptr) *req = Request{conn, conn->ops.ticket(slot)};
  return alloySuccess;
}

alloyResult_t VerbsTransport::put(Connection* c, const void* src, const Registration* srcReg, const RemoteKey* dst,
                                  size_t dstOffset, size_t bytes, Request* req) {
  auto* conn = static_cast<VerbsConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (put)");
  const VerbsRemoteKey* key = nullptr;
  ALLOY_TRY(checkKey(conn, dst, dstOffset, bytes, &key));
  if (src == nullptr && bytes > 0) return fail(alloyInvalidArgument, "src: NULL with %zu bytes", bytes);
  ALLOY_TRY(checkSize(bytes));
  if (bytes == 0) {
    if (req != nullptr) *req = Request{};
    return alloySuccess;
  }
  Operands operands;
  operands.src = src;
  operands.key = &key->key;
  VerbsPtr<ibv_mr> temporary;
  ALLOY_TRY(sourceKey(conn, src, bytes, srcReg, &operands.lkey, &temporary));
  return post(conn, "put", verbs::planPut(dstOffset, bytes), operands, std::move(temporary), req);
}

alloyResult_t VerbsTransport::signal(Connection* c, const RemoteKey* dst, size_t dstOffset, uint64_t value,
                                     Request* req) {
  auto* conn = static_cast<VerbsConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (signal)");
  const VerbsRemoteKey* key = nullptr;
  ALLOY_TRY(checkKey(conn, dst, dstOffset, verbs::kSignalBytes, &key));
  if ((key->key.base + dstOffset) % verbs::kSignalBytes != 0)
    return fail(alloyInvalidArgument, "dstOffset: %zu does not give an 8-byte aligned address at peer %d", dstOffset,
                conn->peer);
  Operands operands;
  operands.value = value;
  operands.key = &key->key;
  return post(conn, "signal", verbs::planSignal(dstOffset), operands, nullptr, req);
}

alloyResult_t VerbsTransport::putSignal(Connection* c, const void* src, size_t bytes, const RemoteKey* dst,
                                        size_t dstOffset, size_t signalOffset, uint64_t value, Request* req) {
  auto* conn = static_cast<VerbsConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (putSignal)");
  if (bytes == 0 || bytes > maxPutSignalBytes())
    return fail(alloyInvalidArgument, "bytes: %zu; expected 1..%zu (maxPutSignalBytes())", bytes, maxPutSignalBytes());
  if (src == nullptr) return fail(alloyInvalidArgument, "src: NULL with %zu bytes", bytes);
  const VerbsRemoteKey* key = nullptr;
  ALLOY_TRY(checkKey(conn, dst, dstOffset, bytes, &key));
  ALLOY_TRY(checkKey(conn, dst, signalOffset, verbs::kSignalBytes, &key));
  if ((key->key.base + signalOffset) % verbs::kSignalBytes != 0)
    return fail(alloyInvalidArgument, "signalOffset: %zu does not give an 8-byte aligned address at peer %d",
                signalOffset, conn->peer);
  Operands operands;
  operands.src = src;
  operands.value = value;
  operands.key = &key->key;
  VerbsPtr<ibv_mr> temporary;
  ALLOY_TRY(sourceKey(conn, src, bytes, nullptr, &operands.lkey, &temporary));
  return post(conn, "put+signal", verbs::planPutSignal(dstOffset, bytes, signalOffset), operands, std::move(temporary),
              req);
}

alloyResult_t VerbsTransport::flush(Connection* c, Request* req) {
  auto* conn = static_cast<VerbsConnection*>(c);
  if (conn == nullptr) return fail(alloyInvalidArgument, "c: expected a connection (flush)");
  return post(conn, "flush", verbs::planFlush(), Operands{}, nullptr, req);
}

alloyResult_t VerbsTransport::test(Request* req, bool* done) {
  if (req == nullptr || done == nullptr) return fail(alloyInvalidArgument, "req, done: expected non-NULL pointers");
  if (req->ticket == 0) {
    *done = true;
    return alloySuccess;
  }
  auto* conn = static_cast<VerbsConnection*>(req->connection);
  int status = IBV_WC_SUCCESS;
  const char* what = "";
  switch (conn->ops.test(req->ticket, &status, &what)) {
    case OpTable::Tested::Unknown:
      return fail(alloyInvalidArgument,
                  "req: no operation of this request is in flight to peer %d (tested done already?)", conn->peer);
    case OpTable::Tested::InFlight:
      *done = false;
      return alloySuccess;
    case OpTable::Tested::Done:
      break;
  }
  *done = true;
  *req = Request{};
  if (status != IBV_WC_SUCCESS)
    return fail(alloyRemoteError, "peer %d: %s failed: %s", conn->peer, what,
                lib_->wcStatusStr(static_cast<ibv_wc_status>(status)));
  return alloySuccess;
}

// Lets operations in flight finish (they use registrations and queue pairs), within a bound: a peer that
// stopped answering must not hang the destructor.
VerbsTransport::~VerbsTransport() {
  if (!cq_) return;  // open() failed before anything could be posted
  const auto deadline = Clock::now() + kDrainTimeout;
  while (workInFlight_ > 0 && Clock::now() < deadline) pollCompletions();
  if (workInFlight_ > 0)
    logWarn("net: %d verbs work requests still in flight after %lld s; releasing them anyway", workInFlight_,
            static_cast<long long>(kDrainTimeout.count()));
  // Queue pairs go before the completion queue and the protection domain (member order does the rest).
  keys_.clear();
  connections_.clear();
}

}  // namespace

alloyResult_t createVerbsTransport(const VerbsOptions& options, std::unique_ptr<Transport>* out) {
  if (out == nullptr) return fail(alloyInvalidArgument, "out: expected a non-NULL pointer");
  if (options.maxOutstanding < 1 || options.maxOutstanding > (1 << 16))
    return fail(alloyInvalidArgument, "options.maxOutstanding: %d is outside 1..%d", options.maxOutstanding, 1 << 16);
  auto lib = std::make_unique<verbs::VerbsLibrary>();
  if (!lib->loaded())
    return fail(alloyNotSupported, "verbs: %s could not be loaded (%s)", lib->name().c_str(), lib->error().c_str());
  auto transport = std::make_unique<VerbsTransport>(options, std::move(lib));
  ALLOY_TRY(transport->open());
  *out = std::move(transport);
  return alloySuccess;
}

}  // namespace net
}  // namespace alloy
