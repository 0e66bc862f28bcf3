// The channel's life: checking the configuration, laying out its peers, allocating and registering the
// staging (prepare), connecting to the peers, draining and tearing down, and the error every later
// operation reports once it failed. What runs per operation is in the other net_channel_*.cc files.
#include "net_channel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "env.h"
#include "error.h"
#include "log.h"
#include "net_channel_internal.h"
#include "proxy_thread.h"

namespace alloy {
namespace net {
namespace {

// How long drain() keeps progressing before it gives up on operations in flight.
constexpr auto kDrainTimeout = std::chrono::seconds(30);

}  // namespace

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
  c->eagerFirst_ = envInt("ALLOY_NET_EAGER_FIRST", 1, 0, 1) != 0;
  c->deferReady_ = envInt("ALLOY_NET_DEFER_READY", 1, 0, 1) != 0;
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

alloyResult_t NetChannel::drain() {
  // A failed channel's error has been reported already, and its peers may be gone: nothing to complete.
  if (error() != alloySuccess) return alloySuccess;
  // No operation follows: readies still owed (advanceRecv) are not needed, and sent after the flush they
  // could land in a peer's staging after the peer freed it.
  for (auto& p : peers_) p->readySignalled = p->recvOps;
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

alloyResult_t NetChannel::awaitServed(long long timeoutMs) const {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  while (error() == alloySuccess) {
    bool rung = false;
    for (int b = 0; b < kBoxes; ++b)
      rung = rung || __atomic_load_n(const_cast<const uint32_t*>(doorbell(b)), __ATOMIC_ACQUIRE) != 0;
    if (!rung) return alloySuccess;
    if (Clock::now() > deadline)
      return fail(alloyTimeout, "net: rank %d: an operation between hosts was still not served after %lld ms",
                  config_.rank, timeoutMs);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
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
