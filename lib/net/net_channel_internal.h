// What the files of NetChannel share (net_channel.h lists them): the state kept per peer, the staging
// memory, and the clocks and loads they all use. Only those files include it: the rest of the library
// sees the channel through net_channel.h.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloy.h"
#include "net_channel.h"
#include "transport.h"

namespace alloy {
namespace net {

using Clock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;

// Now on the steady clock, in nanoseconds (NetStages).
inline int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

inline uint64_t loadWord(const void* word) {
  return __atomic_load_n(static_cast<const uint64_t*>(word), __ATOMIC_ACQUIRE);
}

// A time of day to the millisecond ("19:29:19.123"), so that the reports of several ranks line up.
std::string timeOfDay(WallClock::time_point at = WallClock::now());

// Host memory the proxy and (through a copy engine or stream memory operations) the GPU reach: pinned
// and mapped when the channel has a device, plain page-aligned memory otherwise. Registered with the
// transport when asked.
struct NetChannel::Region {
  Transport* transport = nullptr;
  Registration* registration = nullptr;
  char* base = nullptr;
  size_t bytes = 0;
  bool pinned = false;

  static alloyResult_t allocate(int device, size_t bytes, std::unique_ptr<Region>* out);
  alloyResult_t registerWith(Transport* t, std::vector<uint8_t>* key);
  ~Region();
};

// Where the send of the operation in hand to one peer stands. Eager sends go AwaitReady (a free eager
// slot) -> PutSignalling -> Completing (one message carries data and header); others AwaitReady (the
// peer's inbox) -> Putting -> Flushing -> Signalling.
enum class SendState { Idle, AwaitReady, PutSignalling, Completing, Putting, Flushing, Signalling };

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
  // Receiving: the same count, the bytes expected, and the last count signalled as "ready" (below recvOps:
  // the ready of the latest operation is still owed; NetChannel::advanceRecv says when it goes).
  uint64_t recvOps = 0;
  size_t recvBytes = 0;  // 0: nothing (more) to receive in the operation in hand
  uint64_t readySignalled = 0;
};

}  // namespace net
}  // namespace alloy
