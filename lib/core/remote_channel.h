// The network channel to the ranks on other hosts, as lib/core and lib/coll use it: they hold and drive
// it through this interface only, so that neither depends on how it is built (staging, rounds and a
// transport backend: lib/net). The assembly (lib/assembly) creates it. The GPU engine's counterpart
// among the ranks of one host is LocalTransport (local_transport.h); docs/architecture.md, "Layers".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloy.h"

namespace alloy {

// One direction of an operation with one peer on another host: the first `bytes` of outbox(peer) go to
// it, or the first `bytes` of inbox(peer) come from it.
struct NetMessage {
  int peer;      // communicator rank
  size_t bytes;  // 1 .. capacity()
};

struct NetOperation {
  int operation = 0;  // alloy::Operation, for error messages
  size_t round = 0;   // its round in the launch: staged in box round % kBoxes, served after round - 1
  std::vector<NetMessage> sends;  // at most one per peer
  std::vector<NetMessage> recvs;  // at most one per peer
};

// When an operation of the channel passed each stage, in nanoseconds of this machine's steady clock
// (CLOCK_MONOTONIC, which every process of a host reads alike, so stamps of two ranks of one host compare):
// the proxy found its doorbell rung, every send was handed to the transport (a small one's message posted,
// a larger one's header signalled), every send had completed, every receive's data was in, the doorbell
// was released. `posted` and `sent` are 0 for an operation without sends, `in` for one without receives.
// A sender's `posted` against its receiver's `in` splits the wire (and the receiver's inbound handler and
// poll) from the sender's proxy.
struct NetStages {
  uint32_t id;  // the operation's id (the doorbell's value minus 1)
  int64_t rung, posted, sent, in, released;
};

// The most recent operations whose stages a channel keeps (RemoteChannel::recentStages).
constexpr size_t kNetStagesKept = 64;

class RemoteChannel {
 public:
  virtual ~RemoteChannel() = default;

  // Staging boxes per peer and direction, and doorbells: the stream fills one while the other travels.
  static constexpr int kBoxes = 2;
  // The box a launch's round stages through.
  static int boxOf(size_t round) { return static_cast<int>(round % kBoxes); }

  // Stores an operation and gives its id (what the doorbell carries, minus 1). A persistent operation
  // (captured into a CUDA graph) stays until the channel is destroyed; any other is freed once done.
  virtual alloyResult_t addOperation(NetOperation operation, bool persistent, uint32_t* id) = 0;
  // The doorbell of a box (0 .. kBoxes - 1) as the GPU addresses it.
  virtual void* doorbellForDevice(int box) const = 0;
  // Staging of a rank on another host in a box: capacity() bytes each. Fill outbox(peer, box) before
  // ringing the box's doorbell; read inbox(peer, box) after it cleared. nullptr for a rank that is not on
  // another host.
  virtual size_t capacity() const = 0;
  virtual char* outbox(int peer, int box) const = 0;
  virtual const char* inbox(int peer, int box) const = 0;

  // Whether the process's proxy threads serve the channel (on from creation); off, the caller's thread
  // drives it with progress() and progressInbound().
  virtual void serveInBackground(bool on) = 0;
  // One step of driving: the transport and the operation in hand; what peers do to this rank's staging.
  virtual bool progress() = 0;
  virtual bool progressInbound() = 0;
  // Returns once no doorbell is rung (the proxy served every operation rung, including one whose launch
  // did not wait for it) or the channel failed; alloyTimeout after timeoutMs. With the background service on.
  virtual alloyResult_t awaitServed(long long timeoutMs) const = 0;
  // Flushes every connection (with the background service off); a barrier that keeps progressing must
  // follow before the memory goes. A failed channel returns alloySuccess at once.
  virtual alloyResult_t drain() = 0;
  // alloySuccess, or the error that failed the channel, and what it said.
  virtual alloyResult_t error() const = 0;
  virtual std::string errorMessage() const = 0;
  // Fails the channel (alloyRemoteError, "aborted") and releases the doorbell.
  virtual void abort() = 0;
  // Which transport carries the connections ("tcp/lo", ...), for logs; with the background service off.
  virtual std::string describe() const = 0;
  // The stages of the latest operations served (at most min(max, kNetStagesKept)), oldest first, into out;
  // how many were written. Safe beside the proxy thread (where the time of one small operation goes
  // between hosts: alloyDebugNetStages, tools/net-stages).
  virtual size_t recentStages(NetStages* out, size_t max) const = 0;
};

}  // namespace alloy

// Copies the stages of comm's latest operations between hosts (at most min(max, kNetStagesKept), oldest
// first) into out and sets *count. alloyNotSupported where comm has no network channel. Not part of the
// public API (alloy.h): a tool's hook into the library (tools/net-stages).
extern "C" ALLOY_API alloyResult_t alloyDebugNetStages(alloyComm_t comm, alloy::NetStages* out, size_t max,
                                                       size_t* count);
