// One communicator's traffic between hosts: the staging memory, the connections to every rank on another
// host, and the protocol the proxy thread runs over a Transport. docs/architecture.md, "Between hosts",
// has the picture.
//
// An operation moves, per rank on another host, at most capacity() bytes each way through staging: the
// caller puts the send bytes into outbox(peer, box) beforehand and takes the received bytes from
// inbox(peer, box) afterwards (on a GPU: copies on the caller's stream; larger transfers are cut into
// several operations, round r using box r % kBoxes). The proxy itself issues no CUDA work: anything it did on the GPU could be queued by the
// hardware behind the stream that waits for it, and deadlock (CUDA orders work only by what it sees).
//
// Work arrives through a doorbell per box: a 32-bit word in host memory that the GPU reaches. The stream
// (or, in the host-memory tests, a thread) writes an operation's id + 1 once the send bytes are staged in
// the operation's box; the proxy moves the bytes and writes 0 once every receive has landed and every
// put has completed (that box's outboxes may then be refilled, its inboxes read); the stream waits for
// that 0. Both are stream memory operations: no SM spins, and a CUDA graph replays them with no host
// callback. Two boxes used in turn let the stream stage round r + 1 while round r is on the wire and
// copy round r out while round r + 1 is: the stream rings round r + 1 before it waits for round r, so
// at most two operations are rung at once, consecutive rounds of one launch (a communicator's launches
// are ordered); the proxy serves them in round order, one at a time.
//
// The protocol, per ordered pair of ranks on different hosts, counting the operations in which the pair
// exchanges bytes in that direction: the receiver, once its doorbell rings (its inbox for the sender is
// then free), signals "ready for operation n" into the sender's control line; the sender puts its bytes
// into the receiver's inbox, in chunks of slotBytes, and then signals the header: n and the byte count.
// A small transfer (up to the geometry's eagerSlotBytes()) does not wait for "ready": it goes as one
// putSignal message that carries data and header into the receiver's eager slot n % kNetEagerSlots,
// free once the receiver was ready for operation n - kNetEagerSlots + 1, and the receiver's proxy
// copies it into the inbox when operation n starts there. So a sender runs up to kNetEagerSlots small
// operations ahead of a late receiver. A receiver that finds operation n's eager data already in signals
// its "ready" only after the release (ALLOY_NET_DEFER_READY), unless the one before is owed too.
// The receiver checks both, so sizes that disagree fail naming the sender instead of corrupting the
// next operation.
//
// Threads: prepare/connect/addOperation run on the caller's thread; progress() only on the proxy
// thread and progressInbound() only on the inbound thread once the channel is started (ProxyThread::add),
// and both on the caller's thread again after it is removed (drain, teardown). addOperation and the proxy
// share the operation table under a mutex.
//
// The implementation, a file per job: net_channel.cc (prepare, connect, drain, errors, teardown),
// net_channel_staging.cc (the staging memory and where everything lies in it), net_channel_operations.cc
// (the operation table, the doorbells and the proxy's step), net_channel_protocol.cc (both directions of
// the protocol with one peer) and net_channel_stall.cc (the stall report); net_channel_internal.h holds
// what they share.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "alloy.h"
#include "net_geometry.h"
#include "remote_channel.h"
#include "transport.h"

namespace alloy {
namespace net {

using NetMessage = alloy::NetMessage;
using NetOperation = alloy::NetOperation;

struct NetChannelConfig {
  int rank = 0;
  int nranks = 0;
  std::vector<uint64_t> hostOf;  // by communicator rank: ranks with equal values share a host
  int cudaDevice = -1;           // >= 0: staging is pinned and doorbell-mapped on this device
  long long timeoutMs = 0;       // a wait for one peer longer than this fails the operation (alloyTimeout)
  NetGeometry geometry{};
};

class NetChannel final : public RemoteChannel {
 public:
  // Allocates and registers the staging memory with transport, and fills the bytes a peer needs:
  // *address (transport address) and *key (packed key of the registered region).
  static alloyResult_t prepare(const NetChannelConfig& config, std::unique_ptr<Transport> transport,
                               std::vector<uint8_t>* address, std::vector<uint8_t>* key,
                               std::unique_ptr<NetChannel>* out);
  // Connects to every rank on another host from their prepare() bytes (indexed by communicator rank;
  // entries for ranks on this host are ignored) and imports their keys.
  alloyResult_t connect(const std::vector<std::vector<uint8_t>>& addresses,
                        const std::vector<std::vector<uint8_t>>& keys);
  ~NetChannel() override;
  NetChannel(const NetChannel&) = delete;
  NetChannel& operator=(const NetChannel&) = delete;

  // Stores an operation and gives its id (what the doorbell carries, minus 1). A persistent operation
  // (captured into a CUDA graph) stays until the channel is destroyed; any other is freed once done.
  alloyResult_t addOperation(NetOperation operation, bool persistent, uint32_t* id) override;
  // The doorbell of a box (0 .. kBoxes - 1): host address, and the address the GPU uses (equal under UVA;
  // the host one without CUDA).
  volatile uint32_t* doorbell(int box) const { return doorbell_ + box * kBellStride; }
  void* doorbellForDevice(int box) const override {
    return static_cast<uint32_t*>(doorbellDevice_) + box * kBellStride;
  }
  // Staging of a rank on another host in a box (pinned and mapped when the channel has a device):
  // capacity() bytes each. Fill outbox(peer, box) before ringing the box's doorbell; read
  // inbox(peer, box) after it cleared. nullptr for a rank that is not on another host.
  size_t capacity() const override { return config_.geometry.capacity(); }
  char* outbox(int peer, int box) const override;
  const char* inbox(int peer, int box) const override;

  // Adds the channel to the process's proxy threads (lib/net/proxy_thread.h), or removes it.
  void serveInBackground(bool on) override;

  // The proxy's step: drives the transport and the operation in hand. Returns whether anything is under
  // way (an operation rung, data or credits in flight), so that an idle proxy may sleep.
  bool progress() override;
  // The inbound thread's step: serves what peers do to this rank's staging (Transport::progressInbound).
  // Returns whether anything happened.
  bool progressInbound() override;
  // Whether the transport has an inbound side of its own, which needs the inbound thread.
  bool separateInbound() const { return transport_->separateInbound(); }
  // Flushes every connection (progressing until this rank's signals have completed at their targets);
  // then the memory may go once every peer has drained too, which the caller learns from a barrier that
  // keeps calling progress() and progressInbound() (peers' flushes complete only while this rank
  // progresses). Caller's thread, after ProxyThread::remove.
  // A failed channel returns alloySuccess at once: its error was reported, and its peers may be gone.
  alloyResult_t drain() override;
  alloyResult_t awaitServed(long long timeoutMs) const override;

  // alloySuccess, or the error that failed the channel; a failed channel releases every later doorbell
  // at once without moving data.
  alloyResult_t error() const override { return error_.load(std::memory_order_acquire); }
  std::string errorMessage() const override;
  // Fails the channel (alloyRemoteError, "aborted") and releases the doorbell.
  void abort() override;
  // Which transport carries the connections ("tcp/lo", ...), for logs. Caller's thread, and only while
  // neither proxy thread serves the channel (before ProxyThread::add, after remove): UCX reads endpoint
  // and protocol state there that the proxy thread changes as it progresses the worker.
  std::string describe() const override;
  size_t recentStages(NetStages* out, size_t max) const override;
  // What the channel holds, as allocated: docs/architecture.md, "Memory per rank", has it as formulas,
  // which tests/net/net_scale_test.cc checks against this.
  struct Footprint {
    size_t inboxRegionBytes;   // registered, written by peers: the control lines, the inboxes, the eager slots
    size_t outboxRegionBytes;  // registered: the outboxes
    size_t doorbellBytes;
    size_t connections;  // one per rank on another host
  };
  Footprint footprint() const;

 private:
  struct Peer;
  struct Region;
  NetChannel() = default;
  // Byte offsets in the staging region of a rank with `remote` ranks on other hosts: the control line
  // (ready word, header word, eager slots' header words), the inbox and the eager slots of its remote
  // peer number `peer`.
  size_t readyOffset(size_t peer) const;
  size_t headerOffset(size_t peer) const;
  size_t eagerHeaderOffset(size_t peer, size_t slot) const;
  size_t inboxOffset(size_t remote, size_t peer, int box) const;
  size_t eagerOffset(size_t remote, size_t peer, size_t slot) const;
  size_t outboxOffset(size_t peer, int box) const;
  // The box whose operation is to start next (a rung doorbell; of two, the earlier round), or -1.
  int nextBox();

  void releaseOperation(uint32_t id);
  // The doorbells lie a cache line apart (in 32-bit words).
  static constexpr int kBellStride = 16;
  alloyResult_t start(uint32_t id, int box);
  void finish();
  // Stamps the operation in hand's "posted", "sent" and "in" stages the first time they hold (progress()).
  void stampStages(bool posted, bool sent, bool in);
  alloyResult_t advanceSend(Peer& p, bool* moved);
  alloyResult_t advanceRecv(Peer& p, bool* moved);
  bool headerArrived(const Peer& p, uint64_t* header, bool* eager) const;
  alloyResult_t signalReady(Peer& p, bool* moved);
  bool signalOwedReadies();
  std::string describeStall() const;
  void logStallDetail() const;
  void failWith(alloyResult_t code, const std::string& message);

  NetChannelConfig config_;
  std::unique_ptr<Transport> transport_;
  // Sends of up to this many bytes go as one putSignal into an eager slot: the geometry's
  // eagerSlotBytes(), within what the transport takes.
  size_t eagerBytes_ = 0;
  // Whether each sweep posts the operation's eager sends before the receives' "ready" signals
  // (ALLOY_NET_EAGER_FIRST; progress() says why).
  bool eagerFirst_ = true;
  // Whether a receive whose eager data came before its operation started tells the sender "ready" only
  // after the release (ALLOY_NET_DEFER_READY; advanceRecv says why).
  bool deferReady_ = true;
  std::vector<std::unique_ptr<Peer>> peers_;  // ranks on other hosts, ascending
  std::vector<int> peerIndex_;                // by communicator rank: index into peers_, or -1
  std::unique_ptr<Region> staging_;  // registered: control lines, inboxes
  std::unique_ptr<Region> outbox_;   // registered: outboxes
  std::unique_ptr<Region> bell_;     // the doorbell words
  volatile uint32_t* doorbell_ = nullptr;
  void* doorbellDevice_ = nullptr;

  std::mutex mutex_;  // guards operations_, persistent_ and freeIds_
  std::vector<std::shared_ptr<const NetOperation>> operations_;
  std::vector<char> persistent_;
  std::vector<uint32_t> freeIds_;

  // The operation in hand, and when a counter last moved (steady_clock ticks): proxy thread only.
  std::shared_ptr<const NetOperation> current_;
  uint32_t currentId_ = 0;
  int currentBox_ = 0;
  long long lastMove_ = 0;
  long long startedAt_ = 0;  // when the operation in hand started (steady_clock ticks)
  // The last operations this channel served, for a stall report: when each started (its doorbell was
  // found rung) and finished, so that a peer that came late shows where its time went.
  struct Served {
    uint32_t id;
    long long startedAt, finishedAt;  // system_clock ticks; finishedAt 0 while in hand
  };
  static constexpr size_t kServedKept = 6;
  Served served_[kServedKept];
  size_t servedCount_ = 0;
  // The stages of the operation in hand (proxy thread only), and of the latest ones finished: written by the
  // proxy thread at each finish, read by recentStages under stagesMutex_.
  NetStages inHand_{};
  mutable std::mutex stagesMutex_;
  NetStages stages_[kNetStagesKept];
  size_t stagesCount_ = 0;

  std::atomic<bool> abortRequested_{false};
  std::atomic<alloyResult_t> error_{alloySuccess};
  mutable std::mutex errorMutex_;
  std::string errorMessage_;
};

}  // namespace net
}  // namespace alloy
