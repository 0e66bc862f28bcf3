// The channel's memory: the staging regions (allocated, pinned and registered here), and where each
// peer's control line, inboxes, eager slots and outboxes lie in them. Apart from the protocol because
// both sides of every pair compute these offsets, the sender for the receiver's staging: one place
// keeps the layout that they must agree on.
#include "net_channel_internal.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "error.h"
#include "log.h"

namespace alloy {
namespace net {
namespace {

// A control line per peer: its ready word, its header word, then the header words of its eager slots.
constexpr size_t kLine = 64;
constexpr size_t kEagerHeadersAt = 2 * sizeof(uint64_t);
static_assert(kEagerHeadersAt + kNetEagerSlots * sizeof(uint64_t) <= kLine, "a control line holds every header");
constexpr size_t kPage = 4096;

size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

}  // namespace

alloyResult_t NetChannel::Region::allocate(int device, size_t bytes, std::unique_ptr<Region>* out) {
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

alloyResult_t NetChannel::Region::registerWith(Transport* t, std::vector<uint8_t>* key) {
  std::vector<uint8_t> unused;
  ALLOY_TRY(t->registerMemory(base, bytes, &registration, key != nullptr ? key : &unused));
  transport = t;
  return alloySuccess;
}

NetChannel::Region::~Region() {
  if (registration != nullptr && transport->deregister(registration) != alloySuccess)
    logWarn("net: deregistering staging memory failed: %s", lastError());
  if (base == nullptr) return;
  if (pinned) {
    if (cudaFreeHost(base) != cudaSuccess) logWarn("net: cudaFreeHost of staging memory failed");
  } else {
    std::free(base);
  }
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

}  // namespace net
}  // namespace alloy
