#include "net_channel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <unordered_map>

#include "device_comm.h"
#include "error.h"
#include "log.h"
#include "proxy_thread.h"

namespace alloy {
namespace net {
namespace {

using Clock = std::chrono::steady_clock;

// A control line per peer: its ready word, its header word, then the header words of its eager slots.
constexpr size_t kLine = 64;
constexpr size_t kEagerHeadersAt = 2 * sizeof(uint64_t);
static_assert(kEagerHeadersAt + kNetEagerSlots * sizeof(uint64_t) <= kLine, "a control line holds every header");
constexpr size_t kPage = 4096;
// How long drain() keeps progressing before it gives up on operations in flight.
constexpr auto kDrainTimeout = std::chrono::seconds(30);

size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

// The header a sender signals after its bytes: the operation's number in the pair's sequence (low 32
// bits; never the 0 of an empty header before it wraps, where the receiver compares with the value it
// expects anyway) and the byte count (capacity() is below 2^32).
uint64_t transferHeader(uint64_t sequence, size_t bytes) {
  return ((sequence & 0xffffffffull) << 32) | static_cast<uint64_t>(bytes);
}

uint64_t loadWord(const void* word) { return __atomic_load_n(static_cast<const uint64_t*>(word), __ATOMIC_ACQUIRE); }

// A time of day to the millisecond ("19:29:19.123"), so that the reports of several ranks line up.
using WallClock = std::chrono::system_clock;
std::string timeOfDay(WallClock::time_point at = WallClock::now()) {
  const std::time_t seconds = WallClock::to_time_t(at);
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::snprintf(text, sizeof(text), "%02d:%02d:%02d.%03lld", local.tm_hour, local.tm_min, local.tm_sec, ms);
  return text;
}

}  // namespace

// Host memory the proxy and (through a copy engine or stream memory operations) the GPU reach: pinned
// and mapped when the channel has a device, plain page-aligned memory otherwise. Registered with the
// transport when asked.
struct NetChannel::Region {
  Transport* transport = nullptr;
  Registration* registration = nullptr;
  char* base = nullptr;
  size_t bytes = 0;
  bool pinned = false;

  static alloyResult_t allocate(int device, size_t bytes, std::unique_ptr<Region>* out) {
    auto r = std::make_unique<Region>();
    r->bytes = roundUp(bytes, kPage);
    if (device >= 0) {
      ALLOY_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&r->base), r->bytes,
                                   cudaHostAllocMapped | cudaHostAllocPortable));
      r->pinned = true;
    } else {
      r->base = static_cast<char*>(std::aligned_alloc(kPage, r->bytes));
      if (r->base == nullptr) return fail(alloySystemError, "cannot allocate %zu bytes of staging memory", r->bytes);
    }
    std::memset(r->base, 0, r->bytes);
    *out = std::move(r);
    return alloySuccess;
  }
  alloyResult_t registerWith(Transport* t, std::vector<uint8_t>* key) {
    std::vector<uint8_t> unused;
    ALLOY_TRY(t->registerMemory(base, bytes, &registration, key != nullptr ? key : &unused));
    transport = t;
    return alloySuccess;
  }
  ~Region() {
    if (registration != nullptr && transport->deregister(registration) != alloySuccess)
      logWarn("net: deregistering staging memory failed: %s", lastError());
    if (base == nullptr) return;
    if (pinned) {
      if (cudaFreeHost(base) != cudaSuccess) logWarn("net: cudaFreeHost of staging memory failed");
    } else {
      std::free(base);
    }
  }
};

// Where the send of the operation in hand to one peer stands. Eager sends go AwaitReady (a free eager
// slot) -> PutSignalling -> Completing (one message carries data and header); others AwaitReady (the
// peer's inbox) -> Putting -> Flushing -> Signalling.
enum class SendState { Idle, AwaitReady, PutSignalling, Completing, Putting, Flushing, Signalling };

// Tests the request a send waits for (its putSignal or its flush); once it completed, the send moves on
// to `next`.
alloyResult_t awaitRequest(Transport* transport, Request* pending, SendState* state, SendState next, bool* moved) {
  bool done = false;
  ALLOY_TRY(transport->test(pending, &done));
  if (!done) return alloySuccess;
  *state = next;
  *moved = true;
  return alloySuccess;
}

// One rank on another host, and both directions of the protocol with it.
struct NetChannel::Peer {
  int rank = 0;
  size_t index = 0;        // among this rank's remote peers: where its control line and boxes are here
  size_t mineThere = 0;    // this rank's index among the peer's remote peers: where it writes there
  size_t remoteThere = 0;  // ranks on other hosts than the peer's: the layout of its staging
  Connection* connection = nullptr;
  RemoteKey* key = nullptr;

  // Sending: operations with bytes for the peer so far (the one in hand included), and the one in hand.
  uint64_t sendOps = 0;
  SendState send = SendState::Idle;
  size_t sendBytes = 0;
  size_t putBytes = 0;  // bytes put so far of the operation in hand
  // The flush (completes once every put has landed: the header may go, the outbox be refilled), or the
  // putSignal (completes once its message left the outbox).
  Request pending;
  // Receiving: the same count, the bytes expected, and whether the "ready" signal still has to go.
  uint64_t recvOps = 0;
  size_t recvBytes = 0;  // 0: nothing (more) to receive in the operation in hand
  bool readyPending = false;
};

alloyResult_t NetChannel::prepare(const NetChannelConfig& config, std::unique_ptr<Transport> transport,
                                  std::vector<uint8_t>* address, std::vector<uint8_t>* key,
                                  std::unique_ptr<NetChannel>* out) {
  if (config.nranks < 1 || config.rank < 0 || config.rank >= config.nranks ||
      static_cast<int>(config.hostOf.size()) != config.nranks)
    return fail(alloyInvalidArgument, "config: rank %d of %d with %zu host entries", config.rank, config.nranks,
                config.hostOf.size());
  if (config.geometry.slots < 1 || config.geometry.slotBytes == 0 || config.geometry.capacity() > 0xffffffffull)
    return fail(alloyInvalidArgument, "config.geometry: %d slots of %zu bytes; expected 1+ slots of 1+ bytes, "
                "below 4 GiB in all", config.geometry.slots, config.geometry.slotBytes);
  std::unique_ptr<NetChannel> c(new NetChannel());
  c->config_ = config;
  c->transport_ = std::move(transport);
  c->eagerBytes_ = std::min(config.geometry.eagerSlotBytes(), c->transport_->maxPutSignalBytes());
  c->peerIndex_.assign(config.nranks, -1);
  // Each peer's staging layout counts the ranks on other hosts than the peer's: this rank's place among
  // them is the ranks before it, less those on the peer's host; their number, all ranks less the peer's
  // host. Counted per host in one pass (a count per peer would be R^2 steps at R ranks).
  std::unordered_map<uint64_t, size_t> onHost, onHostBeforeMe;
  for (int r = 0; r < config.nranks; ++r) {
    ++onHost[config.hostOf[r]];
    if (r < config.rank) ++onHostBeforeMe[config.hostOf[r]];
  }
  for (int r = 0; r < config.nranks; ++r) {
    if (config.hostOf[r] == config.hostOf[config.rank]) continue;
    auto p = std::make_unique<Peer>();
    p->rank = r;
    p->index = c->peers_.size();
    p->mineThere = static_cast<size_t>(config.rank) - onHostBeforeMe[config.hostOf[r]];
    p->remoteThere = static_cast<size_t>(config.nranks) - onHost[config.hostOf[r]];
    c->peerIndex_[r] = static_cast<int>(p->index);
    c->peers_.push_back(std::move(p));
  }
  const size_t remote = c->peers_.size();
  ALLOY_TRY(Region::allocate(config.cudaDevice, c->eagerOffset(remote, remote, 0), &c->staging_));
  ALLOY_TRY(Region::allocate(config.cudaDevice, std::max<size_t>(c->outboxOffset(0, kBoxes), 1), &c->outbox_));
  ALLOY_TRY(Region::allocate(config.cudaDevice, kBoxes * kBellStride * sizeof(uint32_t), &c->bell_));
  ALLOY_TRY(c->staging_->registerWith(c->transport_.get(), key));
  ALLOY_TRY(c->outbox_->registerWith(c->transport_.get(), nullptr));
  c->doorbell_ = reinterpret_cast<volatile uint32_t*>(c->bell_->base);
  c->doorbellDevice_ = c->bell_->base;
  if (config.cudaDevice >= 0) ALLOY_CUDA_TRY(cudaHostGetDevicePointer(&c->doorbellDevice_, c->bell_->base, 0));
  ALLOY_TRY(c->transport_->localAddress(address));
  *out = std::move(c);
  return alloySuccess;
}

alloyResult_t NetChannel::connect(const std::vector<std::vector<uint8_t>>& addresses,
                                  const std::vector<std::vector<uint8_t>>& keys) {
  if (static_cast<int>(addresses.size()) != config_.nranks || static_cast<int>(keys.size()) != config_.nranks)
    return fail(alloyInvalidArgument, "addresses, keys: %zu and %zu entries; expected one per rank (%d)",
                addresses.size(), keys.size(), config_.nranks);
  const auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeoutMs);
  for (auto& p : peers_) {
    const std::vector<uint8_t>& a = addresses[p->rank];
    // connect() may ask to be called again after progress() while the backend sets the endpoint up.
    while (p->connection == nullptr) {
      ALLOY_TRY(transport_->connect(p->rank, a.data(), a.size(), &p->connection));
      if (p->connection != nullptr) break;
      if (Clock::now() > deadline) return fail(alloyTimeout, "connecting to rank %d timed out", p->rank);
      transport_->progressAll();
    }
    const std::vector<uint8_t>& k = keys[p->rank];
    ALLOY_TRY(transport_->importKey(p->connection, k.data(), k.size(), &p->key));
  }
  return alloySuccess;
}

NetChannel::~NetChannel() {
  // Keys and connections belong to the transport; regions deregister before it goes (member order).
  peers_.clear();
  staging_.reset();
  outbox_.reset();
}

// Staging layout of a rank with `remote` ranks on other hosts (peers write into it): a control line per
// remote rank, then the inboxes, page-aligned, box by box, then the eager slots, peer by peer. A sender
// addresses the receiver's staging with the receiver's count, which differs from its own where hosts
// hold different numbers of ranks.
size_t NetChannel::readyOffset(size_t peer) const { return peer * kLine; }
size_t NetChannel::headerOffset(size_t peer) const { return peer * kLine + sizeof(uint64_t); }
size_t NetChannel::eagerHeaderOffset(size_t peer, size_t slot) const {
  return peer * kLine + kEagerHeadersAt + slot * sizeof(uint64_t);
}
size_t NetChannel::inboxOffset(size_t remote, size_t peer, int box) const {
  return roundUp(remote * kLine, kPage) + (static_cast<size_t>(box) * remote + peer) * config_.geometry.capacity();
}
size_t NetChannel::eagerOffset(size_t remote, size_t peer, size_t slot) const {
  return inboxOffset(remote, 0, kBoxes) + (peer * kNetEagerSlots + slot) * config_.geometry.eagerSlotBytes();
}
size_t NetChannel::outboxOffset(size_t peer, int box) const {
  return (static_cast<size_t>(box) * peers_.size() + peer) * config_.geometry.capacity();
}

char* NetChannel::outbox(int peer, int box) const {
  const int index = peer >= 0 && peer < config_.nranks ? peerIndex_[peer] : -1;
  if (index < 0 || box < 0 || box >= kBoxes) return nullptr;
  return outbox_->base + outboxOffset(static_cast<size_t>(index), box);
}

const char* NetChannel::inbox(int peer, int box) const {
  const int index = peer >= 0 && peer < config_.nranks ? peerIndex_[peer] : -1;
  if (index < 0 || box < 0 || box >= kBoxes) return nullptr;
  return staging_->base + inboxOffset(peers_.size(), static_cast<size_t>(index), box);
}

alloyResult_t NetChannel::addOperation(NetOperation operation, bool persistent, uint32_t* id) {
  if (id == nullptr) return fail(alloyInvalidArgument, "id: expected a non-NULL pointer");
  for (const auto* list : {&operation.sends, &operation.recvs}) {
    const char* name = list == &operation.sends ? "sends" : "recvs";
    std::vector<char> seen(config_.nranks, 0);
    for (size_t i = 0; i < list->size(); ++i) {
      const NetMessage& m = (*list)[i];
      if (m.peer < 0 || m.peer >= config_.nranks || peerIndex_[m.peer] < 0)
        return fail(alloyInvalidArgument, "operation.%s[%zu].peer: %d is not a rank on another host", name, i, m.peer);
      if (seen[m.peer]++)
        return fail(alloyInvalidArgument, "operation.%s[%zu].peer: rank %d appears twice; expected one entry per peer",
                    name, i, m.peer);
      if (m.bytes == 0 || m.bytes > capacity())
        return fail(alloyInvalidArgument, "operation.%s[%zu].bytes: %zu; expected 1..%zu (capacity())", name, i,
                    m.bytes, capacity());
    }
  }
  auto stored = std::make_shared<const NetOperation>(std::move(operation));
  std::lock_guard<std::mutex> lock(mutex_);
  if (freeIds_.empty()) {
    if (operations_.size() >= 0x7fffffffu) return fail(alloyInternalError, "net: operation table full");
    freeIds_.push_back(static_cast<uint32_t>(operations_.size()));
    operations_.emplace_back();
    persistent_.push_back(0);
  }
  *id = freeIds_.back();
  freeIds_.pop_back();
  operations_[*id] = std::move(stored);
  persistent_[*id] = persistent;
  return alloySuccess;
}

void NetChannel::releaseOperation(uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (id >= operations_.size() || persistent_[id] || !operations_[id]) return;
  operations_[id].reset();
  freeIds_.push_back(id);
}

// A rung doorbell whose operation is to start now: of two, the earlier round of the launch (the stream
// rings round r + 1 before it waits for round r). An id that names no operation is start()'s to report.
// The words are read twice once one was found rung: a single pass could read round r's box before the
// stream rang it and round r + 1's after, and start r + 1 first. Round r + 1 is rung after round r, so
// once it was seen, a second read of round r's box sees round r.
int NetChannel::nextBox() {
  bool rung = false;
  for (int b = 0; b < kBoxes && !rung; ++b)
    rung = __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE) != 0;
  if (!rung) return -1;
  int box = -1;
  size_t round = 0;
  for (int b = 0; b < kBoxes; ++b) {
    const uint32_t bell = __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE);
    if (bell == 0) continue;
    size_t r = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bell - 1 < operations_.size() && operations_[bell - 1]) r = operations_[bell - 1]->round;
    }
    if (box < 0 || r < round) {
      box = b;
      round = r;
    }
  }
  return box;
}

alloyResult_t NetChannel::start(uint32_t id, int box) {
  currentId_ = id;
  currentBox_ = box;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id >= operations_.size() || !operations_[id])
      return fail(alloyInternalError, "net: doorbell %d rang for operation %u, which does not exist", box, id);
    current_ = operations_[id];
  }
  if (boxOf(current_->round) != box)
    return fail(alloyInternalError, "net: doorbell %d rang for operation %u of round %zu, which is staged in box %d",
                box, id, current_->round, boxOf(current_->round));
  for (const NetMessage& m : current_->sends) {
    Peer& p = *peers_[peerIndex_[m.peer]];
    ++p.sendOps;
    p.send = SendState::AwaitReady;
    p.sendBytes = m.bytes;
    p.putBytes = 0;
  }
  // The doorbell rang after the caller emptied the inboxes of earlier operations: they are free again.
  for (const NetMessage& m : current_->recvs) {
    Peer& p = *peers_[peerIndex_[m.peer]];
    ++p.recvOps;
    p.recvBytes = m.bytes;
    p.readyPending = true;
  }
  lastMove_ = startedAt_ = Clock::now().time_since_epoch().count();
  served_[servedCount_++ % kServedKept] = Served{id, WallClock::now().time_since_epoch().count(), 0};
  logTrace("rank %d: channel %p: net operation %u (%s) starts: %zu sends, %zu receives", config_.rank,
           static_cast<void*>(this), id, operationName(current_->operation), current_->sends.size(),
           current_->recvs.size());
  return alloySuccess;
}

void NetChannel::finish() {
  const uint32_t id = currentId_;
  // An operation that completed, but took a quarter of the timeout or more: a peer that came late, or a
  // transfer that crawled. Logged so that a later timeout elsewhere can be traced to it.
  const double seconds = std::chrono::duration<double>(Clock::duration(Clock::now().time_since_epoch().count() -
                                                                        startedAt_)).count();
  served_[(servedCount_ - 1) % kServedKept].finishedAt = WallClock::now().time_since_epoch().count();
  if (error() == alloySuccess && seconds * 4000 >= config_.timeoutMs)
    logWarn("rank %d: net operation %u (%s) took %.1f s, until %s", config_.rank, id,
            operationName(current_->operation), seconds, timeOfDay().c_str());
  logTrace("rank %d: channel %p: net operation %u %s", config_.rank, static_cast<void*>(this), id,
           error() == alloySuccess ? "done" : "released (failed)");
  current_.reset();
  releaseOperation(id);
  __atomic_store_n(const_cast<uint32_t*>(doorbell(currentBox_)), 0u, __ATOMIC_RELEASE);
}

// Sending to p: a transfer of up to eagerBytes_ goes as one putSignal (data and header in one message:
// no flush round trip) into p's eager slot of operation m (m modulo kNetEagerSlots) without waiting for
// p to reach m. The slot was last used by operation m - kNetEagerSlots, which p copied out before it
// started any later operation, and a "ready" for m - kNetEagerSlots + 1 or later says that it did. So
// a sender runs up to kNetEagerSlots small operations ahead of its receiver, as a broadcast's root or a
// reduce's leaves do. A larger transfer waits for p to be ready for m (its inbox is then free), is put
// in chunks of slotBytes, the connection flushed, and only then the header signalled. The completed
// flush is what orders the header after the data (Transport::signal orders nothing): UCX 1.22 stripes
// puts over several tcp lanes (lo and eth0) and sends the signal's atomic on another, and without the
// flush receivers saw the header first and read stale bytes (4 virtual hosts over tcp, one H100). The
// flush costs one round trip per operation. Puts go without requests, so that no window, however many
// chunks, fills the connection's table of observed operations: the flush's completion covers them.
alloyResult_t NetChannel::advanceSend(Peer& p, bool* moved) {
  switch (p.send) {
    case SendState::Idle:
      return alloySuccess;
    case SendState::AwaitReady: {
      // p is ready for operation `ready`: it copied out every eager slot of the operations before.
      const uint64_t ready = loadWord(staging_->base + readyOffset(p.index));
      if (p.sendBytes > eagerBytes_) {
        if (ready < p.sendOps) return alloySuccess;
        *moved = true;
        p.send = SendState::Putting;
        return advanceSend(p, moved);
      }
      // Before the first "ready", every slot is free: operations 1 .. kNetEagerSlots may go.
      if (std::max<uint64_t>(ready, 1) + kNetEagerSlots <= p.sendOps) return alloySuccess;
      *moved = true;
      p.send = SendState::PutSignalling;
    }
      [[fallthrough]];
    case SendState::PutSignalling: {
      const size_t slot = p.sendOps % kNetEagerSlots;
      const alloyResult_t r = transport_->putSignal(p.connection, outbox_->base + outboxOffset(p.index, currentBox_),
                                                    p.sendBytes, p.key, eagerOffset(p.remoteThere, p.mineThere, slot),
                                                    eagerHeaderOffset(p.mineThere, slot),
                                                    transferHeader(p.sendOps, p.sendBytes), &p.pending);
      if (r == alloyInProgress) return alloySuccess;
      ALLOY_TRY(r);
      p.send = SendState::Completing;
      *moved = true;
    }
      [[fallthrough]];
    case SendState::Completing:
      return awaitRequest(transport_.get(), &p.pending, &p.send, SendState::Idle, moved);
    case SendState::Putting:
      while (p.putBytes < p.sendBytes) {
        const size_t length = std::min(config_.geometry.slotBytes, p.sendBytes - p.putBytes);
        const alloyResult_t r = transport_->put(
            p.connection, outbox_->base + outboxOffset(p.index, currentBox_) + p.putBytes, outbox_->registration,
            p.key, inboxOffset(p.remoteThere, p.mineThere, currentBox_) + p.putBytes, length, nullptr);
        if (r == alloyInProgress) return alloySuccess;
        ALLOY_TRY(r);
        p.putBytes += length;
        *moved = true;
      }
      {
        const alloyResult_t r = transport_->flush(p.connection, &p.pending);
        if (r == alloyInProgress) return alloySuccess;
        ALLOY_TRY(r);
      }
      p.send = SendState::Flushing;
      [[fallthrough]];
    case SendState::Flushing:
      ALLOY_TRY(awaitRequest(transport_.get(), &p.pending, &p.send, SendState::Signalling, moved));
      if (p.send != SendState::Signalling) return alloySuccess;
      [[fallthrough]];
    case SendState::Signalling: {
      const alloyResult_t r = transport_->signal(p.connection, p.key, headerOffset(p.mineThere),
                                                 transferHeader(p.sendOps, p.sendBytes), nullptr);
      if (r == alloyInProgress) return alloySuccess;
      ALLOY_TRY(r);
      p.send = SendState::Idle;
      *moved = true;
      return alloySuccess;
    }
  }
  return alloySuccess;
}

// Receiving from p: tells p this rank is ready (its inbox for p is free, and every eager slot of the
// operations before), then waits for the header of this operation, in p's eager slot of it or after the
// inbox (the sender chooses by its byte count, and both are watched, so that counts that differ fail
// instead of waiting for the timeout), and checks the byte count. Eager bytes are copied from the slot
// into the inbox, where the stream takes them from.
alloyResult_t NetChannel::advanceRecv(Peer& p, bool* moved) {
  if (p.recvBytes == 0) return alloySuccess;
  if (p.readyPending) {
    const alloyResult_t r = transport_->signal(p.connection, p.key, readyOffset(p.mineThere), p.recvOps, nullptr);
    if (r == alloyInProgress) return alloySuccess;
    ALLOY_TRY(r);
    p.readyPending = false;
    *moved = true;
  }
  const size_t slot = p.recvOps % kNetEagerSlots;
  const uint64_t sequence = p.recvOps & 0xffffffffull;
  const uint64_t inSlot = loadWord(staging_->base + eagerHeaderOffset(p.index, slot));
  const bool eager = inSlot >> 32 == sequence;
  const uint64_t header = eager ? inSlot : loadWord(staging_->base + headerOffset(p.index));
  if (header >> 32 != sequence) return alloySuccess;
  if ((header & 0xffffffffull) != p.recvBytes)
    return fail(alloyRemoteError,
                "%s: rank %d sent %llu bytes where rank %d receives %zu from it; sizes must match on both sides",
                operationName(current_->operation), p.rank, static_cast<unsigned long long>(header & 0xffffffffull),
                config_.rank, p.recvBytes);
  if (eager)
    std::memcpy(staging_->base + inboxOffset(peers_.size(), p.index, currentBox_),
                staging_->base + eagerOffset(peers_.size(), p.index, slot), p.recvBytes);
  p.recvBytes = 0;
  *moved = true;
  return alloySuccess;
}

bool NetChannel::progressInbound() { return transport_->progressInbound(); }

bool NetChannel::progress() {
  transport_->progress();
  if (abortRequested_.load(std::memory_order_acquire) && error() == alloySuccess)
    failWith(alloyRemoteError, "aborted by alloyCommAbort on this rank");
  if (!current_) {
    // Between operations nothing is in flight (an operation ends once its puts completed and its
    // signals went out); the transport was driven above, so that peers' puts land.
    const int box = nextBox();
    if (box < 0) return false;
    const uint32_t id = __atomic_load_n(const_cast<const uint32_t*>(doorbell(box)), __ATOMIC_ACQUIRE) - 1;
    const alloyResult_t r = error() == alloySuccess ? start(id, box) : error();
    if (r != alloySuccess) {
      if (error() == alloySuccess) failWith(r, lastError());
      // A failed channel moves nothing: the stream goes on, and the error reaches the caller.
      currentId_ = id;
      currentBox_ = box;
      finish();
      return false;
    }
  }
  bool moved = false;
  alloyResult_t r = alloySuccess;
  // Receives first: a "ready" to every sender goes out before this rank's own puts, which over tcp and
  // shared memory keep this thread copying for as long as the wire takes. Sent after them, a peer that
  // sends to this rank waited that long before it started, and the two directions of a pair ran one
  // after the other (seen in a proxy trace of 2 virtual hosts over tcp on 2xH200) instead of side by
  // side, as they must where a NIC moves the bytes.
  for (auto& p : peers_)
    if (r == alloySuccess) r = advanceRecv(*p, &moved);
  for (auto& p : peers_)
    if (r == alloySuccess) r = advanceSend(*p, &moved);
  if (r != alloySuccess) failWith(r, lastError());
  const long long now = Clock::now().time_since_epoch().count();
  if (moved) lastMove_ = now;
  if (error() == alloySuccess && now - lastMove_ > std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::milliseconds(config_.timeoutMs)).count()) {
    logStallDetail();
    failWith(alloyTimeout, describeStall());
  }
  bool complete = true;
  for (auto& p : peers_) complete = complete && p->send == SendState::Idle && p->recvBytes == 0;
  if (complete || error() != alloySuccess) finish();
  return true;
}

// Which peers the operation in hand waits for, and for what.
std::string NetChannel::describeStall() const {
  std::string waiting;
  for (const auto& p : peers_) {
    const char* send = p->send == SendState::Idle ? nullptr
                       : p->send == SendState::AwaitReady ? "its inbox" : "delivery of the data sent to it";
    const bool forData = p->recvBytes != 0;
    if (send == nullptr && !forData) continue;
    waiting += (waiting.empty() ? "" : ", ") + std::to_string(p->rank) + " (" +
               (forData ? (send != nullptr ? std::string("its data, and ") + send : "its data") : send) + ")";
  }
  char text[512];
  std::snprintf(text, sizeof(text), "%s timed out on rank %d of %d after %lld ms without progress, waiting for rank(s) "
                "%s between hosts (the communicator's timeout: alloyConfig_t.timeoutMs or ALLOY_TIMEOUT_MS)",
                operationName(current_ ? current_->operation : 0), config_.rank, config_.nranks, config_.timeoutMs,
                waiting.empty() ? "?" : waiting.c_str());
  return text;
}

// Every peer's side of the protocol and the transport's tally, one line each: with every rank's report of
// one stall, whether a message was lost before the transport completed it (the sender's tally shows it
// in flight), after (completed there, never seen here), or never sent (the protocol's state) can be told.
void NetChannel::logStallDetail() const {
  std::string recent;
  for (size_t k = servedCount_ > kServedKept ? servedCount_ - kServedKept : 0; k < servedCount_; ++k) {
    const Served& s = served_[k % kServedKept];
    const auto at = [](long long ticks) { return timeOfDay(WallClock::time_point(WallClock::duration(ticks))); };
    recent += " #" + std::to_string(s.id) + " " + at(s.startedAt) + "-" + (s.finishedAt != 0 ? at(s.finishedAt) : "");
  }
  std::string bells;
  for (int b = 0; b < kBoxes; ++b) {
    const uint32_t bell = __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE);
    bells += " " + (bell != 0 ? "#" + std::to_string(bell - 1) : std::string("-"));
  }
  logWarn("rank %d: stall detail: doorbells%s; the last operations served (id, found rung, finished):%s",
          config_.rank, bells.c_str(), recent.c_str());
  static const char* const kSendStates[] = {"idle", "awaiting ready or an eager slot", "put+signalling",
                                            "completing", "putting", "flushing", "signalling"};
  static_assert(sizeof(kSendStates) / sizeof(kSendStates[0]) == static_cast<size_t>(SendState::Signalling) + 1,
                "a name for every SendState, in its order");
  for (const auto& p : peers_) {
    const uint64_t ready = loadWord(staging_->base + readyOffset(p->index));
    const uint64_t header = loadWord(staging_->base + headerOffset(p->index));
    const size_t slot = p->recvOps % kNetEagerSlots;
    const uint64_t eager = loadWord(staging_->base + eagerHeaderOffset(p->index, slot));
    logWarn("rank %d: stall detail at %s, peer %d: send #%llu %s (ready word %llu); receive #%llu %s (header #%llu, "
            "%llu bytes; eager slot %zu: #%llu, %llu bytes); transport: %s", config_.rank, timeOfDay().c_str(), p->rank,
            static_cast<unsigned long long>(p->sendOps), kSendStates[static_cast<int>(p->send)],
            static_cast<unsigned long long>(ready), static_cast<unsigned long long>(p->recvOps),
            p->recvBytes != 0 ? "waiting" : "done", static_cast<unsigned long long>(header >> 32),
            static_cast<unsigned long long>(header & 0xffffffffull), slot, static_cast<unsigned long long>(eager >> 32),
            static_cast<unsigned long long>(eager & 0xffffffffull), transport_->describeTraffic(p->connection).c_str());
  }
}

alloyResult_t NetChannel::drain() {
  // A failed channel's error has been reported already, and its peers may be gone: nothing to complete.
  if (error() != alloySuccess) return alloySuccess;
  const auto deadline = Clock::now() + kDrainTimeout;
  std::vector<Request> flushes(peers_.size());
  for (size_t i = 0; i < peers_.size(); ++i) {
    alloyResult_t r;
    while ((r = transport_->flush(peers_[i]->connection, &flushes[i])) == alloyInProgress) transport_->progressAll();
    ALLOY_TRY(r);
  }
  for (Request& req : flushes) {
    bool done = false;
    while (true) {
      ALLOY_TRY(transport_->test(&req, &done));
      if (done) break;
      if (Clock::now() > deadline) return fail(alloyTimeout, "net: flushing the connections timed out");
      transport_->progressAll();
    }
  }
  return alloySuccess;
}

void NetChannel::failWith(alloyResult_t code, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(errorMutex_);
    if (error_.load(std::memory_order_relaxed) != alloySuccess) return;
    errorMessage_ = message;
    error_.store(code, std::memory_order_release);
  }
  logWarn("rank %d: %s", config_.rank, message.c_str());
}

std::string NetChannel::errorMessage() const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  return errorMessage_;
}

void NetChannel::abort() { abortRequested_.store(true, std::memory_order_release); }

NetChannel::Footprint NetChannel::footprint() const {
  return Footprint{staging_->bytes, outbox_->bytes, bell_->bytes, peers_.size()};
}

void NetChannel::serveInBackground(bool on) {
  if (on) ProxyThread::add(this);
  else ProxyThread::remove(this);
}

std::string NetChannel::describe() const {
  return peers_.empty() ? std::string("no peer on another host") : transport_->describe(peers_[0]->connection);
}

}  // namespace net
}  // namespace alloy
