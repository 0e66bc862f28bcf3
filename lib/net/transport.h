// The interface of Alloy's inter-host transports: one-sided put + signal, the shape of Alloy's ring
// protocol (the sender fills a slot in the receiver's memory, then bumps a 64-bit counter there; the
// receiver polls the counter, then reads the slot). docs/architecture.md, "Transport interface".
//
// Who uses it: once a channel is started, the proxy thread and, where the backend has a separate inbound
// side (separateInbound(); UCX with ALLOY_NET_INBOUND_THREAD=1), the inbound thread, and nobody else. The
// proxy thread makes every call but one; the inbound thread only calls progressInbound(), which serves
// what peers do to this rank's memory and touches nothing the other calls touch. Nothing else here is
// thread-safe, and nothing blocks: every call returns at once. One proxy thread serves every
// communicator's transport, so a call that waited would stall them all. A caller with no inbound thread
// (set-up, teardown, the transport tests) calls progressAll().
//
// Why an inbound side: over tcp and shared memory the CPU moves every byte, on the sender (into the
// socket or the shared FIFO) and on the receiver (out of it, into the registered memory). With one thread
// per process driving both, a rank that sends and receives at once (every alltoall) gets about half of
// its one-way rate in each direction; so does UCX itself with one worker per process
// (tools/ucx-both-ways). On one H100 with UCX 1.22 (docs/benchmarks.md, "Both directions at once"), puts
// both ways moved 1.8-1.9 GB/s per direction over tcp with one worker and 2.7-3.8 with two, and Alloy's
// alltoall between 2 virtual hosts went from 0.53-0.71x of ucx_perftest's one-way bandwidth to 0.83-0.94x.
// Results are alloyResult_t; a failure records a message (alloy::fail) naming the argument or the peer.
//
// Ownership: a Transport is owned through std::unique_ptr and owns every Connection, Registration and
// RemoteKey it hands out (callers hold plain pointers); destroying it releases all of them. Requests are
// small values the caller owns; the state of an operation in flight lives in the transport, so a
// Request that is dropped unread leaks nothing.
//
// Deviations from the design brief's sketch: there is no listen(): localAddress() gives the bytes a
// peer connects to (UCX's worker address, which is all a peer needs). reachable() and the secret check
// are not here yet; they come with communicator creation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloy.h"

namespace alloy {
namespace net {

struct Caps {
  bool deviceDirect;  // kernels store into peers' memory themselves (CUDA IPC): put and signal are unused
  bool gpuMemory;     // registerMemory accepts CUDA device memory
  bool needsFlush;    // data can become visible after a later signal (a NIC writing GPU memory with
                      // relaxed ordering): the receiver needs a flush before it reads the slot
};

// Handles a Transport hands out and owns. Each backend derives its own.
class Connection {
 public:
  virtual ~Connection() = default;
};
class Registration {
 public:
  virtual ~Registration() = default;
};
class RemoteKey {
 public:
  virtual ~RemoteKey() = default;
};

// One operation in flight, filled by put/signal/flush and read by test(). A default Request (and one
// whose operation completed at once) tests as done. Copying it is harmless; only one copy may be tested.
struct Request {
  Connection* connection = nullptr;
  uint64_t ticket = 0;  // backend-defined; 0: nothing in flight
};

class Transport {
 public:
  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  virtual ~Transport() = default;

  virtual const char* name() const = 0;
  virtual Caps caps() const = 0;

  // The bytes a peer passes to connect(): they go into the endpoint blob, and never exceed the limit the
  // backend was created with (UcxOptions::maxAddressBytes).
  virtual alloyResult_t localAddress(std::vector<uint8_t>* bytes) = 0;
  // Starts a connection to `peer` (a rank, used in messages) from its localAddress() bytes. Success with
  // *out == nullptr means "not yet": call progress() and connect() again with the same arguments.
  // Malformed bytes fail with alloyInvalidArgument before anything is sent.
  virtual alloyResult_t connect(int peer, const uint8_t* address, size_t bytes, Connection** out) = 0;
  // What carries a connection ("tcp/eth0", "posix/memory", ...), for logs; complete once the first
  // operation on it has completed.
  virtual std::string describe(const Connection* c) const = 0;
  // What c has posted and completed so far, for a stall report (an operation that never completed is
  // still inside the backend on this side), and where the backend can tell, what each remote word's last
  // signal replaced there. Same thread rules as the data calls.
  virtual std::string describeTraffic(const Connection* c) const = 0;

  // Makes [base, base + bytes) a source of puts and a target of peers' puts and signals. packedKey gets
  // the bytes a peer passes to importKey() to address it.
  virtual alloyResult_t registerMemory(void* base, size_t bytes, Registration** out,
                                       std::vector<uint8_t>* packedKey) = 0;
  // alloyInvalidUsage while any operation is in flight (it may still read the memory).
  virtual alloyResult_t deregister(Registration* r) = 0;
  // A peer's packedKey, usable on connection c only. Malformed bytes fail with alloyInvalidArgument.
  virtual alloyResult_t importKey(Connection* c, const uint8_t* key, size_t bytes, RemoteKey** out) = 0;
  // alloyInvalidUsage while an operation is in flight on the key's connection.
  virtual alloyResult_t releaseKey(RemoteKey* k) = 0;

  // Data calls. Each checks its arguments first (alloyInvalidArgument naming the argument, nothing sent)
  // and fails with alloyRemoteError naming the peer once the connection has failed. Back-pressure: a
  // connection holds at most maxOutstanding operations that have not completed or, when posted with a
  // Request, not been tested done; beyond that a call returns alloyInProgress and does nothing: call
  // progress(), test() the requests, and retry. req may be nullptr: the operation then completes
  // unobserved (an error still fails the connection's later calls).
  //
  // Copies [src, src + bytes) to [dstOffset, dstOffset + bytes) of the memory behind dst. srcReg, when
  // given, must cover the source. src must stay unchanged until the request completes.
  virtual alloyResult_t put(Connection* c, const void* src, const Registration* srcReg, const RemoteKey* dst,
                            size_t dstOffset, size_t bytes, Request* req) = 0;
  // Stores `value` into the 8 bytes at dstOffset (a multiple of 8) of dst's memory, whole (a reader never
  // sees a mix of old and new bytes). Unordered with earlier puts: where the target must see the data
  // first, flush and wait for that flush before signalling. An ordering call inside signal would block
  // (UCX 1.22's ucp_worker_fence waits for the whole worker when puts and atomics take different lanes),
  // and a blocked proxy thread stops every other channel it serves: peers waiting on those then wait on
  // this one, a deadlock across communicators (seen with 3 communicators at 4 virtual hosts over tcp).
  virtual alloyResult_t signal(Connection* c, const RemoteKey* dst, size_t dstOffset, uint64_t value,
                               Request* req) = 0;
  // A put and then a signal as one message, for small transfers: [src, src + bytes) lands at dstOffset
  // of dst's memory and then `value` at signalOffset (a multiple of 8), in that order, with no flush
  // between (the target writes both as the message arrives). Saves the flush's round trip that orders a
  // separate signal. bytes: 1..maxPutSignalBytes(); src must stay unchanged until the request completes.
  virtual alloyResult_t putSignal(Connection* c, const void* src, size_t bytes, const RemoteKey* dst,
                                  size_t dstOffset, size_t signalOffset, uint64_t value, Request* req) = 0;
  // The largest putSignal; 0 where the backend has none.
  virtual size_t maxPutSignalBytes() const = 0;
  // Completes once every earlier put and signal on c has completed at the target.
  virtual alloyResult_t flush(Connection* c, Request* req) = 0;
  // *done becomes true once the operation completed; its result is then returned (an error names the
  // peer) and the request is spent. While it is in flight: alloySuccess with *done == false.
  virtual alloyResult_t test(Request* req, bool* done) = 0;
  // Drives this rank's own operations (their completions, connection set-up, error detection). Never
  // blocks.
  virtual void progress() = 0;
  // Drives what peers do to this rank's registered memory: their puts, signals and putSignals landing,
  // and the acknowledgements their flushes wait for. Never blocks; returns whether anything happened, so
  // that an idle inbound thread may sleep. Safe to call from one other thread while the proxy thread makes
  // the other calls.
  virtual bool progressInbound() = 0;
  // Whether progressInbound() has work of its own (a backend with a separate inbound side); when not,
  // progress() serves peers too and no inbound thread is needed.
  virtual bool separateInbound() const = 0;
  // Both, for a caller that runs no inbound thread.
  void progressAll() {
    progress();
    progressInbound();
  }
};

}  // namespace net
}  // namespace alloy
