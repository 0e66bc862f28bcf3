#include "net_channel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "device_comm.h"
#include "env.h"
#include "error.h"
#include "log.h"

namespace alloy {
namespace net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kLine = 64;  // a control word per peer, each on its own cache line
constexpr size_t kPage = 4096;
constexpr uint64_t kLastChunk = 1ull << 31;
constexpr uint64_t kLengthMask = kLastChunk - 1;
// How long drain() keeps progressing before it gives up on operations in flight.
constexpr auto kDrainTimeout = std::chrono::seconds(30);

size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

// A chunk's header: its sequence number (low 32 bits of chunk index + 1, never the 0 of an empty
// header), the last-chunk mark and its length. The receiver compares all three with what it expects.
uint64_t chunkHeader(uint64_t index, size_t length, bool last) {
  return (((index + 1) & 0xffffffffull) << 32) | (last ? kLastChunk : 0) | static_cast<uint64_t>(length);
}

uint64_t loadWord(const void* word) { return __atomic_load_n(static_cast<const uint64_t*>(word), __ATOMIC_ACQUIRE); }

// Walks a list of messages as a sequence of chunks of at most slotBytes each.
struct Cursor {
  size_t message = 0;
  size_t offset = 0;
  // The next chunk of messages: buffer, length and whether it ends its message. False when none is left.
  bool next(const std::vector<const NetMessage*>& messages, size_t slotBytes, char** buffer, size_t* length,
            bool* last) {
    if (message >= messages.size()) return false;
    const NetMessage& m = *messages[message];
    *buffer = m.buffer + offset;
    *length = std::min(slotBytes, m.bytes - offset);
    offset += *length;
    *last = offset == m.bytes;
    if (*last) {
      ++message;
      offset = 0;
    }
    return true;
  }
};

size_t chunksOf(const std::vector<const NetMessage*>& messages, size_t slotBytes) {
  size_t chunks = 0;
  for (const NetMessage* m : messages) chunks += (m->bytes + slotBytes - 1) / slotBytes;
  return chunks;
}

}  // namespace

NetGeometry netGeometry() {
  NetGeometry g;
  // Four slots of 1 MB per peer keep a tcp or shared-memory link busy while the copy engine fills the
  // next slot; ALLOY_NET_SLOT_BYTES trades staging memory (docs/architecture.md) for fewer chunks.
  g.slots = static_cast<int>(envInt("ALLOY_NET_SLOTS", 4, 2, 64));
  g.slotBytes = static_cast<size_t>(envInt("ALLOY_NET_SLOT_BYTES", 1 << 20, kPage, 1 << 30)) & ~(kPage - 1);
  return g;
}

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

// One rank on another host, and both directions of the chunk protocol with it.
struct NetChannel::Peer {
  int rank = 0;
  size_t index = 0;      // among this rank's remote peers: where its words and slots are in staging_
  size_t mineThere = 0;  // this rank's index among the peer's remote peers: where it writes there
  size_t remoteThere = 0;  // ranks on other hosts than the peer's: the layout of its staging
  Connection* connection = nullptr;
  RemoteKey* key = nullptr;

  // Sending: chunks whose copy into the outbox was issued, and chunks put and signalled.
  uint64_t staged = 0, put = 0, sendTarget = 0;
  bool dataPut = false;  // the put of chunk `put` went out; its header signal did not yet
  std::vector<Request> slotPuts;      // by outbox slot: the put reading it
  std::vector<size_t> slotLength;     // by outbox slot
  std::vector<char> slotLast;         // by outbox slot
  std::vector<cudaEvent_t> sendCopied;  // by outbox slot (device memory)
  std::vector<const NetMessage*> sends;
  Cursor sendCursor;

  // Receiving: chunks whose copy out of staging was issued, completed, and credited to the sender.
  uint64_t unstaged = 0, consumed = 0, credited = 0, recvTarget = 0;
  std::vector<cudaEvent_t> recvCopied;  // by receive slot (device memory)
  std::vector<const NetMessage*> recvs;
  Cursor recvCursor;
};

alloyResult_t NetChannel::prepare(const NetChannelConfig& config, std::unique_ptr<Transport> transport,
                                  std::vector<uint8_t>* address, std::vector<uint8_t>* key,
                                  std::unique_ptr<NetChannel>* out) {
  if (config.nranks < 1 || config.rank < 0 || config.rank >= config.nranks ||
      static_cast<int>(config.hostOf.size()) != config.nranks)
    return fail(alloyInvalidArgument, "config: rank %d of %d with %zu host entries", config.rank, config.nranks,
                config.hostOf.size());
  if (config.geometry.slots < 2 || config.geometry.slotBytes == 0 || config.geometry.slotBytes > kLengthMask)
    return fail(alloyInvalidArgument, "config.geometry: %d slots of %zu bytes; expected 2+ slots of 1..2^31-1 bytes",
                config.geometry.slots, config.geometry.slotBytes);
  std::unique_ptr<NetChannel> c(new NetChannel());
  c->config_ = config;
  c->transport_ = std::move(transport);
  const NetGeometry& g = config.geometry;

  c->peerIndex_.assign(config.nranks, -1);
  for (int r = 0; r < config.nranks; ++r) {
    if (config.hostOf[r] == config.hostOf[config.rank]) continue;
    auto p = std::make_unique<Peer>();
    p->rank = r;
    p->index = c->peers_.size();
    p->mineThere = c->remoteOrdinal(r, config.rank);
    p->remoteThere = c->remoteOrdinal(r, config.nranks);
    p->slotPuts.resize(g.slots);
    p->slotLength.resize(g.slots);
    p->slotLast.resize(g.slots);
    c->peerIndex_[r] = static_cast<int>(p->index);
    c->peers_.push_back(std::move(p));
  }
  const size_t remote = c->peers_.size();
  ALLOY_TRY(Region::allocate(config.cudaDevice, c->slotsStart(remote) + remote * g.slots * g.slotBytes, &c->staging_));
  ALLOY_TRY(Region::allocate(config.cudaDevice, std::max<size_t>(remote * g.slots * g.slotBytes, 1), &c->outbox_));
  ALLOY_TRY(Region::allocate(config.cudaDevice, kLine, &c->bell_));
  ALLOY_TRY(c->staging_->registerWith(c->transport_.get(), key));
  ALLOY_TRY(c->outbox_->registerWith(c->transport_.get(), nullptr));
  c->doorbell_ = reinterpret_cast<volatile uint32_t*>(c->bell_->base);
  c->doorbellDevice_ = c->bell_->base;
  if (config.cudaDevice >= 0) {
    ALLOY_CUDA_TRY(cudaHostGetDevicePointer(&c->doorbellDevice_, c->bell_->base, 0));
    cudaStream_t stream = nullptr;
    ALLOY_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    c->copyStream_ = stream;
    for (auto& p : c->peers_) {
      for (auto* events : {&p->sendCopied, &p->recvCopied}) {
        events->assign(g.slots, nullptr);
        for (cudaEvent_t& e : *events) ALLOY_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      }
    }
  }
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
      transport_->progress();
    }
    const std::vector<uint8_t>& k = keys[p->rank];
    ALLOY_TRY(transport_->importKey(p->connection, k.data(), k.size(), &p->key));
  }
  return alloySuccess;
}

NetChannel::~NetChannel() {
  for (auto& p : peers_) {
    for (auto* events : {&p->sendCopied, &p->recvCopied})
      for (cudaEvent_t e : *events)
        if (e != nullptr && cudaEventDestroy(e) != cudaSuccess) logWarn("net: cudaEventDestroy failed");
  }
  if (copyStream_ != nullptr && cudaStreamDestroy(copyStream_) != cudaSuccess)
    logWarn("net: cudaStreamDestroy failed");
  // Keys and connections belong to the transport; regions deregister before it goes (member order).
  peers_.clear();
  staging_.reset();
  outbox_.reset();
}

size_t NetChannel::remoteOrdinal(int viewer, int rank) const {
  size_t ordinal = 0;
  for (int t = 0; t < rank; ++t) ordinal += config_.hostOf[t] != config_.hostOf[viewer];
  return ordinal;
}

// Staging layout of a rank with `remote` ranks on other hosts (peers write into it): a credit line per
// remote rank, a header per receive slot, then the receive slots, page-aligned. A sender addresses the
// receiver's staging with the receiver's count, which differs from its own where hosts hold different
// numbers of ranks.
size_t NetChannel::creditOffset(size_t peer) const { return peer * kLine; }
size_t NetChannel::headerOffset(size_t remote, size_t peer, size_t slot) const {
  return remote * kLine + (peer * config_.geometry.slots + slot) * sizeof(uint64_t);
}
size_t NetChannel::slotsStart(size_t remote) const {
  return roundUp(remote * kLine + remote * config_.geometry.slots * sizeof(uint64_t), kPage);
}
size_t NetChannel::slotOffset(size_t remote, size_t peer, size_t slot) const {
  return slotsStart(remote) + (peer * config_.geometry.slots + slot) * config_.geometry.slotBytes;
}

alloyResult_t NetChannel::addOperation(NetOperation operation, bool persistent, uint32_t* id) {
  if (id == nullptr) return fail(alloyInvalidArgument, "id: expected a non-NULL pointer");
  if (operation.deviceMemory && config_.cudaDevice < 0)
    return fail(alloyInvalidArgument, "operation.deviceMemory: the channel has no CUDA device");
  for (const auto* list : {&operation.sends, &operation.recvs}) {
    const char* name = list == &operation.sends ? "sends" : "recvs";
    for (size_t i = 0; i < list->size(); ++i) {
      const NetMessage& m = (*list)[i];
      if (m.peer < 0 || m.peer >= config_.nranks || peerIndex_[m.peer] < 0)
        return fail(alloyInvalidArgument, "operation.%s[%zu].peer: %d is not a rank on another host", name, i, m.peer);
      if (m.bytes == 0 || m.buffer == nullptr)
        return fail(alloyInvalidArgument, "operation.%s[%zu]: %zu bytes at %p; expected a non-empty buffer", name, i,
                    m.bytes, static_cast<void*>(m.buffer));
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

alloyResult_t NetChannel::start(uint32_t id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id >= operations_.size() || !operations_[id])
      return fail(alloyInternalError, "net: the doorbell rang for operation %u, which does not exist", id);
    current_ = operations_[id];
  }
  currentId_ = id;
  const size_t slotBytes = config_.geometry.slotBytes;
  for (auto& p : peers_) {
    p->sends.clear();
    p->recvs.clear();
    p->sendCursor = Cursor{};
    p->recvCursor = Cursor{};
  }
  for (const NetMessage& m : current_->sends) peers_[peerIndex_[m.peer]]->sends.push_back(&m);
  for (const NetMessage& m : current_->recvs) peers_[peerIndex_[m.peer]]->recvs.push_back(&m);
  for (auto& p : peers_) {
    p->sendTarget = p->staged + chunksOf(p->sends, slotBytes);
    p->recvTarget = p->unstaged + chunksOf(p->recvs, slotBytes);
  }
  lastMove_ = Clock::now().time_since_epoch().count();
  return alloySuccess;
}

void NetChannel::finish() {
  const uint32_t id = currentId_;
  current_.reset();
  releaseOperation(id);
  __atomic_store_n(const_cast<uint32_t*>(doorbell_), 0u, __ATOMIC_RELEASE);
}

// Whether the copy of a slot's chunk has completed (at once for host memory, where it was a memcpy).
alloyResult_t NetChannel::copied(cudaEvent_t event, bool* done) {
  *done = true;
  if (!current_ || !current_->deviceMemory || event == nullptr) return alloySuccess;
  const cudaError_t err = cudaEventQuery(event);
  if (err == cudaErrorNotReady) {
    *done = false;
    return alloySuccess;
  }
  if (err != cudaSuccess) return fail(alloyCudaError, "net: a staging copy failed: %s", cudaGetErrorString(err));
  return alloySuccess;
}

// Copies a chunk between user memory and staging: a memcpy for host memory; for device memory the
// proxy's copy engine stream, with the slot's event recorded after it. The direction is explicit: with
// cudaMemcpyDefault the driver looks the user's pointer up, and memory from cudaMallocAsync whose
// cudaFreeAsync is already enqueued (later in stream order) is no longer found, so it was taken for host
// memory and read by the CPU (a crash seen under MPIX's in-place alltoallv).
alloyResult_t NetChannel::copyChunk(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaEvent_t event) {
  if (!current_->deviceMemory) {
    std::memcpy(dst, src, bytes);
    return alloySuccess;
  }
  const auto stream = copyStream_;
  ALLOY_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  ALLOY_CUDA_TRY(cudaEventRecord(event, stream));
  return alloySuccess;
}

// Sending to p: puts every staged chunk whose copy finished (in order), then stages the next chunks of
// the operation into free outbox slots for which the receiver has credited a free receive slot.
alloyResult_t NetChannel::advanceSends(Peer& p, bool* moved) {
  const size_t slots = config_.geometry.slots;
  while (p.put < p.staged) {
    const size_t slot = p.put % slots;
    bool ready = false;
    ALLOY_TRY(copied(p.sendCopied.empty() ? nullptr : p.sendCopied[slot], &ready));
    if (!ready) break;
    if (!p.dataPut) {
      const alloyResult_t r = transport_->put(p.connection, outbox_->base + (p.index * slots + slot) * config_.geometry.slotBytes,
                                              outbox_->registration, p.key, slotOffset(p.remoteThere, p.mineThere, slot),
                                              p.slotLength[slot], &p.slotPuts[slot]);
      if (r == alloyInProgress) break;
      ALLOY_TRY(r);
      p.dataPut = true;
    }
    const alloyResult_t r = transport_->signal(p.connection, p.key, headerOffset(p.remoteThere, p.mineThere, slot),
                                               chunkHeader(p.put, p.slotLength[slot], p.slotLast[slot]), nullptr);
    if (r == alloyInProgress) break;
    ALLOY_TRY(r);
    p.dataPut = false;
    ++p.put;
    *moved = true;
  }
  const uint64_t credit = loadWord(staging_->base + creditOffset(p.index));
  while (p.staged < p.sendTarget && p.staged - credit < slots) {
    const size_t slot = p.staged % slots;
    bool free = true;
    ALLOY_TRY(transport_->test(&p.slotPuts[slot], &free));
    if (!free) break;
    char* chunk = nullptr;
    size_t length = 0;
    bool last = false;
    if (!p.sendCursor.next(p.sends, config_.geometry.slotBytes, &chunk, &length, &last))
      return fail(alloyInternalError, "net: ran out of send chunks for rank %d", p.rank);
    char* staged = outbox_->base + (p.index * slots + slot) * config_.geometry.slotBytes;
    ALLOY_TRY(copyChunk(staged, chunk, length, cudaMemcpyDeviceToHost, p.sendCopied.empty() ? nullptr : p.sendCopied[slot]));
    p.slotLength[slot] = length;
    p.slotLast[slot] = last;
    ++p.staged;
    *moved = true;
  }
  return alloySuccess;
}

// Receiving from p: retires finished copies out of staging (in order) and credits them to the sender,
// then copies out every chunk that has arrived, after checking that it is the chunk expected.
alloyResult_t NetChannel::advanceRecvs(Peer& p, bool* moved) {
  const size_t slots = config_.geometry.slots;
  while (p.consumed < p.unstaged) {
    bool done = false;
    ALLOY_TRY(copied(p.recvCopied.empty() ? nullptr : p.recvCopied[p.consumed % slots], &done));
    if (!done) break;
    ++p.consumed;
    *moved = true;
  }
  if (p.credited < p.consumed) {
    const alloyResult_t r = transport_->signal(p.connection, p.key, creditOffset(p.mineThere), p.consumed, nullptr);
    if (r != alloyInProgress) {
      ALLOY_TRY(r);
      p.credited = p.consumed;
    }
  }
  while (p.unstaged < p.recvTarget) {
    const size_t slot = p.unstaged % slots;
    const uint64_t header = loadWord(staging_->base + headerOffset(peers_.size(), p.index, slot));
    if (header >> 32 != ((p.unstaged + 1) & 0xffffffffull)) break;
    char* chunk = nullptr;
    size_t length = 0;
    bool last = false;
    if (!p.recvCursor.next(p.recvs, config_.geometry.slotBytes, &chunk, &length, &last))
      return fail(alloyInternalError, "net: ran out of receive chunks for rank %d", p.rank);
    if ((header & kLengthMask) != length || ((header & kLastChunk) != 0) != last)
      return fail(alloyRemoteError,
                  "%s: rank %d sent a message of another size than rank %d receives from it (a chunk of %llu "
                  "bytes%s where %zu%s was expected); sizes must match on both sides",
                  operationName(current_->operation), p.rank, config_.rank,
                  static_cast<unsigned long long>(header & kLengthMask), (header & kLastChunk) ? " ending it" : "",
                  length, last ? " ending it" : "");
    ALLOY_TRY(copyChunk(chunk, staging_->base + slotOffset(peers_.size(), p.index, slot), length, cudaMemcpyHostToDevice,
                        p.recvCopied.empty() ? nullptr : p.recvCopied[slot]));
    ++p.unstaged;
    *moved = true;
  }
  return alloySuccess;
}

bool NetChannel::progress() {
  if (config_.cudaDevice >= 0) cudaSetDevice(config_.cudaDevice);
  transport_->progress();
  if (abortRequested_.load(std::memory_order_acquire) && error() == alloySuccess)
    failWith(alloyRemoteError, "aborted by alloyCommAbort on this rank");
  if (!current_) {
    const uint32_t bell = __atomic_load_n(const_cast<const uint32_t*>(doorbell_), __ATOMIC_ACQUIRE);
    if (bell == 0) return advanceQuietly();
    const alloyResult_t r = error() == alloySuccess ? start(bell - 1) : error();
    if (r != alloySuccess) {
      if (error() == alloySuccess) failWith(r, lastError());
      // A failed channel moves nothing: the stream goes on, and the error reaches the caller.
      currentId_ = bell - 1;
      finish();
      return false;
    }
  }
  bool moved = false;
  alloyResult_t r = alloySuccess;
  for (auto& p : peers_) {
    if (r == alloySuccess) r = advanceSends(*p, &moved);
    if (r == alloySuccess) r = advanceRecvs(*p, &moved);
  }
  if (r != alloySuccess) failWith(r, lastError());
  const long long now = Clock::now().time_since_epoch().count();
  if (moved) lastMove_ = now;
  if (error() == alloySuccess && now - lastMove_ > std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::milliseconds(config_.timeoutMs)).count())
    failWith(alloyTimeout, describeStall());
  bool complete = true;
  for (auto& p : peers_) complete = complete && p->put >= p->sendTarget && p->consumed >= p->recvTarget;
  if (complete || error() != alloySuccess) finish();
  return true;
}

// Between operations: credits and the puts' completions still need driving. Whether any is pending.
bool NetChannel::advanceQuietly() {
  if (error() != alloySuccess) return false;
  bool moved = false, pending = false;
  for (auto& p : peers_) {
    alloyResult_t r = alloySuccess;
    if (p->credited < p->consumed) r = advanceRecvs(*p, &moved);
    for (Request& req : p->slotPuts) {
      bool done = true;
      if (r == alloySuccess) r = transport_->test(&req, &done);
      pending = pending || !done;
    }
    if (r != alloySuccess) {
      failWith(r, lastError());
      return false;
    }
    pending = pending || p->credited < p->consumed;
  }
  return pending;
}

// Which peers the operation in hand waits for, and for what.
std::string NetChannel::describeStall() const {
  std::string waiting;
  for (const auto& p : peers_) {
    const bool forCredit = p->put < p->sendTarget;
    const bool forData = p->consumed < p->recvTarget;
    if (!forCredit && !forData) continue;
    waiting += (waiting.empty() ? "" : ", ") + std::to_string(p->rank) +
               (forData ? (forCredit ? " (data and free slots)" : " (data)") : " (free slots)");
  }
  char text[512];
  std::snprintf(text, sizeof(text), "%s timed out on rank %d of %d after %lld ms without progress, waiting for rank(s) "
                "%s between hosts (the communicator's timeout: alloyConfig_t.timeoutMs or ALLOY_TIMEOUT_MS)",
                operationName(current_ ? current_->operation : 0), config_.rank, config_.nranks, config_.timeoutMs,
                waiting.empty() ? "?" : waiting.c_str());
  return text;
}

alloyResult_t NetChannel::drain() {
  const auto deadline = Clock::now() + kDrainTimeout;
  while (error() == alloySuccess && advanceQuietly()) {
    transport_->progress();
    if (Clock::now() > deadline) return fail(alloyTimeout, "net: operations still in flight after %lld s",
                                             static_cast<long long>(kDrainTimeout.count()));
  }
  // A failed channel's error has been reported already, and its peers may be gone: nothing to complete.
  if (error() != alloySuccess) return alloySuccess;
  std::vector<Request> flushes(peers_.size());
  for (size_t i = 0; i < peers_.size(); ++i) {
    alloyResult_t r;
    while ((r = transport_->flush(peers_[i]->connection, &flushes[i])) == alloyInProgress) transport_->progress();
    ALLOY_TRY(r);
  }
  for (Request& req : flushes) {
    bool done = false;
    while (true) {
      ALLOY_TRY(transport_->test(&req, &done));
      if (done) break;
      if (Clock::now() > deadline) return fail(alloyTimeout, "net: flushing the connections timed out");
      transport_->progress();
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

std::string NetChannel::describe() const {
  return peers_.empty() ? std::string("no peer on another host") : transport_->describe(peers_[0]->connection);
}

}  // namespace net
}  // namespace alloy
