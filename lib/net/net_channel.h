// One communicator's traffic between hosts: the staging memory, the connections to every rank on another
// host, and the chunk protocol the proxy thread runs over a Transport. docs/architecture.md, "Between
// hosts", has the picture.
//
// Work arrives through a doorbell: one 32-bit word in host memory that the GPU reaches. A stream (or, in
// the host-memory tests, a thread) writes an operation's id + 1 into it once the operation's send data
// is ready; the proxy moves the data and writes 0 when every receive has landed in its buffer and every
// send buffer may be reused; the stream waits for that 0 (stream memory operations: no SM spins, and a
// CUDA graph replays the same write and wait with no host callback). The communicator's launches are
// ordered (LaunchOrder), so at most one operation is rung at a time.
//
// The chunk protocol, per ordered pair of ranks on different hosts: the receiver has `slots` slots of
// `slotBytes` for the sender in its registered staging region, each with an 8-byte header. The sender
// copies a chunk of its message into its own staging slot (a copy engine for GPU memory), puts it into
// the receiver's slot, then signals the slot's header: the chunk's sequence number and length. The
// receiver copies the chunk out into the user's buffer, and signals the sender's credit word with the
// chunks it has consumed. Counters run across operations, so a sender fills free slots before its peer
// has even reached the operation. Sequence numbers, lengths and a last-chunk mark in every header let
// the receiver detect a message of another size than it expects and fail naming the peer.
//
// Threads: prepare/connect/addOperation run on the caller's thread; progress() only on the proxy
// thread once the channel is started (ProxyThread::add), and on the caller's thread again after it is
// removed (drain). addOperation and the proxy share the operation table under a mutex.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "alloy.h"
#include "transport.h"

namespace alloy {
namespace net {

// The chunk protocol's geometry: ALLOY_NET_SLOTS and ALLOY_NET_SLOT_BYTES (equal on every rank).
struct NetGeometry {
  int slots;
  size_t slotBytes;
};
NetGeometry netGeometry();

// One message of an operation: a peer on another host, and a buffer in the operation's memory kind.
struct NetMessage {
  int peer;      // communicator rank
  char* buffer;  // sends: read; receives: written
  size_t bytes;  // > 0
};

struct NetOperation {
  int operation = 0;          // alloy::Operation, for error messages
  bool deviceMemory = false;  // buffers are CUDA device memory (copied by the proxy's copy engine stream)
  // Messages to and from one peer are matched in this order, as in MPI.
  std::vector<NetMessage> sends;
  std::vector<NetMessage> recvs;
};

struct NetChannelConfig {
  int rank = 0;
  int nranks = 0;
  std::vector<uint64_t> hostOf;  // by communicator rank: ranks with equal values share a host
  int cudaDevice = -1;           // >= 0: staging is pinned and doorbell-mapped on this device
  long long timeoutMs = 0;       // a wait for one peer longer than this fails the operation (alloyTimeout)
  NetGeometry geometry{};
};

class NetChannel {
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
  ~NetChannel();
  NetChannel(const NetChannel&) = delete;
  NetChannel& operator=(const NetChannel&) = delete;

  // Stores an operation and gives its id (what the doorbell carries, minus 1). A persistent operation
  // (captured into a CUDA graph) stays until the channel is destroyed; any other is freed once done.
  alloyResult_t addOperation(NetOperation operation, bool persistent, uint32_t* id);
  // The doorbell: host address, and the address the GPU uses (equal under UVA; the host one without CUDA).
  volatile uint32_t* doorbell() const { return doorbell_; }
  void* doorbellForDevice() const { return doorbellDevice_; }

  // The proxy's step: drives the transport and the operation in hand. Returns whether anything is under
  // way (an operation rung, data or credits in flight), so that an idle proxy may sleep.
  bool progress();
  // Waits (progressing) until nothing this rank started is in flight and every connection is flushed;
  // then the memory may go once every peer has drained too, which the caller learns from a barrier that
  // keeps calling progress() (peers' flushes complete only while this rank progresses). Caller's
  // thread, after ProxyThread::remove.
  // A failed channel returns alloySuccess at once: its error was reported, and its peers may be gone.
  alloyResult_t drain();

  // alloySuccess, or the error that failed the channel; a failed channel releases every later doorbell
  // at once without moving data.
  alloyResult_t error() const { return error_.load(std::memory_order_acquire); }
  std::string errorMessage() const;
  // Fails the channel (alloyRemoteError, "aborted") and releases the doorbell.
  void abort();
  // Which transport carries the connections ("tcp/lo", ...), for logs.
  std::string describe() const;

 private:
  struct Peer;
  struct Region;
  NetChannel() = default;
  size_t remoteOrdinal(int viewer, int rank) const;
  // Byte offsets in the staging region of a rank with `remote` ranks on other hosts of the credit word,
  // slot headers and slots of its remote peer number `peer`.
  size_t creditOffset(size_t peer) const;
  size_t headerOffset(size_t remote, size_t peer, size_t slot) const;
  size_t slotsStart(size_t remote) const;
  size_t slotOffset(size_t remote, size_t peer, size_t slot) const;

  void releaseOperation(uint32_t id);
  alloyResult_t start(uint32_t id);
  void finish();
  alloyResult_t copied(cudaEvent_t event, bool* done);
  alloyResult_t copyChunk(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaEvent_t event);
  alloyResult_t advanceSends(Peer& p, bool* moved);
  alloyResult_t advanceRecvs(Peer& p, bool* moved);
  bool advanceQuietly();
  std::string describeStall() const;
  void failWith(alloyResult_t code, const std::string& message);

  NetChannelConfig config_;
  std::unique_ptr<Transport> transport_;
  std::vector<std::unique_ptr<Peer>> peers_;  // ranks on other hosts, ascending
  std::vector<int> peerIndex_;                // by communicator rank: index into peers_, or -1
  std::unique_ptr<Region> staging_;  // registered: credit lines, slot headers, receive slots
  std::unique_ptr<Region> outbox_;   // registered: send slots
  std::unique_ptr<Region> bell_;     // the doorbell word
  volatile uint32_t* doorbell_ = nullptr;
  void* doorbellDevice_ = nullptr;
  cudaStream_t copyStream_ = nullptr;  // the proxy's copies to and from device memory

  std::mutex mutex_;  // guards operations_, persistent_ and freeIds_
  std::vector<std::shared_ptr<const NetOperation>> operations_;
  std::vector<char> persistent_;
  std::vector<uint32_t> freeIds_;

  // The operation in hand, and when a counter last moved (steady_clock ticks): proxy thread only.
  std::shared_ptr<const NetOperation> current_;
  uint32_t currentId_ = 0;
  long long lastMove_ = 0;

  std::atomic<bool> abortRequested_{false};
  std::atomic<alloyResult_t> error_{alloySuccess};
  mutable std::mutex errorMutex_;
  std::string errorMessage_;
};

}  // namespace net
}  // namespace alloy
